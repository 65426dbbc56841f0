//! Blueprint: TOML text → typed, validated [`Blueprint`] with defaults applied. Owns the blueprint schema (field
//! names, types, defaults, docs), `--set` overrides, and every check that can be made without AWS.

pub mod model;

pub use model::*;

use std::path::Path;

use crate::diag::Diagnostics;

/// Reads, parses and validates the blueprint at `path`, applying `sets` (`path=value` overrides) first.
pub fn load(path: &Path, sets: &[String]) -> Result<Blueprint, Diagnostics> {
    let text = std::fs::read_to_string(path).map_err(|e| Diagnostics::io(path, &e))?;
    load_str(&path.display().to_string(), &text, sets)
}

/// As [`load`], for text already in memory; `name` is what diagnostics call the file.
pub fn load_str(_name: &str, _text: &str, _sets: &[String]) -> Result<Blueprint, Diagnostics> {
    unimplemented!("blueprint parser is being written")
}

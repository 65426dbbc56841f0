//! The user's values for Karpenter's chart, layered as `helm -f a.yaml -f b.yaml --set …` layers them: each of
//! `karpenter.values_files` in order (read as Helm reads YAML), then the inline `[karpenter.values]`. Maps merge,
//! everything else replaces. A file that cannot be read is an error at its entry in `values_files`; a file that
//! is not YAML, or not a map, is an error in that file, at its line and column.

use std::path::Path;

use serde_json::Value as Json;

use super::Loaded;
use crate::kubernetes::helm::{goyaml, values};

pub(crate) fn read(loaded: &mut Loaded, base: &Path) {
    let mut merged = Json::Object(Default::default());
    let files = loaded.blueprint.karpenter.values_files.clone();
    let mut absolute = Vec::with_capacity(files.len());
    for (i, file) in files.iter().enumerate() {
        let joined = base.join(file);
        let path = std::path::absolute(&joined).unwrap_or(joined);
        absolute.push(path.display().to_string());
        let field = format!("karpenter.values_files[{i}]");
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) => {
                let (source, span) = loaded.place(&field);
                loaded
                    .warnings
                    .error(source, span, format!("cannot read the values file {}: {e}", path.display()))
                    .path(&field)
                    .hint("the path is relative to the blueprint file");
                continue;
            }
        };
        let source = loaded.warnings.add_source(path.display().to_string(), text.clone());
        match goyaml::document(&text) {
            Ok(Json::Null) => {}
            Ok(layer @ Json::Object(_)) => values::merge(&mut merged, layer),
            Ok(other) => {
                let kind = if other.is_array() { "a list" } else { "a single value" };
                loaded
                    .warnings
                    .error(
                        source,
                        0..text.len().min(1),
                        format!("a values file holds a map of the chart's values, not {kind}"),
                    )
                    .path(&field)
                    .hint("write the chart's keys at the top level, as in the chart's values.yaml");
            }
            Err(e) => {
                let at = offset(&text, e.line, e.col);
                loaded
                    .warnings
                    .error(source, at..at, format!("not valid YAML: {}", e.message))
                    .path(&field)
                    .hint("a values file is YAML, as `helm -f` reads it");
            }
        }
    }
    if let Some(inline) = loaded.blueprint.karpenter.values.clone() {
        values::merge(&mut merged, inline);
    }
    loaded.blueprint.karpenter.values_files = absolute;
    loaded.blueprint.karpenter.user_values = merged;
}

/// The byte offset of a 1-based line and column in `text`.
fn offset(text: &str, line: usize, col: usize) -> usize {
    let start: usize = text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
    let rest = &text[start.min(text.len())..];
    start + rest.chars().take(col.saturating_sub(1)).map(char::len_utf8).sum::<usize>()
}

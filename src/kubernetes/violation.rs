//! What a check of a manifest reports: [`Violation`], a path into the object and a message, and the helpers that
//! write paths (`spec.terms[1].id`) and show values in messages. Shared by the two checkers, [`super::openapi`]
//! (custom objects) and [`super::builtin`] (the built-in kinds), so both speak of an object the same way.

use std::fmt;

use serde_json::Value;

/// One reason the API server would refuse an object (or would silently drop part of it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Where in the object, e.g. `spec.template.spec.requirements[0].operator`; empty for the object itself.
    pub path: String,
    /// What was found and what was expected.
    pub message: String,
}

impl Violation {
    pub(crate) fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Violation { path: path.into(), message: message.into() }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// The path of a field or map key; keys that are not plain identifiers are bracketed, as in
/// `labels[app.kubernetes.io/name]`.
pub(crate) fn child(path: &str, key: &str) -> String {
    let plain = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match (path.is_empty(), plain) {
        (true, true) => key.to_string(),
        (false, true) => format!("{path}.{key}"),
        (_, false) => format!("{path}[{key}]"),
    }
}

pub(crate) fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

/// A value as a message shows it: its JSON type and, for scalars, the value.
pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) if n.as_i64().is_some() || n.as_u64().is_some() => format!("integer {n}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(_) => format!("string {}", short(value)),
        Value::Array(items) => format!("array of {} items", items.len()),
        Value::Object(_) => "object".into(),
    }
}

/// A value's JSON text, cut to 80 characters.
pub(crate) fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 80 {
        return text;
    }
    let cut: String = text.chars().take(77).collect();
    format!("{cut}...")
}

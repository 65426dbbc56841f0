//! `metadata` as the API server checks it for every object, whatever its kind (ObjectMeta validation): the name
//! by the kind's [`NameRule`], the namespace, label keys and values, annotation keys. Custom objects
//! ([`super::openapi`]) and built-in ones ([`super::builtin`]) both go through [`check_object_meta`].

use serde_json::Value;

use super::names::{check_qualified_name, is_label_value, NameRule, QualifiedNameError};
use super::violation::{child, describe, Violation};

/// Checks `metadata` the way the API server checks every object's ObjectMeta: a name following `rule`, a
/// namespace that is a DNS-1123 label, label keys and values, annotation keys.
pub(crate) fn check_object_meta(object: &Value, rule: NameRule, out: &mut Vec<Violation>) {
    let Some(meta) = object.get("metadata") else {
        out.push(Violation::new("metadata", "required field \"metadata\" is missing"));
        return;
    };
    let Some(meta) = meta.as_object() else {
        out.push(Violation::new("metadata", format!("expected object, got {}", describe(meta))));
        return;
    };
    match meta.get("name") {
        None | Some(Value::Null) => out.push(Violation::new("metadata.name", "required field \"name\" is missing")),
        Some(Value::String(name)) => out.extend(rule.check(name).map(|m| Violation::new("metadata.name", m))),
        Some(other) => out.push(Violation::new("metadata.name", format!("expected string, got {}", describe(other)))),
    }
    if let Some(namespace) = meta.get("namespace").filter(|n| !n.is_null()) {
        match namespace.as_str() {
            Some(ns) => out.extend(NameRule::Label.check(ns).map(|m| Violation::new("metadata.namespace", m))),
            None => {
                out.push(Violation::new("metadata.namespace", format!("expected string, got {}", describe(namespace))))
            }
        }
    }
    for (field, values_are_labels) in [("labels", true), ("annotations", false)] {
        let Some(map) = meta.get(field).filter(|m| !m.is_null()) else { continue };
        let path = format!("metadata.{field}");
        let Some(map) = map.as_object() else {
            out.push(Violation::new(path, format!("expected object, got {}", describe(map))));
            continue;
        };
        for (key, value) in map {
            let at = child(&path, key);
            if let Some(problem) = qualified_name_problem(key) {
                out.push(Violation::new(&at, format!("invalid key \"{key}\": {problem}")));
            }
            match value.as_str() {
                None => out.push(Violation::new(&at, format!("expected string, got {}", describe(value)))),
                Some(text) if values_are_labels && !is_label_value(text) => out.push(Violation::new(
                    &at,
                    format!(
                        "invalid label value \"{text}\": at most 63 characters, alphanumerics, '-', '_' or '.', \
                         starting and ending alphanumeric"
                    ),
                )),
                Some(_) => {}
            }
        }
    }
}

/// Why `key` is not a qualified name (`[prefix/]name`, as label and annotation keys must be).
fn qualified_name_problem(key: &str) -> Option<String> {
    match check_qualified_name(key) {
        Ok(()) => None,
        Err(QualifiedNameError::Prefix(prefix)) => {
            NameRule::Subdomain.check(prefix).map(|problem| format!("prefix: {problem}"))
        }
        Err(QualifiedNameError::Name) => Some(
            "name part must be at most 63 characters, alphanumerics, '-', '_' or '.', starting and ending alphanumeric"
                .into(),
        ),
    }
}

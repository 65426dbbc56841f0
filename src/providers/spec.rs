//! Desired attributes as a typed spec: a provider declares the shape the compiler emits for its kind as a
//! `#[derive(Deserialize)]` struct and reads it with [`parse`], so a missing or mistyped attribute is one error
//! naming the kind and the field, never a panic or a silent default.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::ProviderError;
use crate::graph::Attrs;
use crate::providers::Result;

/// `attrs` (references already resolved) as the spec `T` of `kind`. Keys `T` does not name are ignored.
pub fn parse<T: DeserializeOwned>(kind: &str, attrs: &Attrs) -> Result<T> {
    serde_json::from_value(Value::Object(attrs.clone())).map_err(|e| {
        ProviderError::new(kind, "", format!("the desired attributes are not in the shape kbp's compiler emits: {e}"))
            .with_hint(
                "this is a bug in kbp's compiler or a hand-edited state file; please report it with the blueprint",
            )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    struct Spec {
        name: String,
        retention: i64,
    }

    fn attrs(v: Value) -> Attrs {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn reads_the_declared_fields_and_ignores_the_rest() {
        let s: Spec = parse("aws_x", &attrs(json!({"name": "q", "retention": 300, "tags": {}}))).unwrap();
        assert_eq!((s.name.as_str(), s.retention), ("q", 300));
    }

    #[test]
    fn a_missing_or_mistyped_field_names_kind_and_field() {
        let e = parse::<Spec>("aws_x", &attrs(json!({"name": "q"}))).unwrap_err();
        assert_eq!(e.operation, "aws_x");
        assert!(e.message.contains("retention"), "{e}");
        assert!(e.hint.is_some());
        let e = parse::<Spec>("aws_x", &attrs(json!({"name": 1, "retention": 300}))).unwrap_err();
        assert!(e.message.contains("invalid type"), "{e}");
    }
}

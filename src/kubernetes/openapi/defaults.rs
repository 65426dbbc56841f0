//! Structural defaulting: the API server fills in each field the object lacks whose schema has a `default`
//! before it validates, so the CEL rules see the defaulted object (the defaults themselves are not validated:
//! the server checked them when the CRD was created). kbp runs the rules on the same defaulted copy.

use serde_json::Value;

/// `value` with the schema's defaults filled in wherever a field with a default is missing.
pub(super) fn with_defaults(schema: &Value, value: &Value) -> Value {
    let mut out = value.clone();
    fill(schema, &mut out);
    out
}

fn fill(schema: &Value, value: &mut Value) {
    match value {
        Value::Object(fields) => {
            if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                for (name, sub) in properties {
                    if let (false, Some(default)) = (fields.contains_key(name), sub.get("default")) {
                        fields.insert(name.clone(), default.clone());
                    }
                    if let Some(field) = fields.get_mut(name) {
                        fill(sub, field);
                    }
                }
            } else if let Some(values) = schema.get("additionalProperties").filter(|a| a.is_object()) {
                fields.values_mut().for_each(|v| fill(values, v));
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.get("items").filter(|i| i.is_object()) {
                items.iter_mut().for_each(|v| fill(item, v));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn missing_fields_get_their_defaults_at_every_depth() {
        let schema = json!({ "properties": {
            "a": { "type": "string", "default": "x" },
            "list": { "items": { "properties": { "n": { "default": 1 } } } },
            "map": { "additionalProperties": { "properties": { "m": { "default": true } } } },
            "given": { "default": "unused" },
        } });
        let value = json!({ "list": [{}, { "n": 5 }], "map": { "k": {} }, "given": "mine" });
        assert_eq!(
            with_defaults(&schema, &value),
            json!({ "a": "x", "list": [{ "n": 1 }, { "n": 5 }], "map": { "k": { "m": true } }, "given": "mine" })
        );
    }
}

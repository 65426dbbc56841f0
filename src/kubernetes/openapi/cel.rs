//! The CEL rules of a schema (`x-kubernetes-validations`), listed with the path they guard. kbp does not
//! evaluate them: the Karpenter rules it relies on are checked where the blueprint is validated.

use serde_json::Value;

use crate::kubernetes::violation::child;

/// The CEL rules (`x-kubernetes-validations`) of a schema: (path, rule, message), paths written like violation
/// paths with `[*]` for any list item and `.*` for any map value. The path is empty for rules on the root.
pub fn cel_rules(schema: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    collect_cel_rules(schema, "", &mut out);
    out
}

fn collect_cel_rules(schema: &Value, path: &str, out: &mut Vec<(String, String, String)>) {
    for rule in schema.get("x-kubernetes-validations").and_then(Value::as_array).into_iter().flatten() {
        let text = rule.get("rule").and_then(Value::as_str).unwrap_or_default().to_string();
        let message = match (rule.get("message"), rule.get("messageExpression")) {
            (Some(Value::String(message)), _) => message.clone(),
            (_, Some(Value::String(expression))) => format!("messageExpression: {expression}"),
            _ => format!("failed rule: {text}"),
        };
        out.push((path.to_string(), text, message));
    }
    for (name, sub) in schema.get("properties").and_then(Value::as_object).into_iter().flatten() {
        collect_cel_rules(sub, &child(path, name), out);
    }
    if let Some(values) = schema.get("additionalProperties").filter(|a| a.is_object()) {
        collect_cel_rules(values, &if path.is_empty() { "*".to_string() } else { format!("{path}.*") }, out);
    }
    if let Some(items) = schema.get("items").filter(|i| i.is_object()) {
        collect_cel_rules(items, &format!("{path}[*]"), out);
    }
}

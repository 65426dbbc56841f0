//! Attribute values of desired resources. An attribute is plain JSON, except that an object of the form
//! `{"$ref": "<address>", "output": "<name>"}` stands for an output (ID, ARN, …) of another resource that is only
//! known once that resource exists. References are what make the graph's edges.

use serde_json::{json, Map, Value};

use super::Address;

/// A resource's attributes: a JSON object, keys in the order they were written.
pub type Attrs = Map<String, Value>;

const REF: &str = "$ref";
const OUTPUT: &str = "output";
const JOIN: &str = "$join";
const OBJECT: &str = "$object";
/// What an attribute shows in a plan while the value it references is not known yet.
pub const UNKNOWN: &str = "(known after apply)";

/// A reference to `output` of the resource at `address`.
pub fn reference(address: &Address, output: &str) -> Value {
    json!({ REF: address.to_string(), OUTPUT: output })
}

/// A string made of literal parts and references, joined once every reference is known (an ARN built from the
/// account ID, say).
pub fn join(parts: Vec<Value>) -> Value {
    json!({ JOIN: parts })
}

/// An object whose keys may themselves be references or joins (an IAM condition keyed by the cluster's OIDC
/// issuer, say): `pairs` are `(key, value)`.
pub fn object(pairs: Vec<(Value, Value)>) -> Value {
    json!({ OBJECT: pairs.into_iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>() })
}

/// If `v` is a reference, the address and output it names.
pub fn as_reference(v: &Value) -> Option<(Address, &str)> {
    let obj = v.as_object()?;
    if obj.len() != 2 {
        return None;
    }
    let address = obj.get(REF)?.as_str()?.parse().ok()?;
    let output = obj.get(OUTPUT)?.as_str()?;
    Some((address, output))
}

/// Every reference inside `v`, depth first.
pub fn references(v: &Value) -> Vec<(Address, String)> {
    let mut out = Vec::new();
    walk(v, &mut |r| {
        if let Some((a, o)) = as_reference(r) {
            out.push((a, o.to_string()));
            true
        } else {
            false
        }
    });
    out
}

fn walk(v: &Value, f: &mut impl FnMut(&Value) -> bool) {
    if f(v) {
        return;
    }
    match v {
        Value::Array(items) => items.iter().for_each(|i| walk(i, f)),
        Value::Object(m) => m.values().for_each(|i| walk(i, f)),
        _ => {}
    }
}

/// Replaces every reference in `v` with what `lookup` finds for it; a reference it cannot resolve becomes the
/// string [`UNKNOWN`] and is reported in the returned list.
pub fn resolve(v: &Value, lookup: &impl Fn(&Address, &str) -> Option<Value>) -> (Value, Vec<(Address, String)>) {
    let mut unresolved = Vec::new();
    let out = resolve_into(v, lookup, &mut unresolved);
    (out, unresolved)
}

fn resolve_into(
    v: &Value,
    lookup: &impl Fn(&Address, &str) -> Option<Value>,
    unresolved: &mut Vec<(Address, String)>,
) -> Value {
    if let Some((address, output)) = as_reference(v) {
        return match lookup(&address, output) {
            Some(found) => found,
            None => {
                unresolved.push((address, output.to_string()));
                Value::String(UNKNOWN.to_string())
            }
        };
    }
    if let Some(Value::Array(parts)) = v.as_object().filter(|o| o.len() == 1).and_then(|o| o.get(JOIN)) {
        let before = unresolved.len();
        let parts: Vec<Value> = parts.iter().map(|p| resolve_into(p, lookup, unresolved)).collect();
        if unresolved.len() > before {
            return Value::String(UNKNOWN.to_string());
        }
        return Value::String(
            parts.iter().map(|p| p.as_str().map(str::to_string).unwrap_or_else(|| p.to_string())).collect(),
        );
    }
    if let Some(Value::Array(pairs)) = v.as_object().filter(|o| o.len() == 1).and_then(|o| o.get(OBJECT)) {
        let mut out = Map::new();
        for pair in pairs {
            let Some([k, v]) = pair.as_array().map(Vec::as_slice) else { continue };
            let k = match resolve_into(k, lookup, unresolved) {
                Value::String(s) => s,
                other => other.to_string(),
            };
            out.insert(k, resolve_into(v, lookup, unresolved));
        }
        return Value::Object(out);
    }
    match v {
        Value::Array(items) => Value::Array(items.iter().map(|i| resolve_into(i, lookup, unresolved)).collect()),
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, i)| (k.clone(), resolve_into(i, lookup, unresolved))).collect())
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_and_resolves_nested_references() {
        let vpc = Address::new("vpc", "main");
        let v = json!({"vpc_id": reference(&vpc, "id"), "list": [reference(&vpc, "arn"), "x"]});
        assert_eq!(references(&v).len(), 2);
        let (out, missing) = resolve(&v, &|a, o| (o == "id" && a == &vpc).then(|| json!("vpc-1")));
        assert_eq!(out["vpc_id"], "vpc-1");
        assert_eq!(out["list"][0], UNKNOWN);
        assert_eq!(missing, vec![(vpc, "arn".to_string())]);
    }

    #[test]
    fn joins_literal_parts_and_references() {
        let id = Address::new("caller_identity", "current");
        let v = join(vec![json!("arn:aws:sqs:us-west-2:"), reference(&id, "account_id"), json!(":q")]);
        assert_eq!(references(&v).len(), 1);
        let (out, _) = resolve(&v, &|_, _| Some(json!("123")));
        assert_eq!(out, "arn:aws:sqs:us-west-2:123:q");
        let (out, missing) = resolve(&v, &|_, _| None);
        assert_eq!(out, UNKNOWN);
        assert_eq!(missing.len(), 1);
    }

    #[test]
    fn builds_objects_with_computed_keys() {
        let oidc = Address::new("iam_openid_connect_provider", "cluster");
        let v = object(vec![(join(vec![reference(&oidc, "issuer_host"), json!(":sub")]), json!("system:sa"))]);
        let (out, missing) = resolve(&v, &|_, _| Some(json!("oidc.example/id/X")));
        assert!(missing.is_empty());
        assert_eq!(out, json!({"oidc.example/id/X:sub": "system:sa"}));
    }

    #[test]
    fn an_object_with_other_keys_is_not_a_reference() {
        assert!(as_reference(&json!({"$ref": "vpc.main", "output": "id", "x": 1})).is_none());
    }
}

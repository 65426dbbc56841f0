//! IAM policy documents as kbp holds them: JSON objects in the attributes, strings on the wire.
//!
//! IAM hands documents back URL-encoded and in the shape it stored, which is not always the shape it was
//! given, and blueprints are free to write the same policy several ways (`"Action": "s3:Get*"` or
//! `["s3:Get*"]`). [`normalize`] maps semantically equal documents to one value so that comparing two
//! documents compares what they allow, not how they are spelled.

use serde_json::{Map, Value};

use crate::graph::Attrs;
use crate::providers::{ProviderError, Result};

/// Keys whose value is a string or a list of strings where order and a one-element list do not matter.
const STRING_SET_KEYS: &[&str] = &["Action", "NotAction", "Resource", "NotResource"];
/// Keys whose value is an object of string-or-list-of-strings (principal types, condition keys).
const PRINCIPAL_KEYS: &[&str] = &["Principal", "NotPrincipal"];

/// The document as the string IAM expects. A string attribute (a hand-written JSON document) is accepted too,
/// after checking that it parses.
pub fn to_aws(operation: &str, doc: &Value) -> Result<String> {
    match doc {
        Value::Object(_) => Ok(doc.to_string()),
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(v @ Value::Object(_)) => Ok(v.to_string()),
            _ => Err(not_a_document(operation, "the policy string is not a JSON object")),
        },
        _ => Err(not_a_document(operation, &format!("expected a JSON object, found `{doc}`"))),
    }
}

/// Parses a document as IAM returns it. IAM documents the result as URL-encoded (RFC 3986); the raw JSON is
/// accepted too, because a document that starts with `{` cannot be URL-encoded JSON and some endpoints skip
/// the encoding for policy versions.
pub fn from_aws(operation: &str, raw: &str) -> Result<Value> {
    let trimmed = raw.trim_start();
    let text = if trimmed.starts_with('{') {
        std::borrow::Cow::Borrowed(trimmed)
    } else {
        urlencoding::decode(trimmed).map_err(|e| {
            not_a_document(operation, &format!("IAM returned a policy that is not URL-encoded UTF-8: {e}"))
        })?
    };
    serde_json::from_str(&text)
        .map_err(|e| not_a_document(operation, &format!("IAM returned a policy that is not JSON: {e}")))
}

/// `attrs` with the document under `key` in canonical form (a JSON string parsed first): what a provider's
/// `canonical` returns, so that the diff compares the blueprint's document with what `read` reports.
pub fn canonical_in(mut attrs: Attrs, key: &str) -> Attrs {
    if let Some(doc) = attrs.get_mut(key) {
        *doc = normalize(as_document(doc));
    }
    attrs
}

/// Whether two documents (either may still be a JSON string) mean the same.
pub fn equivalent(a: &Value, b: &Value) -> bool {
    normalize(as_document(a)) == normalize(as_document(b))
}

fn as_document(v: &Value) -> Value {
    match v {
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| v.clone()),
        other => other.clone(),
    }
}

/// The canonical form of a policy document: `Statement` always a list; `Action`, `Resource`, principal and
/// condition values as a sorted, de-duplicated list, collapsed to a bare string when it has one element; object
/// keys in sorted order.
pub fn normalize(doc: Value) -> Value {
    let Value::Object(top) = doc else { return doc };
    let mut out = Map::new();
    for (k, v) in sorted(top) {
        let v = match k.as_str() {
            "Statement" => Value::Array(
                match v {
                    Value::Array(items) => items,
                    single => vec![single],
                }
                .into_iter()
                .map(statement)
                .collect(),
            ),
            _ => deep_sorted(v),
        };
        out.insert(k, v);
    }
    Value::Object(out)
}

fn statement(s: Value) -> Value {
    let Value::Object(fields) = s else { return s };
    let mut out = Map::new();
    for (k, v) in sorted(fields) {
        let v = if STRING_SET_KEYS.contains(&k.as_str()) {
            string_set(v)
        } else if PRINCIPAL_KEYS.contains(&k.as_str()) {
            map_values(v, string_set)
        } else if k == "Condition" {
            // {"StringEquals": {"aws:SourceAccount": ["1"]}}: operator → key → value(s).
            map_values(v, |keys| map_values(keys, string_set))
        } else {
            deep_sorted(v)
        };
        out.insert(k, v);
    }
    Value::Object(out)
}

/// Applies `f` to each value of an object (anything else, such as `"Principal": "*"`, is kept).
fn map_values(v: Value, f: impl Fn(Value) -> Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(sorted(m).into_iter().map(|(k, v)| (k, f(v))).collect()),
        other => other,
    }
}

fn string_set(v: Value) -> Value {
    match v {
        Value::Array(items) if items.iter().all(Value::is_string) => {
            let mut items: Vec<String> = items.into_iter().filter_map(|i| i.as_str().map(str::to_string)).collect();
            items.sort();
            items.dedup();
            if items.len() == 1 {
                Value::String(items.remove(0))
            } else {
                Value::Array(items.into_iter().map(Value::String).collect())
            }
        }
        other => deep_sorted(other),
    }
}

fn deep_sorted(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(sorted(m).into_iter().map(|(k, v)| (k, deep_sorted(v))).collect()),
        Value::Array(items) => Value::Array(items.into_iter().map(deep_sorted).collect()),
        other => other,
    }
}

fn sorted(m: Map<String, Value>) -> Vec<(String, Value)> {
    let mut entries: Vec<(String, Value)> = m.into_iter().collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    entries
}

fn not_a_document(operation: &str, message: &str) -> ProviderError {
    ProviderError::new(operation, "InvalidPolicyDocument", message)
        .with_hint("write the policy as a TOML/JSON table with `Version` and `Statement`, as in the IAM docs")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn trust(principal: Value, action: Value) -> Value {
        json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": principal, "Action": action}]})
    }

    #[test]
    fn one_element_lists_and_bare_strings_are_equal() {
        let a = trust(json!({"Service": "ec2.amazonaws.com"}), json!("sts:AssumeRole"));
        let b = trust(json!({"Service": ["ec2.amazonaws.com"]}), json!(["sts:AssumeRole"]));
        assert_eq!(normalize(a.clone()), normalize(b.clone()));
        assert!(equivalent(&a, &b));
        assert_eq!(normalize(b)["Statement"][0]["Action"], "sts:AssumeRole");
    }

    #[test]
    fn list_order_and_duplicates_do_not_matter_but_contents_do() {
        let a = trust(json!({"Service": ["eks.amazonaws.com", "ec2.amazonaws.com"]}), json!(["b", "a", "a"]));
        let b = trust(json!({"Service": ["ec2.amazonaws.com", "eks.amazonaws.com"]}), json!(["a", "b"]));
        assert!(equivalent(&a, &b));
        let c = trust(json!({"Service": ["ec2.amazonaws.com"]}), json!(["a", "b"]));
        assert!(!equivalent(&a, &c));
    }

    #[test]
    fn a_single_statement_object_equals_a_list_of_one() {
        let s = json!({"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"});
        let a = json!({"Version": "2012-10-17", "Statement": s.clone()});
        let b = json!({"Version": "2012-10-17", "Statement": [s]});
        assert!(equivalent(&a, &b));
    }

    #[test]
    fn condition_values_are_normalised_and_keys_sorted() {
        let a = json!({"Statement": [{"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": "*",
            "Condition": {"StringEquals": {"aws:SourceAccount": ["111"]}}}], "Version": "2012-10-17"});
        let b = json!({"Version": "2012-10-17", "Statement": [{"Resource": ["*"], "Effect": "Allow",
            "Condition": {"StringEquals": {"aws:SourceAccount": "111"}}, "Action": ["sqs:SendMessage"]}]});
        assert!(equivalent(&a, &b));
        let normalized = normalize(b);
        let keys: Vec<&String> = normalized["Statement"][0].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["Action", "Condition", "Effect", "Resource"]);
    }

    #[test]
    fn statement_order_matters_only_as_written() {
        let s1 = json!({"Effect": "Allow", "Action": "a", "Resource": "*"});
        let s2 = json!({"Effect": "Deny", "Action": "b", "Resource": "*"});
        let a = json!({"Statement": [s1.clone(), s2.clone()]});
        let b = json!({"Statement": [s2, s1]});
        // Statement order carries no meaning for IAM, but IAM keeps it as given; kbp keeps it too, so a
        // reordered blueprint shows as a (harmless) change rather than being hidden.
        assert!(!equivalent(&a, &b));
    }

    #[test]
    fn reads_url_encoded_and_raw_documents() {
        let doc =
            json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:Get*", "Resource": "*"}]});
        let encoded = urlencoding::encode(&doc.to_string()).into_owned();
        assert_eq!(from_aws("iam:GetRole", &encoded).unwrap(), doc);
        assert_eq!(from_aws("iam:GetRole", &doc.to_string()).unwrap(), doc);
        assert!(from_aws("iam:GetRole", "%7Bnot").is_err());
    }

    #[test]
    fn writes_objects_and_accepts_json_strings() {
        let doc = json!({"Version": "2012-10-17", "Statement": []});
        assert_eq!(to_aws("iam:CreatePolicy", &doc).unwrap(), doc.to_string());
        assert_eq!(to_aws("iam:CreatePolicy", &Value::String(doc.to_string())).unwrap(), doc.to_string());
        let err = to_aws("iam:CreatePolicy", &json!(["x"])).unwrap_err();
        assert_eq!(err.code, "InvalidPolicyDocument");
        assert!(err.hint.is_some());
    }

    #[test]
    fn canonical_attrs_match_what_read_reports() {
        let written = trust(json!({"Service": ["ec2.amazonaws.com"]}), json!(["sts:AssumeRole"]));
        let stored = trust(json!({"Service": "ec2.amazonaws.com"}), json!("sts:AssumeRole"));
        let mut attrs = Attrs::new();
        attrs.insert("name".into(), json!("r"));
        attrs.insert("assume_role_policy".into(), written);
        let canonical = canonical_in(attrs.clone(), "assume_role_policy");
        assert_eq!(canonical["assume_role_policy"], normalize(stored));
        assert_eq!(canonical["name"], "r");
        let as_string = canonical_in(
            Attrs::from_iter([("p".to_string(), Value::String(attrs["assume_role_policy"].to_string()))]),
            "p",
        );
        assert_eq!(as_string["p"], canonical["assume_role_policy"]);
        assert_eq!(canonical_in(Attrs::new(), "p"), Attrs::new());
    }
}

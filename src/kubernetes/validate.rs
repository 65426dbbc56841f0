//! Every manifest kbp applies, checked the way the API server would check it: custom objects against the
//! release's CRD schemas (`openapi`), built-in kinds against the Kubernetes API types (`builtin`). Values not known
//! until apply (a security group ID) are skipped, since there is nothing to check yet.

use serde_json::Value;

use super::violation::Violation;
use super::{builtin, openapi};

/// Problems of `objects`, one line each (`Kind name: path: message`). Without `crds`, custom objects are not
/// checked (there is no schema to check them against).
pub fn all(crds: Option<&[Value]>, objects: &[Value], unknown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut validator = crds.map(openapi::Validator::new);
    for object in objects {
        let custom =
            object["apiVersion"].as_str().is_some_and(|v| v.contains(".k8s.aws/") || v.starts_with("karpenter.sh/"));
        let violations = match (custom, validator.as_mut()) {
            (true, None) => continue,
            (true, Some(validator)) => validator.custom_object(object),
            (false, _) => builtin::validate_builtin_object(object),
        };
        let name = format!(
            "{} {}",
            object["kind"].as_str().unwrap_or("?"),
            object["metadata"]["name"].as_str().unwrap_or("?")
        );
        for v in violations.into_iter().filter(|v| at(object, &v.path).and_then(Value::as_str) != Some(unknown)) {
            out.push(format!("  {name}: {}: {}", v.path, v.message));
        }
    }
    out
}

/// What the CRDs of `validator` refuse in the custom object `object`, leaving out values not known until apply
/// (`unknown`).
pub fn custom_object(validator: &mut openapi::Validator, object: &Value, unknown: &str) -> Vec<Violation> {
    validator
        .custom_object(object)
        .into_iter()
        .filter(|v| at(object, &v.path).and_then(Value::as_str) != Some(unknown))
        .collect()
}

/// The value at a violation path such as `spec.terms[1].id`.
fn at<'a>(object: &'a Value, path: &str) -> Option<&'a Value> {
    let mut v = object;
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (key, indexes) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            v = v.get(key)?;
        }
        for index in indexes.split('[').filter(|s| !s.is_empty()) {
            v = v.get(index.trim_end_matches(']').parse::<usize>().ok()?)?;
        }
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_reach_nested_list_items() {
        let o = json!({ "spec": { "terms": [{ "id": "a" }, { "id": "b" }] } });
        assert_eq!(at(&o, "spec.terms[1].id"), Some(&json!("b")));
        assert_eq!(at(&o, "spec.terms[5].id"), None);
    }
}

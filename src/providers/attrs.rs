//! Reading recorded attributes, building outputs and treating "not found" as "gone": what every provider does the
//! same way, so each of these jobs has one helper with one meaning. Desired attributes are read whole, as the
//! kind's spec ([`super::spec`]).

use serde_json::Value;

use crate::graph::Attrs;
use crate::providers::Result;

/// A string attribute that may be left out (absent or null); an empty string counts as left out.
pub fn optional_str<'a>(attrs: &'a Attrs, key: &str) -> Option<&'a str> {
    attrs.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// The map inside a `json!({...})` literal, which is always an object.
pub fn object(v: Value) -> Attrs {
    match v {
        Value::Object(m) => m,
        other => panic!("invariant: attributes are built from a JSON object literal, got {other}"),
    }
}

/// `Some(s)` as a JSON string, `None` as null: how an unset optional attribute reads back.
pub fn nullable(s: Option<&str>) -> Value {
    s.map_or(Value::Null, |s| Value::String(s.to_string()))
}

/// `Ok(None)` for a call whose target no longer exists ([`crate::providers::ProviderError::is_not_found`]), so reads can treat it
/// as gone.
pub fn absent_if_gone<T>(r: Result<T>) -> Result<Option<T>> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

/// Success for a removal whose target is already gone: deleting what is not there succeeds.
pub fn ok_if_gone<T>(r: Result<T>) -> Result<()> {
    absent_if_gone(r).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::ProviderError;
    use serde_json::json;

    #[test]
    fn absent_if_gone_only_swallows_not_found() {
        let nf = ProviderError::new("ec2:DescribeVpcs", "InvalidVpcID.NotFound", "");
        assert_eq!(absent_if_gone::<()>(Err(nf)).unwrap(), None);
        let other = ProviderError::new("ec2:DescribeVpcs", "UnauthorizedOperation", "");
        assert!(absent_if_gone::<()>(Err(other)).is_err());
    }

    #[test]
    fn an_empty_or_null_optional_string_is_left_out() {
        let a = object(json!({ "empty": "", "name": "x", "null": null }));
        assert_eq!(optional_str(&a, "empty"), None);
        assert_eq!(optional_str(&a, "null"), None);
        assert_eq!(optional_str(&a, "name"), Some("x"));
        assert_eq!(optional_str(&a, "absent"), None);
    }
}

//! Reading desired attributes and treating "not found" as "gone": what every provider does the same way.

use serde_json::Value;

use super::ProviderError;
use crate::graph::Attrs;

/// A string attribute the compiler always sets.
pub fn required_str<'a>(kind: &str, attrs: &'a Attrs, key: &str) -> Result<&'a str, ProviderError> {
    attrs.get(key).and_then(Value::as_str).ok_or_else(|| missing(kind, key, "a string"))
}

/// An attribute the compiler always sets, of any JSON type (policy documents).
pub fn required<'a>(kind: &str, attrs: &'a Attrs, key: &str) -> Result<&'a Value, ProviderError> {
    attrs.get(key).filter(|v| !v.is_null()).ok_or_else(|| missing(kind, key, "a value"))
}

/// A string attribute that may be left out; an empty string counts as left out.
pub fn optional_str<'a>(attrs: &'a Attrs, key: &str) -> Option<&'a str> {
    attrs.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

fn missing(kind: &str, key: &str, what: &str) -> ProviderError {
    ProviderError::new(kind, "", format!("attribute `{key}` is missing or is not {what}"))
        .with_hint("this is a bug in the blueprint compiler; please report it with the blueprint")
}

/// `Ok(None)` for a call whose target no longer exists.
pub fn absent_if_gone<T>(r: Result<T, ProviderError>) -> Result<Option<T>, ProviderError> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

/// Success for a removal whose target is already gone.
pub fn ok_if_gone(r: Result<(), ProviderError>) -> Result<(), ProviderError> {
    absent_if_gone(r).map(drop)
}

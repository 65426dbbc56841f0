//! What every IAM provider needs besides its own calls: sending a request under the retry policy, reading
//! desired attributes, treating "no such entity" as "gone", and explaining a name someone else holds.

use std::future::Future;

use aws_sdk_iam::error::{ProvideErrorMetadata, SdkError};
use serde_json::Value;

use crate::graph::Attrs;
use crate::providers::{Context, ProviderError};

pub use crate::providers::send::send;

/// A delete that IAM refuses with `DeleteConflict` until the detachments made just before it are seen;
/// deleting what is already gone succeeds.
pub async fn delete_when_released<O, E, F, Fut>(cx: &Context, op: &str, request: F) -> Result<(), ProviderError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<O, SdkError<E>>>,
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    ok_if_gone(send(cx, op, &["DeleteConflict"], request).await.map(drop))
}

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

/// IAM paths default to `/`.
pub fn path(attrs: &Attrs) -> &str {
    optional_str(attrs, "path").unwrap_or("/")
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

/// Names are deterministic, so a name already taken means a resource kbp did not record: another stack's, or
/// this stack's from a state file that was lost.
pub fn explain_taken(e: ProviderError, what: &str, name: &str) -> ProviderError {
    if e.is("EntityAlreadyExists") {
        e.with_hint(format!(
            "an IAM {what} named `{name}` already exists but is not in this stack's state; if it belongs to this \
             stack (tag kbp:stack), run `kbp apply` again to adopt it, otherwise delete or rename it"
        ))
    } else {
        e
    }
}

/// The error for an update whose resource disappeared since the plan was made.
pub fn vanished(operation: &str, what: &str, id: &str) -> ProviderError {
    ProviderError::new(operation, "NoSuchEntity", format!("{what} `{id}` no longer exists"))
        .with_hint(format!("run `kbp plan` again: the {what} will be planned for creation"))
}

/// The map inside a `json!({...})` literal, which is always an object.
pub fn object(v: Value) -> Attrs {
    match v {
        Value::Object(m) => m,
        other => panic!("invariant: attributes are built from a JSON object literal, got {other}"),
    }
}

/// Splits a composite ID such as `<role>:<name>` at the first `sep`; both parts must be non-empty.
pub fn split_id<'a>(kind: &str, id: &'a str, sep: char, shape: &str) -> Result<(&'a str, &'a str), ProviderError> {
    id.split_once(sep).filter(|(a, b)| !a.is_empty() && !b.is_empty()).ok_or_else(|| {
        ProviderError::new(kind, "", format!("`{id}` is not an ID of this kind (expected {shape})"))
            .with_hint("the state file was edited by hand or is corrupt; fix the ID or remove the entry")
    })
}

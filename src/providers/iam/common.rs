//! What every IAM provider needs besides its own calls: sending a request under the retry policy, reading
//! desired attributes, treating "no such entity" as "gone", and explaining a name someone else holds.

use std::future::Future;

use aws_sdk_iam::error::{ProvideErrorMetadata, SdkError};
use serde_json::Value;

use crate::graph::Attrs;
use crate::providers::{Context, ProviderError};

pub use crate::providers::attrs::{absent_if_gone, ok_if_gone, optional_str, required, required_str};
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

/// IAM paths default to `/`.
pub fn path(attrs: &Attrs) -> &str {
    optional_str(attrs, "path").unwrap_or("/")
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

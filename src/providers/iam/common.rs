//! What every IAM provider needs besides its own calls: sending a request under the retry policy, treating
//! "no such entity" as "gone", finding an entity by its deterministic name
//! ([`Entity`]), naming a policy hung on a role ([`OnRole`]), and explaining a name someone else holds.

use async_trait::async_trait;
use aws_sdk_iam::types::Tag;
use serde_json::Value;

use super::tagging;
use crate::graph::Attrs;
use crate::providers::{Applied, Context, ProviderError, Result};

pub(crate) use crate::providers::attrs::{absent_if_gone, object};
pub(crate) use crate::providers::send::{remove, send};

/// The code IAM refuses a delete with until the detachments made just before it are seen.
pub(crate) const DELETE_CONFLICT: &[&str] = &["DeleteConflict"];

/// An IAM entity kbp names deterministically and reads with one Get call: a role, a managed policy, an instance
/// profile, an OIDC provider. Each kind's file implements it with its Get call.
#[async_trait]
pub(crate) trait Entity: Sized + Send {
    /// What messages call one: `role`, `policy`, …
    const NOUN: &'static str;
    /// Its Get operation, such as `iam:GetRole`.
    const GET: &'static str;

    /// Its tags, as the Get call returns them.
    const TAGS: fn(&Self) -> &[Tag];

    /// The entity named (or, for policies and OIDC providers, with the ARN) `id`; `None` when IAM answers
    /// NoSuchEntity.
    async fn get(cx: &Context, id: &str) -> Result<Option<Self>>;
}

/// Who holds an IAM name, by the tags its Get call answered with.
pub(crate) fn holder(tags: Option<&[Tag]>) -> crate::providers::preflight::Holder {
    let tags = tags.unwrap_or_default().iter().map(|t| (t.key().to_string(), t.value().to_string()));
    crate::providers::preflight::Holder::tagged(tags)
}

/// An IAM entity's tags, from its Get call; empty when the entity vanished since it was listed.
pub(crate) async fn entity_tags<T: Entity>(
    cx: &Context,
    id: &str,
) -> Result<std::collections::BTreeMap<String, String>> {
    let entity = T::get(cx, id).await?;
    Ok(entity.iter().flat_map(|e| (T::TAGS)(e)).map(|t| (t.key.clone(), t.value.clone())).collect())
}

/// Implements [`Entity`] for an IAM type: its noun, its Get operation and the call that reads one by `id`
/// (`|cx, id| request`), and where the answer holds it (`|out| entity`, an `Option`). NoSuchEntity is gone.
macro_rules! entity {
    ($ty:ty, $noun:literal, $get:literal, |$cx:ident, $id:ident| $request:expr, |$out:ident| $take:expr) => {
        #[async_trait::async_trait]
        impl $crate::providers::iam::common::Entity for $ty {
            const NOUN: &'static str = $noun;
            const GET: &'static str = $get;
            const TAGS: fn(&Self) -> &[aws_sdk_iam::types::Tag] = Self::tags;

            async fn get($cx: &Context, $id: &str) -> Result<Option<Self>> {
                let r = $crate::providers::send::send($cx, Self::GET, &[], || $request.send()).await;
                Ok($crate::providers::attrs::absent_if_gone(r)?.and_then(|$out| $take))
            }
        }
    };
}
pub(crate) use entity;

/// The entity `id` if `find` may adopt it: it exists and carries this stack's `kbp:stack` tag.
pub(crate) async fn owned<T: Entity>(cx: &Context, id: &str) -> Result<Option<T>> {
    Ok(T::get(cx, id).await?.filter(|e| tagging::owned_by((T::TAGS)(e), &cx.stack)))
}

/// `find` for an entity whose ID is its name (roles, instance profiles): the name IAM reports (`name_of`), if an
/// entity of the desired `name` exists and is this stack's.
pub(crate) async fn find_named<T: Entity>(cx: &Context, name: &str, name_of: fn(&T) -> &str) -> Result<Option<String>> {
    Ok(owned::<T>(cx, name).await?.map(|e| name_of(&e).to_string()))
}

/// The entity `id` an update starts from; an error saying to plan again when it disappeared since the plan.
pub(crate) async fn existing<T: Entity>(cx: &Context, id: &str) -> Result<T> {
    T::get(cx, id).await?.ok_or_else(|| vanished(T::GET, T::NOUN, id))
}

/// How the two kinds that hang a policy on a role name one: an inline policy (`<role>:<name>`) and an attached
/// managed policy (`<role>/<policy_arn>`). The ID joins the role and the policy with `sep`, which a role name
/// cannot contain; attributes and outputs are both parts (and the ID).
pub(crate) struct OnRole {
    pub kind: &'static str,
    pub sep: char,
    /// The attribute that names the policy: `name` or `policy_arn`.
    pub policy: &'static str,
}

impl OnRole {
    /// The role and the policy of an ID; both must be non-empty.
    pub(crate) fn split<'a>(&self, id: &'a str) -> Result<(&'a str, &'a str)> {
        id.split_once(self.sep).filter(|(a, b)| !a.is_empty() && !b.is_empty()).ok_or_else(|| {
            let shape = format!("<role>{}<{}>", self.sep, self.policy);
            ProviderError::new(self.kind, "", format!("`{id}` is not an ID of this kind (expected {shape})"))
                .with_hint("the state file was edited by hand or is corrupt; fix the ID or remove the entry")
        })
    }

    /// The attributes `role` and the policy's.
    pub(crate) fn attrs(&self, role: &str, policy: &str) -> Attrs {
        let mut a = Attrs::new();
        a.insert("role".to_string(), Value::from(role));
        a.insert(self.policy.to_string(), Value::from(policy));
        a
    }

    pub(crate) fn applied(&self, role: &str, policy: &str) -> Applied {
        let id = format!("{role}{}{policy}", self.sep);
        let mut outputs = self.attrs(role, policy);
        outputs.insert("id".to_string(), Value::from(id.as_str()));
        Applied { id, outputs }
    }
}

/// Names are deterministic, so a name already taken means a resource kbp did not record: another stack's, or
/// this stack's from a state file that was lost.
pub(crate) fn explain_taken(e: ProviderError, what: &str, name: &str) -> ProviderError {
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
pub(crate) fn vanished(operation: &str, what: &str, id: &str) -> ProviderError {
    ProviderError::new(operation, "NoSuchEntity", format!("{what} `{id}` no longer exists"))
        .with_hint(format!("run `kbp plan` again: the {what} will be planned for creation"))
}

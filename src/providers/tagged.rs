//! Finding a stack by its tags alone (`kbp destroy --from-tags`, `kbp gc`, a create whose answer was lost):
//! every kind whose descriptor says [`WithoutState::Tags`](super::WithoutState::Tags) lists, with
//! [`Provider::tagged`](super::Provider::tagged), what carries `kbp:stack=<name>` (and, when the stack's ID is
//! known, no other `kbp:stack-id`), as [`Found`] entries naming what each uses so the engine orders the deletes.
//!
//! One [`Search`] is one look. The answers several kinds read from (EC2's internet gateways, which NAT gateways
//! go before; the EKS cluster, whose node groups are the stack's only if it is; the one tag query that covers
//! queues, rules and keys) are sent once per search and never reused by the next look, which must see what is
//! left then.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use futures::{StreamExt, TryStreamExt};

use super::answers::Answers;
use super::stack_tags::{self, ByArn};
use super::tags::{display_address, ADDRESS, STACK, STACK_ID};
use super::{Context, Found, Result};

/// How many per-resource reads (an IAM policy's tags, a key's) a search sends at once.
pub const PARALLEL_LOOKUPS: usize = 8;

/// Which stack: its name, and its ID (the state lineage) when known.
#[derive(Debug, Clone, Copy)]
pub struct Owner<'a> {
    /// The stack's name (`kbp:stack`).
    pub name: &'a str,
    /// The stack's ID (`kbp:stack-id`, its state's lineage), when known.
    pub id: Option<&'a str>,
}

impl Owner<'_> {
    /// Whether `tags` say the resource is this stack's: `kbp:stack` is the name, and `kbp:stack-id`, when both
    /// sides know one, is the ID (stacks made before the ID tag existed carry none, and still count).
    pub fn owns<'t>(&self, tag: impl Fn(&str) -> Option<&'t str>) -> bool {
        tag(STACK) == Some(self.name)
            && match (self.id, tag(STACK_ID)) {
                (Some(id), Some(theirs)) => id == theirs,
                _ => true,
            }
    }

    /// [`Owner::owns`] for tags as a map.
    pub fn owns_map(&self, tags: &BTreeMap<String, String>) -> bool {
        self.owns(|k| tags.get(k).map(String::as_str))
    }
}

/// One look for a stack's resources by their tags; see the module documentation.
pub struct Search<'a> {
    /// Whose resources are looked for.
    pub owner: Owner<'a>,
    answers: Answers,
}

impl<'a> Search<'a> {
    /// A search for the resources of `owner`, with nothing asked of AWS yet.
    pub fn new(owner: Owner<'a>) -> Self {
        Search { owner, answers: Answers::default() }
    }

    /// The stack's name, which is also its EKS cluster's.
    pub fn stack(&self) -> &'a str {
        self.owner.name
    }

    /// The answer to the request `key` names, sent by the first kind of this search to ask and shared with the
    /// others ([`Answers::get`]).
    pub async fn shared<T, F, Fut>(&self, key: &str, send: F) -> Result<Arc<T>>
    where
        T: Send + Sync + 'static,
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        self.answers.get(key, send).await
    }

    /// The resources of AWS service `service` (`sqs`, `events`, `kms`) that the Resource Groups Tagging API says
    /// are the stack's, as (the ARN's resource part, the `kbp:address` tag). `None` when the caller may not ask
    /// it: then each service is listed instead. One query per search answers every kind.
    pub async fn in_tag_query(&self, cx: &Context, service: &str) -> Option<Vec<(String, Option<String>)>> {
        let name = self.owner.name;
        // Boxed: nested in each kind's search, the query's future is too deep for the compiler to lay out.
        let query = || futures::FutureExt::boxed(async move { Ok(stack_tags::find(cx, name).await) });
        let answer = futures::FutureExt::boxed(self.shared("tag:GetResources", query)).await;
        let answer: Arc<Option<ByArn>> = answer.ok()?;
        let tagged = answer.as_ref().as_ref()?;
        let ours = tagged.iter().filter(|(_, tags)| self.owner.owns_map(tags));
        Some(
            ours.filter_map(|(arn, tags)| match arn.splitn(6, ':').collect::<Vec<_>>().as_slice() {
                [_, _, s, _, _, resource] if *s == service => Some((resource.to_string(), tags.get(ADDRESS).cloned())),
                _ => None,
            })
            .collect(),
        )
    }
}

/// A found resource of `kind` with ID `id`; a `kbp:address` tag as `name`, of either form, is shown (and matched
/// against state) as the address itself.
pub fn found(kind: &'static str, id: &str, name: Option<String>, detail: String, uses: Vec<String>) -> Found {
    let name = name.map(|n| display_address(&n));
    Found { kind, id: id.to_string(), name, detail, uses, after: Vec::new(), attrs: Default::default() }
}

/// The last segment of an ARN's resource (`arn:aws:iam::1:role/x` → `x`), which is how teardown names IAM roles
/// and KMS keys.
pub fn arn_name(arn: &str) -> String {
    arn.rsplit('/').next().unwrap_or(arn).to_string()
}

/// An item a List call named: its provider ID, what its tags are read by (a URL, an ARN), and the name to show
/// when it has no `kbp:address` tag.
pub struct Listed {
    /// The provider ID of the item.
    pub id: String,
    /// What its tags are read by: a queue URL, an ARN.
    pub tags_at: String,
    /// The name to show when it has no `kbp:address` tag.
    pub name: Option<String>,
}

/// Those of the `listed` items whose tags, read one after another with `tags_of` (`None` when the item is gone
/// since it was listed), say they are the stack's, as `kind`.
pub async fn owned_by_tags<F, Fut>(
    owner: Owner<'_>,
    kind: &'static str,
    listed: impl Iterator<Item = Listed>,
    tags_of: F,
) -> Result<Vec<Found>>
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<Option<BTreeMap<String, String>>>>,
{
    let mut items = Vec::new();
    for item in listed {
        let Some(tags) = tags_of(item.tags_at).await? else { continue };
        if owner.owns_map(&tags) {
            let name = tags.get(ADDRESS).cloned().or(item.name);
            items.push(found(kind, &item.id, name, String::new(), Vec::new()));
        }
    }
    Ok(items)
}

/// Those of `ids` whose tags, read [`PARALLEL_LOOKUPS`] at a time with `tags_of` (empty when one is gone since it
/// was listed), say they are the stack's, as `kind` shown by their `kbp:address`.
pub async fn owned_among<F, Fut>(
    search: &Search<'_>,
    kind: &'static str,
    ids: Vec<String>,
    tags_of: F,
) -> Result<Vec<Found>>
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<BTreeMap<String, String>>>,
{
    let tags_of = &tags_of;
    let listed: Vec<Option<Found>> = futures::stream::iter(ids)
        .map(|id| async move {
            let tags = tags_of(id.clone()).await?;
            let address = tags.get(ADDRESS).cloned();
            Ok::<_, super::ProviderError>(
                search.owner.owns_map(&tags).then(|| found(kind, &id, address, String::new(), Vec::new())),
            )
        })
        .buffer_unordered(PARALLEL_LOOKUPS)
        .try_collect()
        .await?;
    Ok(listed.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stack_is_its_name_and_its_id_when_both_sides_know_one() {
        let tags = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(key, _)| *key == k).map(|(_, v)| *v)
        };
        let by_name = Owner { name: "sbx", id: None };
        let by_id = Owner { name: "sbx", id: Some("L1") };
        assert!(by_name.owns(tags(&[(STACK, "sbx"), (STACK_ID, "L2")])));
        assert!(by_id.owns(tags(&[(STACK, "sbx"), (STACK_ID, "L1")])));
        assert!(!by_id.owns(tags(&[(STACK, "sbx"), (STACK_ID, "L2")])), "another stack of the same name");
        assert!(by_id.owns(tags(&[(STACK, "sbx")])), "made before stacks had IDs");
        assert!(!by_id.owns(tags(&[(STACK, "other"), (STACK_ID, "L1")])));
    }

    #[test]
    fn iam_names_come_from_arns() {
        assert_eq!(arn_name("arn:aws:iam::123456789012:role/sbx-cluster"), "sbx-cluster");
        assert_eq!(arn_name("arn:aws:kms:us-west-2:123456789012:key/abcd"), "abcd");
    }
}

//! Tags on EKS resources (clusters, node groups, add-ons, access entries, Pod Identity associations): given as a
//! map at creation, so a resource is never untagged; read back from each Describe call; reconciled with
//! TagResource/UntagResource on the resource's ARN; and checked before `find` adopts a resource.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::send;
use crate::graph::Address;
use crate::providers::{tags, Context, Desired, Result};

/// The tags of a create call: the desired `tags` merged with `kbp:stack` and `kbp:address`.
pub(super) fn on_create(desired: &Desired<'_>) -> HashMap<String, String> {
    desired.tags().into_iter().collect()
}

/// The `tags` attribute as read back: the user's tags, without kbp's own.
pub(super) fn attr(current: Option<&HashMap<String, String>>) -> Value {
    Value::Object(tags::user_tags(current.into_iter().flatten().map(|(k, v)| (k.clone(), v.clone()))))
}

/// Whether the resource carries this stack's `kbp:stack` tag, so `find` may adopt it.
pub(super) fn owned_by(current: Option<&HashMap<String, String>>, stack: &str) -> bool {
    current.and_then(|t| t.get(tags::STACK)).is_some_and(|s| s == stack)
}

/// The address in the resource's `kbp:address` tag: what a delete (which is given no address) reports its
/// progress under.
pub(super) fn address(current: Option<&HashMap<String, String>>) -> Option<Address> {
    current.and_then(|t| t.get(tags::ADDRESS)).and_then(|a| tags::parse_address(a))
}

/// Makes the tags on `arn` exactly the desired ones (user tags plus kbp tags). Tags under `aws:` are AWS's and
/// cannot be removed.
pub(super) async fn reconcile(
    cx: &Context,
    arn: &str,
    current: Option<&HashMap<String, String>>,
    desired: &Desired<'_>,
) -> Result<()> {
    let want = desired.tags();
    let have: BTreeMap<String, String> = current.into_iter().flatten().map(|(k, v)| (k.clone(), v.clone())).collect();
    let tags::TagChanges { set, remove } = tags::changes(&have, &want);
    // Untag first, so that the 50-tag limit is not crossed on the way.
    if !remove.is_empty() {
        let keys = Some(remove);
        send(cx, "eks:UntagResource", &[], || {
            cx.eks().untag_resource().resource_arn(arn).set_tag_keys(keys.clone()).send()
        })
        .await?;
    }
    if !set.is_empty() {
        let set: Option<HashMap<String, String>> = Some(set.into_iter().collect());
        send(cx, "eks:TagResource", &[], || cx.eks().tag_resource().resource_arn(arn).set_tags(set.clone()).send())
            .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::providers::tags::{changes, pairs as map, TagChanges};

    #[test]
    fn changes_set_new_and_changed_and_remove_extra_but_not_aws_tags() {
        let have = map(&[("a", "1"), ("b", "2"), ("aws:eks:cluster-name", "x"), ("old", "o")]);
        let want = map(&[("a", "1"), ("b", "3"), ("c", "4")]);
        let TagChanges { set, remove } = changes(&have, &want);
        assert_eq!(set.into_iter().collect::<BTreeMap<_, _>>(), map(&[("b", "3"), ("c", "4")]));
        assert_eq!(remove, ["old"]);
    }

    #[test]
    fn reads_stack_ownership_and_address() {
        let t: HashMap<String, String> =
            map(&[("kbp:stack", "prod"), ("kbp:address", "eks_cluster.main"), ("team", "a")]).into_iter().collect();
        assert!(owned_by(Some(&t), "prod"));
        assert!(!owned_by(Some(&t), "dev"));
        assert!(!owned_by(None, "prod"));
        assert_eq!(address(Some(&t)), Some(Address::new("eks_cluster", "main")));
        assert_eq!(attr(Some(&t)), serde_json::json!({"team": "a"}));
    }
}

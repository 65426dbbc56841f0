//! Every kbp stack in a region (`kbp gc`): the `kbp:stack` values on VPCs and EKS clusters, told apart by their
//! `kbp:stack-id`, with the owner and expiry tags of sandbox stacks.
//!
//! One query finds them all: the Resource Groups Tagging API's GetResources for the resources of those two types
//! that carry `kbp:stack`, a page per 100 resources, however many clusters the region holds besides kbp's.
//! Asking each service instead took a DescribeCluster for every cluster of the region, kbp's or not, since
//! ListClusters names clusters without their tags. The tagging API does not say when a cluster was made; that
//! is read from each of kbp's clusters only when the caller needs it (`gc --older-than`).

use std::collections::BTreeMap;

use futures::{StreamExt, TryStreamExt};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::StackInfo;
use crate::providers::tagged::PARALLEL_LOOKUPS;
use crate::providers::tags::{EXPIRES, OWNER, STACK, STACK_ID};
use crate::providers::{stack_tags, Context, ProviderError};

/// What a stack is known by: every kbp stack has a VPC or a cluster (or both) with its tags.
const STACK_RESOURCE_TYPES: [&str; 2] = ["ec2:vpc", "eks:cluster"];

/// A stack's key: its name and `kbp:stack-id`.
type StackKey = (String, Option<String>);

/// The kbp stacks in the region: the `kbp:stack` (and `kbp:stack-id`) values on VPCs and EKS clusters, with
/// their owner and expiry, and with `creation_times`, when their cluster was created (one DescribeCluster per
/// kbp cluster). Sorted by name, then ID.
pub async fn stacks(cx: &Context, creation_times: bool) -> Result<Vec<StackInfo>, ProviderError> {
    let resources = stack_tags::tagged(cx, None, &STACK_RESOURCE_TYPES).await?;

    let mut found: BTreeMap<StackKey, StackInfo> = BTreeMap::new();
    let mut clusters: Vec<(StackKey, String)> = Vec::new();
    for (arn, tags) in &resources {
        let tag = |k: &str| tags.get(k).cloned();
        let Some(name) = tag(STACK) else { continue };
        let id = tag(STACK_ID);
        merge(&mut found, &name, id.clone(), tag(OWNER), tag(EXPIRES));
        if let Some(cluster) = cluster_name(arn) {
            clusters.push(((name, id), cluster.to_string()));
        }
    }
    if creation_times {
        let created: Vec<(StackKey, Option<OffsetDateTime>)> = futures::stream::iter(clusters)
            .map(|(key, name)| async move {
                let created = crate::providers::eks::cluster::created_at(cx, &name).await?;
                let at = created.and_then(|t| OffsetDateTime::from_unix_timestamp(t.secs()).ok());
                Ok::<_, ProviderError>((key, at))
            })
            .buffer_unordered(PARALLEL_LOOKUPS)
            .try_collect()
            .await?;
        for (key, at) in created {
            if let Some(info) = found.get_mut(&key) {
                info.created = info.created.or(at);
            }
        }
    }
    Ok(found.into_values().collect())
}

/// The cluster's name in an EKS cluster ARN (`arn:aws:eks:us-west-2:123456789012:cluster/NAME`); `None` for
/// any other ARN.
fn cluster_name(arn: &str) -> Option<&str> {
    let mut parts = arn.splitn(6, ':');
    let (service, resource) = (parts.nth(2)?, parts.nth(2)?);
    let name = resource.strip_prefix("cluster/").filter(|_| service == "eks")?;
    (!name.is_empty() && !name.contains('/')).then_some(name)
}

fn merge(
    found: &mut BTreeMap<StackKey, StackInfo>,
    name: &str,
    id: Option<String>,
    owner: Option<String>,
    expires: Option<String>,
) {
    let info = found.entry((name.to_string(), id.clone())).or_insert_with(|| StackInfo {
        name: name.to_string(),
        id,
        owner: None,
        expires: None,
        created: None,
    });
    info.owner = info.owner.take().or(owner);
    info.expires = info.expires.or_else(|| expires.and_then(|e| parse_expiry(&e)));
}

/// `kbp:expires` is RFC 3339; anything else is ignored (and so never expires), since deleting on a misread
/// date would be worse than keeping a stack.
fn parse_expiry(s: &str) -> Option<OffsetDateTime> {
    match OffsetDateTime::parse(s, &Rfc3339) {
        Ok(t) => Some(t),
        Err(e) => {
            tracing::warn!(value = s, error = %e, "ignoring a kbp:expires tag that is not RFC 3339");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_is_rfc3339_or_ignored() {
        assert_eq!(parse_expiry("2030-01-02T03:04:05Z").map(|t| t.year()), Some(2030));
        assert_eq!(parse_expiry("tomorrow"), None);
    }

    #[test]
    fn the_first_value_seen_wins_and_gaps_are_filled() {
        let mut found = BTreeMap::new();
        merge(&mut found, "s", None, None, Some("2030-01-01T00:00:00Z".into()));
        merge(&mut found, "s", None, Some("arn:me".into()), Some("2031-01-01T00:00:00Z".into()));
        let s = &found[&("s".to_string(), None)];
        assert_eq!((s.owner.as_deref(), s.expires.map(|t| t.year())), (Some("arn:me"), Some(2030)));
    }

    #[test]
    fn a_cluster_is_named_by_its_arn_and_nothing_else_is_a_cluster() {
        assert_eq!(cluster_name("arn:aws:eks:us-west-2:123456789012:cluster/sbx"), Some("sbx"));
        assert_eq!(cluster_name("arn:aws-cn:eks:cn-north-1:123456789012:cluster/a-b"), Some("a-b"));
        assert_eq!(cluster_name("arn:aws:eks:us-west-2:123456789012:nodegroup/sbx/ng/1f2e"), None);
        assert_eq!(cluster_name("arn:aws:ec2:us-west-2:123456789012:vpc/vpc-0123"), None);
        assert_eq!(cluster_name("arn:aws:eks:us-west-2:123456789012:cluster/"), None);
        assert_eq!(cluster_name("not an arn"), None);
    }

    #[test]
    fn two_stacks_of_one_name_are_told_apart_by_their_ids() {
        let mut found = BTreeMap::new();
        merge(&mut found, "s", Some("L1".into()), None, Some("2020-01-01T00:00:00Z".into()));
        merge(&mut found, "s", Some("L2".into()), None, Some("2090-01-01T00:00:00Z".into()));
        assert_eq!(found.len(), 2);
        let now = OffsetDateTime::now_utc();
        let expired: Vec<_> = found.values().filter(|s| s.expired_at(now)).filter_map(|s| s.id.as_deref()).collect();
        assert_eq!(expired, ["L1"]);
    }
}

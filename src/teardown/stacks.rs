//! Every kbp stack in a region (`kbp gc`): the `kbp:stack` values on VPCs and EKS clusters, told apart by their
//! `kbp:stack-id`, with the owner and expiry tags of sandbox stacks.

use std::collections::BTreeMap;

use futures::{StreamExt, TryStreamExt};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::stack::PARALLEL_LOOKUPS;
use super::StackInfo;
use crate::providers::attrs::absent_if_gone;
use crate::providers::send::{send, send_pages};
use crate::providers::tags::{EXPIRES, OWNER, STACK, STACK_ID};
use crate::providers::{Context, ProviderError};
use aws_sdk_ec2::types::Filter;

/// The kbp stacks in the region: the `kbp:stack` (and `kbp:stack-id`) values on VPCs and EKS clusters, with
/// their owner, expiry and (from the cluster) creation time. Sorted by name, then ID.
pub async fn stacks(cx: &Context) -> Result<Vec<StackInfo>, ProviderError> {
    let mut found: BTreeMap<(String, Option<String>), StackInfo> = BTreeMap::new();
    let tagged = Filter::builder().name("tag-key").values(STACK).build();
    let ec2_tag = |tags: &[aws_sdk_ec2::types::Tag], k: &str| {
        tags.iter().find(|t| t.key() == Some(k)).map(|t| t.value().unwrap_or_default().to_string())
    };
    let vpcs = send(cx, "ec2:DescribeVpcs", &[], || cx.ec2().describe_vpcs().filters(tagged.clone()).send()).await?;
    for v in vpcs.vpcs() {
        let Some(name) = ec2_tag(v.tags(), STACK) else { continue };
        let tag = |k| ec2_tag(v.tags(), k);
        merge(&mut found, &name, tag(STACK_ID), tag(OWNER), tag(EXPIRES), None);
    }

    let names = send_pages(
        cx,
        "eks:ListClusters",
        |token| cx.eks().list_clusters().set_next_token(token).send(),
        |page| (page.clusters.unwrap_or_default(), page.next_token),
    )
    .await?;
    let clusters: Vec<Option<aws_sdk_eks::types::Cluster>> = futures::stream::iter(names)
        .map(|name| async move {
            let r = send(cx, "eks:DescribeCluster", &[], || cx.eks().describe_cluster().name(&name).send()).await;
            Ok::<_, ProviderError>(absent_if_gone(r)?.and_then(|o| o.cluster))
        })
        .buffer_unordered(PARALLEL_LOOKUPS)
        .try_collect()
        .await?;
    for c in clusters.into_iter().flatten() {
        let Some(tags) = c.tags() else { continue };
        let Some(name) = tags.get(STACK) else { continue };
        let created = c.created_at().and_then(|t| OffsetDateTime::from_unix_timestamp(t.secs()).ok());
        let id = tags.get(STACK_ID).cloned();
        merge(&mut found, name, id, tags.get(OWNER).cloned(), tags.get(EXPIRES).cloned(), created);
    }
    Ok(found.into_values().collect())
}

fn merge(
    found: &mut BTreeMap<(String, Option<String>), StackInfo>,
    name: &str,
    id: Option<String>,
    owner: Option<String>,
    expires: Option<String>,
    created: Option<OffsetDateTime>,
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
    info.created = info.created.or(created);
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
        merge(&mut found, "s", None, None, Some("2030-01-01T00:00:00Z".into()), None);
        merge(&mut found, "s", None, Some("arn:me".into()), Some("2031-01-01T00:00:00Z".into()), None);
        let s = &found[&("s".to_string(), None)];
        assert_eq!((s.owner.as_deref(), s.expires.map(|t| t.year())), (Some("arn:me"), Some(2030)));
    }

    #[test]
    fn two_stacks_of_one_name_are_told_apart_by_their_ids() {
        let mut found = BTreeMap::new();
        merge(&mut found, "s", Some("L1".into()), None, Some("2020-01-01T00:00:00Z".into()), None);
        merge(&mut found, "s", Some("L2".into()), None, Some("2090-01-01T00:00:00Z".into()), None);
        assert_eq!(found.len(), 2);
        let now = OffsetDateTime::now_utc();
        let expired: Vec<_> = found.values().filter(|s| s.expired_at(now)).filter_map(|s| s.id.as_deref()).collect();
        assert_eq!(expired, ["L1"]);
    }
}

//! Elastic Load Balancing (v2) providers: the application and network load balancers, listeners and target
//! groups that a cluster's controllers make for Services and Ingresses (the AWS Load Balancer Controller, or the
//! legacy in-tree service controller). kbp never creates them; teardown finds them by their tags
//! ([`Provider::discover`](super::Provider::discover)) and deletes them, since their network interfaces keep the
//! stack's subnets, security groups and VPC from being deleted.
//!
//! Shared here: listing every load balancer and target group with its tags, and deciding from the tags whether a
//! controller made it for this cluster ([`ownership`]). Not here: classic load balancers (the `elb` API, for
//! which kbp has no SDK dependency).

pub(crate) mod listener;
pub(crate) mod load_balancer;
pub(crate) mod target_group;

use std::collections::BTreeMap;

use aws_sdk_elasticloadbalancingv2::types::{LoadBalancer, TargetGroup};

use super::send::{send, send_pages};
use super::{Context, DiscoveryScope, Result};

/// Who makes these kinds, for [`super::delete_only()`].
const MADE_BY: &str = "the AWS Load Balancer Controller (or the in-tree service controller)";

/// The AWS Load Balancer Controller tags everything it makes with the cluster's name.
const LBC_CLUSTER: &str = "elbv2.k8s.aws/cluster";
/// Older Load Balancer Controller releases tag only with the Service's or Ingress's stack, without the cluster;
/// such resources count when they are in the stack's VPC.
const LBC_STACKS: &[&str] = &["service.k8s.aws/stack", "ingress.k8s.aws/stack", "service.k8s.aws/resource"];
/// The in-tree service controller tags with `kubernetes.io/cluster/<cluster>=owned`.
const CLUSTER_PREFIX: &str = "kubernetes.io/cluster/";
/// Tags that say which Service or Ingress a resource is for, in the order they are shown.
const FOR: &[&str] = &["service.k8s.aws/stack", "ingress.k8s.aws/stack", "kubernetes.io/service-name"];
/// DescribeTags takes at most 20 ARNs.
const TAGS_PER_CALL: usize = 20;
/// DescribeLoadBalancers and DescribeTargetGroups return at most 400 a page.
const PAGE_SIZE: i32 = 400;

/// Why a load balancer or target group with `tags` was made for `cluster` by a controller, or `None` when it
/// was not. `in_stack_vpc`: it is in one of the stack's VPCs.
fn ownership(tags: &BTreeMap<String, String>, cluster: &str, in_stack_vpc: bool) -> Option<String> {
    if let Some(owner) = tags.get(LBC_CLUSTER) {
        // Another cluster's controller, even in this VPC (clusters may share one).
        return (owner == cluster).then(|| format!("tagged {LBC_CLUSTER}={cluster}"));
    }
    let ours = format!("{CLUSTER_PREFIX}{cluster}");
    if tags.get(&ours).is_some_and(|v| v == "owned") {
        return Some(format!("tagged {ours}=owned"));
    }
    if !in_stack_vpc || tags.keys().any(|k| k.starts_with(CLUSTER_PREFIX)) {
        return None;
    }
    let (key, value) = LBC_STACKS.iter().find_map(|k| tags.get_key_value(*k))?;
    Some(format!("tagged {key}={value} in the stack's VPC"))
}

/// `detail` for a found resource: its description, why it is listed and what it is for.
fn detail(what: String, why: String, tags: &BTreeMap<String, String>) -> String {
    let mut out = format!("{what}, {why}");
    if let Some(target) = FOR.iter().find_map(|k| tags.get(*k)) {
        out.push_str(&format!(", for {target}"));
    }
    out
}

/// A load balancer made for the scope's cluster, with its tags and why it is listed.
pub(super) struct OwnedBalancer {
    pub balancer: LoadBalancer,
    pub arn: String,
    pub tags: BTreeMap<String, String>,
    pub why: String,
}

/// The load balancers a controller made for `scope.cluster`, not in `scope.keep`.
async fn owned_balancers(cx: &Context, scope: &DiscoveryScope<'_>) -> Result<Vec<OwnedBalancer>> {
    let all = send_pages(
        cx,
        "elasticloadbalancing:DescribeLoadBalancers",
        |marker| cx.elbv2().describe_load_balancers().page_size(PAGE_SIZE).set_marker(marker).send(),
        |page| (page.load_balancers.unwrap_or_default(), page.next_marker),
    )
    .await?;
    let arns: Vec<String> = all.iter().filter_map(|b| b.load_balancer_arn().map(str::to_string)).collect();
    let mut tags = tags_of(cx, &arns).await?;
    let mut out = Vec::new();
    for balancer in all {
        let Some(arn) = balancer.load_balancer_arn().map(str::to_string) else { continue };
        if scope.keep.contains(&arn) || balancer.load_balancer_name().is_some_and(|n| scope.keep.contains(n)) {
            continue;
        }
        // Gone between the two calls.
        let Some(tags) = tags.remove(&arn) else { continue };
        let in_vpc = balancer.vpc_id().is_some_and(|v| scope.vpc_ids.iter().any(|s| s == v));
        if let Some(why) = ownership(&tags, scope.cluster, in_vpc) {
            out.push(OwnedBalancer { balancer, arn, tags, why });
        }
    }
    Ok(out)
}

/// Every target group in the region.
async fn all_target_groups(cx: &Context) -> Result<Vec<TargetGroup>> {
    send_pages(
        cx,
        "elasticloadbalancing:DescribeTargetGroups",
        |marker| cx.elbv2().describe_target_groups().page_size(PAGE_SIZE).set_marker(marker).send(),
        |page| (page.target_groups.unwrap_or_default(), page.next_marker),
    )
    .await
}

/// The tags of each of `arns` (load balancers or target groups) that still exists.
async fn tags_of(cx: &Context, arns: &[String]) -> Result<BTreeMap<String, BTreeMap<String, String>>> {
    let mut out = BTreeMap::new();
    for batch in arns.chunks(TAGS_PER_CALL) {
        match describe_tags(cx, batch).await {
            Ok(tags) => out.extend(tags),
            // One ARN of the batch was deleted since it was listed, which fails the whole call: ask one by one.
            Err(e) if e.is_not_found() => {
                for arn in batch {
                    match describe_tags(cx, std::slice::from_ref(arn)).await {
                        Ok(tags) => out.extend(tags),
                        Err(e) if e.is_not_found() => {}
                        Err(e) => return Err(e),
                    }
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

async fn describe_tags(cx: &Context, arns: &[String]) -> Result<BTreeMap<String, BTreeMap<String, String>>> {
    let arns = Some(arns.to_vec());
    let out = send(cx, "elasticloadbalancing:DescribeTags", &[], || {
        cx.elbv2().describe_tags().set_resource_arns(arns.clone()).send()
    })
    .await?;
    Ok(out
        .tag_descriptions()
        .iter()
        .filter_map(|d| {
            let tags =
                d.tags().iter().filter_map(|t| Some((t.key()?.to_string(), t.value().unwrap_or_default().to_string())));
            Some((d.resource_arn()?.to_string(), tags.collect()))
        })
        .collect())
}

/// The name to show: a `kbp:address` or `Name` tag, else AWS's name for it.
fn display_name(tags: &BTreeMap<String, String>, aws_name: Option<&str>) -> Option<String> {
    super::Found::tag_name(tags).or_else(|| aws_name.map(str::to_string))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::providers::tags::pairs as tags;

    #[test]
    fn the_controllers_cluster_tag_decides_wherever_the_resource_is() {
        let lbc = tags(&[(LBC_CLUSTER, "sbx"), ("service.k8s.aws/stack", "default/web")]);
        assert_eq!(ownership(&lbc, "sbx", false).as_deref(), Some("tagged elbv2.k8s.aws/cluster=sbx"));
        assert_eq!(ownership(&lbc, "other", true), None, "another cluster's, even in our VPC");
    }

    #[test]
    fn the_in_tree_controller_owns_only_with_owned() {
        let owned = tags(&[("kubernetes.io/cluster/sbx", "owned"), ("kubernetes.io/service-name", "default/web")]);
        assert_eq!(ownership(&owned, "sbx", false).as_deref(), Some("tagged kubernetes.io/cluster/sbx=owned"));
        assert_eq!(ownership(&tags(&[("kubernetes.io/cluster/sbx", "shared")]), "sbx", true), None);
        assert_eq!(ownership(&owned, "sbx2", true), None, "a cluster whose name extends ours");
    }

    #[test]
    fn stack_tags_alone_count_only_in_the_stacks_vpc() {
        let old = tags(&[("ingress.k8s.aws/stack", "shop")]);
        assert_eq!(
            ownership(&old, "sbx", true).as_deref(),
            Some("tagged ingress.k8s.aws/stack=shop in the stack's VPC")
        );
        assert_eq!(ownership(&old, "sbx", false), None);
        let theirs = tags(&[("service.k8s.aws/stack", "a/b"), ("kubernetes.io/cluster/other", "owned")]);
        assert_eq!(ownership(&theirs, "sbx", true), None);
        assert_eq!(ownership(&tags(&[("Name", "hand-made")]), "sbx", true), None);
    }

    #[test]
    fn detail_names_what_it_is_for() {
        let t = tags(&[("service.k8s.aws/stack", "default/web")]);
        assert_eq!(
            detail("network, internal".into(), "tagged x".into(), &t),
            "network, internal, tagged x, for default/web"
        );
        assert_eq!(detail("a".into(), "b".into(), &tags(&[])), "a, b");
    }

    #[test]
    fn the_shown_name_prefers_kbps_tags() {
        assert_eq!(display_name(&tags(&[("kbp:address", "lb.web")]), Some("k8s-web")).as_deref(), Some("lb.web"));
        assert_eq!(display_name(&tags(&[]), Some("k8s-web")).as_deref(), Some("k8s-web"));
    }
}

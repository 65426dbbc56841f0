//! What Karpenter and in-cluster controllers made for a cluster outside kbp's state: nodes, their launch
//! templates and instance profiles, detached ENIs and load-balancer security groups in the stack's VPC.

use std::collections::{BTreeMap, BTreeSet};

use aws_sdk_ec2::types::{Filter, Instance, InstanceStateName, NetworkInterfaceStatus};
use futures::{StreamExt, TryStreamExt};

use super::{ec2_name, ec2_tag, filter, Inventory, Item, Kind, Scope};
use crate::providers::send::{all_pages, send};
use crate::providers::tags::STACK;
use crate::providers::{Context, ProviderError};

/// How many tag lookups run at once (one per instance profile).
const PARALLEL_LOOKUPS: usize = 8;

/// Lists what Karpenter and in-cluster controllers made for `scope.stack` that is not in `scope.keep`; see the
/// module documentation of [`crate::teardown`]. Only reads.
pub async fn leftovers(cx: &Context, scope: &Scope) -> Result<Inventory, ProviderError> {
    let vpcs = match scope.vpc_ids.is_empty() {
        false => scope.vpc_ids.clone(),
        true => stack_vpcs(cx, &scope.stack).await?,
    };
    let mut inv = Inventory::default();

    let instances = instances(cx, &scope.stack, &vpcs).await?;
    let enis = network_interfaces(cx, &vpcs).await?;
    let mut held: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for eni in &enis {
        let (Some(id), Some(instance)) = (eni.network_interface_id(), eni.attachment().and_then(|a| a.instance_id()))
        else {
            continue;
        };
        held.entry(instance.to_string()).or_default().push(id.to_string());
    }
    for i in instances.iter().filter(|i| !kept(scope, i.instance_id())) {
        let id = i.instance_id().unwrap_or_default();
        let tags = i.tags();
        let mut detail = Vec::new();
        if let Some(pool) = ec2_tag(tags, "karpenter.sh/nodepool") {
            detail.push(format!("nodepool {pool}"));
        }
        if let Some(vpc) = i.vpc_id() {
            detail.push(format!("in {vpc}"));
        }
        if let Some(state) = i.state().and_then(|s| s.name()) {
            detail.push(state.as_str().to_string());
        }
        if let Some(enis) = held.get(id) {
            detail.push(format!("holds {}", enis.join(", ")));
        }
        inv.push(Item::new(Kind::Instance, id, ec2_name(tags), detail.join(", ")));
    }

    for lt in launch_templates(cx, &scope.stack).await? {
        let Some(id) = lt.launch_template_id() else { continue };
        if kept(scope, Some(id)) || kept(scope, lt.launch_template_name()) {
            continue;
        }
        let name = lt.launch_template_name().map(str::to_string);
        inv.push(Item::new(
            Kind::LaunchTemplate,
            id,
            name,
            format!("tagged karpenter.k8s.aws/cluster={}", scope.stack),
        ));
    }

    for (name, why) in instance_profiles(cx, scope).await? {
        if !kept(scope, Some(&name)) {
            inv.push(Item::new(Kind::InstanceProfile, name, None, why));
        }
    }

    for eni in &enis {
        let Some(id) = eni.network_interface_id() else { continue };
        // Requester-managed interfaces (NAT gateways', load balancers') go with their owner; AWS refuses to
        // delete them directly.
        if eni.status() != Some(&NetworkInterfaceStatus::Available)
            || eni.requester_managed() == Some(true)
            || kept(scope, Some(id))
        {
            continue;
        }
        let mut detail = vec!["detached".to_string()];
        if let Some(d) = eni.description().filter(|d| !d.is_empty()) {
            detail.push(d.to_string());
        }
        if let Some(subnet) = eni.subnet_id() {
            detail.push(format!("in {subnet}"));
        }
        inv.push(Item::new(Kind::NetworkInterface, id, ec2_name(eni.tag_set()), detail.join(", ")));
    }

    for sg in security_groups(cx, &vpcs).await? {
        let Some(id) = sg.group_id() else { continue };
        if sg.group_name() == Some("default") || kept(scope, Some(id)) {
            continue;
        }
        let Some(why) = foreign_group_reason(sg.tags(), &scope.stack) else { continue };
        let name = sg.group_name().map(str::to_string);
        inv.push(Item::new(Kind::SecurityGroup, id, name, format!("{why}, in {}", sg.vpc_id().unwrap_or("?"))));
    }
    inv.sort();
    Ok(inv)
}

fn kept(scope: &Scope, id: Option<&str>) -> bool {
    id.is_some_and(|id| scope.keep.contains(id))
}

/// Why a security group in the stack's VPC is a leftover, or `None` when it is not one (another stack's, or
/// kbp's own). Load-balancer controllers and Karpenter tag theirs; anything without `kbp:stack` was made by
/// something other than kbp.
fn foreign_group_reason(tags: &[aws_sdk_ec2::types::Tag], stack: &str) -> Option<String> {
    let cluster_key = format!("kubernetes.io/cluster/{stack}");
    if ec2_tag(tags, "elbv2.k8s.aws/cluster") == Some(stack) {
        Some(format!("tagged elbv2.k8s.aws/cluster={stack}"))
    } else if ec2_tag(tags, &cluster_key).is_some() {
        Some(format!("tagged {cluster_key}"))
    } else if ec2_tag(tags, "karpenter.sh/discovery").is_some() {
        Some("tagged karpenter.sh/discovery".to_string())
    } else if ec2_tag(tags, STACK).is_none() {
        Some("not made by kbp".to_string())
    } else {
        None
    }
}

/// The VPCs tagged `kbp:stack=<stack>`.
pub(super) async fn stack_vpcs(cx: &Context, stack: &str) -> Result<Vec<String>, ProviderError> {
    let f = filter(&format!("tag:{STACK}"), stack);
    let out = send(cx, "ec2:DescribeVpcs", &[], || cx.ec2().describe_vpcs().filters(f.clone()).send()).await?;
    let ours = |v: &&aws_sdk_ec2::types::Vpc| ec2_tag(v.tags(), STACK) == Some(stack);
    Ok(out.vpcs().iter().filter(ours).filter_map(|v| v.vpc_id().map(str::to_string)).collect())
}

/// Instances not terminated that are tagged for the cluster (Karpenter and EKS tag their nodes with the
/// cluster's name) or that run in the stack's VPCs.
async fn instances(cx: &Context, stack: &str, vpcs: &[String]) -> Result<Vec<Instance>, ProviderError> {
    let mut queries = vec![
        vec![filter("tag-key", &format!("kubernetes.io/cluster/{stack}"))],
        vec![filter("tag:eks:eks-cluster-name", stack)],
    ];
    if !vpcs.is_empty() {
        queries.push(vec![Filter::builder().name("vpc-id").set_values(Some(vpcs.to_vec())).build()]);
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for filters in queries {
        for i in describe_instances(cx, filters).await? {
            let live = !matches!(i.state().and_then(|s| s.name()), Some(InstanceStateName::Terminated));
            if live && i.instance_id().is_some_and(|id| seen.insert(id.to_string())) {
                out.push(i);
            }
        }
    }
    Ok(out)
}

pub(super) async fn describe_instances(cx: &Context, filters: Vec<Filter>) -> Result<Vec<Instance>, ProviderError> {
    let filters = &filters;
    all_pages(|token| async move {
        let page = send(cx, "ec2:DescribeInstances", &[], || {
            cx.ec2().describe_instances().set_filters(Some(filters.clone())).set_next_token(token.clone()).send()
        })
        .await?;
        let items = page.reservations().iter().flat_map(|r| r.instances().iter().cloned()).collect();
        Ok((items, page.next_token().map(str::to_string)))
    })
    .await
}

async fn launch_templates(cx: &Context, stack: &str) -> Result<Vec<aws_sdk_ec2::types::LaunchTemplate>, ProviderError> {
    let f = &filter("tag:karpenter.k8s.aws/cluster", stack);
    let all = all_pages(|token| async move {
        let page = send(cx, "ec2:DescribeLaunchTemplates", &[], || {
            cx.ec2().describe_launch_templates().filters(f.clone()).set_next_token(token.clone()).send()
        })
        .await?;
        Ok((page.launch_templates().to_vec(), page.next_token().map(str::to_string)))
    })
    .await?;
    // Checked again: a tag filter an implementation ignores must not widen the match.
    Ok(all.into_iter().filter(|t| ec2_tag(t.tags(), "karpenter.k8s.aws/cluster") == Some(stack)).collect())
}

pub(super) async fn network_interfaces(
    cx: &Context,
    vpcs: &[String],
) -> Result<Vec<aws_sdk_ec2::types::NetworkInterface>, ProviderError> {
    if vpcs.is_empty() {
        return Ok(Vec::new());
    }
    let f = &Filter::builder().name("vpc-id").set_values(Some(vpcs.to_vec())).build();
    all_pages(|token| async move {
        let page = send(cx, "ec2:DescribeNetworkInterfaces", &[], || {
            cx.ec2().describe_network_interfaces().filters(f.clone()).set_next_token(token.clone()).send()
        })
        .await?;
        Ok((page.network_interfaces().to_vec(), page.next_token().map(str::to_string)))
    })
    .await
}

pub(super) async fn security_groups(
    cx: &Context,
    vpcs: &[String],
) -> Result<Vec<aws_sdk_ec2::types::SecurityGroup>, ProviderError> {
    if vpcs.is_empty() {
        return Ok(Vec::new());
    }
    let f = &Filter::builder().name("vpc-id").set_values(Some(vpcs.to_vec())).build();
    all_pages(|token| async move {
        let page = send(cx, "ec2:DescribeSecurityGroups", &[], || {
            cx.ec2().describe_security_groups().filters(f.clone()).set_next_token(token.clone()).send()
        })
        .await?;
        Ok((page.security_groups().to_vec(), page.next_token().map(str::to_string)))
    })
    .await
}

/// Instance profiles of the node role (Karpenter creates one per EC2NodeClass) and profiles tagged for the
/// cluster, each with why it is listed.
async fn instance_profiles(cx: &Context, scope: &Scope) -> Result<Vec<(String, String)>, ProviderError> {
    let mut found: BTreeMap<String, String> = BTreeMap::new();
    for role in &scope.node_roles {
        let mut marker: Option<String> = None;
        loop {
            let r = send(cx, "iam:ListInstanceProfilesForRole", &[], || {
                cx.iam().list_instance_profiles_for_role().role_name(role).set_marker(marker.clone()).send()
            })
            .await;
            let Some(page) = crate::providers::attrs::absent_if_gone(r)? else { break };
            for p in page.instance_profiles() {
                found.insert(p.instance_profile_name().to_string(), format!("holds node role {role}"));
            }
            marker = page.marker().filter(|_| page.is_truncated()).map(str::to_string);
            if marker.is_none() {
                break;
            }
        }
    }
    let cluster_key = format!("kubernetes.io/cluster/{}", scope.stack);
    let all = super::stack::all_instance_profiles(cx).await?;
    let tagged: Vec<Option<String>> = futures::stream::iter(all.into_iter().filter(|n| !found.contains_key(n)))
        .map(|name| {
            let cluster_key = &cluster_key;
            async move {
                let tags = super::stack::instance_profile_tags(cx, &name).await?;
                let ours = tags.contains_key(cluster_key)
                    || tags.get("karpenter.k8s.aws/cluster").is_some_and(|v| *v == scope.stack);
                Ok::<_, ProviderError>(ours.then_some(name))
            }
        })
        .buffer_unordered(PARALLEL_LOOKUPS)
        .try_collect()
        .await?;
    for name in tagged.into_iter().flatten() {
        found.insert(name, format!("tagged for cluster {}", scope.stack));
    }
    Ok(found.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_ec2::types::Tag;

    fn tags(pairs: &[(&str, &str)]) -> Vec<Tag> {
        pairs.iter().map(|(k, v)| Tag::builder().key(*k).value(*v).build()).collect()
    }

    #[test]
    fn foreign_groups_are_controllers_or_untagged_but_never_kbps_own() {
        assert!(foreign_group_reason(&tags(&[("elbv2.k8s.aws/cluster", "s1")]), "s1").is_some());
        assert!(foreign_group_reason(&tags(&[("kubernetes.io/cluster/s1", "owned"), (STACK, "s1")]), "s1").is_some());
        assert!(foreign_group_reason(&tags(&[]), "s1").is_some());
        assert!(foreign_group_reason(&tags(&[(STACK, "s1")]), "s1").is_none());
        assert!(foreign_group_reason(&tags(&[(STACK, "s1"), ("elbv2.k8s.aws/cluster", "other")]), "s1").is_none());
    }
}

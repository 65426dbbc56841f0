//! `aws_instance`: a node Karpenter (or EKS for a managed node group) launched for the cluster. Delete only:
//! teardown finds the nodes left running by the cluster's tags or in the stack's VPC, terminates them and
//! waits until they are `terminated`, so that their network interfaces and security-group memberships are
//! released before the subnets, groups and VPC are deleted, and their volumes detach.

use std::collections::BTreeSet;

use async_trait::async_trait;
use aws_sdk_ec2::types::{Filter, Instance as AwsInstance, InstanceStateName};
use serde_json::json;

use super::stack_search;
use super::{describe, object};
use crate::graph::{kinds, Attrs};
use crate::providers::attrs::absent_if_gone;
use crate::providers::delete_only::Leftover;
use crate::providers::send::send;
use crate::providers::tagged::{found, Search};
use crate::providers::wait::{until, Budget, Poll};
use crate::providers::{Context, DiscoveryScope, Found, Observed, Result};

pub(crate) struct Instance;

/// Nodes usually terminate in a minute or two; ten leaves room for a slow shutdown.
const TERMINATE_BUDGET: Budget = Budget::minutes(10);

#[async_trait]
impl Leftover for Instance {
    const KIND: &'static str = kinds::INSTANCE;
    const MADE_BY: &'static str = "Karpenter (or EKS, for a managed node group)";

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let Some(i) = describe::one::<AwsInstance>(cx, id, &[]).await? else { return Ok(None) };
        if terminated(&i) {
            return Ok(None);
        }
        Ok(Some(Observed { attrs: attrs(&i), outputs: super::id_output(id) }))
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        let r =
            send(cx, "ec2:TerminateInstances", &[], || cx.ec2().terminate_instances().instance_ids(id).send()).await;
        if absent_if_gone(r)?.is_none() {
            return Ok(());
        }
        until("ec2:DescribeInstances", &format!("instance {id} to terminate"), TERMINATE_BUDGET, || async {
            Ok(match describe::one::<AwsInstance>(cx, id, &[]).await? {
                None => Poll::Done(()),
                Some(i) if terminated(&i) => Poll::Done(()),
                Some(i) => Poll::Pending(i.state().and_then(|s| s.name()).map_or("?", |s| s.as_str()).to_string()),
            })
        })
        .await
    }

    const FOUND_BY_TAGS: bool = true;

    async fn tagged(&self, cx: &Context, search: &Search<'_>) -> Result<Vec<Found>> {
        let ours = describe::ours::<AwsInstance>(cx, search).await?;
        Ok(ours
            .iter()
            .filter(|i| !terminated(i))
            .map(|i| {
                let mut uses: Vec<String> = i.subnet_id().map(str::to_string).into_iter().collect();
                uses.extend(i.security_groups().iter().filter_map(|g| g.group_id().map(str::to_string)));
                let id = i.instance_id().unwrap_or_default();
                found(kinds::INSTANCE, id, stack_search::name(i.tags()), String::new(), uses)
            })
            .collect())
    }

    async fn discover(&self, cx: &Context, scope: &DiscoveryScope<'_>) -> Result<Vec<Found>> {
        let mut queries = vec![
            Filter::builder().name("tag-key").values(format!("kubernetes.io/cluster/{}", scope.cluster)).build(),
            Filter::builder().name("tag:eks:eks-cluster-name").values(scope.cluster).build(),
        ];
        if !scope.vpc_ids.is_empty() {
            queries.push(Filter::builder().name("vpc-id").set_values(Some(scope.vpc_ids.to_vec())).build());
        }
        let mut seen = BTreeSet::new();
        let mut found = Vec::new();
        for f in queries {
            for i in describe::all::<AwsInstance>(cx, vec![f]).await? {
                let Some(id) = i.instance_id() else { continue };
                if terminated(&i) || scope.keep.contains(id) || !seen.insert(id.to_string()) {
                    continue;
                }
                found.push(Found {
                    kind: Self::KIND,
                    id: id.to_string(),
                    name: name(&i),
                    detail: detail(&i),
                    uses: uses(&i),
                    after: Vec::new(),
                    attrs: attrs(&i),
                });
            }
        }
        Ok(found)
    }
}

fn terminated(i: &AwsInstance) -> bool {
    matches!(i.state().and_then(|s| s.name()), Some(InstanceStateName::Terminated))
}

/// What the node holds until it is terminated: its subnet, security groups and instance profile (by name, as
/// teardown finds profiles).
fn uses(i: &AwsInstance) -> Vec<String> {
    let mut uses: Vec<String> = i.subnet_id().into_iter().map(str::to_string).collect();
    uses.extend(i.security_groups().iter().filter_map(|g| g.group_id().map(str::to_string)));
    let profile = i.iam_instance_profile().and_then(|p| p.arn()).and_then(|arn| arn.rsplit('/').next());
    uses.extend(profile.map(str::to_string));
    uses
}

fn name(i: &AwsInstance) -> Option<String> {
    let tag = |k: &str| i.tags().iter().find(|t| t.key() == Some(k)).and_then(|t| t.value());
    tag(crate::providers::tags::ADDRESS)
        .map(crate::providers::tags::display_address)
        .or_else(|| tag("Name").map(str::to_string))
}

fn detail(i: &AwsInstance) -> String {
    let tag = |k: &str| i.tags().iter().find(|t| t.key() == Some(k)).and_then(|t| t.value());
    let mut parts = Vec::new();
    if let Some(pool) = tag("karpenter.sh/nodepool") {
        parts.push(format!("nodepool {pool}"));
    }
    if let Some(vpc) = i.vpc_id() {
        parts.push(format!("in {vpc}"));
    }
    if let Some(state) = i.state().and_then(|s| s.name()) {
        parts.push(state.as_str().to_string());
    }
    parts.join(", ")
}

fn attrs(i: &AwsInstance) -> Attrs {
    object(json!({
        "instance_type": i.instance_type().map(|t| t.as_str()),
        "subnet_id": i.subnet_id(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_ec2::types::{GroupIdentifier, IamInstanceProfile, Tag};

    #[test]
    fn a_node_holds_its_subnet_groups_and_instance_profile() {
        let i = AwsInstance::builder()
            .subnet_id("subnet-1")
            .security_groups(GroupIdentifier::builder().group_id("sg-1").build())
            .iam_instance_profile(
                IamInstanceProfile::builder().arn("arn:aws:iam::123456789012:instance-profile/sbx_123").build(),
            )
            .tags(Tag::builder().key("karpenter.sh/nodepool").value("default").build())
            .build();
        assert_eq!(uses(&i), ["subnet-1", "sg-1", "sbx_123"]);
        assert_eq!(detail(&i), "nodepool default");
    }
}

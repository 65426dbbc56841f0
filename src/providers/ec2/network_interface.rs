//! `aws_network_interface`: a detached network interface left in the stack's VPC (the VPC CNI's, or a node's
//! whose instance went without it). It holds its subnet and security groups, so teardown deletes it before them.
//! Delete only. Interfaces still attached go with their instance; requester-managed ones (a NAT gateway's, a
//! load balancer's, an endpoint's) with their owner, since AWS refuses to delete them directly.

use async_trait::async_trait;
use aws_sdk_ec2::types::{NetworkInterface as AwsInterface, NetworkInterfaceStatus};
use serde_json::json;

use super::{object, remove_when_unused};
use crate::graph::{kinds, Attrs};
use crate::providers::delete_only::Leftover;
use crate::providers::ec2::wait::Budget;
use crate::providers::{Context, DiscoveryScope, Found, Observed, Result};

pub(crate) struct NetworkInterface;

/// An interface of a terminated instance or deleted load balancer is released within minutes.
const DELETE_BUDGET: Budget = Budget::minutes(5);

#[async_trait]
impl Leftover for NetworkInterface {
    const KIND: &'static str = kinds::NETWORK_INTERFACE;
    const MADE_BY: &'static str = "the VPC CNI plugin or a node";

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let found = super::describe::one::<AwsInterface>(cx, id, &[]).await?;
        Ok(found.map(|n| Observed { attrs: attrs(&n), outputs: super::id_output(id) }))
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        let (op, what) = ("ec2:DeleteNetworkInterface", format!("network interface {id}"));
        remove_when_unused(cx, op, &what, &["InvalidNetworkInterface.InUse"], DELETE_BUDGET, || {
            cx.ec2().delete_network_interface().network_interface_id(id).send()
        })
        .await
    }

    async fn discover(&self, cx: &Context, scope: &DiscoveryScope<'_>) -> Result<Vec<Found>> {
        let (owned, shared) = futures::try_join!(in_vpcs(cx, scope.vpc_ids), in_vpcs(cx, scope.shared_vpc_ids))?;
        // In a VPC the stack only uses, an interface is the cluster's when the VPC CNI plugin tagged it so.
        let cni_made = |n: &AwsInterface| {
            n.tag_set().iter().any(|t| t.key() == Some(CNI_CLUSTER) && t.value() == Some(scope.cluster))
        };
        Ok(owned
            .iter()
            .chain(shared.iter().filter(|n| cni_made(n)))
            .filter(|n| leftover(n))
            .filter_map(|n| {
                let id = n.network_interface_id()?;
                (!scope.keep.contains(id)).then(|| Found {
                    kind: Self::KIND,
                    id: id.to_string(),
                    name: n
                        .tag_set()
                        .iter()
                        .find(|t| t.key() == Some("Name"))
                        .and_then(|t| t.value().map(str::to_string)),
                    detail: detail(n),
                    uses: uses(n),
                    after: Vec::new(),
                    attrs: attrs(n),
                })
            })
            .collect())
    }
}

/// The tag the VPC CNI plugin puts on the interfaces it creates for a cluster's nodes.
const CNI_CLUSTER: &str = "cluster.k8s.amazonaws.com/name";

/// Detached and deletable by its owner's account.
fn leftover(n: &AwsInterface) -> bool {
    n.status() == Some(&NetworkInterfaceStatus::Available) && n.requester_managed() != Some(true)
}

fn uses(n: &AwsInterface) -> Vec<String> {
    let mut uses: Vec<String> = n.subnet_id().into_iter().map(str::to_string).collect();
    uses.extend(n.groups().iter().filter_map(|g| g.group_id().map(str::to_string)));
    uses
}

fn detail(n: &AwsInterface) -> String {
    let mut parts = vec!["detached".to_string()];
    parts.extend(n.description().filter(|d| !d.is_empty()).map(str::to_string));
    parts.extend(n.subnet_id().map(|s| format!("in {s}")));
    parts.join(", ")
}

fn attrs(n: &AwsInterface) -> Attrs {
    object(json!({ "subnet_id": n.subnet_id(), "description": n.description() }))
}

/// Every network interface in `vpcs`; none when there are none.
pub(crate) async fn in_vpcs(cx: &Context, vpcs: &[String]) -> Result<Vec<AwsInterface>> {
    super::describe::by_filter::<AwsInterface>(cx, "vpc-id", vpcs, &[]).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_detached_interfaces_of_the_account_are_leftovers() {
        let available = AwsInterface::builder().status(NetworkInterfaceStatus::Available);
        assert!(leftover(&available.clone().build()));
        assert!(!leftover(&available.requester_managed(true).build()));
        assert!(!leftover(&AwsInterface::builder().status(NetworkInterfaceStatus::InUse).build()));
    }
}

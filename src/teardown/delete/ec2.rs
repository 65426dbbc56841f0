//! Teardown's own EC2 deletes: terminating nodes, launch templates and detached ENIs, and what must come off
//! a security group, Elastic IP or route table before the provider's delete can succeed.

use aws_sdk_ec2::types::{InstanceStateName, IpPermission};

use crate::providers::attrs::{absent_if_gone, ok_if_gone};
use crate::providers::ec2::wait::{self, Budget, Poll};
use crate::providers::send::send;
use crate::providers::{Context, ProviderError};
use crate::teardown::filter;

/// Nodes usually terminate in a minute or two; ten leaves room for a slow shutdown.
const TERMINATE_BUDGET: Budget = Budget::minutes(10);
/// An ENI of a terminated instance or deleted load balancer is released within minutes.
const ENI_BUDGET: Budget = Budget::minutes(5);

/// Terminates the instance and waits until it is `terminated`, so that its ENIs and security group
/// memberships are released before the network is deleted.
pub async fn terminate_instance(cx: &Context, id: &str) -> Result<(), ProviderError> {
    let r = send(cx, "ec2:TerminateInstances", &[], || cx.ec2().terminate_instances().instance_ids(id).send()).await;
    if absent_if_gone(r)?.is_none() {
        return Ok(());
    }
    wait::until("ec2:DescribeInstances", &format!("instance {id} to terminate"), TERMINATE_BUDGET, || async {
        let r = send(cx, "ec2:DescribeInstances", &[], || cx.ec2().describe_instances().instance_ids(id).send()).await;
        let Some(out) = absent_if_gone(r)? else { return Ok(Poll::Done(())) };
        let state = out
            .reservations()
            .iter()
            .flat_map(|r| r.instances())
            .find(|i| i.instance_id() == Some(id))
            .and_then(|i| i.state().and_then(|s| s.name()).cloned());
        Ok(match state {
            None | Some(InstanceStateName::Terminated) => Poll::Done(()),
            Some(s) => Poll::Pending(s.as_str().to_string()),
        })
    })
    .await
}

pub async fn delete_launch_template(cx: &Context, id: &str) -> Result<(), ProviderError> {
    let r =
        send(cx, "ec2:DeleteLaunchTemplate", &[], || cx.ec2().delete_launch_template().launch_template_id(id).send())
            .await;
    ok_if_gone(r.map(drop))
}

/// Deletes a detached ENI; one still being released by its instance or load balancer answers `InUse` for a
/// while, which is waited out.
pub async fn delete_network_interface(cx: &Context, id: &str) -> Result<(), ProviderError> {
    let op = "ec2:DeleteNetworkInterface";
    let r = wait::while_in_use(
        op,
        &format!("network interface {id}"),
        &["InvalidNetworkInterface.InUse"],
        ENI_BUDGET,
        || send(cx, op, &[], || cx.ec2().delete_network_interface().network_interface_id(id).send()),
    )
    .await;
    ok_if_gone(r.map(drop))
}

/// Revokes every rule of the security group and every rule of another group in its VPC that references it:
/// AWS refuses to delete a group that another group's rule names, with `DependencyViolation`, for as long as
/// the rule exists.
pub async fn revoke_rules(cx: &Context, id: &str) -> Result<(), ProviderError> {
    let r =
        send(cx, "ec2:DescribeSecurityGroups", &[], || cx.ec2().describe_security_groups().group_ids(id).send()).await;
    let Some(out) = absent_if_gone(r)? else { return Ok(()) };
    let Some(group) = out.security_groups().iter().find(|g| g.group_id() == Some(id)).cloned() else {
        return Ok(());
    };
    revoke(cx, id, group.ip_permissions().to_vec(), group.ip_permissions_egress().to_vec()).await?;

    let Some(vpc) = group.vpc_id() else { return Ok(()) };
    let in_vpc = filter("vpc-id", vpc);
    let others = send(cx, "ec2:DescribeSecurityGroups", &[], || {
        cx.ec2().describe_security_groups().filters(in_vpc.clone()).send()
    })
    .await?;
    for other in others.security_groups().iter().filter(|g| g.group_id() != Some(id)) {
        let Some(other_id) = other.group_id() else { continue };
        let ingress = referencing(other.ip_permissions(), id);
        let egress = referencing(other.ip_permissions_egress(), id);
        revoke(cx, other_id, ingress, egress).await?;
    }
    Ok(())
}

/// The parts of `perms` that name group `id`, and nothing else of them (their CIDRs and other groups stay).
fn referencing(perms: &[IpPermission], id: &str) -> Vec<IpPermission> {
    perms
        .iter()
        .filter_map(|p| {
            let pairs: Vec<_> = p.user_id_group_pairs().iter().filter(|g| g.group_id() == Some(id)).cloned().collect();
            (!pairs.is_empty()).then(|| {
                IpPermission::builder()
                    .set_ip_protocol(p.ip_protocol().map(str::to_string))
                    .set_from_port(p.from_port())
                    .set_to_port(p.to_port())
                    .set_user_id_group_pairs(Some(pairs))
                    .build()
            })
        })
        .collect()
}

async fn revoke(
    cx: &Context,
    group: &str,
    ingress: Vec<IpPermission>,
    egress: Vec<IpPermission>,
) -> Result<(), ProviderError> {
    if !ingress.is_empty() {
        let r = send(cx, "ec2:RevokeSecurityGroupIngress", &[], || {
            cx.ec2().revoke_security_group_ingress().group_id(group).set_ip_permissions(Some(ingress.clone())).send()
        })
        .await;
        ok_if_gone(r.map(drop))?;
    }
    if !egress.is_empty() {
        let r = send(cx, "ec2:RevokeSecurityGroupEgress", &[], || {
            cx.ec2().revoke_security_group_egress().group_id(group).set_ip_permissions(Some(egress.clone())).send()
        })
        .await;
        ok_if_gone(r.map(drop))?;
    }
    Ok(())
}

/// Disassociates the Elastic IP from whatever holds it (an instance or ENI not deleted with the stack), so it
/// can be released.
pub async fn disassociate_address(cx: &Context, allocation: &str) -> Result<(), ProviderError> {
    let r = send(cx, "ec2:DescribeAddresses", &[], || cx.ec2().describe_addresses().allocation_ids(allocation).send())
        .await;
    let Some(out) = absent_if_gone(r)? else { return Ok(()) };
    for association in out.addresses().iter().filter_map(|a| a.association_id()) {
        let r = send(cx, "ec2:DisassociateAddress", &[], || {
            cx.ec2().disassociate_address().association_id(association).send()
        })
        .await;
        ok_if_gone(r.map(drop))?;
    }
    Ok(())
}

#[derive(Debug, PartialEq, Eq)]
pub enum Table {
    /// The VPC's main route table: AWS deletes it with the VPC and refuses to before.
    Main,
    Other,
}

/// Removes the route table's subnet associations (what kbp's state would have held as separate resources).
pub async fn disassociate_route_table(cx: &Context, id: &str) -> Result<Table, ProviderError> {
    let r =
        send(cx, "ec2:DescribeRouteTables", &[], || cx.ec2().describe_route_tables().route_table_ids(id).send()).await;
    let Some(out) = absent_if_gone(r)? else { return Ok(Table::Other) };
    let associations: Vec<_> = out.route_tables().iter().flat_map(|t| t.associations()).collect();
    if associations.iter().any(|a| a.main() == Some(true)) {
        return Ok(Table::Main);
    }
    for association in associations.iter().filter_map(|a| a.route_table_association_id()) {
        let r = send(cx, "ec2:DisassociateRouteTable", &[], || {
            cx.ec2().disassociate_route_table().association_id(association).send()
        })
        .await;
        ok_if_gone(r.map(drop))?;
    }
    Ok(Table::Other)
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_ec2::types::{IpRange, UserIdGroupPair};

    #[test]
    fn only_the_reference_to_the_group_is_revoked_from_others() {
        let perm = IpPermission::builder()
            .ip_protocol("tcp")
            .from_port(443)
            .to_port(443)
            .ip_ranges(IpRange::builder().cidr_ip("10.0.0.0/8").build())
            .user_id_group_pairs(UserIdGroupPair::builder().group_id("sg-gone").build())
            .user_id_group_pairs(UserIdGroupPair::builder().group_id("sg-stays").build())
            .build();
        let out = referencing(&[perm], "sg-gone");
        assert_eq!(out.len(), 1);
        assert!(out[0].ip_ranges().is_empty());
        let ids: Vec<_> = out[0].user_id_group_pairs().iter().filter_map(|p| p.group_id()).collect();
        assert_eq!(ids, ["sg-gone"]);
        assert!(referencing(out.as_slice(), "sg-other").is_empty());
    }
}

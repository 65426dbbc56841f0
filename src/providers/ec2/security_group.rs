//! `aws_security_group`: the node security group. Karpenter's nodes join it (their EC2NodeClass selects it by its
//! `karpenter.sh/discovery` tag) and the EKS control plane's ENIs join it too (it is the cluster's additional
//! security group). Its name, description and VPC cannot change in place.
//!
//! Its rules are fixed, not attributes:
//! - all traffic between members of the group (a self-referencing ingress rule): nodes must talk to each other
//!   (pod to pod through the VPC CNI, CoreDNS, webhooks), and because the control-plane ENIs are members as well,
//!   the same rule lets the API server reach kubelets and webhooks and nodes reach the private API endpoint;
//! - all egress: the rule AWS gives every new VPC security group (images, AWS APIs, the public endpoint).
//!
//! Create adds the ingress rule; update puts back either rule if someone removed it.

use async_trait::async_trait;
use aws_sdk_ec2::types::{IpPermission, IpRange, ResourceType, SecurityGroup as Group, Tag, UserIdGroupPair};
use serde_json::json;

use super::tagging::{self, Tagged};
use super::wait::Budget;
use super::{arn, gone_as_none, missing, object, ok_if_gone, required_str, send, send_when_unused};
use crate::graph::Attrs;
use crate::providers::{Applied, Context, Desired, Observed, Provider, ProviderError};

pub struct SecurityGroup;

const NOT_FOUND: &str = "InvalidGroup.NotFound";
/// The ENIs of terminated nodes and of a deleted cluster's control plane are released minutes later.
const DELETE_BUDGET: Budget = Budget::minutes(15);
/// Every protocol, in EC2's spelling.
const ALL: &str = "-1";

#[async_trait]
impl Provider for SecurityGroup {
    fn kind(&self) -> &'static str {
        "aws_security_group"
    }

    fn adoptable_by_tags(&self) -> bool {
        true
    }

    fn force_new(&self) -> &'static [&'static str] {
        &["name", "description", "vpc_id"]
    }

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>, ProviderError> {
        let Some(g) = describe(cx, id, &[]).await? else { return Ok(None) };
        let attrs = json!({
            "name": g.group_name(),
            "description": g.description(),
            "vpc_id": g.vpc_id(),
            "tags": tagging::attr(g.tags()),
        });
        Ok(Some(Observed { attrs: object(attrs), outputs: outputs(cx, &g) }))
    }

    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>, ProviderError> {
        let op = "ec2:DescribeSecurityGroups";
        let filters = Some(tagging::kbp_filters(desired));
        let found =
            send(cx, op, &[], || cx.ec2().describe_security_groups().set_filters(filters.clone()).send()).await?;
        tagging::adopt(op, desired, found.security_groups())
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied, ProviderError> {
        let op = "ec2:CreateSecurityGroup";
        let name = required_str(desired.attrs, "name", op)?;
        let description = required_str(desired.attrs, "description", op)?;
        let vpc_id = required_str(desired.attrs, "vpc_id", op)?;
        let tags = tagging::spec(ResourceType::SecurityGroup, desired);
        let created = send(cx, op, &["InvalidVpcID.NotFound"], || {
            let call = cx.ec2().create_security_group().group_name(name).description(description).vpc_id(vpc_id);
            call.tag_specifications(tags.clone()).send()
        })
        .await
        .map_err(|e| explain_taken(e, name, vpc_id))?;
        let id = created.group_id().ok_or_else(|| missing(op, "security group ID"))?;
        allow_within_group(cx, id).await?;
        applied(cx, id).await
    }

    async fn update(
        &self,
        cx: &Context,
        id: &str,
        _prior: &Attrs,
        desired: &Desired<'_>,
    ) -> Result<Applied, ProviderError> {
        tagging::reconcile(cx, id, desired).await?;
        let g = describe(cx, id, &[]).await?.ok_or_else(|| vanished(id))?;
        if !g.ip_permissions().iter().any(|p| is_within_group(p, id)) {
            allow_within_group(cx, id).await?;
        }
        if !g.ip_permissions_egress().iter().any(is_all_egress) {
            allow_all_egress(cx, id).await?;
        }
        applied(cx, id).await
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<(), ProviderError> {
        // The self-referencing rule does not block the delete; ENIs still in the group do, until released.
        let (op, what) = ("ec2:DeleteSecurityGroup", format!("security group {id}"));
        let r = send_when_unused(cx, op, &what, &[], DELETE_BUDGET, || {
            cx.ec2().delete_security_group().group_id(id).send()
        })
        .await;
        ok_if_gone(r)
    }
}

impl Tagged for Group {
    fn tag_list(&self) -> &[Tag] {
        self.tags()
    }
    fn resource_id(&self) -> Option<&str> {
        self.group_id()
    }
}

/// The group `id`, or `None` when AWS does not know it. `transient` lists the codes to retry (right after
/// create, `InvalidGroup.NotFound` is eventual consistency rather than absence).
async fn describe(cx: &Context, id: &str, transient: &[&str]) -> Result<Option<Group>, ProviderError> {
    let r =
        send(cx, "ec2:DescribeSecurityGroups", transient, || cx.ec2().describe_security_groups().group_ids(id).send())
            .await;
    Ok(gone_as_none(r)?.and_then(|resp| resp.security_groups().iter().find(|g| g.group_id() == Some(id)).cloned()))
}

/// Adds the rule that lets every member of the group reach every other on any protocol and port. A rule that is
/// already there (a retried create) is fine.
async fn allow_within_group(cx: &Context, id: &str) -> Result<(), ProviderError> {
    let members = UserIdGroupPair::builder().group_id(id).description("members of this group talk to each other");
    let rule = IpPermission::builder().ip_protocol(ALL).user_id_group_pairs(members.build()).build();
    let r = send(cx, "ec2:AuthorizeSecurityGroupIngress", &[NOT_FOUND], || {
        cx.ec2().authorize_security_group_ingress().group_id(id).ip_permissions(rule.clone()).send()
    })
    .await;
    already_there_is_fine(r)
}

/// Puts back the all-traffic egress rule AWS creates with every VPC security group.
async fn allow_all_egress(cx: &Context, id: &str) -> Result<(), ProviderError> {
    let anywhere = IpRange::builder().cidr_ip("0.0.0.0/0").build();
    let rule = IpPermission::builder().ip_protocol(ALL).ip_ranges(anywhere).build();
    let r = send(cx, "ec2:AuthorizeSecurityGroupEgress", &[NOT_FOUND], || {
        cx.ec2().authorize_security_group_egress().group_id(id).ip_permissions(rule.clone()).send()
    })
    .await;
    already_there_is_fine(r)
}

fn already_there_is_fine<T>(r: Result<T, ProviderError>) -> Result<(), ProviderError> {
    match r {
        Ok(_) => Ok(()),
        Err(e) if e.is("InvalidPermission.Duplicate") => Ok(()),
        Err(e) => Err(e),
    }
}

fn is_within_group(p: &IpPermission, id: &str) -> bool {
    p.ip_protocol() == Some(ALL) && p.user_id_group_pairs().iter().any(|pair| pair.group_id() == Some(id))
}

fn is_all_egress(p: &IpPermission) -> bool {
    p.ip_protocol() == Some(ALL) && p.ip_ranges().iter().any(|r| r.cidr_ip() == Some("0.0.0.0/0"))
}

/// Group names are unique per VPC, so a name already taken is a group kbp did not record.
fn explain_taken(e: ProviderError, name: &str, vpc_id: &str) -> ProviderError {
    if e.is("InvalidGroup.Duplicate") {
        e.with_hint(format!(
            "a security group named `{name}` already exists in {vpc_id} but is not in this stack's state; if it \
             carries this stack's kbp tags, run kbp again to adopt it, otherwise delete or rename it"
        ))
    } else {
        e
    }
}

fn vanished(id: &str) -> ProviderError {
    ProviderError::new(
        "ec2:DescribeSecurityGroups",
        NOT_FOUND,
        format!("security group {id} disappeared during the update"),
    )
    .with_hint("someone deleted it outside kbp; run kbp again to recreate it")
}

async fn applied(cx: &Context, id: &str) -> Result<Applied, ProviderError> {
    let g = describe(cx, id, &[NOT_FOUND]).await?.ok_or_else(|| vanished(id))?;
    Ok(Applied { id: id.to_string(), outputs: outputs(cx, &g) })
}

fn outputs(cx: &Context, g: &Group) -> Attrs {
    let id = g.group_id().unwrap_or_default();
    let arn = match g.security_group_arn() {
        Some(a) => a.to_string(),
        None => arn(&cx.region, g.owner_id().unwrap_or_default(), &format!("security-group/{id}")),
    };
    object(json!({ "id": id, "arn": arn }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_the_fixed_rules() {
        let pair = UserIdGroupPair::builder().group_id("sg-1").build();
        let within = IpPermission::builder().ip_protocol("-1").user_id_group_pairs(pair).build();
        assert!(is_within_group(&within, "sg-1"));
        assert!(!is_within_group(&within, "sg-2"));
        let https = IpPermission::builder().ip_protocol("tcp").from_port(443).to_port(443).build();
        assert!(!is_within_group(&https, "sg-1"));
        let egress =
            IpPermission::builder().ip_protocol("-1").ip_ranges(IpRange::builder().cidr_ip("0.0.0.0/0").build());
        assert!(is_all_egress(&egress.build()));
        assert!(!is_all_egress(&https));
    }
}

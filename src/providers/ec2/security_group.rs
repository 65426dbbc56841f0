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
//!
//! Teardown also finds the groups others made in the stack's VPC ([`Provider::discover`]): the load-balancer
//! controllers' and Karpenter's (by their tags) and any group without kbp's tags (a workload's). Deleting a
//! group first revokes the rules of other groups in its VPC that name it, since AWS refuses to delete a group
//! another group's rule references, for as long as the rule exists.

use async_trait::async_trait;
use aws_sdk_ec2::types::{IpPermission, IpRange, ResourceType, SecurityGroup as Group, Tag, UserIdGroupPair};
use serde_json::json;

use super::describe;
use super::wait::Budget;
use super::{arn, missing, object, remove, remove_when_unused, send, stack_search, tagged_kind, tagging};
use crate::graph::{kinds, Attrs};
use crate::providers::tagged::{found, Search};
use crate::providers::tags::{ADDRESS, STACK};
use crate::providers::{contract, contract::Constraint, contract::Rule};
use crate::providers::{
    spec, Applied, Context, Descriptor, Desired, DiscoveryScope, Found, Observed, Provider, ProviderError, Result,
};

pub(crate) struct SecurityGroup;

/// The attributes the compiler emits, references resolved ([`crate::graph::kinds`]).
type Spec = crate::graph::kinds::security_group::SecurityGroup<String>;

const NOT_FOUND: &str = "InvalidGroup.NotFound";
/// The ENIs of terminated nodes and of a deleted cluster's control plane are released minutes later.
const DELETE_BUDGET: Budget = Budget::minutes(15);
/// Every protocol, in EC2's spelling.
const ALL: &str = "-1";

/// What AWS accepts of what this kind sends ([`contract`]).
const SENDS: &[Constraint] = &[
    Constraint::new(
        "name",
        Rule::Name {
            api: "security group name",
            max: 255,
            chars: contract::EC2_GROUP_TEXT,
            unique: contract::Unique::InParent,
        },
    ),
    Constraint::new(
        "description",
        Rule::Text { api: "security group description", max: 255, chars: contract::EC2_GROUP_TEXT },
    ),
    contract::EC2_TAGS,
];

#[async_trait]
impl Provider for SecurityGroup {
    fn descriptor(&self) -> Descriptor {
        // As every EC2 kind kbp tags, but sending a name and a description besides the tags.
        Descriptor { sends: SENDS, ..tagged_kind(kinds::SECURITY_GROUP) }
            .force_new(&["name", "description", "vpc_id"])
            .imported_by("its ID, `sg-…`")
    }

    /// By the tag, like the rest: the group of the node group kbp makes in a VPC it does not own (`[vpc] id`) is
    /// the stack's too. A VPC's default group goes with its VPC.
    async fn tagged(&self, cx: &Context, search: &Search<'_>) -> Result<Vec<Found>> {
        let ours = describe::ours::<Group>(cx, search).await?;
        Ok(ours
            .iter()
            .filter(|g| g.group_name() != Some("default"))
            .map(|g| {
                let name = stack_search::tag(g.tags(), ADDRESS).or(g.group_name()).map(str::to_string);
                let uses: Vec<String> = g.vpc_id().map(str::to_string).into_iter().collect();
                found(kinds::SECURITY_GROUP, g.group_id().unwrap_or_default(), name, String::new(), uses)
            })
            .collect())
    }

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        Ok(describe::one::<Group>(cx, id, &[]).await?.map(|g| observe(cx, &g)))
    }

    async fn read_many(&self, cx: &Context, items: &[(String, Attrs)]) -> Result<Vec<Option<Observed>>> {
        describe::observed(cx, items, |g| observe(cx, g)).await
    }

    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        describe::find::<Group>(cx, desired).await
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        let op = "ec2:CreateSecurityGroup";
        let Spec { name, description, vpc_id, .. } = spec::parse(kinds::SECURITY_GROUP, desired.attrs)?;
        let tags = tagging::spec(ResourceType::SecurityGroup, desired);
        let created = send(cx, op, &["InvalidVpcID.NotFound"], || {
            let call = cx.ec2().create_security_group().group_name(&name).description(&description).vpc_id(&vpc_id);
            call.tag_specifications(tags.clone()).send()
        })
        .await
        .map_err(|e| explain_taken(e, &name, &vpc_id))?;
        let id = created.group_id().ok_or_else(|| missing(op, "security group ID"))?;
        allow_within_group(cx, id).await?;
        applied(cx, id).await
    }

    async fn update(&self, cx: &Context, id: &str, _prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        tagging::reconcile(cx, id, desired).await?;
        let g = describe::one::<Group>(cx, id, &[]).await?.ok_or_else(|| vanished(id))?;
        if !g.ip_permissions().iter().any(|p| is_within_group(p, id)) {
            allow_within_group(cx, id).await?;
        }
        if !g.ip_permissions_egress().iter().any(is_all_egress) {
            allow_all_egress(cx, id).await?;
        }
        applied(cx, id).await
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        revoke_references(cx, id).await?;
        // The self-referencing rule does not block the delete; ENIs still in the group do, until released.
        let (op, what) = ("ec2:DeleteSecurityGroup", format!("security group {id}"));
        remove_when_unused(cx, op, &what, &[], DELETE_BUDGET, || cx.ec2().delete_security_group().group_id(id).send())
            .await
    }

    async fn discover(&self, cx: &Context, scope: &DiscoveryScope<'_>) -> Result<Vec<Found>> {
        let (owned, shared) = futures::try_join!(in_vpcs(cx, scope.vpc_ids), in_vpcs(cx, scope.shared_vpc_ids))?;
        let groups = owned.iter().map(|g| (g, true)).chain(shared.iter().map(|g| (g, false)));
        Ok(groups
            .filter_map(|(g, owned_vpc)| {
                let id = g.group_id()?;
                if g.group_name() == Some("default") || scope.keep.contains(id) {
                    return None;
                }
                let why = if owned_vpc { foreign(g.tags(), scope.cluster) } else { made_for(g.tags(), scope.cluster) }?;
                // A group whose rules name another goes first: that one cannot go while the rule exists.
                let mut uses: Vec<String> = g.vpc_id().into_iter().map(str::to_string).collect();
                uses.extend(referenced(g).into_iter().filter(|r| r != id));
                Some(Found {
                    kind: kinds::SECURITY_GROUP,
                    id: id.to_string(),
                    name: g.group_name().map(str::to_string),
                    detail: format!("{why}, in {}", g.vpc_id().unwrap_or("?")),
                    uses,
                    // The cluster's own group (EKS tags it for the cluster) holds the control plane's interfaces
                    // until the cluster is gone.
                    after: vec![scope.cluster.to_string()],
                    attrs: Attrs::new(),
                })
            })
            .collect())
    }
}

/// Why a security group in the stack's VPC is the stack's to delete although kbp did not make it, or `None`
/// (another stack's, or kbp's own). Load-balancer controllers and Karpenter tag theirs; a group without
/// `kbp:stack` was made by something other than kbp, in a VPC that goes with the stack.
fn foreign(tags: &[Tag], cluster: &str) -> Option<String> {
    let tag = |k: &str| tags.iter().find(|t| t.key() == Some(k)).map(|t| t.value().unwrap_or_default());
    let cluster_key = format!("kubernetes.io/cluster/{cluster}");
    if tag(STACK).is_some() {
        None
    } else if tag("elbv2.k8s.aws/cluster") == Some(cluster) {
        Some(format!("tagged elbv2.k8s.aws/cluster={cluster}"))
    } else if tag(&cluster_key).is_some() {
        Some(format!("tagged {cluster_key}"))
    } else if tag("karpenter.sh/discovery").is_some() {
        Some("tagged karpenter.sh/discovery".to_string())
    } else {
        Some("not made by kbp".to_string())
    }
}

/// Why a security group in a VPC the stack only uses (`[vpc] id`) is the stack's to delete: a controller made it
/// for this cluster (the Load Balancer Controller, or the in-tree one with `kubernetes.io/cluster/<c>=owned`).
/// Anything else there is a neighbour's, whatever its other tags say; `None` for those.
fn made_for(tags: &[Tag], cluster: &str) -> Option<String> {
    let tag = |k: &str| tags.iter().find(|t| t.key() == Some(k)).map(|t| t.value().unwrap_or_default());
    let owned = tag(&format!("kubernetes.io/cluster/{cluster}")) == Some("owned");
    let why = foreign(tags, cluster)?;
    (tag("elbv2.k8s.aws/cluster") == Some(cluster) || owned).then_some(why)
}

/// The groups `g`'s rules name, ingress and egress.
fn referenced(g: &Group) -> Vec<String> {
    let rules = g.ip_permissions().iter().chain(g.ip_permissions_egress());
    let mut ids: Vec<String> =
        rules.flat_map(|p| p.user_id_group_pairs()).filter_map(|pair| pair.group_id().map(str::to_string)).collect();
    ids.sort();
    ids.dedup();
    ids
}

/// Every security group in `vpcs`; none when there are none.
pub(crate) async fn in_vpcs(cx: &Context, vpcs: &[String]) -> Result<Vec<Group>> {
    describe::by_filter::<Group>(cx, "vpc-id", vpcs, &[]).await
}

/// Revokes the parts of rules that name `id` from the other groups in its VPC that go with the stack: every
/// group of a VPC the stack owns; in one it only uses (`[vpc] id`), those kbp or a controller of the cluster
/// made. A neighbour's rule is never edited: the delete is refused with what to remove instead of waiting out
/// AWS's DependencyViolation.
async fn revoke_references(cx: &Context, id: &str) -> Result<()> {
    let Some(group) = describe::one::<Group>(cx, id, &[]).await? else { return Ok(()) };
    let Some(vpc) = group.vpc_id() else { return Ok(()) };
    let vpc_tags =
        describe::one::<aws_sdk_ec2::types::Vpc>(cx, vpc, &[]).await?.map(|v| v.tags().to_vec()).unwrap_or_default();
    let stacks = |tags: &[Tag]| tags.iter().any(|t| t.key() == Some(STACK) && t.value() == Some(cx.stack.as_str()));
    let mut neighbours = Vec::new();
    for other in in_vpcs(cx, &[vpc.to_string()]).await?.iter().filter(|g| g.group_id() != Some(id)) {
        let Some(other_id) = other.group_id() else { continue };
        let (ingress, egress) =
            (referencing(other.ip_permissions(), id), referencing(other.ip_permissions_egress(), id));
        if ingress.is_empty() && egress.is_empty() {
            continue;
        }
        if !(stacks(&vpc_tags) || stacks(other.tags()) || made_for(other.tags(), &cx.stack).is_some()) {
            neighbours.push(other_id.to_string());
            continue;
        }
        if !ingress.is_empty() {
            let revoke = || {
                cx.ec2().revoke_security_group_ingress().group_id(other_id).set_ip_permissions(Some(ingress.clone()))
            };
            remove(cx, "ec2:RevokeSecurityGroupIngress", &[], || revoke().send()).await?;
        }
        if !egress.is_empty() {
            let revoke =
                || cx.ec2().revoke_security_group_egress().group_id(other_id).set_ip_permissions(Some(egress.clone()));
            remove(cx, "ec2:RevokeSecurityGroupEgress", &[], || revoke().send()).await?;
        }
    }
    if neighbours.is_empty() {
        return Ok(());
    }
    let message = format!("security group {id} is named in rules of {}, which kbp did not make", neighbours.join(", "));
    Err(ProviderError::new("ec2:DeleteSecurityGroup", "", message).with_hint(
        "those groups belong to another workload in the VPC and kbp does not edit them: remove their rules that \
         name this group (`aws ec2 revoke-security-group-ingress`), then run kbp again",
    ))
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

/// Adds the rule that lets every member of the group reach every other on any protocol and port. A rule that is
/// already there (a retried create) is fine.
async fn allow_within_group(cx: &Context, id: &str) -> Result<()> {
    let members = UserIdGroupPair::builder().group_id(id).description("members of this group talk to each other");
    let rule = IpPermission::builder().ip_protocol(ALL).user_id_group_pairs(members.build()).build();
    let r = send(cx, "ec2:AuthorizeSecurityGroupIngress", &[NOT_FOUND], || {
        cx.ec2().authorize_security_group_ingress().group_id(id).ip_permissions(rule.clone()).send()
    })
    .await;
    already_there_is_fine(r)
}

/// Puts back the all-traffic egress rule AWS creates with every VPC security group.
async fn allow_all_egress(cx: &Context, id: &str) -> Result<()> {
    let anywhere = IpRange::builder().cidr_ip("0.0.0.0/0").build();
    let rule = IpPermission::builder().ip_protocol(ALL).ip_ranges(anywhere).build();
    let r = send(cx, "ec2:AuthorizeSecurityGroupEgress", &[NOT_FOUND], || {
        cx.ec2().authorize_security_group_egress().group_id(id).ip_permissions(rule.clone()).send()
    })
    .await;
    already_there_is_fine(r)
}

fn already_there_is_fine<T>(r: Result<T>) -> Result<()> {
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

async fn applied(cx: &Context, id: &str) -> Result<Applied> {
    let g = describe::one::<Group>(cx, id, &[NOT_FOUND]).await?.ok_or_else(|| vanished(id))?;
    Ok(Applied { id: id.to_string(), outputs: outputs(cx, &g) })
}

fn observe(cx: &Context, g: &Group) -> Observed {
    let attrs = json!({
        "name": g.group_name(),
        "description": g.description(),
        "vpc_id": g.vpc_id(),
        "tags": tagging::attr(g.tags()),
    });
    Observed { attrs: object(attrs), outputs: outputs(cx, g) }
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

    fn tags(pairs: &[(&str, &str)]) -> Vec<Tag> {
        pairs.iter().map(|(k, v)| Tag::builder().key(*k).value(*v).build()).collect()
    }

    #[test]
    fn foreign_groups_are_controllers_or_untagged_but_never_kbps_own() {
        assert!(foreign(&tags(&[("elbv2.k8s.aws/cluster", "s1")]), "s1").is_some());
        assert!(foreign(&tags(&[("kubernetes.io/cluster/s1", "owned")]), "s1").is_some());
        assert_eq!(foreign(&tags(&[]), "s1").as_deref(), Some("not made by kbp"));
        assert!(foreign(&tags(&[(STACK, "s1")]), "s1").is_none());
        assert!(foreign(&tags(&[(STACK, "s1"), ("elbv2.k8s.aws/cluster", "s1")]), "s1").is_none());
    }

    #[test]
    fn in_a_vpc_the_stack_only_uses_only_what_a_controller_made_for_the_cluster_is_its() {
        assert!(made_for(&tags(&[("elbv2.k8s.aws/cluster", "s1")]), "s1").is_some());
        assert!(made_for(&tags(&[("kubernetes.io/cluster/s1", "owned")]), "s1").is_some());
        // The neighbours': untagged, shared with the cluster, discoverable by Karpenter, or another cluster's.
        assert!(made_for(&tags(&[]), "s1").is_none());
        assert!(made_for(&tags(&[("kubernetes.io/cluster/s1", "shared")]), "s1").is_none());
        assert!(made_for(&tags(&[("karpenter.sh/discovery", "s1")]), "s1").is_none());
        assert!(made_for(&tags(&[("elbv2.k8s.aws/cluster", "s2")]), "s1").is_none());
        // kbp's own are deleted from state, never as leftovers.
        assert!(made_for(&tags(&[(STACK, "s1"), ("elbv2.k8s.aws/cluster", "s1")]), "s1").is_none());
    }

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
        let out = referencing(std::slice::from_ref(&perm), "sg-gone");
        assert_eq!(out.len(), 1);
        assert!(out[0].ip_ranges().is_empty());
        let ids: Vec<_> = out[0].user_id_group_pairs().iter().filter_map(|p| p.group_id()).collect();
        assert_eq!(ids, ["sg-gone"]);
        assert!(referencing(out.as_slice(), "sg-other").is_empty());
        let g = Group::builder().ip_permissions(perm).build();
        assert_eq!(referenced(&g), ["sg-gone", "sg-stays"]);
    }
}

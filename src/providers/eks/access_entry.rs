//! `aws_eks_access_entry`: an IAM principal's way into the cluster (kbp's own admin, Karpenter's nodes, and the
//! blueprint's `[[cluster.access_entries]]`), with its Kubernetes groups and user name and the access policies
//! associated to it, cluster-wide (`policy_arns`) or in namespaces (`namespace_policies`, policy ARN →
//! namespaces). The ID is `<cluster>:<principal ARN as EKS has it>`. A user name is an attribute only when the
//! blueprint sets one: EKS makes its own otherwise, which is no drift.
//!
//! The admin entry's principal is whoever runs kbp, and with SSO or other assumed-role credentials that is an
//! STS session ARN (`arn:aws:sts::ACCOUNT:assumed-role/NAME/SESSION`), which EKS refuses: it wants the role
//! itself. The session ARN does not carry the role's path (SSO roles live under
//! `/aws-reserved/sso.amazonaws.com/…`) and EKS wants the exact role ARN, path included, so before calling AWS
//! the role is looked up by name (role names are unique in an account) to get its real ARN. For comparison,
//! `canonical` and `read` both name a role as `arn:…:iam::ACCOUNT:role/NAME`, without the path: the same role
//! then compares equal whichever session applied it.

use std::collections::BTreeMap;

use async_trait::async_trait;
use aws_sdk_eks::types::{AccessScope, AccessScopeType};
use serde_json::{json, Value};

use super::{join_id, missing, send_naming_role, sort_sets, sorted, split_id, tagging, vanished};
use crate::graph::{kinds, Attrs};
use crate::providers::attrs::absent_if_gone;
use crate::providers::ec2::object;
use crate::providers::send::{remove, send};
use crate::providers::spec;
use crate::providers::{contract, contract::Constraint};
use crate::providers::{
    Applied, Context, Descriptor, Desired, Observed, Provider, ProviderError, Result, WithoutState,
};

pub(crate) struct AccessEntry;

const KIND: &str = kinds::EKS_ACCESS_ENTRY;
/// Only STANDARD entries take access policies; node entries (EC2_LINUX, …) get their permissions from their type.
const STANDARD: &str = "STANDARD";

/// The attributes the compiler emits, references resolved ([`crate::graph::kinds`]).
type Spec = crate::graph::kinds::eks_access_entry::AccessEntry<String>;

impl Spec {
    /// Every policy with its scope: `None` cluster-wide, else the namespaces.
    fn policies(&self) -> Vec<(String, Option<Vec<String>>)> {
        let cluster = self.policy_arns.iter().map(|p| (p.clone(), None));
        let namespaced = self.namespace_policies.iter().map(|(p, ns)| (p.clone(), Some(sorted(ns))));
        cluster.chain(namespaced).collect()
    }
}

/// What AWS accepts of what this kind sends ([`contract`]).
const SENDS: &[Constraint] = &[contract::tags_of("EKS access entry")];

#[async_trait]
impl Provider for AccessEntry {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(KIND, WithoutState::GoesWith(kinds::EKS_CLUSTER), SENDS)
            .force_new(&["cluster_name", "principal_arn", "type"])
            .imported_by("`<cluster name>:<principal ARN>`")
    }

    fn canonical(&self, desired: Attrs) -> Attrs {
        let mut a = sort_sets(desired, &["policy_arns", "kubernetes_groups"]);
        if let Some(Value::Object(by_policy)) = a.get_mut("namespace_policies") {
            for namespaces in by_policy.values_mut() {
                if let Value::Array(list) = namespaces {
                    list.sort_by_key(|v| v.as_str().map(str::to_string));
                }
            }
        }
        if let Some(Value::String(arn)) = a.get_mut("principal_arn") {
            *arn = role_without_path(arn);
        }
        a
    }

    async fn read(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<Option<Observed>> {
        let (cluster, principal) = split_id(KIND, id, "principal ARN")?;
        let Some(entry) = describe(cx, cluster, principal).await? else { return Ok(None) };
        let entry_type = entry.r#type().unwrap_or(STANDARD);
        let standard = entry_type == STANDARD;
        let policies =
            if standard { associated_policies(cx, cluster, principal).await?.unwrap_or_default() } else { Vec::new() };
        let cluster_wide: Vec<String> =
            policies.iter().filter(|(_, ns)| ns.is_none()).map(|(p, _)| p.clone()).collect();
        let namespaced: BTreeMap<&String, &Vec<String>> =
            policies.iter().filter_map(|(p, ns)| ns.as_ref().map(|ns| (p, ns))).collect();
        // EKS fills in groups and a user name of its own for node entries, and a user name for any entry not given
        // one: only what kbp sets is compared.
        let named = prior.get("username").is_some_and(|u| !u.is_null());
        let attrs = json!({
            "cluster_name": entry.cluster_name(),
            "principal_arn": entry.principal_arn().map(role_without_path),
            "type": entry_type,
            "policy_arns": sorted(&cluster_wide),
            "namespace_policies": namespaced,
            "username": if named { json!(entry.username()) } else { Value::Null },
            "kubernetes_groups": if standard { sorted(entry.kubernetes_groups()) } else { Vec::new() },
            "tags": tagging::attr(entry.tags()),
        });
        Ok(Some(Observed { attrs: object(attrs), outputs: outputs(id, &entry) }))
    }

    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let principal = principal_for_eks(cx, &s.principal_arn).await?;
        let found = describe(cx, &s.cluster_name, &principal).await?;
        Ok(found.filter(|e| tagging::owned_by(e.tags(), &cx.stack)).map(|_| join_id(&s.cluster_name, &principal)))
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        const OP: &str = "eks:CreateAccessEntry";
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let principal = principal_for_eks(cx, &s.principal_arn).await?;
        let (tags, token) = (Some(tagging::on_create(desired)), desired.token());
        // A role made moments ago may not be visible to EKS yet: "The specified principalArn is invalid".
        let created = send_naming_role(cx, OP, &[], || {
            cx.eks()
                .create_access_entry()
                .cluster_name(&s.cluster_name)
                .principal_arn(&principal)
                .r#type(&s.entry_type)
                .set_username(s.username.clone())
                .set_kubernetes_groups(Some(s.kubernetes_groups.clone()).filter(|g| !g.is_empty()))
                .set_tags(tags.clone())
                .set_client_request_token(token.clone())
                .send()
        })
        .await
        .map_err(|e| explain_taken(e, &s.cluster_name, &principal))?;
        let entry = created.access_entry.ok_or_else(|| missing(OP, "access entry"))?;
        for (policy, namespaces) in s.policies() {
            associate(cx, &s.cluster_name, &principal, &policy, namespaces.as_deref()).await?;
        }
        let id = join_id(&s.cluster_name, &principal);
        Ok(Applied { outputs: outputs(&id, &entry), id })
    }

    async fn update(&self, cx: &Context, id: &str, _prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        let (cluster, principal) = split_id(KIND, id, "principal ARN")?;
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let what = format!("access entry of {principal}");
        let entry =
            describe(cx, cluster, principal).await?.ok_or_else(|| vanished("eks:DescribeAccessEntry", &what))?;
        let standard = matches!(entry.r#type(), Some(STANDARD) | None);
        let have =
            if standard { associated_policies(cx, cluster, principal).await?.unwrap_or_default() } else { Vec::new() };
        let want = s.policies();
        // Associating again with another scope replaces the scope.
        for (policy, namespaces) in want.iter().filter(|w| !have.contains(w)) {
            associate(cx, cluster, principal, policy, namespaces.as_deref()).await?;
        }
        let wanted = |p: &String| want.iter().any(|(w, _)| w == p);
        for (policy, _) in have.iter().filter(|(p, _)| !wanted(p)) {
            remove(cx, "eks:DisassociateAccessPolicy", &[], || {
                cx.eks()
                    .disassociate_access_policy()
                    .cluster_name(cluster)
                    .principal_arn(principal)
                    .policy_arn(policy)
                    .send()
            })
            .await?;
        }
        let groups_now = sorted(entry.kubernetes_groups());
        let username_differs = s.username.as_deref().is_some_and(|u| entry.username() != Some(u));
        if standard && (groups_now != sorted(&s.kubernetes_groups) || username_differs) {
            send(cx, "eks:UpdateAccessEntry", &[], || {
                cx.eks()
                    .update_access_entry()
                    .cluster_name(cluster)
                    .principal_arn(principal)
                    .set_kubernetes_groups(Some(s.kubernetes_groups.clone()))
                    .set_username(s.username.clone())
                    .send()
            })
            .await?;
        }
        let arn = entry.access_entry_arn().ok_or_else(|| missing("eks:DescribeAccessEntry", "access entry ARN"))?;
        tagging::reconcile(cx, arn, entry.tags(), desired).await?;
        Ok(Applied { id: id.to_string(), outputs: outputs(id, &entry) })
    }

    /// Access entries have no status: once DeleteAccessEntry returns, the principal has no access.
    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        let (cluster, principal) = split_id(KIND, id, "principal ARN")?;
        remove(cx, "eks:DeleteAccessEntry", &[], || {
            cx.eks().delete_access_entry().cluster_name(cluster).principal_arn(principal).send()
        })
        .await
    }
}

type Described = aws_sdk_eks::types::AccessEntry;

/// The principals (roles named without their path) of every access entry of `cluster`, as EKS lists them.
pub(crate) async fn principals(cx: &Context, cluster: &str) -> Result<Vec<String>> {
    let listed = send(cx, "eks:ListAccessEntries", &[], || async {
        let pages = cx.eks().list_access_entries().cluster_name(cluster);
        pages.into_paginator().items().send().collect::<Result<Vec<_>, _>>().await
    })
    .await?;
    Ok(listed.iter().map(|p| role_without_path(p)).collect())
}

async fn describe(cx: &Context, cluster: &str, principal: &str) -> Result<Option<Described>> {
    let r = send(cx, "eks:DescribeAccessEntry", &[], || {
        cx.eks().describe_access_entry().cluster_name(cluster).principal_arn(principal).send()
    })
    .await;
    Ok(absent_if_gone(r)?.and_then(|out| out.access_entry))
}

/// The access policies associated with the entry, each with its scope (`None` cluster-wide, else the
/// namespaces, sorted), or `None` when the entry is gone.
async fn associated_policies(
    cx: &Context,
    cluster: &str,
    principal: &str,
) -> Result<Option<Vec<(String, Option<Vec<String>>)>>> {
    let r = send(cx, "eks:ListAssociatedAccessPolicies", &[], || async {
        let pages = cx.eks().list_associated_access_policies().cluster_name(cluster).principal_arn(principal);
        pages.into_paginator().items().send().collect::<Result<Vec<_>, _>>().await
    })
    .await;
    let scoped = |p: &aws_sdk_eks::types::AssociatedAccessPolicy| {
        let scope = p.access_scope();
        let namespaced = scope.and_then(|s| s.r#type()) == Some(&AccessScopeType::Namespace);
        let namespaces = namespaced.then(|| sorted(scope.map(|s| s.namespaces()).unwrap_or_default()));
        p.policy_arn().map(|arn| (arn.to_string(), namespaces))
    };
    Ok(absent_if_gone(r)?.map(|ps| ps.iter().filter_map(scoped).collect()))
}

/// Associates `policy` cluster-wide, or in `namespaces`. Associating a policy that is already associated
/// succeeds, and takes the scope given.
async fn associate(
    cx: &Context,
    cluster: &str,
    principal: &str,
    policy: &str,
    namespaces: Option<&[String]>,
) -> Result<()> {
    let scope = match namespaces {
        None => AccessScope::builder().r#type(AccessScopeType::Cluster).build(),
        Some(ns) => AccessScope::builder().r#type(AccessScopeType::Namespace).set_namespaces(Some(ns.to_vec())).build(),
    };
    send(cx, "eks:AssociateAccessPolicy", &[], || {
        let call = cx.eks().associate_access_policy().cluster_name(cluster).principal_arn(principal);
        call.policy_arn(policy).access_scope(scope.clone()).send()
    })
    .await
    .map_err(|e| {
        if e.is_not_found() {
            e.with_hint(format!("`{policy}` is not a cluster access policy; `aws eks list-access-policies` lists them"))
        } else {
            e
        }
    })
    .map(drop)
}

/// The principal ARN to give EKS: a role's real ARN, path included, for an STS session of it; any other ARN
/// as it is. A role IAM will not show (another account's, or no permission to read it) stays without its path.
async fn principal_for_eks(cx: &Context, arn: &str) -> Result<String> {
    let Some(role) = assumed_role_name(arn) else { return Ok(arn.to_string()) };
    let r = send(cx, "iam:GetRole", &[], || cx.iam().get_role().role_name(role).send()).await;
    match r {
        Ok(out) => Ok(out.role().map_or_else(|| role_without_path(arn), |r| r.arn().to_string())),
        Err(e) if e.is_not_found() || e.code.starts_with("AccessDenied") => {
            tracing::debug!(role, error = %e, "cannot look up the role's path; using its ARN without one");
            Ok(role_without_path(arn))
        }
        Err(e) => Err(e),
    }
}

/// The role name in an STS assumed-role ARN.
fn assumed_role_name(arn: &str) -> Option<&str> {
    let (_, rest) = arn.split_once(":sts::")?;
    let (_, session) = rest.split_once(":assumed-role/")?;
    session.split('/').next().filter(|n| !n.is_empty())
}

/// A principal as kbp compares them: a role named without its path ([`role_without_path`]).
pub(crate) fn role_named(arn: &str) -> String {
    role_without_path(arn)
}

/// `arn:P:iam::A:role/NAME` for an STS session of the role or for the role with any path; other ARNs unchanged.
fn role_without_path(arn: &str) -> String {
    let Some((prefix, rest)) = arn.split_once("::") else { return arn.to_string() };
    let partition = prefix.strip_prefix("arn:").and_then(|p| p.split(':').next()).unwrap_or("aws");
    let Some((account, resource)) = rest.split_once(':') else { return arn.to_string() };
    let name = if let Some(session) = resource.strip_prefix("assumed-role/") {
        session.split('/').next()
    } else if prefix.ends_with(":iam") {
        resource.strip_prefix("role/").and_then(|path| path.rsplit('/').next())
    } else {
        None
    };
    match name.filter(|n| !n.is_empty()) {
        Some(name) => format!("arn:{partition}:iam::{account}:role/{name}"),
        None => arn.to_string(),
    }
}

fn explain_taken(e: ProviderError, cluster: &str, principal: &str) -> ProviderError {
    if e.is("ResourceInUseException") {
        e.with_hint(format!(
            "cluster `{cluster}` already has an access entry for {principal} that is not in this stack's state (EKS \
             makes one itself for a managed node group's role); if it carries this stack's kbp:stack tag, run kbp \
             again to adopt it, otherwise delete it with `aws eks delete-access-entry`"
        ))
    } else {
        e
    }
}

fn outputs(id: &str, e: &Described) -> Attrs {
    object(json!({ "id": id, "arn": e.access_entry_arn() }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_and_role_paths_name_the_role() {
        let session = "arn:aws:sts::111122223333:assumed-role/AWSReservedSSO_Admin_1a2b/jane@example.com";
        assert_eq!(assumed_role_name(session), Some("AWSReservedSSO_Admin_1a2b"));
        assert_eq!(role_without_path(session), "arn:aws:iam::111122223333:role/AWSReservedSSO_Admin_1a2b");
        let with_path =
            "arn:aws:iam::111122223333:role/aws-reserved/sso.amazonaws.com/us-west-2/AWSReservedSSO_Admin_1a2b";
        assert_eq!(role_without_path(with_path), "arn:aws:iam::111122223333:role/AWSReservedSSO_Admin_1a2b");
        let china = "arn:aws-cn:sts::111122223333:assumed-role/deployer/ci";
        assert_eq!(role_without_path(china), "arn:aws-cn:iam::111122223333:role/deployer");
        for unchanged in [
            "arn:aws:iam::111122223333:user/jane",
            "arn:aws:iam::111122223333:role/plain",
            "arn:aws:iam::111122223333:root",
        ] {
            assert_eq!(role_without_path(unchanged), unchanged);
            assert_eq!(assumed_role_name(unchanged), None);
        }
    }

    #[test]
    fn canonical_names_the_role_and_sorts_policies() {
        let desired = json!({
            "principal_arn": "arn:aws:sts::111122223333:assumed-role/deployer/session",
            "policy_arns": ["arn:aws:eks::aws:cluster-access-policy/B", "arn:aws:eks::aws:cluster-access-policy/A"],
        });
        let a = AccessEntry.canonical(desired.as_object().cloned().unwrap());
        assert_eq!(a["principal_arn"], "arn:aws:iam::111122223333:role/deployer");
        assert_eq!(a["policy_arns"][0], "arn:aws:eks::aws:cluster-access-policy/A");
    }
}

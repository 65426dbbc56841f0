//! `aws_iam_role_policy_attachment`: a managed policy (AWS's or the stack's own) attached to a role.
//! The ID is `<role>/<policy_arn>`; role names cannot contain `/`, so the first `/` splits it.

use async_trait::async_trait;

use super::common::{absent_if_gone, remove, send, OnRole};
use super::details;
use crate::graph::{kinds, Attrs};
use crate::providers::spec;
use crate::providers::{Applied, Context, Descriptor, Desired, Observed, Provider, Result, WithoutState};

const KIND: &str = kinds::IAM_ROLE_POLICY_ATTACHMENT;
const LINK: OnRole = OnRole { kind: KIND, sep: '/', policy: "policy_arn" };

/// The provider of `aws_iam_role_policy_attachment`: a managed policy attached to a role.
pub struct RolePolicyAttachment;

/// The attributes the compiler emits, references resolved ([`crate::graph::kinds`]).
type Spec = crate::graph::kinds::iam_role_policy_attachment::RolePolicyAttachment<String>;

// No `find`: attaching is idempotent, so a create repeated after a lost state write does no harm.
#[async_trait]
impl Provider for RolePolicyAttachment {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(KIND, WithoutState::GoesWith(kinds::IAM_ROLE), &[])
            .force_new(&["role", "policy_arn"])
            .imported_by("`<role name>/<policy ARN>`")
    }

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let (role, policy_arn) = LINK.split(id)?;
        let Some(attached) = absent_if_gone(attached_policy_arns(cx, role).await)? else { return Ok(None) };
        Ok(attached.iter().any(|a| a == policy_arn).then(|| observe(role, policy_arn)))
    }

    /// From the account details: each role's attached managed policies.
    async fn read_many(&self, cx: &Context, items: &[(String, Attrs)]) -> Result<Vec<Option<Observed>>> {
        let details = details::shared(cx).await?;
        items
            .iter()
            .map(|(id, _)| {
                let (role, policy_arn) = LINK.split(id)?;
                let attached = details.role(role).map(|r| r.attached_managed_policies()).unwrap_or_default();
                Ok(attached.iter().any(|a| a.policy_arn() == Some(policy_arn)).then(|| observe(role, policy_arn)))
            })
            .collect()
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let (role, policy_arn) = (s.role.as_str(), s.policy_arn.as_str());
        // A role or policy created a moment ago may not be visible to AttachRolePolicy yet.
        send(cx, "iam:AttachRolePolicy", &["NoSuchEntity"], || {
            cx.iam().attach_role_policy().role_name(role).policy_arn(policy_arn).send()
        })
        .await
        .map_err(|e| {
            if e.is_not_found() {
                e.with_hint(format!("check that role `{role}` and policy `{policy_arn}` exist"))
            } else {
                e
            }
        })?;
        Ok(LINK.applied(role, policy_arn))
    }

    /// Both attributes force a replacement, so there is nothing to change in place.
    async fn update(&self, _cx: &Context, id: &str, _prior: &Attrs, _desired: &Desired<'_>) -> Result<Applied> {
        let (role, policy_arn) = LINK.split(id)?;
        Ok(LINK.applied(role, policy_arn))
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        let (role, policy_arn) = LINK.split(id)?;
        detach(cx, role, policy_arn).await
    }
}

fn observe(role: &str, policy_arn: &str) -> Observed {
    Observed { attrs: LINK.attrs(role, policy_arn), outputs: LINK.applied(role, policy_arn).outputs }
}

/// The ARNs of the managed policies attached to `role`.
pub(super) async fn attached_policy_arns(cx: &Context, role: &str) -> Result<Vec<String>> {
    let attached = send(cx, "iam:ListAttachedRolePolicies", &[], || async {
        let pages = cx.iam().list_attached_role_policies().role_name(role).into_paginator().items().send();
        pages.collect::<Result<Vec<_>, _>>().await
    })
    .await?;
    Ok(attached.iter().filter_map(|p| p.policy_arn().map(str::to_string)).collect())
}

/// Detaches the policy; a role or attachment already gone counts as detached.
pub(super) async fn detach(cx: &Context, role: &str, policy_arn: &str) -> Result<()> {
    remove(cx, "iam:DetachRolePolicy", &[], || {
        cx.iam().detach_role_policy().role_name(role).policy_arn(policy_arn).send()
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_ids_at_the_first_slash() {
        let split_id = |id| LINK.split(id);
        let (role, arn) = split_id("node/arn:aws:iam::aws:policy/service-role/X").unwrap();
        assert_eq!((role, arn), ("node", "arn:aws:iam::aws:policy/service-role/X"));
        assert!(split_id("node").is_err());
        assert!(split_id("/arn:aws:iam::aws:policy/X").is_err());
    }
}

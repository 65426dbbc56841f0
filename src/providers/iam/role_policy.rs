//! `aws_iam_role_policy`: an inline policy embedded in a role. The ID is `<role>:<name>`; neither a role name
//! nor a policy name may contain `:`.

use async_trait::async_trait;
use serde_json::json;

use super::common::{self, absent_if_gone, object, ok_if_gone, required, required_str, send};
use super::policy_doc;
use crate::graph::Attrs;
use crate::providers::{Applied, Context, Desired, Observed, Provider, ProviderError};

const KIND: &str = "aws_iam_role_policy";

pub struct RolePolicy;

// No `find`: PutRolePolicy overwrites, so a create repeated after a lost state write does no harm.
#[async_trait]
impl Provider for RolePolicy {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn force_new(&self) -> &'static [&'static str] {
        &["role", "name"]
    }

    fn canonical(&self, desired: Attrs) -> Attrs {
        policy_doc::canonical_in(desired, "policy")
    }

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>, ProviderError> {
        const OP: &str = "iam:GetRolePolicy";
        let (role, name) = split_id(id)?;
        let r = send(cx, OP, &[], || cx.iam().get_role_policy().role_name(role).policy_name(name).send()).await;
        let Some(out) = absent_if_gone(r)? else { return Ok(None) };
        let doc = policy_doc::normalize(policy_doc::from_aws(OP, out.policy_document())?);
        Ok(Some(Observed {
            attrs: object(json!({"role": role, "name": name, "policy": doc})),
            outputs: applied(role, name).outputs,
        }))
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied, ProviderError> {
        put(cx, desired.attrs).await
    }

    async fn update(
        &self,
        cx: &Context,
        _id: &str,
        _prior: &Attrs,
        desired: &Desired<'_>,
    ) -> Result<Applied, ProviderError> {
        put(cx, desired.attrs).await
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<(), ProviderError> {
        let (role, name) = split_id(id)?;
        delete(cx, role, name).await
    }
}

async fn put(cx: &Context, a: &Attrs) -> Result<Applied, ProviderError> {
    const OP: &str = "iam:PutRolePolicy";
    let role = required_str(KIND, a, "role")?;
    let name = required_str(KIND, a, "name")?;
    let doc = policy_doc::to_aws(OP, required(KIND, a, "policy")?)?;
    // The role may have been created a moment ago and not be visible everywhere yet.
    send(cx, OP, &["NoSuchEntity"], || {
        cx.iam().put_role_policy().role_name(role).policy_name(name).policy_document(&doc).send()
    })
    .await?;
    Ok(applied(role, name))
}

/// Deletes the inline policy; one already gone (or whose role is gone) counts as deleted.
pub(super) async fn delete(cx: &Context, role: &str, name: &str) -> Result<(), ProviderError> {
    let r = send(cx, "iam:DeleteRolePolicy", &[], || {
        cx.iam().delete_role_policy().role_name(role).policy_name(name).send()
    });
    ok_if_gone(r.await.map(drop))
}

fn applied(role: &str, name: &str) -> Applied {
    let id = format!("{role}:{name}");
    Applied { outputs: object(json!({"id": id, "role": role, "name": name})), id }
}

fn split_id(id: &str) -> Result<(&str, &str), ProviderError> {
    common::split_id(KIND, id, ':', "<role>:<name>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_role_and_policy_name() {
        assert_eq!(split_id("karpenter-node:ssm").unwrap(), ("karpenter-node", "ssm"));
        assert!(split_id("karpenter-node").is_err());
        assert!(split_id(":ssm").is_err());
    }
}

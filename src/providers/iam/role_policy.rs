//! `aws_iam_role_policy`: an inline policy embedded in a role. The ID is `<role>:<name>`; neither a role name
//! nor a policy name may contain `:`.

use async_trait::async_trait;

use super::common::{absent_if_gone, remove, send, OnRole};
use super::{details, policy_doc};
use crate::graph::{kinds, Attrs};
use crate::providers::spec;
use crate::providers::{contract, contract::Constraint, contract::Rule};
use crate::providers::{Applied, Context, Descriptor, Desired, Observed, Provider, Result, WithoutState};

const KIND: &str = kinds::IAM_ROLE_POLICY;
const LINK: OnRole = OnRole { kind: KIND, sep: ':', policy: "name" };

/// The provider of `aws_iam_role_policy`: a policy embedded in a role.
pub struct RolePolicy;

/// The desired attributes, references resolved ([`crate::graph::kinds`]).
type Spec = crate::graph::kinds::iam_role_policy::RolePolicy<String>;

// No `find`: PutRolePolicy overwrites, so a create repeated after a lost state write does no harm.

/// What AWS accepts of what this kind sends ([`contract`]).
const SENDS: &[Constraint] = &[
    Constraint::new(
        "name",
        Rule::Name { api: "IAM inline policy name", max: 128, chars: contract::IAM_NAME, unique: contract::Unique::No },
    ),
    // IAM quotas: a role's inline policies add up to 10,240 characters, whitespace not counted.
    Constraint::new("policy", Rule::Policy { api: "inline role policy", max: 10240, whitespace: false }),
];

#[async_trait]
impl Provider for RolePolicy {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(KIND, WithoutState::GoesWith(kinds::IAM_ROLE), SENDS)
            .force_new(&["role", "name"])
            .imported_by("`<role name>:<policy name>`")
    }

    fn canonical(&self, desired: Attrs) -> Attrs {
        policy_doc::canonical_in(desired, "policy")
    }

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        const OP: &str = "iam:GetRolePolicy";
        let (role, name) = LINK.split(id)?;
        let r = send(cx, OP, &[], || cx.iam().get_role_policy().role_name(role).policy_name(name).send()).await;
        let Some(out) = absent_if_gone(r)? else { return Ok(None) };
        observe(OP, role, name, out.policy_document()).map(Some)
    }

    /// From the account details: each role's inline policies with their documents.
    async fn read_many(&self, cx: &Context, items: &[(String, Attrs)]) -> Result<Vec<Option<Observed>>> {
        let details = details::shared(cx).await?;
        items
            .iter()
            .map(|(id, _)| {
                let (role, name) = LINK.split(id)?;
                let inline = details.role(role).map(|r| r.role_policy_list()).unwrap_or_default();
                let Some(doc) = inline.iter().find(|p| p.policy_name() == Some(name)).and_then(|p| p.policy_document())
                else {
                    return Ok(None);
                };
                observe("iam:GetAccountAuthorizationDetails", role, name, doc).map(Some)
            })
            .collect()
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        put(cx, desired.attrs).await
    }

    /// PutRolePolicy replaces the document in place.
    async fn update(&self, cx: &Context, _id: &str, _prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        put(cx, desired.attrs).await
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        let (role, name) = LINK.split(id)?;
        delete(cx, role, name).await
    }
}

/// What `read` reports of the inline policy `name` of `role`, whose document `op` returned as `doc`.
fn observe(op: &str, role: &str, name: &str, doc: &str) -> Result<Observed> {
    let mut attrs = LINK.attrs(role, name);
    attrs.insert("policy".to_string(), policy_doc::normalize(policy_doc::from_aws(op, doc)?));
    Ok(Observed { attrs, outputs: LINK.applied(role, name).outputs })
}

async fn put(cx: &Context, a: &Attrs) -> Result<Applied> {
    const OP: &str = "iam:PutRolePolicy";
    let s: Spec = spec::parse(KIND, a)?;
    let (role, name) = (s.role.as_str(), s.name.as_str());
    let doc = policy_doc::to_aws(OP, &s.policy)?;
    // The role may have been created a moment ago and not be visible everywhere yet.
    send(cx, OP, &["NoSuchEntity"], || {
        cx.iam().put_role_policy().role_name(role).policy_name(name).policy_document(&doc).send()
    })
    .await?;
    Ok(LINK.applied(role, name))
}

/// Deletes the inline policy; one already gone (or whose role is gone) counts as deleted.
pub(super) async fn delete(cx: &Context, role: &str, name: &str) -> Result<()> {
    remove(cx, "iam:DeleteRolePolicy", &[], || cx.iam().delete_role_policy().role_name(role).policy_name(name).send())
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_role_and_policy_name() {
        let split_id = |id| LINK.split(id);
        assert_eq!(split_id("karpenter-node:ssm").unwrap(), ("karpenter-node", "ssm"));
        assert!(split_id("karpenter-node").is_err());
        assert!(split_id(":ssm").is_err());
    }
}

//! `aws_iam_role`: an IAM role with its trust policy. The ID is the role name.

use std::future::Future;

use async_trait::async_trait;
use aws_sdk_iam::error::{ProvideErrorMetadata, SdkError};
use serde_json::{json, Value};

use super::common::{self, absent_if_gone, explain_taken, object, remove, send, Entity, DELETE_CONFLICT};
use super::tagging::{self, Tagged};
use super::{details, instance_profile, policy_doc, role_policy, role_policy_attachment};
use crate::graph::{kinds, Attrs};
use crate::providers::preflight::{quick, read, Holder};
use crate::providers::spec;
use crate::providers::tagged::{found, Search};
use crate::providers::tags::user_tags;
use crate::providers::tags::ADDRESS;
use crate::providers::Found;
use crate::providers::{contract, contract::Constraint, contract::Rule};
use crate::providers::{
    Applied, Context, Descriptor, Desired, Observed, Provider, ProviderError, Result, WithoutState,
};
use std::collections::BTreeMap;

const KIND: &str = kinds::IAM_ROLE;
const DEFAULT_MAX_SESSION: i32 = 3600;

/// IAM checks that every principal of a trust policy exists when the policy is set, and a role created a
/// moment ago (the Karpenter controller's, say) may not be visible yet: IAM then answers
/// `MalformedPolicyDocument: Invalid principal in policy`. Only that form of the error is retried, under this
/// code, so that a truly malformed document still fails at once.
const PRINCIPAL_NOT_YET_VISIBLE: &str = "MalformedPolicyDocument.InvalidPrincipal";

/// The provider of `aws_iam_role`.
pub struct Role;

/// The attributes the compiler emits, references resolved ([`crate::graph::kinds`]).
type Spec = crate::graph::kinds::iam_role::Role;

/// Service-linked roles (the account-wide Spot role among them) live under this path.
const SERVICE_ROLE_PATH: &str = "/aws-service-role/";

/// What AWS accepts of what this kind sends ([`contract`]).
const SENDS: &[Constraint] = &[
    Constraint::new(
        "name",
        Rule::Name {
            api: "IAM role name",
            max: 64,
            chars: contract::IAM_NAME,
            unique: contract::Unique::InAccount("IAM role"),
        },
    ),
    contract::IAM_DESCRIPTION,
    // IAM quotas: a role trust policy of 2,048 characters, whitespace not counted.
    Constraint::new("assume_role_policy", Rule::Policy { api: "role trust policy", max: 2048, whitespace: false }),
    contract::tags_of("IAM role"),
];

#[async_trait]
impl Provider for Role {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(KIND, WithoutState::Tags, SENDS).force_new(&["name", "path"]).imported_by("its role name")
    }

    async fn name_holder(&self, cx: &Context, name: &str, _attrs: &Attrs) -> Result<Holder> {
        let r = cx.iam().get_role().role_name(name).customize().config_override(quick!(aws_sdk_iam));
        let found = read("iam:GetRole", r.send().await)?;
        Ok(found.map_or(Holder::Nobody, |out| super::common::holder(out.role.as_ref().map(|r| r.tags()))))
    }

    /// The roles tagged for the stack, with their tags from the account details; never a service-linked role
    /// (the account-wide Spot role among them), which is no stack's to delete.
    async fn tagged(&self, cx: &Context, search: &Search<'_>) -> Result<Vec<Found>> {
        let roles = super::details::roles(cx).await?;
        let kept = |r: &&aws_sdk_iam::types::RoleDetail| r.path().unwrap_or_default().starts_with(SERVICE_ROLE_PATH);
        Ok(roles
            .iter()
            .filter(|r| !kept(r))
            .filter_map(|r| {
                let tags: BTreeMap<String, String> =
                    r.tags().iter().map(|t| (t.key().to_string(), t.value().to_string())).collect();
                let name = r.role_name()?;
                search
                    .owner
                    .owns_map(&tags)
                    .then(|| found(KIND, name, tags.get(ADDRESS).cloned(), String::new(), Vec::new()))
            })
            .collect())
    }

    fn canonical(&self, desired: Attrs) -> Attrs {
        policy_doc::canonical_in(desired, "assume_role_policy")
    }

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        Described::get(cx, id).await?.map(|role| observe("iam:GetRole", &role)).transpose()
    }

    /// ListRoles for all but the tags, which it leaves out; the account details for those.
    async fn read_many(&self, cx: &Context, items: &[(String, Attrs)]) -> Result<Vec<Option<Observed>>> {
        let (listed, details) = futures::try_join!(list(cx), details::shared(cx))?;
        items
            .iter()
            .map(|(name, _)| {
                let listed = listed.iter().find(|r| r.role_name() == name);
                let Some((mut role, detail)) = listed.cloned().zip(details.role(name)) else { return Ok(None) };
                role.tags = detail.tags.clone();
                observe("iam:ListRoles", &role).map(Some)
            })
            .collect()
    }

    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        common::find_named(cx, &s.name, Described::role_name).await
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        const OP: &str = "iam:CreateRole";
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let trust = policy_doc::to_aws(OP, &s.assume_role_policy)?;
        let tags = tagging::to_iam(OP, &desired.tags())?;
        let created = set_trust(cx, OP, || {
            cx.iam()
                .create_role()
                .role_name(&s.name)
                .path(&s.path)
                .assume_role_policy_document(&trust)
                .set_description(s.description.clone())
                .set_max_session_duration(s.max_session_duration)
                .set_tags(Some(tags.clone()))
                .send()
        })
        .await
        .map_err(|e| explain_taken(e, "role", &s.name))?;
        let role = created.role.ok_or_else(|| ProviderError::new(OP, "", "IAM returned no role"))?;
        Ok(applied(&role))
    }

    async fn update(&self, cx: &Context, id: &str, _prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let role: Described = common::existing(cx, id).await?;

        let trust = &s.assume_role_policy;
        let current = role.assume_role_policy_document().map(|d| policy_doc::from_aws("iam:GetRole", d)).transpose()?;
        if !current.is_some_and(|c| policy_doc::equivalent(trust, &c)) {
            const OP: &str = "iam:UpdateAssumeRolePolicy";
            let doc = policy_doc::to_aws(OP, trust)?;
            set_trust(cx, OP, || cx.iam().update_assume_role_policy().role_name(id).policy_document(&doc).send())
                .await?;
        }

        let description = s.description.as_deref().unwrap_or("");
        let max = s.max_session_duration.unwrap_or(DEFAULT_MAX_SESSION);
        if role.description().unwrap_or("") != description
            || role.max_session_duration().unwrap_or(DEFAULT_MAX_SESSION) != max
        {
            send(cx, "iam:UpdateRole", &[], || {
                cx.iam().update_role().role_name(id).description(description).max_session_duration(max).send()
            })
            .await?;
        }

        tagging::reconcile(cx, Tagged::Role(id), role.tags(), &desired.tags()).await?;
        Ok(applied(&role))
    }

    /// Roles cannot be deleted while anything hangs on them, and some of what hangs on them may not be kbp's
    /// (a policy attached by hand, an instance profile left by a deleted node group), so everything is
    /// detached first.
    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        let Some(attached) = absent_if_gone(role_policy_attachment::attached_policy_arns(cx, id).await)? else {
            return Ok(());
        };
        for arn in attached {
            role_policy_attachment::detach(cx, id, &arn).await?;
        }
        for policy in inline_policy_names(cx, id).await? {
            role_policy::delete(cx, id, &policy).await?;
        }
        for profile in instance_profile_names(cx, id).await? {
            instance_profile::remove_role(cx, &profile, id).await?;
        }
        remove(cx, "iam:DeleteRole", DELETE_CONFLICT, || cx.iam().delete_role().role_name(id).send()).await
    }
}

pub(super) type Described = aws_sdk_iam::types::Role;

common::entity!(Described, "role", "iam:GetRole", |cx, name| cx.iam().get_role().role_name(name), |out| out.role);

/// What `read` reports of `role`, as `op` returned it with its tags.
fn observe(op: &str, role: &Described) -> Result<Observed> {
    let trust = match role.assume_role_policy_document() {
        Some(doc) => policy_doc::normalize(policy_doc::from_aws(op, doc)?),
        None => Value::Null,
    };
    let attrs = json!({
        "name": role.role_name(),
        "path": role.path(),
        "description": role.description().unwrap_or(""),
        "assume_role_policy": trust,
        "max_session_duration": role.max_session_duration().unwrap_or(DEFAULT_MAX_SESSION),
        "tags": user_tags(tagging::from_iam(role.tags())),
    });
    Ok(Observed { attrs: object(attrs), outputs: applied(role).outputs })
}

/// Every role of the account, without their tags (ListRoles leaves them out).
async fn list(cx: &Context) -> Result<Vec<Described>> {
    send(cx, "iam:ListRoles", &[], || async {
        cx.iam().list_roles().into_paginator().page_size(1000).items().send().collect::<Result<Vec<_>, _>>().await
    })
    .await
}

fn applied(role: &Described) -> Applied {
    let outputs = json!({
        "id": role.role_name(),
        "name": role.role_name(),
        "arn": role.arn(),
        "unique_id": role.role_id(),
    });
    Applied { id: role.role_name().to_string(), outputs: object(outputs) }
}

/// Sends a request that sets a trust policy, retrying while IAM does not yet see a principal that was just
/// made.
async fn set_trust<O, E, F, Fut>(cx: &Context, op: &str, mut request: F) -> Result<O>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<O, SdkError<E>>>,
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    let result = cx
        .retry
        .run(&[PRINCIPAL_NOT_YET_VISIBLE], || {
            let sent = request();
            async move {
                sent.await.map_err(|e| {
                    let mut e = ProviderError::from_sdk(op, e);
                    if names_an_unknown_principal(&e) {
                        e.code = PRINCIPAL_NOT_YET_VISIBLE.to_string();
                    }
                    e
                })
            }
        })
        .await;
    result.map_err(|mut e| {
        if e.is(PRINCIPAL_NOT_YET_VISIBLE) {
            e.code = "MalformedPolicyDocument".to_string();
            e.hint = Some(
                "a principal in assume_role_policy does not exist (IAM kept rejecting it); check the role ARN, \
                 account ID or service name it names"
                    .to_string(),
            );
        }
        e
    })
}

/// IAM's `MalformedPolicyDocument: Invalid principal in policy: "AWS":"arn:…"`, as opposed to a document that
/// is malformed for good.
fn names_an_unknown_principal(e: &ProviderError) -> bool {
    e.is("MalformedPolicyDocument") && e.message.to_ascii_lowercase().contains("invalid principal")
}

async fn inline_policy_names(cx: &Context, role: &str) -> Result<Vec<String>> {
    let r = send(cx, "iam:ListRolePolicies", &[], || async {
        cx.iam()
            .list_role_policies()
            .role_name(role)
            .into_paginator()
            .items()
            .send()
            .collect::<Result<Vec<_>, _>>()
            .await
    });
    Ok(absent_if_gone(r.await)?.unwrap_or_default())
}

async fn instance_profile_names(cx: &Context, role: &str) -> Result<Vec<String>> {
    let r = send(cx, "iam:ListInstanceProfilesForRole", &[], || async {
        let pages = cx.iam().list_instance_profiles_for_role().role_name(role).into_paginator().items().send();
        pages.collect::<Result<Vec<_>, _>>().await
    });
    let profiles = absent_if_gone(r.await)?.unwrap_or_default();
    Ok(profiles.iter().map(|p| p.instance_profile_name().to_string()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_unknown_principal_is_worth_waiting_for() {
        let op = "iam:CreateRole";
        let msg = r#"Invalid principal in policy: "AWS":"arn:aws:iam::111122223333:role/karpenter""#;
        assert!(names_an_unknown_principal(&ProviderError::new(op, "MalformedPolicyDocument", msg)));
        let bad = ProviderError::new(op, "MalformedPolicyDocument", "Syntax errors in policy.");
        assert!(!names_an_unknown_principal(&bad));
        assert!(!names_an_unknown_principal(&ProviderError::new(op, "InvalidInput", msg)));
    }
}

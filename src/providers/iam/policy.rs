//! `aws_iam_policy`: a customer-managed policy. The ID is its ARN.
//!
//! A managed policy keeps up to five versions of its document; changing the document adds a version and makes
//! it the default, so old versions are pruned as needed.

use async_trait::async_trait;
use aws_sdk_iam::types::PolicyVersion;
use serde_json::{json, Value};

use super::common::entity_tags;
use super::common::{self, absent_if_gone, explain_taken, object, remove, send, Entity, DELETE_CONFLICT};
use super::tagging::{self, Tagged};
use super::{details, policy_doc, role_policy_attachment};
use crate::graph::{kinds, Attrs};
use crate::providers::preflight::{self, quick, read};
use crate::providers::send::send_pages;
use crate::providers::spec;
use crate::providers::sts::caller_identity;
use crate::providers::tagged::{owned_among, Search};
use crate::providers::tags::user_tags;
use crate::providers::Found;
use crate::providers::{contract, contract::Constraint, contract::Rule};
use crate::providers::{
    Applied, Context, Descriptor, Desired, Observed, Provider, ProviderError, Result, WithoutState,
};
use aws_sdk_iam::types::PolicyScopeType;

const KIND: &str = kinds::IAM_POLICY;
/// IAM's limit of versions per managed policy.
const MAX_VERSIONS: usize = 5;

/// The provider of `aws_iam_policy`: a customer-managed policy.
pub struct Policy;

/// The attributes the compiler emits, references resolved ([`crate::graph::kinds`]).
type Spec = crate::graph::kinds::iam_policy::Policy;

/// What AWS accepts of what this kind sends ([`contract`]).
const SENDS: &[Constraint] = &[
    Constraint::new(
        "name",
        Rule::Name {
            api: "IAM policy name",
            max: 128,
            chars: contract::IAM_NAME,
            unique: contract::Unique::InAccount("IAM policy"),
        },
    ),
    contract::IAM_DESCRIPTION,
    // IAM quotas: a managed policy of 6,144 characters, whitespace not counted.
    Constraint::new("policy", Rule::Policy { api: "managed policy", max: 6144, whitespace: false }),
    contract::tags_of("IAM policy"),
];

#[async_trait]
impl Provider for Policy {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(KIND, WithoutState::Tags, SENDS)
            .force_new(&["name", "path", "description"])
            .imported_by("its policy ARN, `arn:aws:iam::<account>:policy/…`")
    }

    /// The ARN follows from the name, the path and the account; before preflight knows the caller there is no
    /// account, and preflight reports that instead.
    async fn name_holder(&self, cx: &Context, name: &str, attrs: &Attrs) -> Result<preflight::Holder> {
        let Some(me) = cx.caller() else { return Ok(preflight::Holder::Nobody) };
        let path = attrs.get("path").and_then(serde_json::Value::as_str).unwrap_or("/");
        let arn = format!("arn:{}:iam::{}:policy{path}{name}", me.partition, me.account_id);
        let r = cx.iam().get_policy().policy_arn(&arn).customize().config_override(quick!(aws_sdk_iam));
        let found = read("iam:GetPolicy", r.send().await)?;
        Ok(found.map_or(preflight::Holder::Nobody, |out| super::common::holder(out.policy.as_ref().map(|p| p.tags()))))
    }

    /// The account's own managed policies tagged for the stack, each policy's tags read from its Get call.
    async fn tagged(&self, cx: &Context, search: &Search<'_>) -> Result<Vec<Found>> {
        let arns = send_pages(
            cx,
            "iam:ListPolicies",
            |marker| cx.iam().list_policies().scope(PolicyScopeType::Local).set_marker(marker).send(),
            |page| {
                let arns = page.policies().iter().filter_map(|p| p.arn().map(str::to_string)).collect::<Vec<_>>();
                (arns, page.marker().filter(|_| page.is_truncated()).map(str::to_string))
            },
        )
        .await?;
        owned_among(search, KIND, arns, |arn| async move { entity_tags::<aws_sdk_iam::types::Policy>(cx, &arn).await })
            .await
    }

    /// IAM has no call to rename, move or re-describe a managed policy.
    fn canonical(&self, desired: Attrs) -> Attrs {
        policy_doc::canonical_in(desired, "policy")
    }

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let Some(policy) = Described::get(cx, id).await? else { return Ok(None) };
        let Some(doc) = absent_if_gone(default_document(cx, &policy).await)? else { return Ok(None) };
        observe(&policy, doc).map(Some)
    }

    /// The documents from the account details; the tags, which those leave out, one GetPolicy per policy.
    async fn read_many(&self, cx: &Context, items: &[(String, Attrs)]) -> Result<Vec<Option<Observed>>> {
        let details = details::shared(cx).await?;
        let read_one = |arn: &str| {
            let details = details.clone();
            let arn = arn.to_string();
            async move {
                let Some(policy) = Described::get(cx, &arn).await? else { return Ok(None) };
                let doc = match details.default_document(&arn) {
                    Some(raw) => policy_doc::from_aws("iam:GetAccountAuthorizationDetails", raw)?,
                    // Made after the details were read.
                    None => match absent_if_gone(default_document(cx, &policy).await)? {
                        Some(doc) => doc,
                        None => return Ok(None),
                    },
                };
                observe(&policy, doc).map(Some)
            }
        };
        futures::future::try_join_all(items.iter().map(|(arn, _)| read_one(arn))).await
    }

    /// Names are deterministic and the ARN follows from the name, the path and the account.
    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let me = caller_identity::lookup(cx).await?;
        let arn = format!("arn:{}:iam::{}:policy{}{}", me.partition, me.account_id, s.path, s.name);
        Ok(common::owned::<Described>(cx, &arn).await?.map(|_| arn))
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        const OP: &str = "iam:CreatePolicy";
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let doc = policy_doc::to_aws(OP, &s.policy)?;
        let tags = tagging::to_iam(OP, &desired.tags())?;
        let out = send(cx, OP, &[], || {
            cx.iam()
                .create_policy()
                .policy_name(&s.name)
                .path(&s.path)
                .set_description(s.description.clone())
                .policy_document(&doc)
                .set_tags(Some(tags.clone()))
                .send()
        })
        .await
        .map_err(|e| explain_taken(e, "policy", &s.name))?;
        let policy = out.policy.ok_or_else(|| ProviderError::new(OP, "", "IAM returned no policy"))?;
        applied(&policy)
    }

    async fn update(&self, cx: &Context, id: &str, _prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let policy: Described = common::existing(cx, id).await?;
        let wanted = &s.policy;
        if !policy_doc::equivalent(wanted, &default_document(cx, &policy).await?) {
            const OP: &str = "iam:CreatePolicyVersion";
            let doc = policy_doc::to_aws(OP, wanted)?;
            make_room_for_a_version(cx, id).await?;
            send(cx, OP, &[], || {
                cx.iam().create_policy_version().policy_arn(id).policy_document(&doc).set_as_default(true).send()
            })
            .await?;
        }
        tagging::reconcile(cx, Tagged::Policy(id), policy.tags(), &desired.tags()).await?;
        applied(&policy)
    }

    /// A managed policy can only be deleted once it is attached to nothing and has no version but the default.
    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        let Some(entities) = absent_if_gone(attached_entities(cx, id).await)? else { return Ok(()) };
        for holder in entities {
            detach(cx, id, &holder).await?;
        }
        // Some implementations list no entities for a policy that is gone rather than failing.
        let Some(versions) = absent_if_gone(versions(cx, id).await)? else { return Ok(()) };
        for v in versions {
            if let (false, Some(version)) = (v.is_default_version(), v.version_id()) {
                delete_version(cx, id, version).await?;
            }
        }
        remove(cx, "iam:DeletePolicy", DELETE_CONFLICT, || cx.iam().delete_policy().policy_arn(id).send()).await
    }
}

type Described = aws_sdk_iam::types::Policy;

common::entity!(Described, "policy", "iam:GetPolicy", |cx, arn| cx.iam().get_policy().policy_arn(arn), |out| out
    .policy);

/// What `read` reports of `policy`, whose default version holds `doc`.
fn observe(policy: &Described, doc: Value) -> Result<Observed> {
    let attrs = json!({
        "name": policy.policy_name().unwrap_or_default(),
        "path": policy.path().unwrap_or("/"),
        "description": policy.description().unwrap_or(""),
        "policy": policy_doc::normalize(doc),
        "tags": user_tags(tagging::from_iam(policy.tags())),
    });
    Ok(Observed { attrs: object(attrs), outputs: applied(policy)?.outputs })
}

async fn default_document(cx: &Context, policy: &Described) -> Result<Value> {
    const OP: &str = "iam:GetPolicyVersion";
    let out = send(cx, OP, &[], || {
        cx.iam()
            .get_policy_version()
            .set_policy_arn(policy.arn().map(str::to_string))
            .set_version_id(policy.default_version_id().map(str::to_string))
            .send()
    })
    .await?;
    let doc = out.policy_version().and_then(PolicyVersion::document);
    policy_doc::from_aws(OP, doc.ok_or_else(|| ProviderError::new(OP, "", "IAM returned no document"))?)
}

async fn versions(cx: &Context, arn: &str) -> Result<Vec<PolicyVersion>> {
    send(cx, "iam:ListPolicyVersions", &[], || async {
        let pages = cx.iam().list_policy_versions().policy_arn(arn).into_paginator().items().send();
        pages.collect::<Result<Vec<_>, _>>().await
    })
    .await
}

/// Deletes one non-default version; one already gone counts as deleted.
async fn delete_version(cx: &Context, arn: &str, version: &str) -> Result<()> {
    remove(cx, "iam:DeletePolicyVersion", &[], || {
        cx.iam().delete_policy_version().policy_arn(arn).version_id(version).send()
    })
    .await
}

/// Deletes the oldest non-default version when the policy already has the most IAM allows.
async fn make_room_for_a_version(cx: &Context, arn: &str) -> Result<()> {
    let versions = versions(cx, arn).await?;
    if versions.len() < MAX_VERSIONS {
        return Ok(());
    }
    let oldest = versions
        .iter()
        .filter(|v| !v.is_default_version())
        .min_by_key(|v| (v.create_date().map(|d| (d.secs(), d.subsec_nanos())), version_number(v)));
    match oldest.and_then(PolicyVersion::version_id) {
        Some(version) => delete_version(cx, arn, version).await,
        None => Ok(()),
    }
}

/// `v12` → 12, so that versions without a creation date still sort oldest first.
fn version_number(v: &PolicyVersion) -> u64 {
    v.version_id().and_then(|id| id.trim_start_matches('v').parse().ok()).unwrap_or(u64::MAX)
}

/// What a managed policy can be attached to.
enum Holder {
    Role(String),
    User(String),
    Group(String),
}

async fn attached_entities(cx: &Context, arn: &str) -> Result<Vec<Holder>> {
    let pages = send(cx, "iam:ListEntitiesForPolicy", &[], || async {
        let pages = cx.iam().list_entities_for_policy().policy_arn(arn).into_paginator().send();
        pages.collect::<Result<Vec<_>, _>>().await
    })
    .await?;
    let mut out = Vec::new();
    for page in pages {
        out.extend(page.policy_roles().iter().filter_map(|r| r.role_name()).map(|n| Holder::Role(n.to_string())));
        out.extend(page.policy_users().iter().filter_map(|u| u.user_name()).map(|n| Holder::User(n.to_string())));
        out.extend(page.policy_groups().iter().filter_map(|g| g.group_name()).map(|n| Holder::Group(n.to_string())));
    }
    Ok(out)
}

/// Detaches the policy from one holder; a holder already gone counts as detached.
async fn detach(cx: &Context, arn: &str, holder: &Holder) -> Result<()> {
    match holder {
        Holder::Role(role) => role_policy_attachment::detach(cx, role, arn).await,
        Holder::User(user) => {
            let request = || cx.iam().detach_user_policy().user_name(user).policy_arn(arn).send();
            remove(cx, "iam:DetachUserPolicy", &[], request).await
        }
        Holder::Group(group) => {
            let request = || cx.iam().detach_group_policy().group_name(group).policy_arn(arn).send();
            remove(cx, "iam:DetachGroupPolicy", &[], request).await
        }
    }
}

fn applied(policy: &Described) -> Result<Applied> {
    let arn =
        policy.arn().ok_or_else(|| ProviderError::new("iam:GetPolicy", "", "IAM returned a policy without an ARN"))?;
    let outputs = json!({"id": arn, "arn": arn, "name": policy.policy_name().unwrap_or_default()});
    Ok(Applied { id: arn.to_string(), outputs: object(outputs) })
}

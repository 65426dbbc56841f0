//! `aws_iam_instance_profile`: the container that hands a role to EC2 instances (Karpenter's nodes). The ID is
//! the profile name. A profile holds at most one role.

use async_trait::async_trait;
use serde_json::{json, Value};

use super::common::{
    absent_if_gone, delete_when_released, explain_taken, object, ok_if_gone, optional_str, path, required_str, send,
    vanished,
};
use super::tagging::{self, Tagged};
use crate::graph::Attrs;
use crate::providers::tags::{merged, user_tags};
use crate::providers::{Applied, Context, Desired, Observed, Provider, ProviderError};

const KIND: &str = "aws_iam_instance_profile";

pub struct InstanceProfile;

#[async_trait]
impl Provider for InstanceProfile {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn force_new(&self) -> &'static [&'static str] {
        &["name", "path"]
    }

    // Tags come from GetInstanceProfile, which returns them as ListInstanceProfileTags does, in one call.
    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>, ProviderError> {
        let Some(profile) = get(cx, id).await? else { return Ok(None) };
        let attrs = json!({
            "name": profile.instance_profile_name(),
            "path": profile.path(),
            "role": role_of(&profile).map_or(Value::Null, |r| Value::String(r.to_string())),
            "tags": user_tags(tagging::from_iam(profile.tags())),
        });
        Ok(Some(Observed { attrs: object(attrs), outputs: applied(&profile).outputs }))
    }

    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>, ProviderError> {
        let name = required_str(KIND, desired.attrs, "name")?;
        let profile = get(cx, name).await?;
        Ok(profile.filter(|p| tagging::owned_by(p.tags(), &cx.stack)).map(|p| p.instance_profile_name().to_string()))
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied, ProviderError> {
        const OP: &str = "iam:CreateInstanceProfile";
        let a = desired.attrs;
        let name = required_str(KIND, a, "name")?;
        let tags = tagging::to_iam(OP, &merged(a, &desired.kbp_tags))?;
        let out = send(cx, OP, &[], || {
            cx.iam()
                .create_instance_profile()
                .instance_profile_name(name)
                .path(path(a))
                .set_tags(Some(tags.clone()))
                .send()
        })
        .await
        .map_err(|e| explain_taken(e, "instance profile", name))?;
        let profile =
            out.instance_profile.ok_or_else(|| ProviderError::new(OP, "", "IAM returned no instance profile"))?;
        if let Some(role) = optional_str(a, "role") {
            add_role(cx, name, role).await?;
        }
        Ok(applied(&profile))
    }

    async fn update(
        &self,
        cx: &Context,
        id: &str,
        _prior: &Attrs,
        desired: &Desired<'_>,
    ) -> Result<Applied, ProviderError> {
        let a = desired.attrs;
        let profile = get(cx, id).await?.ok_or_else(|| vanished("iam:GetInstanceProfile", "instance profile", id))?;
        let wanted = optional_str(a, "role");
        let current = role_of(&profile);
        if current != wanted {
            if let Some(old) = current {
                remove_role(cx, id, old).await?;
            }
            if let Some(new) = wanted {
                add_role(cx, id, new).await?;
            }
        }
        tagging::reconcile(cx, Tagged::InstanceProfile(id), profile.tags(), &merged(a, &desired.kbp_tags)).await?;
        Ok(applied(&profile))
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<(), ProviderError> {
        let Some(profile) = get(cx, id).await? else { return Ok(()) };
        for role in profile.roles() {
            remove_role(cx, id, role.role_name()).await?;
        }
        let delete = || cx.iam().delete_instance_profile().instance_profile_name(id).send();
        delete_when_released(cx, "iam:DeleteInstanceProfile", delete).await
    }
}

async fn get(cx: &Context, name: &str) -> Result<Option<aws_sdk_iam::types::InstanceProfile>, ProviderError> {
    let r =
        send(cx, "iam:GetInstanceProfile", &[], || cx.iam().get_instance_profile().instance_profile_name(name).send());
    Ok(absent_if_gone(r.await)?.and_then(|out| out.instance_profile))
}

fn role_of(profile: &aws_sdk_iam::types::InstanceProfile) -> Option<&str> {
    profile.roles().first().map(|r| r.role_name())
}

async fn add_role(cx: &Context, profile: &str, role: &str) -> Result<(), ProviderError> {
    // A role or profile created a moment ago may not be visible to AddRoleToInstanceProfile yet.
    send(cx, "iam:AddRoleToInstanceProfile", &["NoSuchEntity"], || {
        cx.iam().add_role_to_instance_profile().instance_profile_name(profile).role_name(role).send()
    })
    .await
    .map(drop)
}

/// Takes the role out of the profile; a profile or role already gone counts as done.
pub(super) async fn remove_role(cx: &Context, profile: &str, role: &str) -> Result<(), ProviderError> {
    let r = send(cx, "iam:RemoveRoleFromInstanceProfile", &[], || {
        cx.iam().remove_role_from_instance_profile().instance_profile_name(profile).role_name(role).send()
    });
    ok_if_gone(r.await.map(drop))
}

fn applied(profile: &aws_sdk_iam::types::InstanceProfile) -> Applied {
    let name = profile.instance_profile_name();
    let outputs = json!({"id": name, "name": name, "arn": profile.arn()});
    Applied { id: name.to_string(), outputs: object(outputs) }
}

//! `aws_kms_key`: a symmetric key with an alias, for EKS secrets encryption. KMS never deletes a key at once:
//! destroy schedules the deletion after the key's waiting period (7 to 30 days), and a key pending deletion
//! counts as gone.

use std::collections::BTreeMap;

use async_trait::async_trait;
use aws_sdk_kms::types::{KeyState, Tag};
use serde_json::{json, Value};

use crate::graph::Attrs;
use crate::providers::attrs::{absent_if_gone, ok_if_gone, optional_str, required_str};
use crate::providers::send::send;
use crate::providers::{tags, Applied, Context, Desired, Observed, Provider, ProviderError};

const KIND: &str = "aws_kms_key";

pub struct Key;

#[async_trait]
impl Provider for Key {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn force_new(&self) -> &'static [&'static str] {
        &["alias"]
    }

    async fn read(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<Option<Observed>, ProviderError> {
        let Some(described) =
            absent_if_gone(send(cx, "kms:DescribeKey", &[], || cx.kms().describe_key().key_id(id).send()).await)?
        else {
            return Ok(None);
        };
        let Some(meta) = described.key_metadata() else { return Ok(None) };
        if matches!(meta.key_state(), Some(KeyState::PendingDeletion | KeyState::PendingReplicaDeletion)) {
            return Ok(None);
        }
        let rotation =
            send(cx, "kms:GetKeyRotationStatus", &[], || cx.kms().get_key_rotation_status().key_id(id).send())
                .await?
                .key_rotation_enabled();
        let tag_list =
            send(cx, "kms:ListResourceTags", &[], || cx.kms().list_resource_tags().key_id(id).send()).await?;
        let all = tag_list.tags().iter().map(|t| (t.tag_key().to_string(), t.tag_value().to_string()));
        let mut attrs = prior.clone();
        attrs.insert("description".into(), json!(meta.description().unwrap_or_default()));
        attrs.insert("enable_key_rotation".into(), json!(rotation));
        attrs.insert("tags".into(), Value::Object(tags::user_tags(all)));
        Ok(Some(Observed { attrs, outputs: outputs(id, meta.arn().unwrap_or_default()) }))
    }

    /// The alias is the key's stable name: a key whose create was interrupted is found through it.
    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>, ProviderError> {
        let alias = required_str(KIND, desired.attrs, "alias")?;
        let found =
            absent_if_gone(send(cx, "kms:DescribeKey", &[], || cx.kms().describe_key().key_id(alias).send()).await)?;
        Ok(found.and_then(|d| d.key_metadata().map(|m| m.key_id().to_string())))
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied, ProviderError> {
        let a = desired.attrs;
        let alias = required_str(KIND, a, "alias")?;
        let all_tags = tags::merged(a, &desired.kbp_tags);
        let created = send(cx, "kms:CreateKey", &[], || {
            cx.kms()
                .create_key()
                .description(optional_str(a, "description").unwrap_or_default())
                .set_tags(Some(kms_tags(&all_tags)))
                .send()
        })
        .await?;
        let meta = created
            .key_metadata()
            .ok_or_else(|| ProviderError::new("kms:CreateKey", "", "AWS returned no key metadata"))?;
        let id = meta.key_id().to_string();
        let arn = meta.arn().unwrap_or_default().to_string();
        send(cx, "kms:CreateAlias", &["NotFoundException"], || {
            cx.kms().create_alias().alias_name(alias).target_key_id(&id).send()
        })
        .await?;
        set_rotation(cx, &id, a).await?;
        Ok(Applied { id: id.clone(), outputs: outputs(&id, &arn) })
    }

    async fn update(
        &self,
        cx: &Context,
        id: &str,
        prior: &Attrs,
        desired: &Desired<'_>,
    ) -> Result<Applied, ProviderError> {
        let a = desired.attrs;
        if a.get("description") != prior.get("description") {
            let d = optional_str(a, "description").unwrap_or_default();
            send(cx, "kms:UpdateKeyDescription", &[], || {
                cx.kms().update_key_description().key_id(id).description(d).send()
            })
            .await?;
        }
        set_rotation(cx, id, a).await?;
        let want = tags::merged(a, &desired.kbp_tags);
        let have: BTreeMap<String, String> =
            tags::tag_map(prior.get("tags")).into_iter().chain(desired.kbp_tags.clone()).collect();
        let stale: Vec<String> = have.keys().filter(|k| !want.contains_key(*k)).cloned().collect();
        if !stale.is_empty() {
            send(cx, "kms:UntagResource", &[], || {
                cx.kms().untag_resource().key_id(id).set_tag_keys(Some(stale.clone())).send()
            })
            .await?;
        }
        send(cx, "kms:TagResource", &[], || cx.kms().tag_resource().key_id(id).set_tags(Some(kms_tags(&want))).send())
            .await?;
        let arn = send(cx, "kms:DescribeKey", &[], || cx.kms().describe_key().key_id(id).send())
            .await?
            .key_metadata()
            .and_then(|m| m.arn().map(str::to_string))
            .unwrap_or_default();
        Ok(Applied { id: id.to_string(), outputs: outputs(id, &arn) })
    }

    async fn delete(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<(), ProviderError> {
        if let Some(alias) = optional_str(prior, "alias") {
            ok_if_gone(
                send(cx, "kms:DeleteAlias", &[], || cx.kms().delete_alias().alias_name(alias).send()).await.map(drop),
            )?;
        }
        let days = prior.get("deletion_window_in_days").and_then(Value::as_i64).unwrap_or(7) as i32;
        match send(cx, "kms:ScheduleKeyDeletion", &[], || {
            cx.kms().schedule_key_deletion().key_id(id).pending_window_in_days(days).send()
        })
        .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.is_not_found() => Ok(()),
            // Already pending deletion (a rerun of an interrupted destroy).
            Err(e) if e.is("KMSInvalidStateException") => Ok(()),
            Err(e) => Err(e),
        }
    }
}

async fn set_rotation(cx: &Context, id: &str, a: &Attrs) -> Result<(), ProviderError> {
    if a.get("enable_key_rotation").and_then(Value::as_bool).unwrap_or(true) {
        send(cx, "kms:EnableKeyRotation", &[], || cx.kms().enable_key_rotation().key_id(id).send()).await?;
    } else {
        send(cx, "kms:DisableKeyRotation", &[], || cx.kms().disable_key_rotation().key_id(id).send()).await?;
    }
    Ok(())
}

fn kms_tags(t: &BTreeMap<String, String>) -> Vec<Tag> {
    t.iter().filter_map(|(k, v)| Tag::builder().tag_key(k).tag_value(v).build().ok()).collect()
}

fn outputs(id: &str, arn: &str) -> Attrs {
    json!({ "id": id, "arn": arn }).as_object().cloned().unwrap_or_default()
}

//! `aws_kms_key`: a symmetric key with an alias, for EKS secrets encryption. KMS never deletes a key at once:
//! destroy schedules the deletion after the key's waiting period (7 to 30 days), and a key pending deletion
//! counts as gone.

use std::collections::BTreeMap;

use async_trait::async_trait;
use aws_sdk_kms::types::{KeyState, Tag};
use futures::{StreamExt, TryStreamExt};
use serde_json::{json, Value};

use crate::graph::{kinds, Attrs};
use crate::providers::attrs::{absent_if_gone, optional_str};
use crate::providers::preflight::{quick, read, Holder};
use crate::providers::send::{remove, send, send_pages, send_unretried};
use crate::providers::spec;
use crate::providers::tagged::{found, Search, PARALLEL_LOOKUPS};
use crate::providers::tags::ADDRESS;
use crate::providers::Found;
use crate::providers::{contract, contract::Constraint, contract::Rule};
use crate::providers::{
    stack_tags, tags, Applied, Context, Descriptor, Desired, Observed, Provider, ProviderError, Result, WithoutState,
};

const KIND: &str = kinds::KMS_KEY;

pub(crate) struct Key;

/// The attributes the compiler emits ([`crate::graph::kinds`]).
type Spec = crate::graph::kinds::kms_key::Key;

/// What AWS accepts of what this kind sends ([`contract`]).
const SENDS: &[Constraint] = &[
    // `alias/` and 1 to 250 more characters (<https://docs.aws.amazon.com/kms/latest/APIReference/API_CreateAlias.html>).
    Constraint::new(
        "alias",
        Rule::Name {
            api: "KMS alias",
            max: 256,
            chars: contract::KMS_ALIAS,
            unique: contract::Unique::InAccount("KMS alias"),
        },
    ),
    Constraint::new("description", Rule::Text { api: "KMS key description", max: 8192, chars: contract::ANY }),
    contract::tags_of("KMS key"),
];

#[async_trait]
impl Provider for Key {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(KIND, WithoutState::Tags, SENDS)
            .force_new(&["alias"])
            .adoptable_by_tags()
            .imported_by("its key ID (a UUID)")
    }

    /// Whoever holds the alias: the key it names, by that key's tags.
    async fn name_holder(&self, cx: &Context, alias: &str, _attrs: &Attrs) -> Result<Holder> {
        let r = cx.kms().describe_key().key_id(alias).customize().config_override(quick!(aws_sdk_kms));
        let Some(id) = read("kms:DescribeKey", r.send().await)?.and_then(|k| k.key_metadata).map(|m| m.key_id) else {
            return Ok(Holder::Nobody);
        };
        let r = cx.kms().list_resource_tags().key_id(id).customize().config_override(quick!(aws_sdk_kms));
        match r.send().await.map_err(|e| ProviderError::from_sdk("kms:ListResourceTags", e)) {
            Ok(out) => {
                Ok(Holder::tagged(out.tags().iter().map(|t| (t.tag_key().to_string(), t.tag_value().to_string()))))
            }
            // Another account's key, or an AWS-managed one: not the stack's.
            Err(e) if e.code.contains("AccessDenied") => Ok(Holder::Stack(None)),
            Err(e) => Err(e),
        }
    }

    /// The customer managed keys tagged for the stack, but not those already pending deletion (which keep their
    /// tags): from the stack's tag query, or else every key of the account, its tags read on its own.
    async fn tagged(&self, cx: &Context, search: &Search<'_>) -> Result<Vec<Found>> {
        let candidates: Vec<(String, Option<Option<String>>)> = match search.in_tag_query(cx, "kms").await {
            Some(tagged) => tagged
                .into_iter()
                .filter_map(|(resource, address)| Some((resource.strip_prefix("key/")?.to_string(), Some(address))))
                .collect(),
            None => all_ids(cx).await?.into_iter().map(|id| (id, None)).collect(),
        };
        let listed: Vec<Option<Found>> = futures::stream::iter(candidates)
            .map(|(id, known)| async move {
                if !live_customer_key(cx, &id).await? {
                    return Ok(None);
                }
                // The tag query said whose it is; otherwise its tags are read.
                let address = match known {
                    Some(address) => address,
                    None => {
                        let r =
                            send(cx, "kms:ListResourceTags", &[], || cx.kms().list_resource_tags().key_id(&id).send())
                                .await;
                        let Some(out) = absent_if_gone(r)? else { return Ok(None) };
                        let tags: BTreeMap<String, String> =
                            out.tags().iter().map(|t| (t.tag_key().to_string(), t.tag_value().to_string())).collect();
                        if !search.owner.owns_map(&tags) {
                            return Ok(None);
                        }
                        tags.get(ADDRESS).cloned()
                    }
                };
                Ok::<_, ProviderError>(Some(found(KIND, &id, address, String::new(), Vec::new())))
            })
            .buffer_unordered(PARALLEL_LOOKUPS)
            .try_collect()
            .await?;
        Ok(listed.into_iter().flatten().collect())
    }

    async fn read(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<Option<Observed>> {
        observe(cx, id, prior, false).await
    }

    /// Each key as `read` does, except for tags the stack's tag query confirms ([`stack_tags`]).
    async fn read_many(&self, cx: &Context, items: &[(String, Attrs)]) -> Result<Vec<Option<Observed>>> {
        futures::future::try_join_all(items.iter().map(|(id, prior)| observe(cx, id, prior, true))).await
    }

    /// A key is found by the kbp tags written in CreateKey itself: the alias comes in a second call, so a run that
    /// died (or lost CreateKey's answer) before it has a key that only its tags name. The alias is tried first,
    /// as the quick way for a key that got that far.
    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        let alias = spec::parse::<Spec>(KIND, desired.attrs)?.alias;
        let by_alias =
            absent_if_gone(send(cx, "kms:DescribeKey", &[], || cx.kms().describe_key().key_id(&alias).send()).await)?;
        if let Some(id) = by_alias.as_ref().and_then(|d| d.key_metadata()).map(|m| m.key_id().to_string()) {
            if carries_kbp_tags(cx, &id, desired).await? {
                return Ok(Some(id));
            }
        }
        let keys = all_ids(cx).await?;
        // An account can hold hundreds of keys: their tags are read a few at a time, not one after another.
        let checked: Vec<(String, bool)> = futures::stream::iter(keys)
            .map(|id| async move {
                let ours = carries_kbp_tags(cx, &id, desired).await? && live(cx, &id).await?;
                Ok::<_, ProviderError>((id, ours))
            })
            .buffered(TAG_READS)
            .try_collect()
            .await?;
        let ours: Vec<String> = checked.into_iter().filter(|(_, ours)| *ours).map(|(id, _)| id).collect();
        match ours.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(one.clone())),
            many => Err(ProviderError::new(
                "kms:ListKeys",
                "",
                format!("{} KMS keys carry the kbp tags of {}: {}", many.len(), desired.address, many.join(", ")),
            )
            .with_hint("schedule the deletion of the ones that are not in use (`aws kms schedule-key-deletion`), then run kbp again")),
        }
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let all_tags = desired.tags();
        // CreateKey has no client token: a retry after a lost answer would make a second key.
        let created = send_unretried(cx, "kms:CreateKey", &[], || {
            cx.kms()
                .create_key()
                .description(s.description.as_deref().unwrap_or_default())
                .set_tags(Some(kms_tags(&all_tags)))
                .customize()
                .config_override(once())
                .send()
        })
        .await?;
        let meta = created
            .key_metadata()
            .ok_or_else(|| ProviderError::new("kms:CreateKey", "", "AWS returned no key metadata"))?;
        let id = meta.key_id().to_string();
        let arn = meta.arn().unwrap_or_default().to_string();
        send(cx, "kms:CreateAlias", &["NotFoundException"], || {
            cx.kms().create_alias().alias_name(&s.alias).target_key_id(&id).send()
        })
        .await?;
        set_rotation(cx, &id, s.enable_key_rotation).await?;
        Ok(Applied { id: id.clone(), outputs: outputs(&id, &arn) })
    }

    async fn update(&self, cx: &Context, id: &str, prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        if desired.attrs.get("description") != prior.get("description") {
            let d = s.description.as_deref().unwrap_or_default();
            send(cx, "kms:UpdateKeyDescription", &[], || {
                cx.kms().update_key_description().key_id(id).description(d).send()
            })
            .await?;
        }
        set_rotation(cx, id, s.enable_key_rotation).await?;
        ensure_alias(cx, id, &s.alias).await?;
        let want = desired.tags();
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

    async fn delete(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<()> {
        // Its aliases: the one state records, and any other (a key found by its tags has none in state).
        let mut aliases: Vec<String> = optional_str(prior, "alias").map(str::to_string).into_iter().collect();
        aliases
            .extend(aliases_of(cx, id).await?.into_iter().filter(|a| Some(a.as_str()) != optional_str(prior, "alias")));
        for alias in &aliases {
            remove(cx, "kms:DeleteAlias", &[], || cx.kms().delete_alias().alias_name(alias).send()).await?;
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

/// What `read` reports of the key `id`; its tags are taken from the stack's tag query when `batch` and it
/// confirms them.
async fn observe(cx: &Context, id: &str, prior: &Attrs, batch: bool) -> Result<Option<Observed>> {
    let Some(described) =
        absent_if_gone(send(cx, "kms:DescribeKey", &[], || cx.kms().describe_key().key_id(id).send()).await)?
    else {
        return Ok(None);
    };
    let Some(meta) = described.key_metadata() else { return Ok(None) };
    if matches!(meta.key_state(), Some(KeyState::PendingDeletion | KeyState::PendingReplicaDeletion)) {
        return Ok(None);
    }
    let rotation = send(cx, "kms:GetKeyRotationStatus", &[], || cx.kms().get_key_rotation_status().key_id(id).send())
        .await?
        .key_rotation_enabled();
    let confirmed = match meta.arn() {
        Some(arn) if batch => stack_tags::confirmed(cx, arn, prior).await,
        _ => None,
    };
    let all = match confirmed {
        Some(tags) => tags,
        None => {
            let tag_list =
                send(cx, "kms:ListResourceTags", &[], || cx.kms().list_resource_tags().key_id(id).send()).await?;
            tag_list.tags().iter().map(|t| (t.tag_key().to_string(), t.tag_value().to_string())).collect()
        }
    };
    let mut attrs = prior.clone();
    attrs.insert("description".into(), json!(meta.description().unwrap_or_default()));
    attrs.insert("enable_key_rotation".into(), json!(rotation));
    attrs.insert("tags".into(), Value::Object(tags::user_tags(all)));
    Ok(Some(Observed { attrs, outputs: outputs(id, meta.arn().unwrap_or_default()) }))
}

/// The IDs of every key in the account and region, AWS managed ones included.
/// Whether KMS key `id` is a customer key, not pending deletion (a key pending deletion keeps its tags).
async fn live_customer_key(cx: &Context, id: &str) -> Result<bool> {
    let r = send(cx, "kms:DescribeKey", &[], || cx.kms().describe_key().key_id(id).send()).await;
    let Some(meta) = absent_if_gone(r)?.and_then(|o| o.key_metadata) else { return Ok(false) };
    let customer = meta.key_manager() == Some(&aws_sdk_kms::types::KeyManagerType::Customer);
    let pending = matches!(meta.key_state(), Some(KeyState::PendingDeletion | KeyState::PendingReplicaDeletion));
    Ok(customer && !pending)
}

pub(crate) async fn all_ids(cx: &Context) -> Result<Vec<String>> {
    send_pages(
        cx,
        "kms:ListKeys",
        |marker| cx.kms().list_keys().set_marker(marker).send(),
        |page| {
            let ids = page.keys().iter().filter_map(|k| k.key_id().map(str::to_string)).collect();
            (ids, page.next_marker().filter(|_| page.truncated()).map(str::to_string))
        },
    )
    .await
}

/// The names of the aliases of key `id`; none when it is gone.
async fn aliases_of(cx: &Context, id: &str) -> Result<Vec<String>> {
    let names = send_pages(
        cx,
        "kms:ListAliases",
        |marker| cx.kms().list_aliases().key_id(id).set_marker(marker).send(),
        |page| {
            let names = page.aliases().iter().filter_map(|a| a.alias_name().map(str::to_string)).collect();
            (names, page.next_marker().filter(|_| page.truncated()).map(str::to_string))
        },
    );
    Ok(absent_if_gone(names.await)?.unwrap_or_default())
}

/// Points the alias at key `id`, creating it if a create was interrupted between CreateKey and CreateAlias.
async fn ensure_alias(cx: &Context, id: &str, alias: &str) -> Result<()> {
    let target = || async {
        let d =
            absent_if_gone(send(cx, "kms:DescribeKey", &[], || cx.kms().describe_key().key_id(alias).send()).await)?;
        Ok::<_, ProviderError>(d.and_then(|d| d.key_metadata().map(|m| m.key_id().to_string())))
    };
    match target().await? {
        Some(t) if t == id => Ok(()),
        Some(_) => {
            send(cx, "kms:UpdateAlias", &[], || cx.kms().update_alias().alias_name(alias).target_key_id(id).send())
                .await
                .map(drop)
        }
        None => {
            let created = send(cx, "kms:CreateAlias", &["NotFoundException"], || {
                cx.kms().create_alias().alias_name(alias).target_key_id(id).send()
            })
            .await;
            match created {
                // A retry of a CreateAlias whose answer was lost: fine if the alias now names this key.
                Err(e) if e.is_already_exists() && target().await?.as_deref() == Some(id) => Ok(()),
                other => other.map(drop),
            }
        }
    }
}

/// Whether key `id` carries this stack's and address's kbp tags.
async fn carries_kbp_tags(cx: &Context, id: &str, desired: &Desired<'_>) -> Result<bool> {
    // Keys of other accounts' grants or AWS-managed keys refuse ListResourceTags: not ours.
    let listed = send(cx, "kms:ListResourceTags", &[], || cx.kms().list_resource_tags().key_id(id).send()).await;
    let tags = match listed {
        Ok(t) => t,
        Err(e) if e.is_not_found() || e.code.contains("AccessDenied") => return Ok(false),
        Err(e) => return Err(e),
    };
    let have: BTreeMap<&str, &str> = tags.tags().iter().map(|t| (t.tag_key(), t.tag_value())).collect();
    let stack = desired.kbp_tags.get(tags::STACK).is_some_and(|v| have.get(tags::STACK) == Some(&v.as_str()));
    Ok(stack && have.get(tags::ADDRESS).is_some_and(|v| tags::names_address(v, desired.address)))
}

/// Keys whose tags are read at once while looking for the stack's key.
const TAG_READS: usize = 8;

/// Whether key `id` is usable (not pending deletion: a destroyed stack's key lingers for days).
async fn live(cx: &Context, id: &str) -> Result<bool> {
    let d = absent_if_gone(send(cx, "kms:DescribeKey", &[], || cx.kms().describe_key().key_id(id).send()).await)?;
    Ok(d.and_then(|d| d.key_metadata().map(|m| m.key_state().cloned()))
        .flatten()
        .is_some_and(|s| !matches!(s, KeyState::PendingDeletion | KeyState::PendingReplicaDeletion)))
}

/// Per-call settings for CreateKey: no SDK retry (see [`crate::providers::send::send_unretried`]).
fn once() -> aws_sdk_kms::config::Builder {
    aws_sdk_kms::config::Builder::default().retry_config(aws_config::retry::RetryConfig::disabled())
}

async fn set_rotation(cx: &Context, id: &str, rotate: bool) -> Result<()> {
    if rotate {
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

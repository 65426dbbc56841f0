//! Tags on IAM roles, managed policies, instance profiles and OIDC providers: each has its own Tag*/Untag* call, but the same
//! tag shape and the same reconcile.

use std::collections::BTreeMap;

use aws_sdk_iam::types::Tag;

use crate::providers::send::send;
use crate::providers::tags::{self, TagChanges, STACK};
use crate::providers::{Context, Result};

/// What carries the tags, by its ID in IAM's tagging calls.
#[derive(Debug, Clone, Copy)]
pub(super) enum Tagged<'a> {
    Role(&'a str),
    Policy(&'a str),
    InstanceProfile(&'a str),
    OpenIdConnectProvider(&'a str),
}

pub(super) fn to_iam(operation: &str, tags: &BTreeMap<String, String>) -> Result<Vec<Tag>> {
    tags::to_sdk(operation, tags, |k, v| Tag::builder().key(k).value(v).build())
}

pub(super) fn from_iam(tags: &[Tag]) -> BTreeMap<String, String> {
    tags.iter().map(|t| (t.key().to_string(), t.value().to_string())).collect()
}

/// Whether the resource carries this stack's `kbp:stack` tag, so `find` may adopt it.
pub(super) fn owned_by(tags: &[Tag], stack: &str) -> bool {
    tags.iter().any(|t| t.key() == STACK && t.value() == stack)
}

/// Brings the tags `current` on `target` to `desired` (user tags merged with the kbp tags).
pub(super) async fn reconcile(
    cx: &Context,
    target: Tagged<'_>,
    current: &[Tag],
    desired: &BTreeMap<String, String>,
) -> Result<()> {
    let TagChanges { set, remove } = tags::changes(&from_iam(current), desired);
    // Untag first, so that the 50-tag limit is not crossed on the way.
    if !remove.is_empty() {
        untag(cx, target, remove).await?;
    }
    if !set.is_empty() {
        tag(cx, target, &set).await?;
    }
    Ok(())
}

async fn tag(cx: &Context, target: Tagged<'_>, set: &BTreeMap<String, String>) -> Result<()> {
    let iam = cx.iam();
    match target {
        Tagged::Role(name) => {
            let tags = to_iam("iam:TagRole", set)?;
            let r = send(cx, "iam:TagRole", &[], || iam.tag_role().role_name(name).set_tags(Some(tags.clone())).send());
            r.await.map(drop)
        }
        Tagged::Policy(arn) => {
            let tags = to_iam("iam:TagPolicy", set)?;
            let r =
                send(cx, "iam:TagPolicy", &[], || iam.tag_policy().policy_arn(arn).set_tags(Some(tags.clone())).send());
            r.await.map(drop)
        }
        Tagged::InstanceProfile(name) => {
            let tags = to_iam("iam:TagInstanceProfile", set)?;
            let r = send(cx, "iam:TagInstanceProfile", &[], || {
                iam.tag_instance_profile().instance_profile_name(name).set_tags(Some(tags.clone())).send()
            });
            r.await.map(drop)
        }
        Tagged::OpenIdConnectProvider(arn) => {
            let tags = to_iam("iam:TagOpenIDConnectProvider", set)?;
            let r = send(cx, "iam:TagOpenIDConnectProvider", &[], || {
                iam.tag_open_id_connect_provider().open_id_connect_provider_arn(arn).set_tags(Some(tags.clone())).send()
            });
            r.await.map(drop)
        }
    }
}

async fn untag(cx: &Context, target: Tagged<'_>, keys: Vec<String>) -> Result<()> {
    let iam = cx.iam();
    let keys = Some(keys);
    match target {
        Tagged::Role(name) => {
            let r =
                send(cx, "iam:UntagRole", &[], || iam.untag_role().role_name(name).set_tag_keys(keys.clone()).send());
            r.await.map(drop)
        }
        Tagged::Policy(arn) => {
            let r = send(cx, "iam:UntagPolicy", &[], || {
                iam.untag_policy().policy_arn(arn).set_tag_keys(keys.clone()).send()
            });
            r.await.map(drop)
        }
        Tagged::InstanceProfile(name) => {
            let r = send(cx, "iam:UntagInstanceProfile", &[], || {
                iam.untag_instance_profile().instance_profile_name(name).set_tag_keys(keys.clone()).send()
            });
            r.await.map(drop)
        }
        Tagged::OpenIdConnectProvider(arn) => {
            let r = send(cx, "iam:UntagOpenIDConnectProvider", &[], || {
                iam.untag_open_id_connect_provider().open_id_connect_provider_arn(arn).set_tag_keys(keys.clone()).send()
            });
            r.await.map(drop)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::providers::tags::{changes, pairs as map};

    #[test]
    fn removes_dropped_keys_and_sets_only_new_or_changed_ones() {
        let current = map(&[("keep", "1"), ("change", "old"), ("drop", "x")]);
        let desired = map(&[("keep", "1"), ("change", "new"), ("add", "y")]);
        let TagChanges { set, remove } = changes(&current, &desired);
        assert_eq!(remove, ["drop"]);
        assert_eq!(set, map(&[("add", "y"), ("change", "new")]));
    }

    #[test]
    fn nothing_changes_when_tags_match() {
        let tags = map(&[("a", "1"), ("kbp:stack", "s")]);
        let TagChanges { set, remove } = changes(&tags, &tags);
        assert!(remove.is_empty() && set.is_empty());
    }

    #[test]
    fn recognises_the_stack_tag() {
        let tags = to_iam("t", &map(&[("kbp:stack", "prod"), ("team", "x")])).unwrap();
        assert!(owned_by(&tags, "prod"));
        assert!(!owned_by(&tags, "dev"));
    }
}

//! EC2 tags for every taggable kind: set at creation (so a resource is never untagged, even if kbp dies right
//! after the call), read back without the kbp tags, reconciled on update, and used to find a resource again.
//! [`apply`] is the one place tag changes become CreateTags and DeleteTags calls (also for the tags kbp puts on
//! subnets it does not own, `subnet_tags`).

use std::collections::BTreeMap;

use aws_sdk_ec2::types::{Filter, ResourceType, Tag, TagSpecification};
use serde_json::Value;

use super::send;
use crate::providers::tags::{address_values, names_address, ADDRESS, STACK};
use crate::providers::{tags, Context, Desired, ProviderError, Result};

/// The TagSpecification for a create call: the desired `tags` merged with `kbp:stack` and `kbp:address`.
pub fn spec(resource_type: ResourceType, desired: &Desired<'_>) -> TagSpecification {
    TagSpecification::builder().resource_type(resource_type).set_tags(Some(to_sdk(&desired.tags()))).build()
}

fn to_sdk(map: &BTreeMap<String, String>) -> Vec<Tag> {
    map.iter().map(|(k, v)| Tag::builder().key(k).value(v).build()).collect()
}

fn from_sdk(tags: &[Tag]) -> impl Iterator<Item = (String, String)> + '_ {
    tags.iter().filter_map(|t| Some((t.key()?.to_string(), t.value().unwrap_or_default().to_string())))
}

/// Tags as EC2 reports them, kbp's included, as a map.
pub fn map(tags: &[Tag]) -> BTreeMap<String, String> {
    from_sdk(tags).collect()
}

/// The `tags` attribute as read back: the user's tags, without kbp's own.
pub fn attr(tags: &[Tag]) -> Value {
    Value::Object(tags::user_tags(from_sdk(tags)))
}

/// Makes the tags on `id` exactly the desired ones (user tags plus kbp tags), with CreateTags for what is new
/// or changed and DeleteTags for the rest. Tags under `aws:` are AWS's and cannot be removed.
pub async fn reconcile(cx: &Context, id: &str, desired: &Desired<'_>) -> Result<()> {
    let want = desired.tags();
    let by_resource = Filter::builder().name("resource-id").values(id).build();
    let described =
        send(cx, "ec2:DescribeTags", &[], || cx.ec2().describe_tags().filters(by_resource.clone()).send()).await?;
    let current: BTreeMap<String, String> = described
        .tags()
        .iter()
        .filter_map(|t| Some((t.key()?.to_string(), t.value().unwrap_or_default().to_string())))
        .collect();
    apply(cx, id, &tags::changes(&current, &want)).await
}

/// Carries out `changes` on the EC2 resource `id`: CreateTags for what is new or changed, DeleteTags for the
/// keys to remove.
pub async fn apply(cx: &Context, id: &str, changes: &tags::TagChanges) -> Result<()> {
    let tags::TagChanges { set, remove } = changes;
    if !set.is_empty() {
        let set = Some(to_sdk(set));
        send(cx, "ec2:CreateTags", &[], || cx.ec2().create_tags().resources(id).set_tags(set.clone()).send()).await?;
    }
    if !remove.is_empty() {
        // A tag given by key alone is deleted whatever its value.
        let remove = Some(remove.iter().map(|k| Tag::builder().key(k).build()).collect());
        send(cx, "ec2:DeleteTags", &[], || cx.ec2().delete_tags().resources(id).set_tags(remove.clone()).send())
            .await?;
    }
    Ok(())
}

/// Describe filters that select what this stack made for this address (a superset: see [`wildcard_safe`];
/// callers keep only what [`carries_kbp_tags`]).
pub fn kbp_filters(desired: &Desired<'_>) -> Vec<Filter> {
    identity(desired)
        .map(|(k, v)| {
            // The address in either form (an earlier kbp wrote `type.name["key"]`): a filter's values are OR'd.
            let values = if k == ADDRESS { address_values(desired.address) } else { vec![v.clone()] };
            let values = values.iter().map(|v| wildcard_safe(v)).collect();
            Filter::builder().name(format!("tag:{k}")).set_values(Some(values)).build()
        })
        .collect()
}

/// Filter values are patterns: `*` and `?` are wildcards and `\` escapes them, and some EC2 implementations
/// also read `[...]` as a character class, which keyed addresses (`subnet.private["us-west-2a"]`) contain.
/// Each such character becomes `?` (any one character), so the filter matches the literal value everywhere.
fn wildcard_safe(value: &str) -> String {
    value.chars().map(|c| if matches!(c, '*' | '?' | '[' | ']' | '\\') { '?' } else { c }).collect()
}

/// An EC2 description with tags and an ID, which [`adopt`] can pick from.
pub trait Tagged {
    /// The tags EC2 reports for the resource.
    fn tag_list(&self) -> &[Tag];
    /// The resource's ID, if EC2 reported one.
    fn resource_id(&self) -> Option<&str>;
}

/// The ID of the one resource among `found` (a Describe call with [`kbp_filters`]) that carries this stack's
/// kbp tags for this address, if any.
pub fn adopt<T: Tagged>(operation: &str, desired: &Desired<'_>, found: &[T]) -> Result<Option<String>> {
    let ids = found
        .iter()
        .filter(|r| carries_kbp_tags(r.tag_list(), desired))
        .filter_map(|r| r.resource_id().map(str::to_string))
        .collect();
    single_match(operation, desired, ids)
}

/// Whether `tags` carry this stack's kbp tags for this address. Checked on top of [`kbp_filters`], since an API
/// that ignored a tag filter would otherwise hand back someone else's resource to adopt.
fn carries_kbp_tags(tags: &[Tag], desired: &Desired<'_>) -> bool {
    let have: BTreeMap<String, String> = from_sdk(tags).collect();
    identity(desired).all(|(k, v)| match have.get(k) {
        Some(found) if k == ADDRESS => names_address(found, desired.address),
        found => found == Some(v),
    })
}

/// The kbp tags that say which resource this is (stack and address), not the ones that may change between
/// runs (a sandbox's expiry).
fn identity<'a>(desired: &'a Desired<'_>) -> impl Iterator<Item = (&'a String, &'a String)> {
    desired.kbp_tags.iter().filter(|(k, _)| *k == STACK || *k == ADDRESS)
}

/// The one resource found for an address, if any. Two or more mean an earlier create was repeated; kbp will not
/// guess which one its state should own.
fn single_match(operation: &str, desired: &Desired<'_>, ids: Vec<String>) -> Result<Option<String>> {
    match ids.len() {
        0 | 1 => Ok(ids.into_iter().next()),
        _ => Err(ProviderError::new(
            operation,
            "",
            format!(
                "found {} resources tagged kbp:address={} in this stack: {}",
                ids.len(),
                desired.address,
                ids.join(", ")
            ),
        )
        .with_hint("delete all but one of them (in the AWS console or CLI), then run kbp again")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::providers::tags::{changes, pairs as map, TagChanges};

    #[test]
    fn difference_sets_changed_and_removes_extra_but_not_aws_tags() {
        let current = map(&[("a", "1"), ("b", "2"), ("aws:cloudformation:stack-name", "x"), ("kbp:stack", "s")]);
        let want = map(&[("a", "1"), ("b", "3"), ("c", "4"), ("kbp:stack", "s")]);
        let TagChanges { set, remove } = changes(&current, &want);
        assert_eq!(set, map(&[("b", "3"), ("c", "4")]));
        assert!(remove.is_empty());
        let TagChanges { set, remove } =
            changes(&map(&[("old", "1"), ("kbp:stack", "s")]), &map(&[("kbp:stack", "s")]));
        assert!(set.is_empty());
        assert_eq!(remove, vec!["old".to_string()]);
    }

    #[test]
    fn filter_values_have_no_pattern_characters() {
        assert_eq!(wildcard_safe(r#"subnet.private["us-west-2a"]"#), r#"subnet.private?"us-west-2a"?"#);
        assert_eq!(wildcard_safe(r"a*b?c\d"), "a?b?c?d");
        assert_eq!(wildcard_safe("vpc.main"), "vpc.main");
    }

    #[test]
    fn attr_strips_kbp_tags() {
        let tags = vec![
            Tag::builder().key("Name").value("main").build(),
            Tag::builder().key("kbp:stack").value("s").build(),
            Tag::builder().key("kbp:address").value("vpc.main").build(),
        ];
        assert_eq!(attr(&tags), serde_json::json!({"Name": "main"}));
    }
}

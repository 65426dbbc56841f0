//! How kbp tags what it makes, so it can always find it again: `kbp:stack` names the stack (the cluster name)
//! and `kbp:address` the resource's address in the blueprint.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::graph::Address;

/// The tag naming the stack a resource belongs to (its cluster's name).
pub const STACK: &str = "kbp:stack";
/// The tag naming the resource's address in its stack's graph, by which a lost create is found.
pub const ADDRESS: &str = "kbp:address";
/// The stack's ID (its state's lineage): two stacks of one name in one region (a state lost and applied
/// anew) are told apart by it. Set on create, never part of a lookup by tags: a resource of a lost state must
/// still be found by its name and address.
pub const STACK_ID: &str = "kbp:stack-id";
/// Sandbox stacks (`kbp apply --ttl`): who applied the stack (the caller's ARN). `kbp gc` reads it with
/// [`EXPIRES`].
pub const OWNER: &str = "kbp:owner";
/// Sandbox stacks: when the stack expires (RFC 3339, UTC), after which `kbp gc` may collect it.
pub const EXPIRES: &str = "kbp:expires";
/// Every tag kbp sets itself starts with this; none of them is part of a resource's desired `tags`.
pub const PREFIX: &str = "kbp:";

/// The tags kbp puts on every resource of `stack` at `address`: [`STACK`] and [`ADDRESS`].
pub fn kbp_tags(stack: &str, address: &Address) -> BTreeMap<String, String> {
    BTreeMap::from([(STACK.to_string(), stack.to_string()), (ADDRESS.to_string(), address_value(address))])
}

/// The `kbp:address` tag value of `address`: `type.name`, or `type.name/key` for a keyed address. An address's
/// own spelling (`iam_policy.x["eks-integration"]`) has `[`, `]` and `"`, which IAM's tag values refuse (letters,
/// digits, spaces and `_ . : / = + - @` only); this form is inside every service's tag character set.
pub fn address_value(address: &Address) -> String {
    match &address.key {
        Some(key) => format!("{}.{}/{key}", address.ty, address.name),
        None => format!("{}.{}", address.ty, address.name),
    }
}

/// The address a `kbp:address` tag names, in either form: this version's `type.name/key` or the address's own
/// spelling, which kbp wrote before (and which EC2, EKS, SQS, EventBridge and KMS accepted).
pub fn parse_address(value: &str) -> Option<Address> {
    if let Ok(address) = value.parse::<Address>() {
        return Some(address);
    }
    let (head, key) = value.split_once('/')?;
    let mut address: Address = head.parse().ok()?;
    (!key.is_empty() && address.key.is_none()).then(|| {
        address.key = Some(key.to_string());
        address
    })
}

/// Every `kbp:address` value a resource of `address` may carry: this version's, and the one an earlier kbp
/// wrote (the same for an address without a key). Lookups by tag ask for all of them, so a stack applied before
/// is still found; its next apply rewrites the tag.
pub fn address_values(address: &Address) -> Vec<String> {
    let mut values = vec![address_value(address)];
    if address.key.is_some() {
        values.push(address.to_string());
    }
    values
}

/// Whether a `kbp:address` tag value names `address`, in either form.
pub fn names_address(value: &str, address: &Address) -> bool {
    parse_address(value).as_ref() == Some(address)
}

/// A `kbp:address` tag value as the address it names, for display; a value that names none is shown as it is.
pub fn display_address(value: &str) -> String {
    parse_address(value).map_or_else(|| value.to_string(), |a| a.to_string())
}

/// A JSON object of string values as a tag map (anything else is ignored).
pub fn tag_map(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_object)
        .map(|m| m.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string()))).collect())
        .unwrap_or_default()
}

/// Tags as read back from AWS, without the kbp tags (which are not part of the desired `tags` attribute).
pub fn user_tags(all: impl IntoIterator<Item = (String, String)>) -> serde_json::Map<String, Value> {
    all.into_iter().filter(|(k, _)| !k.starts_with(PREFIX)).map(|(k, v)| (k, Value::String(v))).collect()
}

/// What turns the tags on a resource into the wanted ones: the tags to (re)write and the keys to remove. Each
/// service makes its own tag and untag calls from it, in the order its limits need.
#[derive(Debug, Default, PartialEq)]
pub struct TagChanges {
    /// Tags to add or change, key → value.
    pub set: BTreeMap<String, String>,
    /// Tag keys to remove.
    pub remove: Vec<String>,
}

/// The changes from `current` to `want`. Keys under `aws:` are AWS's own and cannot be removed, so they never are.
pub fn changes(current: &BTreeMap<String, String>, want: &BTreeMap<String, String>) -> TagChanges {
    let set = want.iter().filter(|(k, v)| current.get(*k) != Some(*v)).map(|(k, v)| (k.clone(), v.clone())).collect();
    let remove = current.keys().filter(|k| !want.contains_key(*k) && !k.starts_with("aws:")).cloned().collect();
    TagChanges { set, remove }
}

/// `tags` in an SDK's own tag type, made by `build`, which fails only on a missing key or value (IAM's and
/// EventBridge's builders check that; EC2's and EKS's do not).
pub fn to_sdk<T, E: std::fmt::Display>(
    operation: &str,
    tags: &BTreeMap<String, String>,
    build: impl Fn(&str, &str) -> Result<T, E>,
) -> Result<Vec<T>, super::ProviderError> {
    tags.iter()
        .map(|(k, v)| {
            build(k, v).map_err(|e| super::ProviderError::new(operation, "", format!("could not build tag `{k}`: {e}")))
        })
        .collect()
}

/// A tag map from literal pairs, for tests.
#[cfg(test)]
pub fn pairs(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_address_tag_is_within_iams_character_set_and_reads_back_in_both_forms() {
        let keyed = Address::keyed("iam_policy", "karpenter_controller", "eks-integration");
        assert_eq!(address_value(&keyed), "iam_policy.karpenter_controller/eks-integration");
        let iam_chars = |c: char| c.is_alphanumeric() || " _.:/=+-@".contains(c);
        assert!(address_value(&keyed).chars().all(iam_chars));
        assert_eq!(parse_address("iam_policy.karpenter_controller/eks-integration"), Some(keyed.clone()));
        assert_eq!(parse_address("iam_policy.karpenter_controller[\"eks-integration\"]"), Some(keyed.clone()));
        assert!(names_address("subnet.private/us-west-2a", &Address::keyed("subnet", "private", "us-west-2a")));
        assert!(!names_address("subnet.private/us-west-2b", &Address::keyed("subnet", "private", "us-west-2a")));
        let plain = Address::new("vpc", "main");
        assert_eq!(address_value(&plain), "vpc.main");
        assert_eq!(address_values(&plain), ["vpc.main"]);
        assert_eq!(address_values(&keyed).len(), 2);
        assert_eq!(parse_address("vpc.main/"), None);
        assert_eq!(parse_address("not an address"), None);
        assert_eq!(display_address("subnet.private/us-west-2a"), "subnet.private[\"us-west-2a\"]");
    }
}

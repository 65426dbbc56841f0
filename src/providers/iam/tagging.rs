//! Tags on IAM roles, policies and instance profiles: each has its own Tag*/Untag* call, but the same shape
//! and the same reconcile.

use std::collections::BTreeMap;
use std::future::Future;

use aws_sdk_iam::types::Tag;

use crate::providers::tags::STACK;
use crate::providers::ProviderError;

pub fn to_iam(operation: &str, tags: &BTreeMap<String, String>) -> Result<Vec<Tag>, ProviderError> {
    tags.iter()
        .map(|(k, v)| {
            Tag::builder()
                .key(k)
                .value(v)
                .build()
                .map_err(|e| ProviderError::new(operation, "", format!("could not build tag `{k}`: {e}")))
        })
        .collect()
}

pub fn from_iam(tags: &[Tag]) -> BTreeMap<String, String> {
    tags.iter().map(|t| (t.key().to_string(), t.value().to_string())).collect()
}

/// Whether the resource carries this stack's `kbp:stack` tag, so `find` may adopt it.
pub fn owned_by(tags: &[Tag], stack: &str) -> bool {
    tags.iter().any(|t| t.key() == STACK && t.value() == stack)
}

/// Brings `current` (all tags on the resource) to `desired` (user tags merged with the kbp tags): untags what
/// is no longer wanted first, so that the 50-tag limit is not crossed on the way.
pub async fn reconcile<U, UF, T, TF>(
    operation: &str,
    current: &BTreeMap<String, String>,
    desired: &BTreeMap<String, String>,
    untag: U,
    tag: T,
) -> Result<(), ProviderError>
where
    U: FnOnce(Vec<String>) -> UF,
    UF: Future<Output = Result<(), ProviderError>>,
    T: FnOnce(Vec<Tag>) -> TF,
    TF: Future<Output = Result<(), ProviderError>>,
{
    let remove: Vec<String> = current.keys().filter(|k| !desired.contains_key(*k)).cloned().collect();
    let set: BTreeMap<String, String> =
        desired.iter().filter(|(k, v)| current.get(*k) != Some(*v)).map(|(k, v)| (k.clone(), v.clone())).collect();
    if !remove.is_empty() {
        untag(remove).await?;
    }
    if !set.is_empty() {
        tag(to_iam(operation, &set)?).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[tokio::test]
    async fn untags_removed_keys_and_tags_only_changed_ones() {
        let calls = Mutex::new(Vec::new());
        let current = map(&[("keep", "1"), ("change", "old"), ("drop", "x")]);
        let desired = map(&[("keep", "1"), ("change", "new"), ("add", "y")]);
        reconcile(
            "iam:TagRole",
            &current,
            &desired,
            |keys| {
                calls.lock().unwrap().push(format!("untag {keys:?}"));
                async { Ok(()) }
            },
            |tags| {
                let kv: Vec<String> = tags.iter().map(|t| format!("{}={}", t.key(), t.value())).collect();
                calls.lock().unwrap().push(format!("tag {kv:?}"));
                async { Ok(()) }
            },
        )
        .await
        .unwrap();
        assert_eq!(*calls.lock().unwrap(), ["untag [\"drop\"]", "tag [\"add=y\", \"change=new\"]"]);
    }

    #[tokio::test]
    async fn makes_no_call_when_tags_match() {
        let tags = map(&[("a", "1")]);
        reconcile("iam:TagRole", &tags, &tags, |_| async { panic!("untag") }, |_| async { panic!("tag") })
            .await
            .unwrap();
    }
}

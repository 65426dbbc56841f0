//! `aws_subnet_tags`: the tags a cluster needs on a subnet kbp does not own ([`super::existing_subnet`]):
//! `karpenter.sh/discovery` for Karpenter, `kubernetes.io/role/elb` and `kubernetes.io/role/internal-elb` for
//! load balancers. The resource manages only the keys of its `tags` attribute and leaves every other tag of
//! the subnet as it is.
//!
//! It never writes kbp's own tags (`kbp:stack`, `kbp:address`, …): teardown takes whatever carries `kbp:stack`
//! for the stack's and would delete the user's subnet. So [`Desired::kbp_tags`] and [`Desired::tags`] are not
//! used here, and a `kbp:` key in `tags` is refused.
//!
//! What a managed key held before kbp set it is remembered in the output [`PREVIOUS`] (keys that had no value
//! are left out of it): removing a key from the blueprint, or destroying the stack, puts that value back, or
//! deletes the tag when there was none. Update and delete find it in their `prior`, which is why the engine
//! must hand them the stored outputs along with the attributes.

use std::collections::{BTreeMap, BTreeSet};

use async_trait::async_trait;
use serde_json::{json, Value};

use super::existing_subnet::ExistingSubnet;
use super::{object, ok_if_gone, tagging};
use crate::graph::{kinds, Attrs};
use crate::providers::lookup::Lookup;
use crate::providers::tags;
use crate::providers::{contract, contract::Constraint, contract::Rule};
use crate::providers::{
    spec, Applied, Context, Descriptor, Desired, Observed, Provider, ProviderError, Result, WithoutState,
};

pub(crate) struct SubnetTags;

/// The output with the values the managed keys had before kbp set them.
pub(crate) const PREVIOUS: &str = "previous_tags";

type Tags = BTreeMap<String, String>;

/// The attributes the compiler emits, references resolved ([`crate::graph::kinds`]).
type Spec = crate::graph::kinds::subnet_tags::SubnetTags<String>;

/// What AWS accepts of what this kind sends ([`contract`]).
const SENDS: &[Constraint] =
    &[Constraint::new("tags", Rule::Tags { api: "subnet", chars: contract::ANY, kbp_tags: false })];

#[async_trait]
impl Provider for SubnetTags {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(
            kinds::SUBNET_TAGS,
            WithoutState::Untraced("tags on a subnet the stack does not own carry no tag of kbp's"),
            SENDS,
        )
        .force_new(&["subnet_id"])
    }

    /// The subnet's values of the keys the last apply managed: a key removed by hand reads as absent, so the
    /// plan puts it back.
    async fn read(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<Option<Observed>> {
        let Some(current) = current(cx, id).await? else { return Ok(None) };
        let managed = Managed::from(prior);
        let tags: serde_json::Map<String, Value> =
            only(&current, managed.tags.keys()).into_iter().map(|(k, v)| (k, Value::String(v))).collect();
        let attrs = object(json!({ "subnet_id": id, "tags": tags }));
        Ok(Some(Observed { attrs, outputs: super::id_output(id) }))
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        let want = parse(desired)?;
        let current = existing(cx, &want.subnet_id).await?;
        let before = only(&current, want.tags.keys());
        tagging::apply(cx, &want.subnet_id, &tags::changes(&before, &want.tags)).await?;
        Ok(applied(&want.subnet_id, before))
    }

    async fn update(&self, cx: &Context, id: &str, prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        let want = parse(desired)?;
        let was = Managed::from(prior);
        let current = existing(cx, id).await?;
        let keys: BTreeSet<&String> = was.tags.keys().chain(want.tags.keys()).collect();
        let change = tags::changes(&only(&current, keys), &was.target(&want.tags));
        tagging::apply(cx, id, &change).await?;
        Ok(applied(id, was.remembered(&current, &want.tags)))
    }

    /// Puts back what the managed keys held before kbp, or deletes them; a subnet that is gone is done.
    async fn delete(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<()> {
        let was = Managed::from(prior);
        let Some(current) = current(cx, id).await? else { return Ok(()) };
        let change = tags::changes(&only(&current, was.tags.keys()), &was.target(&Tags::new()));
        ok_if_gone(tagging::apply(cx, id, &change).await)
    }
}

/// What the last apply managed, from `prior`: its keys (and values) and what they held before kbp.
struct Managed {
    tags: Tags,
    previous: Tags,
}

impl Managed {
    fn from(prior: &Attrs) -> Managed {
        Managed { tags: tags::tag_map(prior.get("tags")), previous: tags::tag_map(prior.get(PREVIOUS)) }
    }

    /// The managed keys as they should be for `want`: its values, and for the keys it drops what they held
    /// before kbp (absent when they held nothing).
    fn target(&self, want: &Tags) -> Tags {
        let dropped = self.previous.iter().filter(|(k, _)| self.tags.contains_key(*k) && !want.contains_key(*k));
        want.iter().chain(dropped).map(|(k, v)| (k.clone(), v.clone())).collect()
    }

    /// What to remember for `want`'s keys: the remembered value of a key kbp already managed, the value it has
    /// `now` of one kbp starts managing.
    fn remembered(&self, now: &Tags, want: &Tags) -> Tags {
        want.keys()
            .filter_map(|k| {
                let before = if self.tags.contains_key(k) { self.previous.get(k) } else { now.get(k) };
                before.map(|v| (k.clone(), v.clone()))
            })
            .collect()
    }
}

/// The desired attributes, without kbp's own keys, which must never reach a subnet kbp does not own.
fn parse(desired: &Desired<'_>) -> Result<Spec> {
    let spec: Spec = spec::parse(kinds::SUBNET_TAGS, desired.attrs)?;
    if let Some(key) = spec.tags.keys().find(|k| k.starts_with(tags::PREFIX)) {
        return Err(ProviderError::new(
            kinds::SUBNET_TAGS,
            "",
            format!("kbp does not put its own tag `{key}` on subnet {}, which it does not own", spec.subnet_id),
        )
        .with_hint("this is a bug in kbp's compiler; please report it with the blueprint"));
    }
    Ok(spec)
}

/// Every tag of subnet `id` (kbp's and AWS's too), or `None` when it is gone.
async fn current(cx: &Context, id: &str) -> Result<Option<Tags>> {
    Ok(super::describe::one::<aws_sdk_ec2::types::Subnet>(cx, id, &[]).await?.map(|s| tagging::map(s.tags())))
}

/// [`current`] of a subnet that must exist.
async fn existing(cx: &Context, id: &str) -> Result<Tags> {
    Ok(tagging::map(ExistingSubnet::existing(cx, id).await?.tags()))
}

/// The entries of `all` under `keys`.
fn only<'a>(all: &Tags, keys: impl IntoIterator<Item = &'a String>) -> Tags {
    keys.into_iter().filter_map(|k| all.get(k).map(|v| (k.clone(), v.clone()))).collect()
}

fn applied(id: &str, previous: Tags) -> Applied {
    let mut outputs = super::id_output(id);
    outputs.insert(PREVIOUS.to_string(), json!(previous));
    Applied { id: id.to_string(), outputs }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::tags::{pairs, TagChanges};

    fn managed(tags: &[(&str, &str)], previous: &[(&str, &str)]) -> Managed {
        Managed { tags: pairs(tags), previous: pairs(previous) }
    }

    #[test]
    fn dropped_keys_get_their_old_value_back_or_go() {
        let was = managed(&[("a", "kbp"), ("b", "kbp"), ("c", "kbp")], &[("a", "old")]);
        // `c` stays managed; `a` is dropped and had a value; `b` is dropped and had none.
        assert_eq!(was.target(&pairs(&[("c", "new")])), pairs(&[("a", "old"), ("c", "new")]));
        // A delete is the target of nothing: everything back as it was.
        assert_eq!(was.target(&Tags::new()), pairs(&[("a", "old")]));
        let now = pairs(&[("a", "kbp"), ("b", "kbp"), ("c", "kbp"), ("user", "x")]);
        let change = tags::changes(&only(&now, was.tags.keys()), &was.target(&Tags::new()));
        assert_eq!(change, TagChanges { set: pairs(&[("a", "old")]), remove: vec!["b".into(), "c".into()] });
    }

    #[test]
    fn remembers_the_first_value_a_key_had_before_kbp() {
        let was = managed(&[("a", "kbp"), ("b", "kbp")], &[("a", "old")]);
        let now = pairs(&[("a", "kbp"), ("b", "kbp"), ("d", "theirs")]);
        // `a` keeps its remembered value, `b` had none, `d` and `e` are new: `d` had one, `e` had none.
        let want = pairs(&[("a", "1"), ("b", "1"), ("d", "1"), ("e", "1")]);
        assert_eq!(was.remembered(&now, &want), pairs(&[("a", "old"), ("d", "theirs")]));
    }

    #[test]
    fn only_the_managed_keys_change() {
        let was = managed(&[], &[]);
        let now = pairs(&[("Name", "prod-a"), ("karpenter.sh/discovery", "other")]);
        let want = pairs(&[("karpenter.sh/discovery", "c1")]);
        let keys: BTreeSet<&String> = want.keys().collect();
        let change = tags::changes(&only(&now, keys), &was.target(&want));
        assert_eq!(change, TagChanges { set: want.clone(), remove: vec![] });
    }

    #[test]
    fn kbp_keys_are_refused() {
        let address: crate::graph::Address = "subnet_tags.private[\"a\"]".parse().unwrap();
        let attrs = object(json!({ "subnet_id": "subnet-1", "tags": { "kbp:stack": "s" } }));
        let d = Desired { address: &address, attrs: &attrs, kbp_tags: Tags::new(), client_token: "", replaces: None };
        let Err(e) = parse(&d) else { panic!("a kbp: key is refused") };
        assert!(e.message.contains("kbp:stack") && e.hint.is_some(), "{e}");
    }
}

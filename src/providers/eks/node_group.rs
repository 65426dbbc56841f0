//! `aws_eks_node_group`: a managed node group (here the small tainted one that runs the Karpenter controller and
//! CoreDNS before any Karpenter node exists). EKS changes its scaling, labels and taints in place
//! (UpdateNodegroupConfig, labels and taints as add-or-update/remove differences) and its tags; anything about
//! the instances themselves (role, subnets, AMI type, instance types, capacity type, disk) needs a new group.
//! The ID is `<cluster>:<node group name>`.

use std::collections::{BTreeMap, HashMap};

use async_trait::async_trait;
use aws_sdk_eks::types::{
    AmiTypes, CapacityTypes, Nodegroup, NodegroupScalingConfig, NodegroupUpdateConfig, Taint, TaintEffect,
    UpdateLabelsPayload, UpdateTaintsPayload,
};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::lifecycle::{Target, Tracked, Tracking};
use super::{join_id, send_naming_role, sort_sets, sorted, split_id, tagging};
use crate::graph::kinds::eks_node_group::{KubeTaint, Scaling, UpdateConfig};
use crate::graph::{kinds, Address, Attrs};
use crate::providers::attrs::absent_if_gone;
use crate::providers::ec2::object;
use crate::providers::send::{send, send_pages};
use crate::providers::spec;
use crate::providers::tagged::{arn_name, found, Search};
use crate::providers::wait::{Budget, Budgets};
use crate::providers::Found;
use crate::providers::{contract, contract::Constraint, contract::Rule};
use crate::providers::{
    Applied, Context, Descriptor, Desired, Observed, Provider, ProviderError, Result, Typical, WithoutState,
};

pub(crate) struct NodeGroup;

const KIND: &str = kinds::EKS_NODE_GROUP;
/// Its typical times, which its waits expect too ([`Budget::expecting`]).
const TYPICAL: Typical = Typical { create: 180, update: 60, delete: 180 };
/// Instances must launch and join the cluster: usually three to five minutes, twenty at most. Each wait
/// expects the operation's typical time ([`TYPICAL`]).
const BUDGET: Budget = Budget::long_minutes(20);
const WAITS: Budgets = BUDGET.for_each(TYPICAL);

/// The attributes the compiler emits for a node group, references resolved ([`crate::graph::kinds`]).
type Spec = crate::graph::kinds::eks_node_group::NodeGroup<String>;

impl UpdateConfig {
    fn to_eks(&self) -> NodegroupUpdateConfig {
        NodegroupUpdateConfig::builder()
            .set_max_unavailable(self.max_unavailable)
            .set_max_unavailable_percentage(self.max_unavailable_percentage)
            .build()
    }

    fn from_eks(c: &NodegroupUpdateConfig) -> UpdateConfig {
        UpdateConfig {
            max_unavailable: c.max_unavailable(),
            max_unavailable_percentage: c.max_unavailable_percentage(),
        }
    }
}

/// What AWS accepts of what this kind sends ([`contract`]).
const SENDS: &[Constraint] = &[
    Constraint::new(
        "name",
        Rule::Name {
            api: "EKS node group name",
            max: 63,
            chars: contract::EKS_NAME,
            unique: contract::Unique::InParent,
        },
    ),
    Constraint::new("taints", Rule::Taints),
    Constraint::new("labels", Rule::Labels),
    contract::tags_of("EKS node group"),
];

#[async_trait]
impl Provider for NodeGroup {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(KIND, WithoutState::Tags, SENDS)
            .force_new(&[
                "cluster_name",
                "name",
                "node_role_arn",
                "subnet_ids",
                "ami_type",
                "instance_types",
                "capacity_type",
                "disk_size",
            ])
            .imported_by("`<cluster name>:<node group name>`")
            .creates_before_destroying()
            .takes(TYPICAL)
    }

    /// The node groups of the stack's cluster (their ID is `<cluster>:<name>`), each naming its subnets and role.
    async fn tagged(&self, cx: &Context, search: &Search<'_>) -> Result<Vec<Found>> {
        if super::cluster::stack_cluster(cx, search).await?.is_none() {
            return Ok(Vec::new());
        }
        let stack = search.stack();
        let groups = send_pages(
            cx,
            "eks:ListNodegroups",
            |token| cx.eks().list_nodegroups().cluster_name(stack).set_next_token(token).send(),
            |page| (page.nodegroups.unwrap_or_default(), page.next_token),
        );
        let names = absent_if_gone(groups.await)?.unwrap_or_default();
        let described = futures::future::try_join_all(names.iter().map(|ng| async move {
            let r = send(cx, "eks:DescribeNodegroup", &[], || {
                cx.eks().describe_nodegroup().cluster_name(stack).nodegroup_name(ng).send()
            })
            .await;
            Ok::<_, ProviderError>(absent_if_gone(r)?.and_then(|o| o.nodegroup))
        }))
        .await?;
        Ok(names
            .iter()
            .zip(described)
            .map(|(ng, described)| {
                let mut uses = vec![stack.to_string()];
                if let Some(d) = &described {
                    uses.extend(d.subnets().iter().cloned());
                    uses.extend(d.node_role().map(arn_name));
                }
                found(KIND, &join_id(stack, ng), Some(ng.clone()), String::new(), uses)
            })
            .collect())
    }

    /// Subnets are a set and taints are compared in (key, effect) order; instance types keep their order, which
    /// EKS uses as the launch priority of On-Demand capacity.
    fn canonical(&self, desired: Attrs) -> Attrs {
        let mut a = sort_sets(desired, &["subnet_ids"]);
        if let Some(Value::Array(taints)) = a.get_mut("taints") {
            taints.sort_by_key(|t| (t["key"].as_str().map(str::to_string), t["effect"].as_str().map(str::to_string)));
        }
        a
    }

    /// The AMI release is an attribute only when pinned (state says so); otherwise it is an output, and an
    /// unpinned group never shows a diff when EKS publishes a newer release.
    async fn read(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<Option<Observed>> {
        let (cluster, name) = split_id(KIND, id, "node group")?;
        let Some(ng) = tracking(cx, cluster, name, BUDGET).read().await? else { return Ok(None) };
        let mut attrs = attrs(&ng);
        // A successor's name is the blueprint's with a suffix: the blueprint's name is what state compares.
        if let Some(wanted) = prior.get("name").and_then(Value::as_str).filter(|w| is_successor_of(name, w)) {
            attrs.insert("name".into(), json!(wanted));
        }
        let pinned = prior.get("release_version").is_some_and(|v| !v.is_null());
        attrs.insert("release_version".into(), if pinned { json!(ng.release_version()) } else { Value::Null });
        Ok(Some(Observed { attrs, outputs: outputs(id, &ng) }))
    }

    /// By the name its create would use: the successor's while the group it replaces still stands.
    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let name = name_for(&s, desired);
        let found = tracking(cx, &s.cluster_name, &name, BUDGET).find().await?;
        Ok(found.map(|_| join_id(&s.cluster_name, &name)))
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        const OP: &str = "eks:CreateNodegroup";
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let name = name_for(&s, desired);
        let taints = s.taints.iter().map(to_eks).collect::<Result<Vec<_>, _>>()?;
        let labels: HashMap<String, String> = s.labels.clone().into_iter().collect();
        let (tags, token) = (Some(tagging::on_create(desired)), desired.token());
        send_naming_role(cx, OP, &[], || {
            cx.eks()
                .create_nodegroup()
                .cluster_name(&s.cluster_name)
                .nodegroup_name(&name)
                .node_role(&s.node_role_arn)
                .set_subnets(Some(s.subnet_ids.clone()))
                .ami_type(AmiTypes::from(s.ami_type.as_str()))
                .set_instance_types(Some(s.instance_types.clone()))
                .capacity_type(CapacityTypes::from(s.capacity_type.as_str()))
                .scaling_config(scaling(&s.scaling))
                .set_disk_size(s.disk_size)
                .set_labels(Some(labels.clone()))
                .set_taints(Some(taints.clone()))
                .set_version(s.version.clone())
                .set_release_version(s.release_version.clone())
                .set_update_config(s.update_config.as_ref().map(UpdateConfig::to_eks))
                .set_tags(tags.clone())
                .set_client_request_token(token.clone())
                .send()
        })
        .await
        .map_err(|e| explain_taken(e, &s))?;
        let id = join_id(&s.cluster_name, &name);
        let ng = tracking(cx, &s.cluster_name, &name, WAITS.create).wait_active(Some(desired.address)).await?;
        Ok(Applied { outputs: outputs(&id, &ng), id })
    }

    async fn update(&self, cx: &Context, id: &str, _prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        const OP: &str = "eks:UpdateNodegroupConfig";
        let (cluster, name) = split_id(KIND, id, "node group")?;
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let address = Some(desired.address);
        let group = tracking(cx, cluster, name, WAITS.update);
        // EKS refuses a change while another update of the group runs.
        let current = group.wait_active(address).await?;

        let want_scaling = Some(scaling(&s.scaling)).filter(|w| current.scaling_config() != Some(w));
        let have_labels: BTreeMap<String, String> =
            current.labels().into_iter().flatten().map(|(k, v)| (k.clone(), v.clone())).collect();
        let labels = label_changes(&have_labels, &s.labels);
        let have_taints = current.taints().iter().map(from_eks).collect::<Vec<_>>();
        let taints = taint_changes(&have_taints, &s.taints)?;
        let have_update = current.update_config().map(UpdateConfig::from_eks);
        let update_config =
            s.update_config.as_ref().filter(|&w| have_update.as_ref() != Some(w)).map(UpdateConfig::to_eks);
        if want_scaling.is_some() || labels.is_some() || taints.is_some() || update_config.is_some() {
            let request = || {
                cx.eks()
                    .update_nodegroup_config()
                    .cluster_name(cluster)
                    .nodegroup_name(name)
                    .set_scaling_config(want_scaling.clone())
                    .set_labels(labels.clone())
                    .set_taints(taints.clone())
                    .set_update_config(update_config.clone())
                    .send()
            };
            group.update(address, OP, request, |out| out.update()).await?;
        }

        // After the control plane's and the add-ons' updates (the graph orders them first), the nodes follow: EKS
        // rolls them within the group's update config, never forcing past a pod disruption budget. One update at
        // a time, so after the config's.
        let version = s.version.as_deref().filter(|v| current.version() != Some(*v));
        let release = s.release_version.as_deref().filter(|r| current.release_version() != Some(*r));
        if version.is_some() || release.is_some() {
            let request = || {
                cx.eks()
                    .update_nodegroup_version()
                    .cluster_name(cluster)
                    .nodegroup_name(name)
                    .set_version(version.map(str::to_string))
                    .set_release_version(s.release_version.clone())
                    .send()
            };
            group.update(address, "eks:UpdateNodegroupVersion", request, |out| out.update()).await?;
        }

        let ng = group.retag(&current, desired).await?;
        Ok(Applied { id: id.to_string(), outputs: outputs(id, &ng) })
    }

    async fn wait_ready(&self, cx: &Context, address: &Address, id: &str) -> Result<()> {
        let (cluster, name) = split_id(KIND, id, "name")?;
        tracking(cx, cluster, name, WAITS.create).wait_active(Some(address)).await.map(drop)
    }

    /// The pods on the old group's nodes move to its successor's, within their disruption budgets.
    async fn hand_over(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        let (cluster, name) = split_id(KIND, id, "node group")?;
        super::node_drain::drain(cx, cluster, name).await
    }

    /// The cluster cannot be deleted before its node groups are gone, and their nodes' ENIs go with them, so
    /// the delete waits until EKS no longer knows the group.
    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        const OP: &str = "eks:DeleteNodegroup";
        let (cluster, name) = split_id(KIND, id, "node group")?;
        let request = || cx.eks().delete_nodegroup().cluster_name(cluster).nodegroup_name(name).send();
        tracking(cx, cluster, name, WAITS.delete).delete(OP, None, request).await
    }
}

#[async_trait]
impl Tracked for Nodegroup {
    const NOUN: &'static str = "node group";
    const DESCRIBE: &'static str = "eks:DescribeNodegroup";
    const FAILURE_HINT: &'static str = "fix what EKS names (often the node role's policies, subnets without a route \
        to the internet or to VPC endpoints, or instance types without capacity), then run kbp again";

    async fn describe(cx: &Context, at: Target<'_>) -> Result<Option<Self>> {
        let request = || cx.eks().describe_nodegroup().cluster_name(at.cluster).nodegroup_name(at.name()).send();
        Ok(absent_if_gone(send(cx, Self::DESCRIBE, &[], request).await)?.and_then(|out| out.nodegroup))
    }
}

/// The name a create uses: the blueprint's, unless the group it replaces (still standing, create-before-destroy)
/// has it; then the blueprint's with a suffix from the create's token, so a retried create looks for and makes
/// the same one. A later replacement goes back to the blueprint's name, which is free again.
fn name_for(s: &Spec, desired: &Desired<'_>) -> String {
    let old = desired.replaces.and_then(|id| split_id(KIND, id, "node group").ok()).map(|(_, name)| name);
    if old != Some(s.name.as_str()) {
        return s.name.clone();
    }
    let digest = Sha256::digest(desired.client_token.as_bytes());
    let suffix: String = digest.iter().take(SUFFIX_LEN / 2).map(|b| format!("{b:02x}")).collect();
    // EKS names are at most 63 characters.
    let stem: String = s.name.chars().take(63 - SUFFIX_LEN - 1).collect();
    format!("{stem}-{suffix}")
}

const SUFFIX_LEN: usize = 8;

/// Whether `actual` is `wanted`, or a successor's name made from it by [`name_for`].
fn is_successor_of(actual: &str, wanted: &str) -> bool {
    if actual == wanted {
        return true;
    }
    let Some((stem, suffix)) = actual.rsplit_once('-') else { return false };
    let stem_of_wanted: String = wanted.chars().take(63 - SUFFIX_LEN - 1).collect();
    stem == stem_of_wanted && suffix.len() == SUFFIX_LEN && suffix.chars().all(|c| c.is_ascii_hexdigit())
}

/// The node group `name` of `cluster`, whose waits may each take `budget`.
fn tracking<'a>(cx: &'a Context, cluster: &'a str, name: &'a str, budget: Budget) -> Tracking<'a, Nodegroup> {
    Tracking::new(cx, Target::nodegroup(cluster, name), budget)
}

fn explain_taken(e: ProviderError, s: &Spec) -> ProviderError {
    if e.is("ResourceInUseException") {
        e.with_hint(format!(
            "a node group named `{}` already exists in cluster `{}` but is not in this stack's state; if it carries \
             this stack's kbp:stack tag, run kbp again to adopt it, otherwise delete or rename it",
            s.name, s.cluster_name
        ))
    } else {
        e
    }
}

fn scaling(s: &Scaling) -> NodegroupScalingConfig {
    NodegroupScalingConfig::builder().min_size(s.min_size).max_size(s.max_size).desired_size(s.desired_size).build()
}

fn to_eks(t: &KubeTaint) -> Result<Taint> {
    let effect = match t.effect.as_str() {
        "NoSchedule" => TaintEffect::NoSchedule,
        "PreferNoSchedule" => TaintEffect::PreferNoSchedule,
        "NoExecute" => TaintEffect::NoExecute,
        other => {
            return Err(ProviderError::new(KIND, "", format!("taint `{}` has effect `{other}`", t.key))
                .with_hint("a taint's effect is NoSchedule, PreferNoSchedule or NoExecute"))
        }
    };
    Ok(Taint::builder().key(&t.key).set_value(t.value.clone()).effect(effect).build())
}

fn from_eks(t: &Taint) -> KubeTaint {
    let effect = match t.effect() {
        Some(TaintEffect::NoSchedule) => "NoSchedule",
        Some(TaintEffect::PreferNoSchedule) => "PreferNoSchedule",
        Some(TaintEffect::NoExecute) => "NoExecute",
        other => other.map_or("", |e| e.as_str()),
    };
    KubeTaint {
        key: t.key().unwrap_or_default().to_string(),
        value: t.value().map(str::to_string),
        effect: effect.to_string(),
    }
}

/// The labels payload that turns `have` into `want`, or `None` when they are equal.
fn label_changes(have: &BTreeMap<String, String>, want: &BTreeMap<String, String>) -> Option<UpdateLabelsPayload> {
    let set: HashMap<String, String> =
        want.iter().filter(|(k, v)| have.get(*k) != Some(*v)).map(|(k, v)| (k.clone(), v.clone())).collect();
    let remove: Vec<String> = have.keys().filter(|k| !want.contains_key(*k)).cloned().collect();
    (!set.is_empty() || !remove.is_empty()).then(|| {
        UpdateLabelsPayload::builder()
            .set_add_or_update_labels(Some(set).filter(|s| !s.is_empty()))
            .set_remove_labels(Some(remove).filter(|r| !r.is_empty()))
            .build()
    })
}

/// The taints payload that turns `have` into `want`, or `None` when they are equal. A taint is identified by its
/// key and effect, as in Kubernetes: one whose value changed is added or updated, not removed.
fn taint_changes(have: &[KubeTaint], want: &[KubeTaint]) -> Result<Option<UpdateTaintsPayload>> {
    let same_slot = |a: &KubeTaint, b: &KubeTaint| a.key == b.key && a.effect == b.effect;
    let set: Vec<Taint> = want.iter().filter(|w| !have.contains(w)).map(to_eks).collect::<Result<_, _>>()?;
    let remove: Vec<Taint> =
        have.iter().filter(|h| !want.iter().any(|w| same_slot(h, w))).map(to_eks).collect::<Result<_, _>>()?;
    Ok((!set.is_empty() || !remove.is_empty()).then(|| {
        UpdateTaintsPayload::builder()
            .set_add_or_update_taints(Some(set).filter(|s| !s.is_empty()))
            .set_remove_taints(Some(remove).filter(|r| !r.is_empty()))
            .build()
    }))
}

fn attrs(ng: &Nodegroup) -> Attrs {
    let scaling = ng
        .scaling_config()
        .map(|s| json!({"min_size": s.min_size(), "max_size": s.max_size(), "desired_size": s.desired_size()}));
    let mut taints: Vec<KubeTaint> = ng.taints().iter().map(from_eks).collect();
    taints.sort_by(|a, b| (&a.key, &a.effect).cmp(&(&b.key, &b.effect)));
    let labels: BTreeMap<&String, &String> = ng.labels().into_iter().flatten().collect();
    object(json!({
        "cluster_name": ng.cluster_name(),
        "name": ng.nodegroup_name(),
        "node_role_arn": ng.node_role(),
        "subnet_ids": sorted(ng.subnets()),
        "ami_type": ng.ami_type().map(|a| a.as_str()),
        "instance_types": ng.instance_types(),
        "capacity_type": ng.capacity_type().map(|c| c.as_str()),
        "scaling": scaling,
        "disk_size": ng.disk_size(),
        "labels": labels,
        "taints": taints,
        "version": ng.version(),
        "update_config": ng.update_config().map(UpdateConfig::from_eks),
        "tags": tagging::attr(ng.tags()),
    }))
}

fn outputs(id: &str, ng: &Nodegroup) -> Attrs {
    object(json!({
        "id": id,
        "arn": ng.nodegroup_arn(),
        "name": ng.nodegroup_name(),
        "ami_release_version": ng.release_version(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taint(key: &str, value: Option<&str>, effect: &str) -> KubeTaint {
        KubeTaint { key: key.into(), value: value.map(str::to_string), effect: effect.into() }
    }

    #[test]
    fn taint_effects_map_both_ways() {
        for effect in ["NoSchedule", "PreferNoSchedule", "NoExecute"] {
            let t = taint("k", Some("v"), effect);
            assert_eq!(from_eks(&to_eks(&t).unwrap()), t);
        }
        assert_eq!(to_eks(&taint("k", None, "NoSchedule")).unwrap().effect(), Some(&TaintEffect::NoSchedule));
        assert!(to_eks(&taint("k", None, "NO_SCHEDULE")).is_err());
    }

    #[test]
    fn label_changes_add_change_and_remove() {
        let m = |p: &[(&str, &str)]| p.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<BTreeMap<_, _>>();
        assert!(label_changes(&m(&[("a", "1")]), &m(&[("a", "1")])).is_none());
        let p = label_changes(&m(&[("a", "1"), ("b", "2")]), &m(&[("a", "9"), ("c", "3")])).unwrap();
        let set: BTreeMap<_, _> = p.add_or_update_labels().unwrap().clone().into_iter().collect();
        assert_eq!(set, m(&[("a", "9"), ("c", "3")]));
        assert_eq!(p.remove_labels(), ["b"]);
    }

    #[test]
    fn taint_changes_key_taints_by_key_and_effect() {
        let have = vec![taint("a", Some("1"), "NoSchedule"), taint("b", None, "NoExecute")];
        assert!(taint_changes(&have, &have).unwrap().is_none());
        // a's value changes (an update, not a removal); b goes; c comes.
        let want = vec![taint("a", Some("2"), "NoSchedule"), taint("c", None, "PreferNoSchedule")];
        let p = taint_changes(&have, &want).unwrap().unwrap();
        let keys = |ts: &[Taint]| ts.iter().map(|t| t.key().unwrap().to_string()).collect::<Vec<_>>();
        assert_eq!(keys(p.add_or_update_taints()), ["a", "c"]);
        assert_eq!(keys(p.remove_taints()), ["b"]);
    }

    #[test]
    fn canonical_orders_subnets_and_taints_but_not_instance_types() {
        let desired = json!({
            "subnet_ids": ["subnet-b", "subnet-a"],
            "instance_types": ["m6i.large", "c6i.large"],
            "taints": [{"key": "z", "value": null, "effect": "NoSchedule"}, {"key": "a", "value": "1", "effect": "NoExecute"}],
        });
        let a = NodeGroup.canonical(desired.as_object().cloned().unwrap());
        assert_eq!(a["subnet_ids"], json!(["subnet-a", "subnet-b"]));
        assert_eq!(a["instance_types"], json!(["m6i.large", "c6i.large"]));
        assert_eq!(a["taints"][0]["key"], "a");
    }
}

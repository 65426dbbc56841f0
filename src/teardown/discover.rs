//! Discovery feeds the destroy engine. What the stack owns outside state is found two ways:
//! - by kbp's own tags ([`stack`](super::stack())): everything of a stack whose state is lost (`--from-tags`,
//!   `gc`), or, for a stack with state, second resources at one of its addresses (creates whose answer was lost);
//! - by every provider's [`Provider::discover`]: what Karpenter and in-cluster controllers made for the cluster
//!   (nodes, launch templates, instance profiles, network interfaces, security groups, load balancers, volumes,
//!   the control-plane log group, VPC endpoints).
//!
//! Each find becomes an ordinary state entry at `<kind>.found["<id>"]` ([`merge`]), with dependencies inferred
//! from the IDs it uses (a listener uses its load balancer, a load balancer its subnets and security groups)
//! and from what must go before it (a volume's instance, a log group's cluster). `plan::diff_destroy` orders
//! their deletion with the rest of the stack by those edges, and `exec::walk` deletes them with the same
//! parallelism, events and state writes as everything else; a run killed half way finds what is left again,
//! in state and by discovery.
//!
//! [`Provider::discover`]: crate::providers::Provider::discover

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use super::stack;
use crate::graph::kinds;
use crate::graph::Address;
use crate::providers::tagged::Owner;
use crate::providers::{Context, DiscoveryScope, Found, Registry, Result};
use crate::state::{ResourceState, State, Status};

/// What to look for besides state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// The stack has state: what controllers made, and duplicates of state's own resources.
    OutsideState,
    /// The stack is known only by its tags: everything tagged for it, and what controllers made.
    Everything,
}

/// The address a discovered resource gets: its kind without `aws_`, named `found`, keyed by its ID.
pub fn address(found: &Found) -> Address {
    Address::keyed(found.kind.trim_start_matches("aws_"), "found", &found.id)
}

/// Finds what stack `who` owns beyond `state` (see the module documentation); only reads. `node_roles` are the
/// roles Karpenter's nodes use, whose instance profiles Karpenter makes.
pub async fn discover(
    cx: &Context,
    registry: &Registry,
    state: &State,
    who: Owner<'_>,
    look: Look,
    node_roles: &[String],
) -> Result<Vec<Found>> {
    let held = super::held_ids(state);
    let all_tagged: Vec<Found> =
        stack(cx, registry, who).await?.into_iter().filter(|f| !held.contains(&f.id)).collect();
    // Everything tagged for the stack is never a controller's leftover, and its VPCs and roles are where to look.
    let mut keep = held.clone();
    let mut vpc_ids: Vec<String> =
        state.resources.values().filter(|r| r.kind == kinds::VPC).filter_map(|r| r.id.clone()).collect();
    let mut roles = node_roles.to_vec();
    for f in &all_tagged {
        keep.insert(f.id.clone());
        match f.kind {
            kinds::VPC => vpc_ids.push(f.id.clone()),
            kinds::IAM_ROLE => roles.push(f.id.clone()),
            _ => {}
        }
    }
    vpc_ids.sort();
    vpc_ids.dedup();
    let tagged: Vec<Found> = match look {
        Look::Everything => all_tagged,
        Look::OutsideState => super::orphans(state, all_tagged),
    };
    let shared_vpc_ids: Vec<String> =
        state.resources.values().filter(|r| r.kind == kinds::EXISTING_VPC).filter_map(|r| r.id.clone()).collect();
    let scope = &DiscoveryScope {
        cluster: who.name,
        vpc_ids: &vpc_ids,
        shared_vpc_ids: &shared_vpc_ids,
        node_roles: &roles,
        keep: &keep,
    };
    let answers =
        futures::future::try_join_all(registry.providers().map(|p| async move { p.discover(cx, scope).await })).await?;

    let mut seen = BTreeSet::new();
    Ok(tagged
        .into_iter()
        .chain(answers.into_iter().flatten())
        .filter(|f| seen.insert((f.kind, f.id.clone())))
        .collect())
}

/// Adds `found` to `state` as entries (see the module documentation); those already there (a rerun after a
/// kill) are not repeated. Returns the addresses of the new entries.
pub fn merge(state: &mut State, found: &[Found]) -> Vec<Address> {
    let mut by_id: BTreeMap<String, Address> = BTreeMap::new();
    for r in state.resources.values() {
        for id in identities(r) {
            by_id.entry(id).or_insert_with(|| r.address.clone());
        }
    }
    for f in found {
        by_id.entry(f.id.clone()).or_insert_with(|| address(f));
    }
    let mut added = Vec::new();
    let mut later: Vec<(Address, Address)> = Vec::new();
    for f in found {
        let me = address(f);
        if state.resources.contains_key(&me) {
            continue;
        }
        let mut dependencies: Vec<Address> =
            f.uses.iter().filter_map(|u| by_id.get(u)).filter(|a| **a != me).cloned().collect();
        dependencies.sort();
        dependencies.dedup();
        later
            .extend(f.after.iter().filter_map(|a| by_id.get(a)).filter(|a| **a != me).map(|a| (a.clone(), me.clone())));
        let mut outputs = crate::graph::Attrs::new();
        outputs.insert("id".into(), Value::String(f.id.clone()));
        if let Some(name) = &f.name {
            outputs.insert("name".into(), Value::String(name.clone()));
        }
        outputs.insert("detail".into(), Value::String(f.detail.clone()));
        state.resources.insert(
            me.clone(),
            ResourceState {
                address: me.clone(),
                kind: f.kind.to_string(),
                id: Some(f.id.clone()),
                status: Status::Ready,
                attributes: f.attrs.clone(),
                outputs,
                dependencies,
                imported: false,
                address_tag: crate::state::AddressTag::Path,
            },
        );
        added.push(me);
    }
    // "Delete me after that one": that one depends on me, as far as the order of deletes goes.
    for (first, then) in later {
        if let Some(r) = state.resources.get_mut(&first) {
            if !r.dependencies.contains(&then) {
                r.dependencies.push(then);
            }
        }
    }
    added
}

/// The IDs other resources may name an entry by: its ID and its `arn`, `id` and `name` outputs.
fn identities(r: &ResourceState) -> Vec<String> {
    let mut ids: Vec<String> = r.id.iter().cloned().collect();
    for key in ["arn", "id", "name"] {
        if let Some(v) = r.outputs.get(key).and_then(|v| v.as_str()) {
            ids.push(v.to_string());
        }
    }
    ids
}

/// `found` for people and for the `--json` contract: kind, ID, name, why, and the address it is deleted at.
pub fn listing(found: &[Found]) -> Vec<Value> {
    found
        .iter()
        .map(|f| json!({ "kind": f.kind, "id": f.id, "name": f.name, "detail": f.detail, "address": address(f) }))
        .collect()
}

/// One line per find: `aws_instance i-1 (name): detail`.
pub fn describe(found: &[Found]) -> String {
    let mut lines: Vec<String> = found
        .iter()
        .map(|f| {
            let name = f.name.as_ref().map(|n| format!(" ({n})")).unwrap_or_default();
            let detail = if f.detail.is_empty() { String::new() } else { format!(": {}", f.detail) };
            format!("{} {}{name}{detail}", f.kind, f.id)
        })
        .collect();
    lines.sort();
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(kind: &'static str, id: &str, uses: &[&str], after: &[&str]) -> Found {
        Found {
            kind,
            id: id.into(),
            name: None,
            detail: String::new(),
            uses: uses.iter().map(|u| u.to_string()).collect(),
            after: after.iter().map(|u| u.to_string()).collect(),
            attrs: Default::default(),
        }
    }

    fn entry(address: &Address, kind: &str, id: &str) -> ResourceState {
        ResourceState {
            address: address.clone(),
            kind: kind.into(),
            id: Some(id.into()),
            status: Status::Ready,
            attributes: Default::default(),
            outputs: Default::default(),
            dependencies: Vec::new(),
            imported: false,
            address_tag: crate::state::AddressTag::Path,
        }
    }

    #[test]
    fn what_a_found_resource_uses_becomes_its_dependencies() {
        let mut state = State::new("sbx", "us-west-2");
        let subnet = Address::keyed("subnet", "private", "us-west-2a");
        state.resources.insert(subnet.clone(), entry(&subnet, "aws_subnet", "subnet-1"));
        let lb = found("aws_lb", "arn:lb/1", &["subnet-1", "sg-unknown"], &[]);
        let listener = found("aws_lb_listener", "arn:listener/1", &["arn:lb/1"], &[]);
        let added = merge(&mut state, &[lb.clone(), listener.clone()]);
        assert_eq!(added.len(), 2);
        assert_eq!(added[0].to_string(), "lb.found[\"arn:lb/1\"]");
        assert_eq!(added[0].to_string().parse::<Address>().unwrap(), added[0], "state reads it back");
        assert_eq!(state.resources[&added[0]].dependencies, vec![subnet], "an ID no one holds is no edge");
        assert_eq!(state.resources[&added[1]].dependencies, vec![address(&lb)]);
        // Once in state (a rerun after a kill), they are not repeated.
        assert!(merge(&mut state, &[lb, listener]).is_empty());
    }

    #[test]
    fn what_must_go_first_depends_on_what_goes_after_it() {
        let mut state = State::new("sbx", "us-west-2");
        let cluster = Address::new("eks_cluster", "this");
        state.resources.insert(cluster.clone(), entry(&cluster, "aws_eks_cluster", "sbx"));
        let node = found("aws_instance", "i-1", &[], &[]);
        let volume = found("aws_ebs_volume", "vol-1", &[], &["i-1"]);
        let logs = found("aws_cloudwatch_log_group", "/aws/eks/sbx/cluster", &[], &["sbx"]);
        merge(&mut state, &[node.clone(), volume.clone(), logs.clone()]);
        assert_eq!(state.resources[&address(&node)].dependencies, vec![address(&volume)]);
        assert_eq!(state.resources[&cluster].dependencies, vec![address(&logs)]);
        let order = crate::plan::diff::deletion_order(&state);
        let at = |a: &Address| order.iter().position(|x| x == a).unwrap();
        assert!(at(&address(&node)) < at(&address(&volume)), "the node goes before its volume");
        assert!(at(&cluster) < at(&address(&logs)), "the cluster goes before its log group");
    }
}

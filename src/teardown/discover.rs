//! Discovery feeds the destroy engine: every provider is asked what the stack owns outside state
//! ([`Provider::discover`]), and each answer becomes an ordinary state entry at `<kind>.found["<id>"]`, with
//! dependencies inferred from the IDs it uses (a listener uses its load balancer, a load balancer its subnets and
//! security groups, a volume its instance). `plan::diff_destroy` then orders their deletion with the rest of
//! the stack by those edges, and `exec::walk` deletes them with the same parallelism, events and state writes
//! as everything else; a run killed half way finds what is left again, in state and by discovery.
//!
//! [`Provider::discover`]: crate::providers::Provider::discover

use std::collections::{BTreeMap, BTreeSet};

use crate::graph::Address;
use crate::providers::{Context, DiscoveryScope, Found, ProviderError, Registry};
use crate::state::{ResourceState, State, Status};

/// The address a discovered resource gets: its kind without `aws_`, named `found`, keyed by its ID.
pub fn address(found: &Found) -> Address {
    Address::keyed(found.kind.trim_start_matches("aws_"), "found", &found.id)
}

/// Asks every provider what the stack owns outside `state` in `vpc_ids`, concurrently; only reads.
pub async fn discover(
    cx: &Context,
    registry: &Registry,
    state: &State,
    vpc_ids: &[String],
) -> Result<Vec<Found>, ProviderError> {
    let keep = super::held_ids(state);
    let scope = &DiscoveryScope { cluster: &cx.stack, vpc_ids, keep: &keep };
    let answers =
        futures::future::try_join_all(registry.providers().map(|p| async move { p.discover(cx, scope).await })).await?;
    let mut seen = BTreeSet::new();
    Ok(answers.into_iter().flatten().filter(|f| seen.insert((f.kind, f.id.clone()))).collect())
}

/// `found` as state entries, each depending on the entries (of `state` or of `found`) whose ID, ARN or name
/// is among what it uses. Entries already in `state` are not repeated.
pub fn entries(state: &State, found: &[Found]) -> Vec<ResourceState> {
    let mut by_id: BTreeMap<String, Address> = BTreeMap::new();
    for r in state.resources.values() {
        for id in identities(r) {
            by_id.entry(id).or_insert_with(|| r.address.clone());
        }
    }
    for f in found {
        by_id.entry(f.id.clone()).or_insert_with(|| address(f));
    }
    found
        .iter()
        .filter(|f| !state.resources.contains_key(&address(f)))
        .map(|f| {
            let me = address(f);
            let mut dependencies: Vec<Address> =
                f.uses.iter().filter_map(|u| by_id.get(u)).filter(|a| **a != me).cloned().collect();
            dependencies.sort();
            dependencies.dedup();
            let mut outputs = crate::graph::Attrs::new();
            outputs.insert("id".into(), serde_json::Value::String(f.id.clone()));
            if let Some(name) = &f.name {
                outputs.insert("name".into(), serde_json::Value::String(name.clone()));
            }
            outputs.insert("detail".into(), serde_json::Value::String(f.detail.clone()));
            ResourceState {
                address: me,
                kind: f.kind.to_string(),
                id: Some(f.id.clone()),
                status: Status::Ready,
                attributes: f.attrs.clone(),
                outputs,
                dependencies,
            }
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    fn found(kind: &'static str, id: &str, uses: &[&str]) -> Found {
        Found {
            kind,
            id: id.into(),
            name: None,
            detail: String::new(),
            uses: uses.iter().map(|u| u.to_string()).collect(),
            attrs: Default::default(),
        }
    }

    #[test]
    fn what_a_found_resource_uses_becomes_its_dependencies() {
        let mut state = State::new("sbx", "us-west-2");
        let subnet = Address::keyed("subnet", "private", "us-west-2a");
        state.resources.insert(
            subnet.clone(),
            ResourceState {
                address: subnet.clone(),
                kind: "aws_subnet".into(),
                id: Some("subnet-1".into()),
                status: Status::Ready,
                attributes: Default::default(),
                outputs: Default::default(),
                dependencies: Vec::new(),
            },
        );
        let lb = found("aws_lb", "arn:lb/1", &["subnet-1", "sg-unknown"]);
        let listener = found("aws_lb_listener", "arn:listener/1", &["arn:lb/1"]);
        let entries = entries(&state, &[lb.clone(), listener.clone()]);
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].address.to_string(), "lb.found[\"arn:lb/1\"]");
        assert_eq!(
            entries[0].address.to_string().parse::<Address>().unwrap(),
            entries[0].address,
            "state reads it back"
        );
        assert_eq!(entries[0].dependencies, vec![subnet], "an ID no one holds is no edge");
        assert_eq!(entries[1].dependencies, vec![address(&lb)]);
        // Once in state (a rerun after a kill), they are not repeated.
        let mut again = state.clone();
        for e in entries {
            again.resources.insert(e.address.clone(), e);
        }
        assert!(super::entries(&again, &[lb, listener]).is_empty());
    }
}

//! The diff: desired graph × refreshed state → ordered changes, each with its reason. Pure; no AWS calls.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::{summarize, Action, AttrChange, Change, Deferred, Plan, FORMAT_VERSION};
use crate::graph::value::{self, UNKNOWN};
use crate::graph::{Address, Attrs, ResourceGraph};
use crate::providers::Registry;
use crate::state::{ResourceState, State, Status};

/// Plans the changes that take `state` (already refreshed) to `graph`. Resources whose kind has no provider in
/// `registry`, and everything that depends on them, are reported as deferred rather than planned.
pub fn diff(graph: &ResourceGraph, state: &State, registry: &Registry, gone: &[Address]) -> Plan {
    diff_replacing(graph, state, registry, gone, &[])
}

/// [`diff`], planning a replacement of each resource in `replace` that exists, changed or not (`--replace`).
pub fn diff_replacing(
    graph: &ResourceGraph,
    state: &State,
    registry: &Registry,
    gone: &[Address],
    replace: &[Address],
) -> Plan {
    let mut changes = Vec::new();
    let mut deferred = Vec::new();
    let mut deferred_set: BTreeSet<Address> = BTreeSet::new();
    // Resources whose outputs will be new after this apply: references to them are unknown until then.
    let mut pending: BTreeSet<Address> = BTreeSet::new();
    let mut unchanged = 0;

    for r in graph.in_order() {
        let Some(provider) = registry.get(&r.kind) else {
            deferred.push(Deferred {
                address: r.address.clone(),
                kind: r.kind.clone(),
                reason: format!("this kbp has no provider for {} yet", r.kind),
            });
            deferred_set.insert(r.address.clone());
            continue;
        };
        if let Some(blocker) = r.dependencies().into_iter().find(|d| deferred_set.contains(d)) {
            deferred.push(Deferred {
                address: r.address.clone(),
                kind: r.kind.clone(),
                reason: format!("depends on {blocker}, which is deferred"),
            });
            deferred_set.insert(r.address.clone());
            continue;
        }
        let lookup = |a: &Address, o: &str| if pending.contains(a) { None } else { state.output(a, o) };
        let (resolved, _) = value::resolve(&Value::Object(r.attrs.clone()), &lookup);
        let desired = provider.canonical(resolved.as_object().cloned().unwrap_or_default());

        let existing = state.get(&r.address).filter(|s| s.status == Status::Ready && s.id.is_some());
        let Some(existing) = existing else {
            let reason = match state.get(&r.address).map(|s| &s.status) {
                Some(Status::Creating { .. }) => "an earlier create was interrupted; not found in AWS".to_string(),
                _ if gone.contains(&r.address) => "deleted outside kbp".to_string(),
                _ => "not in state".to_string(),
            };
            changes.push(Change {
                address: r.address.clone(),
                kind: r.kind.clone(),
                action: Action::Create,
                reason,
                id: None,
                attributes: flatten_all(&desired),
                objects: Vec::new(),
            });
            pending.insert(r.address.clone());
            continue;
        };

        let force_new = provider.force_new();
        let sources = provider.descriptor().sources;
        let mut attrs = Vec::new();
        for (key, want) in desired.iter().filter(|(k, _)| !sources.contains(&k.as_str())) {
            let have = existing.attributes.get(key);
            if have == Some(want) || (have.is_none() && want.is_null()) {
                continue;
            }
            let forces = force_new.contains(&key.as_str());
            attr_diff(key, have, Some(want), forces, &mut attrs);
        }
        if existing.imported {
            attrs.extend(tags_to_add(state, existing));
        } else if let Some(retag) = address_tag_rewrite(existing, &desired) {
            attrs.push(retag);
        }
        let forced = replace.contains(&r.address);
        if attrs.is_empty() && !forced {
            unchanged += 1;
            continue;
        }
        let replace_by: Vec<&str> = attrs.iter().filter(|a| a.forces_replacement).map(|a| a.path.as_str()).collect();
        let (action, reason) = if forced {
            (Action::Replace, "replacement requested with --replace".to_string())
        } else if replace_by.is_empty() {
            let paths: BTreeSet<&str> = attrs.iter().map(|a| top(&a.path)).collect();
            (Action::Update, format!("{} changed", paths.into_iter().collect::<Vec<_>>().join(", ")))
        } else {
            let mut tops: Vec<&str> = replace_by.iter().map(|p| top(p)).collect();
            tops.dedup();
            let verb = if tops.len() == 1 { "forces" } else { "force" };
            (Action::Replace, format!("{} {verb} replacement", tops.join(", ")))
        };
        let reason = if existing.imported { format!("imported, kbp's tags to add: {reason}") } else { reason };
        // What service runs on is replaced new-one-first.
        let action = match action {
            Action::Replace if provider.descriptor().create_before_destroy => Action::ReplaceCreateFirst,
            other => other,
        };
        if action.replaces() {
            pending.insert(r.address.clone());
        }
        changes.push(Change {
            address: r.address.clone(),
            kind: r.kind.clone(),
            action,
            reason,
            id: existing.id.clone(),
            attributes: attrs,
            objects: Vec::new(),
        });
    }

    // What state has and the blueprint no longer does, dependents first.
    let removed: Vec<Change> = deletion_order(state)
        .into_iter()
        .filter(|a| graph.get(a).is_none())
        .filter_map(|a| state.get(&a))
        .map(|s| removal(s, registry, "removed from the blueprint"))
        .collect();
    changes.extend(removed);

    finish(graph, state, changes, deferred, unchanged, false)
}

/// Plans the deletion of everything in `state`, dependents first.
pub fn diff_destroy(graph: &ResourceGraph, state: &State, registry: &Registry) -> Plan {
    let changes = deletion_order(state)
        .into_iter()
        .filter_map(|a| state.get(&a))
        .map(|s| removal(s, registry, "destroy"))
        .collect();
    finish(graph, state, changes, Vec::new(), 0, true)
}

/// The change that takes `s` out of the stack: a delete for `why`, or a forget for a kind destroy leaves in
/// place (account-wide resources, and a network the stack only uses), saying why its provider keeps it.
fn removal(s: &ResourceState, registry: &Registry, why: &str) -> Change {
    let kept = registry.get(&s.kind).and_then(|p| p.descriptor().kept_because());
    Change {
        address: s.address.clone(),
        kind: s.kind.clone(),
        action: if kept.is_some() { Action::Forget } else { Action::Delete },
        reason: kept.unwrap_or(why).to_string(),
        id: s.id.clone(),
        attributes: Vec::new(),
        objects: Vec::new(),
    }
}

/// The plan of `changes` to `state` toward `graph`, with nothing read or shaped yet.
pub(super) fn finish(
    graph: &ResourceGraph,
    state: &State,
    changes: Vec<Change>,
    deferred: Vec<Deferred>,
    unchanged: usize,
    destroy: bool,
) -> Plan {
    Plan {
        format_version: FORMAT_VERSION,
        kbp_version: env!("CARGO_PKG_VERSION").to_string(),
        stack: state.stack.clone(),
        region: state.region.clone(),
        account: None,
        partition: None,
        destroy,
        state_lineage: Some(state.lineage.clone()),
        state_serial: state.serial,
        state_location: None,
        summary: summarize(&changes),
        changes,
        deferred,
        unchanged,
        resources: graph.in_order().into_iter().cloned().collect(),
        moved: Vec::new(),
        warnings: Vec::new(),
        adopted: Vec::new(),
        drift: Vec::new(),
        refresh_only: false,
        cost: None,
        imported: Vec::new(),
        inputs: Default::default(),
    }
}

/// State's resources ordered so that every resource comes before the ones it depends on.
pub fn deletion_order(state: &State) -> Vec<Address> {
    let mut dependents: BTreeMap<&Address, usize> = state.resources.keys().map(|a| (a, 0)).collect();
    for r in state.resources.values() {
        for d in &r.dependencies {
            if let Some(n) = dependents.get_mut(d) {
                *n += 1;
            }
        }
    }
    let mut ready: BTreeSet<&Address> = dependents.iter().filter(|(_, &n)| n == 0).map(|(a, _)| *a).collect();
    let mut out = Vec::new();
    while let Some(a) = ready.pop_first() {
        out.push(a.clone());
        for d in &state.resources[a].dependencies {
            if let Some(n) = dependents.get_mut(d) {
                *n -= 1;
                if *n == 0 {
                    ready.insert(d);
                }
            }
        }
    }
    // A dependency cycle cannot come from a compiled graph; keep whatever is left rather than lose it.
    for a in state.resources.keys() {
        if !out.contains(a) {
            out.push(a.clone());
        }
    }
    out
}

fn top(path: &str) -> &str {
    path.split(['.', '[']).next().unwrap_or(path)
}

/// Every leaf of a new resource's attributes, for showing a create.
fn flatten_all(attrs: &Attrs) -> Vec<AttrChange> {
    let mut out = Vec::new();
    for (k, v) in attrs {
        if !v.is_null() {
            attr_diff(k, None, Some(v), false, &mut out);
        }
    }
    out
}

/// Recurses into objects (so a tag change shows as `tags.team`), compares anything else whole.
pub(super) fn attr_diff(
    path: &str,
    before: Option<&Value>,
    after: Option<&Value>,
    forces: bool,
    out: &mut Vec<AttrChange>,
) {
    match (before, after) {
        (Some(Value::Object(b)), Some(Value::Object(a))) => object_diff(path, b, a, forces, out),
        (None, Some(Value::Object(a))) if !a.is_empty() => object_diff(path, &Map::new(), a, forces, out),
        _ if before == after => {}
        _ => out.push(AttrChange {
            path: path.to_string(),
            before: before.cloned(),
            after: after.cloned(),
            forces_replacement: forces,
        }),
    }
}

fn object_diff(path: &str, b: &Map<String, Value>, a: &Map<String, Value>, forces: bool, out: &mut Vec<AttrChange>) {
    let keys: BTreeSet<&String> = b.keys().chain(a.keys()).collect();
    for k in keys {
        let sub = if k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            format!("{path}.{k}")
        } else {
            format!("{path}[\"{k}\"]")
        };
        attr_diff(&sub, b.get(k), a.get(k), forces, out);
    }
}

/// Whether a value is (or contains) a reference not known until apply.
pub fn is_unknown(v: &Value) -> bool {
    match v {
        Value::String(s) => s == UNKNOWN,
        Value::Array(a) => a.iter().any(is_unknown),
        Value::Object(m) => m.values().any(is_unknown),
        _ => false,
    }
}

#[cfg(test)]
mod tests;

/// The kbp tags an imported resource lacks, as attribute changes for the plan.
fn tags_to_add(state: &State, existing: &ResourceState) -> Vec<AttrChange> {
    let tags = crate::providers::tags::kbp_tags(&state.stack, &existing.address);
    tags.into_iter()
        .map(|(k, v)| AttrChange {
            path: format!("tags[\"{k}\"]"),
            before: None,
            after: Some(Value::String(v)),
            forces_replacement: false,
        })
        .collect()
}

/// The `kbp:address` tag of a keyed resource that an earlier kbp tagged with the address's own spelling
/// (`iam_policy.x["y"]`), rewritten in place to the one every service accepts (`iam_policy.x/y`). Unkeyed
/// addresses are spelt alike in both; kinds without tags have none.
fn address_tag_rewrite(existing: &ResourceState, desired: &crate::graph::Attrs) -> Option<super::AttrChange> {
    let legacy = existing.address_tag == crate::state::AddressTag::Bracketed;
    (legacy && existing.address.key.is_some() && desired.contains_key("tags")).then(|| super::AttrChange {
        path: format!("tags[\"{}\"]", crate::providers::tags::ADDRESS),
        before: Some(Value::String(existing.address.to_string())),
        after: Some(Value::String(crate::providers::tags::address_value(&existing.address))),
        forces_replacement: false,
    })
}

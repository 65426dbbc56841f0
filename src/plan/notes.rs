//! What a plan says besides its changes, read from the refreshed state: what runs behind the control plane, what
//! an upgrade brings (EKS's insights, the add-on versions it moves to), the NodeClaims a NodePool's deletion
//! drains, and, for a `--refresh-only` plan, the cluster's access entries made outside kbp.

use crate::graph::Address;
use crate::providers::Context;
use crate::state::State;

use super::Plan;

/// What a plan (to show, or to apply) says besides its changes, read from the refreshed `state`: what runs behind
/// the control plane, what an upgrade brings, and the NodeClaims a NodePool's deletion drains.
pub async fn notes(cx: &Context, p: &Plan, state: &State) -> Vec<String> {
    let mut notes = super::skew::warnings(state);
    notes.extend(upgrade_notes(cx, p, state).await);
    notes.extend(node_pool_notes(cx, p, state).await);
    notes
}

/// What a plan that upgrades the cluster should show besides its changes: EKS's upgrade insights for the target
/// version, and the version each unpinned add-on moves to (EKS's default for the target). Empty for any other
/// plan; read from EKS, so only when the cluster's version changes.
async fn upgrade_notes(cx: &Context, p: &Plan, state: &State) -> Vec<String> {
    use crate::graph::kinds;
    use serde_json::Value;
    let text = |v: &Option<Value>| v.as_ref().and_then(Value::as_str).map(str::to_string);
    let Some((cluster, target)) = p.changes.iter().filter(|c| c.kind == kinds::EKS_CLUSTER).find_map(|c| {
        let version = c.attributes.iter().find(|a| a.path == "version" && a.before.is_some())?;
        Some((c.id.clone()?, text(&version.after)?))
    }) else {
        return Vec::new();
    };
    let mut notes = crate::providers::eks::insights::upgrade_lines(cx, &cluster, &target).await;
    notes.extend(super::skew::rolled_by_karpenter(p, &target));
    for c in p.changes.iter().filter(|c| c.kind == kinds::EKS_ADDON) {
        let moves = c.attributes.iter().any(|a| a.path == "kubernetes_version" && a.before.is_some());
        let desired = p.resources.iter().find(|r| r.address == c.address);
        let unpinned = desired.is_some_and(|r| r.attrs.get("addon_version").is_none_or(Value::is_null));
        let Some(name) = desired.and_then(|r| r.attrs.get("addon_name")).and_then(Value::as_str) else { continue };
        if !(moves && unpinned) {
            continue;
        }
        let installed = state.get(&c.address).and_then(|s| s.outputs.get("version")).and_then(Value::as_str);
        let line = match crate::providers::eks::addon::default_version(cx, name, &target).await {
            Ok(v) if Some(v.as_str()) == installed => {
                format!("add-on {name} stays at {v}, EKS's default for Kubernetes {target}")
            }
            Ok(v) => format!(
                "add-on {name} moves from {} to {v}, EKS's default for Kubernetes {target}",
                installed.unwrap_or("its version")
            ),
            Err(e) => format!(
                "add-on {name} moves to EKS's default for Kubernetes {target}, which kbp could not read now: {}",
                e.message
            ),
        };
        notes.push(line);
    }
    notes
}

/// What a plan that deletes or replaces a NodePool should say: Karpenter drains and terminates its NodeClaims,
/// which a renamed pool does not keep. One line per pool that has any; a cluster kbp cannot reach says so.
async fn node_pool_notes(cx: &Context, p: &Plan, state: &State) -> Vec<String> {
    use crate::providers::kubernetes::node_claims;
    let created: Vec<String> = p
        .changes
        .iter()
        .filter(|c| c.kind == crate::graph::kinds::NODE_POOL && c.action == super::Action::Create)
        .map(|c| c.address.to_string())
        .collect();
    let mut notes = Vec::new();
    for c in p.changes.iter().filter(|c| c.kind == crate::graph::kinds::NODE_POOL) {
        if !(c.action == super::Action::Delete || c.action.replaces()) {
            continue;
        }
        let Some(entry) = state.get(&c.address) else { continue };
        let Some(pool) = node_claims::pool_name(&entry.attributes) else { continue };
        let renamed = match created.as_slice() {
            [] => String::new(),
            new => {
                format!(" (renamed to {}? a NodePool's name is its identity: the new one starts empty)", new.join(", "))
            }
        };
        match node_claims::of_pool(cx, &entry.attributes, pool).await {
            Ok(claims) if claims.is_empty() => {}
            Ok(claims) => notes.push(format!(
                "{}: Karpenter drains and terminates the {} NodeClaims of NodePool `{pool}` when it goes{renamed}: {}\n  \
                 hint: keep the pool's name to keep its nodes; otherwise expect their pods to be rescheduled, within \
                 their disruption budgets",
                c.address,
                claims.len(),
                claims.join(", ")
            )),
            Err(e) => notes.push(format!(
                "{}: deleting NodePool `{pool}` drains its NodeClaims, which kbp could not list ({})",
                c.address, e.message
            )),
        }
    }
    notes
}

/// The cluster's access entries made outside kbp: every principal EKS lists that no state entry holds, but the
/// node group's role, whose entry EKS makes itself. A `--refresh-only` plan (`kbp drift`) reports them as drift
/// of their own kind; a cluster kbp has not made yet has none.
pub async fn unmanaged_access_entries(cx: &Context, state: &State) -> anyhow::Result<Vec<super::drift::Drift>> {
    use crate::graph::kinds;
    use serde_json::Value;
    let ready = || state.resources.values().filter(|r| r.status == crate::state::Status::Ready);
    let Some(cluster) = ready().filter(|r| r.kind == kinds::EKS_CLUSTER).find_map(|r| r.id.clone()) else {
        return Ok(Vec::new());
    };
    let text =
        |r: &crate::state::ResourceState, key: &str| r.attributes.get(key).and_then(Value::as_str).map(str::to_string);
    let held: Vec<String> = ready()
        .filter(|r| r.kind == kinds::EKS_ACCESS_ENTRY)
        .filter_map(|r| text(r, "principal_arn"))
        .chain(ready().filter(|r| r.kind == kinds::EKS_NODE_GROUP).filter_map(|r| text(r, "node_role_arn")))
        .map(|a| crate::providers::eks::access_entry::role_named(&a))
        .collect();
    let listed = crate::providers::eks::access_entry::principals(cx, &cluster)
        .await
        .map_err(|e| anyhow::anyhow!("listing the access entries of cluster {cluster}: {e}"))?;
    Ok(listed
        .into_iter()
        .filter(|p| !held.contains(p))
        .map(|p| super::drift::Drift {
            address: Address::keyed("eks_access_entry", "unmanaged", &p),
            kind: kinds::EKS_ACCESS_ENTRY.to_string(),
            id: Some(format!("{cluster}:{p}")),
            drifted: super::drift::Drifted::Unmanaged,
            attributes: Vec::new(),
        })
        .collect())
}

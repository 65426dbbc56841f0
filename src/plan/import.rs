//! Import: taking a resource that already exists in AWS under management at an address of the blueprint
//! (`kbp import ADDRESS ID`, and the blueprint's `[[import]]` blocks during plan and apply). The resource is read
//! by its ID through its kind's [`Provider::read`], which needs none of kbp's tags, and becomes a state entry
//! marked `imported`; the diff then plans the update that adds kbp's `kbp:stack`/`kbp:address` tags, with
//! whatever else differs from the blueprint. Until that apply the entry is kbp's like any other: refresh reads it
//! by its ID, and destroy deletes it from state.
//!
//! An import is refused, before anything is written, for an address the blueprint does not have, a kind that
//! cannot be imported (lookups, in-cluster objects), an address state already holds, an ID no resource of the
//! kind has (the hint says what ID the kind takes), and a resource the next apply would replace (a subnet of
//! another VPC, a role of another name): importing it only to delete it is never what was meant.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::Value;

use super::diff::is_unknown;
use super::{diff, Change};
use crate::graph::{value, Address, Attrs, Resource, ResourceGraph};
use crate::providers::{tags, Context, Desired, Provider, Registry};
use crate::state::{ResourceState, State, Status};

/// Why an import was refused: what, and what to do.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}\n  hint: {hint}")]
pub struct Refused {
    /// What was refused, naming the address or ID.
    pub message: String,
    /// What to do about it.
    pub hint: String,
}

fn refused(message: String, hint: String) -> Refused {
    Refused { message, hint }
}

/// A resource read for import: its state entry (not yet written) and what the next apply changes on it.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The state entry, read from AWS, that applying the plan writes.
    pub resource: ResourceState,
    /// What the next apply changes on it to match the blueprint; `None` when it matches.
    pub change: Option<Change>,
    /// The lookups it uses (the subnets `[vpc] id` names, …) that state did not hold yet, checked as apply
    /// checks them and written with it: without their IDs, its subnets would be unknown and the plan would
    /// replace it for them.
    pub uses: Vec<ResourceState>,
}

/// The resource of `graph` at `address` and its kind's provider, if it may be imported into `state`.
pub fn target<'g>(
    graph: &'g ResourceGraph,
    state: &State,
    registry: &Registry,
    address: &Address,
) -> Result<(&'g Resource, Arc<dyn Provider>), Refused> {
    let Some(r) = graph.get(address) else { return Err(not_in_blueprint(graph, address)) };
    let provider = registry.get(&r.kind).filter(|p| p.import_id().is_some()).ok_or_else(|| {
        refused(
            format!("{address} ({}) cannot be imported", r.kind),
            "kbp imports the AWS resources it creates; what it only looks up (the network `[vpc] id` names, the \
             caller identity) needs no import, and objects inside the cluster are applied by kbp itself"
                .to_string(),
        )
    })?;
    if let Some(existing) = state.get(address) {
        let id = existing.id.as_deref().unwrap_or("an interrupted create");
        return Err(refused(
            format!("{address} is already in state ({id})"),
            format!("kbp already manages it; to import another resource there, `kbp state rm {address}` first"),
        ));
    }
    Ok((r, provider))
}

/// Reads `id` for the resource `r` through `provider` and checks it may be imported into `state`.
pub async fn read(
    cx: &Context,
    registry: &Registry,
    graph: &ResourceGraph,
    state: &State,
    (r, provider): (&Resource, &dyn Provider),
    id: &str,
) -> Result<Imported, Refused> {
    let form = provider.import_id().unwrap_or("its ID");
    let takes = format!("{} ({}) is imported by {form}", r.address, r.kind);
    if let Some(other) = state.resources.values().find(|s| s.kind == r.kind && s.id.as_deref() == Some(id)) {
        return Err(refused(
            format!("{} `{id}` is already in state at {}", r.kind, other.address),
            format!("one resource is managed at one address; `kbp state mv {} {}` moves it", other.address, r.address),
        ));
    }
    let uses = lookups_used(cx, registry, graph, state, r).await?;
    let mut with = state.clone();
    for u in &uses {
        with.resources.insert(u.address.clone(), u.clone());
    }
    let state = &with;
    let desired = known_attrs(r, state);
    let observed = match provider.read(cx, id, &desired).await {
        Ok(Some(o)) => o,
        Ok(None) => {
            return Err(refused(
                format!("there is no {} `{id}` in {} (account as configured)", r.kind, cx.region),
                format!("{takes}; check the ID, the region and the AWS profile"),
            ))
        }
        Err(e) => {
            let more = e.hint.as_deref().map(|h| format!(" ({h})")).unwrap_or_default();
            return Err(refused(
                format!("reading {} `{id}` for {}: {e}", r.kind, r.address),
                format!("{takes}, perhaps not `{id}`{more}"),
            ));
        }
    };
    let resource = entry(r, id, desired, observed.attrs, observed.outputs);
    let mut with = state.clone();
    with.resources.insert(r.address.clone(), resource.clone());
    let change = diff(graph, &with, registry, &[]).change(&r.address).cloned();
    if let Some(c) = change.as_ref().filter(|c| c.action.replaces()) {
        let known: Vec<String> = c
            .attributes
            .iter()
            .filter(|a| a.forces_replacement && !a.after.as_ref().is_some_and(is_unknown))
            .map(|a| format!("{} is {} here, {} in the blueprint", a.path, show(&a.before), show(&a.after)))
            .collect();
        if !known.is_empty() {
            return Err(refused(
                format!("{} `{id}` is not the resource {} describes: {}", r.kind, r.address, known.join("; ")),
                format!("the next apply would replace it; import the right one ({takes}), or change the blueprint"),
            ));
        }
    }
    Ok(Imported { resource, change, uses })
}

/// The blueprint's `[[import]]` blocks (`to`, `id`) during plan and apply: each whose address `state` does not
/// hold yet is read and added to `state` with the lookups it uses; a block whose address state holds is done.
/// Returns the entries added, which the plan carries so that apply writes them before its walk.
pub async fn blocks(
    cx: &Context,
    registry: &Registry,
    graph: &ResourceGraph,
    state: &mut State,
    blocks: &[(Address, String)],
) -> Result<Vec<ResourceState>, Refused> {
    let mut added = Vec::new();
    for (to, id) in blocks {
        if state.get(to).is_some() {
            continue;
        }
        let (r, provider) = target(graph, state, registry, to)?;
        let imported = read(cx, registry, graph, state, (r, provider.as_ref()), id)
            .await
            .map_err(|e| Refused { message: format!("[[import]] of `{id}` to {to}: {}", e.message), hint: e.hint })?;
        for entry in imported.uses.into_iter().chain([imported.resource]) {
            state.resources.insert(entry.address.clone(), entry.clone());
            added.push(entry);
        }
    }
    Ok(added)
}

/// The lookups `r` depends on, directly or through other lookups, that `state` lacks, each checked by its
/// provider's create (which for a lookup only reads) in dependency order.
async fn lookups_used(
    cx: &Context,
    registry: &Registry,
    graph: &ResourceGraph,
    state: &State,
    r: &Resource,
) -> Result<Vec<ResourceState>, Refused> {
    let is_lookup =
        |a: &Address| graph.get(a).and_then(|d| registry.get(&d.kind)).is_some_and(|p| p.descriptor().lookup);
    let mut needed: BTreeSet<Address> = BTreeSet::new();
    let mut next: Vec<Address> = r.dependencies().into_iter().filter(|a| is_lookup(a)).collect();
    while let Some(a) = next.pop() {
        if needed.insert(a.clone()) {
            if let Some(d) = graph.get(&a) {
                next.extend(d.dependencies().into_iter().filter(|a| is_lookup(a)));
            }
        }
    }
    let mut with = state.clone();
    let mut out = Vec::new();
    for l in graph.in_order().into_iter().filter(|l| needed.contains(&l.address) && state.get(&l.address).is_none()) {
        let Some(provider) = registry.get(&l.kind) else { continue };
        let attrs = known_attrs(l, &with);
        let d = Desired {
            address: &l.address,
            attrs: &attrs,
            kbp_tags: tags::kbp_tags(&cx.stack, &l.address),
            client_token: "",
            replaces: None,
        };
        let applied = provider.create(cx, &d).await.map_err(|e| {
            refused(
                format!("{} uses {}, which is not as the blueprint says: {e}", r.address, l.address),
                e.hint.clone().unwrap_or_else(|| "fix the blueprint's IDs, then import again".to_string()),
            )
        })?;
        let entry = ResourceState {
            address: l.address.clone(),
            kind: l.kind.clone(),
            id: Some(applied.id),
            status: Status::Ready,
            attributes: provider.canonical(attrs),
            outputs: applied.outputs,
            dependencies: l.dependencies().into_iter().collect(),
            imported: false,
            address_tag: crate::state::AddressTag::Path,
        };
        with.resources.insert(l.address.clone(), entry.clone());
        out.push(entry);
    }
    Ok(out)
}

/// The state entry of an imported resource: what the read reports, over the blueprint's known values for what it
/// cannot read back (as refresh keeps the last applied value for those), marked imported when the kind carries
/// tags, so the next apply adds kbp's.
fn entry(r: &Resource, id: &str, desired: Attrs, observed: Attrs, outputs: Attrs) -> ResourceState {
    let imported = desired.contains_key("tags");
    let mut attributes = desired;
    attributes.extend(observed);
    ResourceState {
        address: r.address.clone(),
        kind: r.kind.clone(),
        id: Some(id.to_string()),
        status: Status::Ready,
        attributes,
        outputs,
        dependencies: r.dependencies().into_iter().collect(),
        imported,
        address_tag: crate::state::AddressTag::Path,
    }
}

/// `r`'s attributes with its references resolved from `state`, leaving out what is not known yet.
fn known_attrs(r: &Resource, state: &State) -> Attrs {
    let (resolved, _) = value::resolve(&Value::Object(r.attrs.clone()), &|a, o| state.output(a, o));
    let mut attrs = resolved.as_object().cloned().unwrap_or_default();
    attrs.retain(|_, v| !is_unknown(v));
    attrs
}

fn show(v: &Option<Value>) -> String {
    v.as_ref().map(Value::to_string).unwrap_or_else(|| "absent".to_string())
}

/// "`x` is not an address of the blueprint", with the closest one (as the blueprint's own checks suggest).
fn not_in_blueprint(graph: &ResourceGraph, address: &Address) -> Refused {
    let addresses: Vec<String> = graph.in_order().into_iter().map(|r| r.address.to_string()).collect();
    let hint = match crate::blueprint::rules::closest(&address.to_string(), addresses.iter().map(String::as_str)) {
        Some(a) => format!("did you mean {a}? `kbp graph --format json BLUEPRINT` lists every address"),
        None => "`kbp graph --format json BLUEPRINT` lists every address".to_string(),
    };
    refused(format!("{address} is not an address of the blueprint"), hint)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::providers::read_only::{ReadOnly, Reads};
    use crate::providers::Observed;
    use crate::providers::WithoutState;

    fn graph() -> ResourceGraph {
        let role = Resource::new(Address::new("iam_role", "cluster"), "aws_iam_role", json!({"name": "r", "tags": {}}));
        let lookup = Resource::new(Address::new("vpc", "main"), "aws_caller_identity", json!({}));
        ResourceGraph::from_resources(vec![role, lookup]).unwrap()
    }

    #[test]
    fn an_unknown_address_names_the_closest_one() {
        let s = State::new("t", "us-west-2");
        let e = target(&graph(), &s, &Registry::builtin(), &Address::new("iam_role", "clustr")).err().unwrap();
        assert_eq!(e.message, "iam_role.clustr is not an address of the blueprint");
        assert!(e.hint.contains("did you mean iam_role.cluster"), "{}", e.hint);
    }

    #[test]
    fn a_kind_without_an_import_id_and_an_address_in_state_are_refused() {
        let mut s = State::new("t", "us-west-2");
        let e = target(&graph(), &s, &Registry::builtin(), &Address::new("vpc", "main")).err().unwrap();
        assert!(e.message.contains("(aws_caller_identity) cannot be imported"), "{}", e.message);
        let a = Address::new("iam_role", "cluster");
        assert!(target(&graph(), &s, &Registry::builtin(), &a).is_ok());
        let r = entry(graph().get(&a).unwrap(), "r", Attrs::new(), Attrs::new(), Attrs::new());
        s.resources.insert(a.clone(), r);
        let e = target(&graph(), &s, &Registry::builtin(), &a).err().unwrap();
        assert_eq!(e.message, "iam_role.cluster is already in state (r)");
        assert!(e.hint.contains("kbp state rm iam_role.cluster"));
    }

    /// Knows the roles `r` and `other`, untagged; any other name is not found.
    struct Roles;

    #[async_trait::async_trait]
    impl ReadOnly for Roles {
        fn descriptor(&self) -> crate::providers::Descriptor {
            crate::providers::Descriptor::new("aws_iam_role", WithoutState::Tags, &[])
                .force_new(&["name"])
                .imported_by("its role name")
        }
        async fn read(&self, _: &Context, id: &str, _: &Attrs) -> crate::providers::Result<Option<Observed>> {
            let attrs = json!({"name": id, "tags": {"team": "platform"}}).as_object().unwrap().clone();
            Ok(["r", "other"].contains(&id).then(|| Observed { attrs, outputs: Attrs::new() }))
        }
    }

    #[tokio::test]
    async fn a_read_resource_is_planned_for_kbps_tags_and_a_missing_or_different_one_is_refused() {
        let (g, s) = (graph(), State::new("t", "us-west-2"));
        let mut registry = Registry::default();
        registry.add(Reads(Roles));
        let cx = Context::from_sdk(aws_config::SdkConfig::builder().build(), "t", "us-west-2");
        let r = g.get(&Address::new("iam_role", "cluster")).unwrap();

        let ok = read(&cx, &registry, &g, &s, (r, &Reads(Roles)), "r").await.unwrap();
        assert!(ok.resource.imported && ok.uses.is_empty());
        let c = ok.change.expect("an imported role is updated");
        assert_eq!(c.action, super::super::Action::Update);
        let paths: Vec<&str> = c.attributes.iter().map(|a| a.path.as_str()).collect();
        assert_eq!(paths, ["tags.team", "tags[\"kbp:address\"]", "tags[\"kbp:stack\"]"], "{c:?}");

        let gone = read(&cx, &registry, &g, &s, (r, &Reads(Roles)), "nope").await.unwrap_err();
        assert!(gone.message.starts_with("there is no aws_iam_role `nope`"), "{}", gone.message);
        assert!(gone.hint.contains("is imported by its role name"), "{}", gone.hint);

        let other = read(&cx, &registry, &g, &s, (r, &Reads(Roles)), "other").await.unwrap_err();
        assert!(other.message.contains("name is \"other\" here, \"r\" in the blueprint"), "{}", other.message);
        assert!(other.hint.contains("the next apply would replace it"), "{}", other.hint);
    }

    #[test]
    fn the_entry_keeps_what_aws_reports_over_the_blueprint_and_is_marked_when_the_kind_has_tags() {
        let r = Resource::new(Address::new("k", "a"), "aws_kms_key", json!({"alias": "x", "tags": {}}));
        let obj = |v: Value| v.as_object().unwrap().clone();
        let e =
            entry(&r, "k-1", obj(json!({"alias": "x", "tags": {}})), obj(json!({"tags": {"a": "b"}})), Attrs::new());
        assert_eq!(e.attributes, obj(json!({"alias": "x", "tags": {"a": "b"}})));
        assert!(e.imported && e.status == Status::Ready && e.id.as_deref() == Some("k-1"));
        let untagged = Resource::new(Address::new("p", "a"), "aws_iam_role_policy", json!({"role": "r"}));
        assert!(!entry(&untagged, "r:p", Attrs::new(), Attrs::new(), Attrs::new()).imported);
    }
}

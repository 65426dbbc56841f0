//! One step of the walk: what each operation does to AWS (through its kind's provider) and to state. A create
//! records its intent before it is sent, a replacement that creates first moves the old entry aside, and every
//! step writes what it changed before the walk goes on.

use serde_json::Value;

use super::{Op, Shared, Step, StepError};
use crate::graph::{value, Address};
use crate::providers::create::create_once;
use crate::providers::{tags, Desired};
use crate::state::{ResourceState, StateError, StateHandle, Status};

/// Writes the state entry of `step`'s resource: an intent to create (no ID yet) or what AWS made.
async fn record(
    state: &StateHandle,
    step: &Step,
    id: Option<String>,
    status: Status,
    attributes: crate::graph::Attrs,
    outputs: crate::graph::Attrs,
    dependencies: Vec<Address>,
) -> Result<(), StateError> {
    let entry = ResourceState {
        address: step.address.clone(),
        kind: step.kind.clone(),
        id,
        status,
        attributes,
        outputs,
        dependencies,
        imported: false,
        address_tag: crate::state::AddressTag::Path,
    };
    state.update(|s| s.resources.insert(step.address.clone(), entry)).await.map(drop)
}

/// Moves the state entry at `address` to its deposed address before its successor is created, and returns the
/// state after. An earlier replacement's old object still there is refused: two would be one too many to track.
async fn depose(state: &StateHandle, address: &Address) -> Result<crate::state::State, StepError> {
    let snapshot = state.snapshot();
    let deposed = address.deposed();
    if let Some(old) = snapshot.get(&deposed) {
        return Err(StepError::Engine(format!(
            "{address} cannot be replaced while the object an earlier replacement left ({}) is still in state as {deposed}; \
             run `kbp apply` once more to delete it first",
            old.id.as_deref().unwrap_or("not yet made")
        )));
    }
    let Some(mut entry) = snapshot.get(address).cloned() else { return Ok(snapshot) };
    entry.address = deposed.clone();
    state
        .update(|s| {
            s.resources.remove(address);
            s.resources.insert(deposed.clone(), entry.clone());
        })
        .await?;
    Ok(state.snapshot())
}

/// What update and delete get as `prior`: the attributes last applied, with the outputs under them, so a
/// provider can keep in its outputs what it must know to undo its change (`aws_subnet_tags` remembers there the
/// values it overwrote on a subnet kbp does not own).
fn prior(existing: &ResourceState) -> crate::graph::Attrs {
    let mut prior = existing.outputs.clone();
    prior.extend(existing.attributes.clone());
    prior
}

pub(super) async fn run_step(sh: &Shared, step: &Step) -> Result<Option<String>, StepError> {
    let provider = sh
        .registry
        .get(&step.kind)
        .ok_or_else(|| StepError::Engine(format!("this kbp has no provider for {}", step.kind)))?;
    let cx = &sh.cx;
    match step.op {
        Op::Create | Op::Update => {
            let desired = sh
                .desired
                .get(&step.address)
                .ok_or_else(|| StepError::Engine(format!("{} is not in the plan's resources", step.address)))?;
            let snapshot = sh.state.snapshot();
            let (resolved, missing) =
                value::resolve(&Value::Object(desired.attrs.clone()), &|a, o| snapshot.output(a, o));
            if let Some((a, o)) = missing.first() {
                return Err(StepError::Engine(format!(
                    "{} needs `{o}` of {a}, which state does not have",
                    step.address
                )));
            }
            let attrs = resolved.as_object().cloned().unwrap_or_default();
            let mut kbp_tags = tags::kbp_tags(&cx.stack, &step.address);
            kbp_tags.extend(cx.lifetime_tags.clone());
            // Which stack of this name: the state's lineage, so `--from-tags` and `gc` can tell two apart.
            kbp_tags.insert(tags::STACK_ID.to_string(), snapshot.lineage.clone());
            let dependencies: Vec<Address> = desired.dependencies().into_iter().collect();
            let snapshot = if step.depose { depose(&sh.state, &step.address).await? } else { snapshot };
            let existing = snapshot.get(&step.address).cloned();
            let replaces = snapshot.get(&step.address.deposed()).and_then(|r| r.id.clone());
            let applied = if step.op == Op::Create {
                let token = match existing.as_ref().map(|e| &e.status) {
                    Some(Status::Creating { client_token, .. }) => client_token.clone(),
                    _ => uuid::Uuid::new_v4().to_string(),
                };
                // Intent first: if kbp dies during the call, the next run knows to look for what it made.
                let intent = Status::creating(token.clone());
                record(&sh.state, step, None, intent, attrs.clone(), Default::default(), dependencies.clone()).await?;
                let d = Desired {
                    address: &step.address,
                    attrs: &attrs,
                    kbp_tags,
                    client_token: &token,
                    replaces: replaces.as_deref(),
                };
                let resumed_from = existing.as_ref().and_then(|e| e.status.intent_started());
                create_once(provider.as_ref(), cx, &d, resumed_from).await?
            } else {
                let existing =
                    existing.ok_or_else(|| StepError::Engine(format!("{} is not in state", step.address)))?;
                let id = existing.id.clone().unwrap_or_default();
                let d = Desired { address: &step.address, attrs: &attrs, kbp_tags, client_token: "", replaces: None };
                let mut applied = provider.update(cx, &id, &prior(&existing), &d).await?;
                let mut outputs = existing.outputs.clone();
                outputs.extend(applied.outputs);
                applied.outputs = outputs;
                applied
            };
            let stored = provider.canonical(attrs);
            let id = applied.id.clone();
            record(&sh.state, step, Some(applied.id), Status::Ready, stored, applied.outputs, dependencies).await?;
            Ok(Some(id))
        }
        Op::Delete => {
            let snapshot = sh.state.snapshot();
            let Some(existing) = snapshot.get(&step.address).cloned() else { return Ok(None) };
            let id = match (&existing.id, &existing.status) {
                (Some(id), _) => Some(id.clone()),
                (None, Status::Creating { client_token, .. }) => {
                    let d = Desired {
                        address: &step.address,
                        attrs: &existing.attributes,
                        kbp_tags: tags::kbp_tags(&cx.stack, &step.address),
                        client_token,
                        replaces: None,
                    };
                    provider.find(cx, &d).await?
                }
                (None, Status::Ready) => None,
            };
            if let Some(id) = &id {
                // The old object of a create-before-destroy replacement whose successor stands: hand over first.
                let successor = step.address.deposed_of().and_then(|a| snapshot.get(&a).cloned());
                if successor.is_some_and(|s| s.status == Status::Ready) {
                    provider.hand_over(cx, id, &prior(&existing)).await?;
                }
                provider.delete(cx, id, &prior(&existing)).await?;
            }
            sh.state.update(|s| s.resources.remove(&step.address)).await?;
            Ok(id)
        }
        Op::Forget => {
            sh.state.update(|s| s.resources.remove(&step.address)).await?;
            Ok(None)
        }
    }
}

//! Refresh: read every resource in state from AWS and return the state as it really is. Reads are grouped by
//! kind (one [`Provider::read_many`] per kind, kinds concurrently), so a provider whose API describes many IDs
//! at once refreshes its whole kind in one call. A resource that is gone drops out (the diff will create it
//! again); an interrupted create is looked up by its kbp tags and adopted when found. So is a resource of the
//! blueprint that state does not hold at all but AWS does, tagged with this stack and address (a state file lost
//! or reset, an entry removed with `kbp state rm`), for the kinds a create would otherwise make twice
//! ([`Provider::adoptable_by_tags`]): taking it beats duplicating it. Those kinds are found by tags and constant
//! names alone, so their lookups fail only when AWS does. Refreshing never writes state; the plan
//! carries what was adopted and apply writes it.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::graph::{value, Address, Attrs, Resource, ResourceGraph};
use crate::providers::{tags, Context, Desired, Observed, Provider, ProviderError, Registry};
use crate::state::{ResourceState, State, Status};

/// What a refresh found: state brought up to date with AWS and the cluster, and what changed on the way.
#[derive(Debug, Clone)]
pub struct Refreshed {
    /// State with each resource's attributes as AWS and the cluster report them now.
    pub state: State,
    /// In state but no longer in AWS.
    pub gone: Vec<Address>,
    /// Interrupted creates, and resources state did not hold, found in AWS by their kbp tags and adopted.
    pub adopted: Vec<Address>,
}

impl Refreshed {
    /// State taken as it is, nothing asked of AWS or the cluster (`--refresh=false`).
    pub fn as_recorded(state: &State) -> Refreshed {
        Refreshed { state: state.clone(), gone: Vec::new(), adopted: Vec::new() }
    }
}

enum Outcome {
    Found(Observed),
    Adopted(String, Observed),
    /// Not in state; found by its tags as this ID.
    Untracked(ResourceState),
    Gone,
    StillPending,
}

type Answers = Vec<(Address, Outcome)>;

/// Reads every resource of `state` whose kind has a provider; `graph` supplies the desired attributes needed to
/// look up interrupted creates.
pub async fn refresh(
    cx: Arc<Context>,
    registry: &Registry,
    state: &State,
    graph: Option<&ResourceGraph>,
    parallelism: usize,
) -> Result<Refreshed, (Address, ProviderError)> {
    let permits = Arc::new(Semaphore::new(parallelism.max(1)));
    let mut tasks: JoinSet<Result<Answers, (Address, ProviderError)>> = JoinSet::new();

    let mut by_kind: BTreeMap<&str, Vec<&ResourceState>> = BTreeMap::new();
    for r in state.resources.values() {
        by_kind.entry(r.kind.as_str()).or_default().push(r);
    }
    for (kind, resources) in by_kind {
        let Some(provider) = registry.get(kind) else { continue };
        let (ready, pending): (Vec<&ResourceState>, Vec<&ResourceState>) =
            resources.into_iter().partition(|r| r.status == Status::Ready);
        let ready: Vec<ResourceState> = ready.into_iter().cloned().collect();
        if !ready.is_empty() {
            let (cx, provider, permits) = (cx.clone(), provider.clone(), permits.clone());
            tasks.spawn(async move {
                let _permit = permits.acquire().await.expect("invariant: the semaphore is never closed");
                read_kind(&cx, provider.as_ref(), ready).await
            });
        }
        for r in pending {
            let desired = graph.and_then(|g| g.get(&r.address)).map(|d| resolved_attrs(d, state));
            // An interrupted create-before-destroy replacement: its predecessor still stands, deposed.
            let replaces = state.get(&r.address.deposed()).and_then(|d| d.id.clone());
            let (cx, provider, permits, r) = (cx.clone(), provider.clone(), permits.clone(), r.clone());
            tasks.spawn(async move {
                let _permit = permits.acquire().await.expect("invariant: the semaphore is never closed");
                let outcome = look_for_interrupted_create(&cx, provider.as_ref(), &r, desired, replaces.as_deref())
                    .await
                    .map_err(|e| (r.address.clone(), e))?;
                Ok(vec![(r.address, outcome)])
            });
        }
    }

    for (r, provider) in untracked(graph, state, registry) {
        let attrs = resolved_attrs(r, state);
        let (cx, provider, permits) = (cx.clone(), provider.clone(), permits.clone());
        let (address, kind, dependencies) = (r.address.clone(), r.kind.clone(), r.dependencies());
        tasks.spawn(async move {
            let _permit = permits.acquire().await.expect("invariant: the semaphore is never closed");
            let found = find_and_read(&cx, provider.as_ref(), &address, &attrs, "", None)
                .await
                .map_err(|e| (address.clone(), e))?;
            Ok(found
                .map(|(id, o)| {
                    let dependencies = dependencies.into_iter().collect();
                    let r = ResourceState {
                        address: address.clone(),
                        kind,
                        id: Some(id),
                        status: Status::Ready,
                        attributes: o.attrs,
                        outputs: o.outputs,
                        dependencies,
                        imported: false,
                        address_tag: crate::state::AddressTag::Path,
                    };
                    vec![(address, Outcome::Untracked(r))]
                })
                .unwrap_or_default())
        });
    }

    let mut next = state.clone();
    let mut gone = Vec::new();
    let mut adopted = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        for (address, outcome) in joined.expect("invariant: refresh tasks do not panic")? {
            match outcome {
                Outcome::Found(o) => merge(&mut next, &address, None, o),
                // One AWS object, one address: what another entry of state holds is not this one's.
                Outcome::Adopted(id, _) if held_elsewhere(state, &address, &id) => {}
                Outcome::Adopted(id, o) => {
                    merge(&mut next, &address, Some(id), o);
                    adopted.push(address);
                }
                Outcome::Untracked(r) if r.id.as_deref().is_some_and(|id| held_elsewhere(state, &address, id)) => {}
                Outcome::Untracked(r) => {
                    next.resources.insert(address.clone(), r);
                    adopted.push(address);
                }
                Outcome::Gone => {
                    next.resources.remove(&address);
                    gone.push(address);
                }
                Outcome::StillPending => {}
            }
        }
    }
    gone.sort();
    adopted.sort();
    Ok(Refreshed { state: next, gone, adopted })
}

/// One batched read of every ready resource of one kind.
async fn read_kind(
    cx: &Context,
    provider: &dyn Provider,
    resources: Vec<ResourceState>,
) -> Result<Answers, (Address, ProviderError)> {
    let (with_id, without): (Vec<ResourceState>, Vec<ResourceState>) =
        resources.into_iter().partition(|r| r.id.is_some());
    let items: Vec<(String, Attrs)> =
        with_id.iter().map(|r| (r.id.clone().unwrap_or_default(), r.attributes.clone())).collect();
    let answers = provider.read_many(cx, &items).await.map_err(|e| {
        let first = with_id.first().map(|r| r.address.clone()).unwrap_or_else(|| Address::new("state", "unknown"));
        (first, e)
    })?;
    let mut out: Answers = with_id
        .into_iter()
        .zip(answers)
        .map(|(r, a)| (r.address, a.map(Outcome::Found).unwrap_or(Outcome::Gone)))
        .collect();
    out.extend(without.into_iter().map(|r| (r.address, Outcome::Gone)));
    Ok(out)
}

async fn look_for_interrupted_create(
    cx: &Context,
    provider: &dyn Provider,
    r: &ResourceState,
    desired: Option<Attrs>,
    replaces: Option<&str>,
) -> Result<Outcome, ProviderError> {
    let Status::Creating { client_token, .. } = &r.status else { return Ok(Outcome::StillPending) };
    let attrs = desired.unwrap_or_else(|| r.attributes.clone());
    Ok(match find_and_read(cx, provider, &r.address, &attrs, client_token, replaces).await? {
        Some((id, o)) => Outcome::Adopted(id, o),
        None => Outcome::StillPending,
    })
}

/// The blueprint's resources that state does not hold, of kinds whose provider finds them by their kbp tags.
fn untracked<'a>(
    graph: Option<&'a ResourceGraph>,
    state: &State,
    registry: &Registry,
) -> Vec<(&'a Resource, Arc<dyn Provider>)> {
    let Some(graph) = graph else { return Vec::new() };
    graph
        .in_order()
        .into_iter()
        .filter(|r| state.get(&r.address).is_none())
        .filter_map(|r| registry.get(&r.kind).filter(|p| p.adoptable_by_tags()).map(|p| (r, p)))
        .collect()
}

/// `r`'s attributes with what state knows of its references filled in (the rest stay unknown).
fn resolved_attrs(r: &Resource, state: &State) -> Attrs {
    let (attrs, _) = value::resolve(&serde_json::Value::Object(r.attrs.clone()), &|a, o| state.output(a, o));
    attrs.as_object().cloned().unwrap_or_default()
}

/// What AWS holds under this stack's tags (or unique name) for `address`, waited on when apply will build on it,
/// and read. Interrupted creates and addresses state lacks are both looked up so. For the latter, the kinds are
/// found by their tags and constant names alone, so a failure is AWS's (unreachable, denied) and fails the
/// refresh like any read.
async fn find_and_read(
    cx: &Context,
    provider: &dyn Provider,
    address: &Address,
    attrs: &Attrs,
    client_token: &str,
    replaces: Option<&str>,
) -> Result<Option<(String, Observed)>, ProviderError> {
    let d = Desired { address, attrs, kbp_tags: tags::kbp_tags(&cx.stack, address), client_token, replaces };
    let Some(id) = provider.find(cx, &d).await? else { return Ok(None) };
    if cx.applying {
        provider.wait_ready(cx, address, &id).await?;
    }
    Ok(provider.read(cx, &id, attrs).await?.map(|o| (id, o)))
}

/// Whether an entry of `state` other than `address` holds the object `id`.
fn held_elsewhere(state: &State, address: &Address, id: &str) -> bool {
    state.resources.values().any(|r| &r.address != address && r.id.as_deref() == Some(id))
}

fn merge(state: &mut State, address: &Address, id: Option<String>, o: Observed) {
    let Some(r) = state.resources.get_mut(address) else { return };
    if let Some(id) = id {
        r.id = Some(id);
        r.status = Status::Ready;
    }
    r.attributes.extend(o.attrs);
    r.outputs.extend(o.outputs);
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use async_trait::async_trait;
    use serde_json::json;

    use super::*;
    use crate::providers::read_only::{ReadOnly, Reads};
    use crate::providers::Descriptor;
    use crate::providers::WithoutState;

    /// Knows resources `id-1`…`id-9`; counts how it is asked.
    #[derive(Default)]
    struct Counting {
        batches: AtomicUsize,
        finds: AtomicUsize,
        by_tags: bool,
    }

    #[async_trait]
    impl ReadOnly for Counting {
        fn descriptor(&self) -> Descriptor {
            Descriptor { adoptable_by_tags: self.by_tags, ..Descriptor::new("test_thing", WithoutState::Tags, &[]) }
        }
        async fn read(&self, _: &Context, id: &str, prior: &Attrs) -> Result<Option<Observed>, ProviderError> {
            Ok((id != "id-gone")
                .then(|| Observed { attrs: prior.clone(), outputs: json!({"id": id}).as_object().unwrap().clone() }))
        }
        async fn read_many(
            &self,
            cx: &Context,
            items: &[(String, Attrs)],
        ) -> Result<Vec<Option<Observed>>, ProviderError> {
            self.batches.fetch_add(1, Ordering::SeqCst);
            let mut out = Vec::new();
            for (id, prior) in items {
                out.push(self.read(cx, id, prior).await?);
            }
            Ok(out)
        }
        async fn find(&self, _: &Context, d: &Desired<'_>) -> Result<Option<String>, ProviderError> {
            self.finds.fetch_add(1, Ordering::SeqCst);
            Ok((d.address.name == "interrupted").then(|| "id-found".to_string()))
        }
    }

    fn entry(name: &str, id: Option<&str>, status: Status) -> ResourceState {
        ResourceState {
            address: Address::new("thing", name),
            kind: "test_thing".into(),
            id: id.map(str::to_string),
            status,
            attributes: json!({"zone": "a"}).as_object().unwrap().clone(),
            outputs: Attrs::new(),
            dependencies: vec![],
            imported: false,
            address_tag: crate::state::AddressTag::Path,
        }
    }

    #[tokio::test]
    async fn reads_each_kind_in_one_batch_drops_gone_and_adopts_interrupted_creates() {
        let mut state = State::new("t", "us-west-2");
        for (name, id) in [("a", "id-1"), ("b", "id-2"), ("c", "id-3"), ("lost", "id-gone")] {
            state.resources.insert(Address::new("thing", name), entry(name, Some(id), Status::Ready));
        }
        let creating = || Status::Creating { client_token: "tok".into(), started: None };
        state.resources.insert(Address::new("thing", "interrupted"), entry("interrupted", None, creating()));
        state.resources.insert(Address::new("thing", "never_made"), entry("never_made", None, creating()));

        let (provider, registry, cx) = counting(false);
        let r = refresh(cx, &registry, &state, None, 4).await.unwrap();

        assert_eq!(provider.0.batches.load(Ordering::SeqCst), 1, "one read per kind");
        assert_eq!(provider.0.finds.load(Ordering::SeqCst), 2);
        assert_eq!(r.gone, vec![Address::new("thing", "lost")]);
        assert_eq!(r.adopted, vec![Address::new("thing", "interrupted")]);
        let adopted = r.state.get(&Address::new("thing", "interrupted")).unwrap();
        assert_eq!((adopted.id.as_deref(), &adopted.status), (Some("id-found"), &Status::Ready));
        assert!(matches!(r.state.get(&Address::new("thing", "never_made")).unwrap().status, Status::Creating { .. }));
        assert_eq!(r.state.get(&Address::new("thing", "a")).unwrap().outputs["id"], "id-1");
    }

    /// A registry of one [`Counting`] kind (found by its tags if `by_tags`), the double itself, and a context.
    fn counting(by_tags: bool) -> (Arc<Reads<Counting>>, Registry, Arc<Context>) {
        let provider = Arc::new(Reads(Counting { by_tags, ..Default::default() }));
        let mut registry = Registry::default();
        registry.add_shared(provider.clone());
        (provider, registry, Arc::new(Context::from_sdk(aws_config::SdkConfig::builder().build(), "t", "us-west-2")))
    }

    /// A graph of `thing.interrupted` (AWS has it, tagged), `thing.fresh` (AWS has nothing) and `thing.a`.
    fn graph() -> ResourceGraph {
        let thing = |name| Resource::new(Address::new("thing", name), "test_thing", json!({"zone": "a"}));
        ResourceGraph::from_resources(vec![thing("interrupted"), thing("fresh"), thing("a")]).unwrap()
    }

    #[tokio::test]
    async fn what_state_lacks_but_aws_holds_under_the_stacks_tags_is_adopted() {
        let mut state = State::new("t", "us-west-2");
        state.resources.insert(Address::new("thing", "a"), entry("a", Some("id-1"), Status::Ready));
        let (provider, registry, cx) = counting(true);
        let r = refresh(cx, &registry, &state, Some(&graph()), 4).await.unwrap();

        assert_eq!(provider.0.finds.load(Ordering::SeqCst), 2, "one lookup per address state lacks, none for `a`");
        assert_eq!(r.adopted, vec![Address::new("thing", "interrupted")]);
        let adopted = r.state.get(&Address::new("thing", "interrupted")).unwrap();
        assert_eq!((adopted.id.as_deref(), &adopted.status), (Some("id-found"), &Status::Ready));
        assert_eq!(adopted.outputs["id"], "id-found");
        assert!(r.state.get(&Address::new("thing", "fresh")).is_none(), "nothing found: left to create");
    }

    #[tokio::test]
    async fn kinds_found_by_unique_name_are_not_looked_up_before_their_create() {
        let state = State::new("t", "us-west-2");
        let (provider, registry, cx) = counting(false);
        let r = refresh(cx, &registry, &state, Some(&graph()), 4).await.unwrap();
        assert_eq!(provider.0.finds.load(Ordering::SeqCst), 0);
        assert!(r.adopted.is_empty() && r.state.resources.is_empty());
    }
}

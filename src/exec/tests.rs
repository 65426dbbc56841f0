//! The walk against an in-memory provider: order, concurrency, failure isolation and state after each step.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::*;
use crate::graph::{value, Attrs, ResourceGraph};
use crate::plan::diff;
use crate::providers::{Applied, Descriptor, Desired, Observed, Provider, Typical, WithoutState};
use crate::state::{Backend, LocalBackend, ResourceState, State, Status};

#[derive(Default)]
struct Log {
    calls: Vec<String>,
    running: usize,
    max_running: usize,
}

struct Memory {
    log: Arc<Mutex<Log>>,
    fail: Option<&'static str>,
    kind: &'static str,
    /// Typical seconds of each operation, for the walk's ordering (the test calls themselves take 20 ms).
    takes: u32,
}

impl Memory {
    async fn call(&self, what: String) -> Result<(), ProviderError> {
        {
            let mut l = self.log.lock().unwrap();
            l.running += 1;
            l.max_running = l.max_running.max(l.running);
            l.calls.push(what.clone());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        self.log.lock().unwrap().running -= 1;
        if self.fail.is_some_and(|f| what.ends_with(f)) {
            return Err(ProviderError::new("test:Create", "Boom", "it failed").with_hint("do something"));
        }
        Ok(())
    }
}

#[async_trait]
impl Provider for Memory {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(self.kind, WithoutState::Tags, &[]).force_new(&["zone"]).takes(Typical {
            create: self.takes,
            update: self.takes,
            delete: self.takes,
        })
    }

    async fn read(&self, _: &Context, _: &str, prior: &Attrs) -> Result<Option<Observed>, ProviderError> {
        Ok(Some(Observed { attrs: prior.clone(), outputs: Attrs::new() }))
    }
    async fn create(&self, _: &Context, d: &Desired<'_>) -> Result<Applied, ProviderError> {
        assert!(!d.client_token.is_empty());
        self.call(format!("create {}", d.address)).await?;
        let id = format!("id-{}", d.address.name);
        Ok(Applied { id: id.clone(), outputs: json!({"id": id}).as_object().unwrap().clone() })
    }
    async fn update(&self, _: &Context, id: &str, _: &Attrs, d: &Desired<'_>) -> Result<Applied, ProviderError> {
        self.call(format!("update {}", d.address)).await?;
        Ok(Applied { id: id.to_string(), outputs: Attrs::new() })
    }
    async fn delete(&self, _: &Context, id: &str, _: &Attrs) -> Result<(), ProviderError> {
        self.call(format!("delete {id}")).await
    }
}

fn thing(name: &str, deps: &[&str]) -> Resource {
    let refs: Vec<Value> = deps.iter().map(|d| value::reference(&Address::new("thing", d), "id")).collect();
    Resource::new(Address::new("thing", name), "test_thing", json!({ "zone": "a", "needs": refs }))
}

struct Harness {
    log: Arc<Mutex<Log>>,
    registry: Registry,
    cx: Arc<Context>,
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
}

impl Harness {
    /// A walk against this harness's providers, writing `state`, with no interrupt and no sweep.
    fn walk(&self, state: Arc<StateHandle>, parallelism: usize, events: UnboundedSender<Event>) -> Walk<'_> {
        Walk {
            cx: self.cx.clone(),
            registry: &self.registry,
            state,
            parallelism,
            events,
            interrupt: Default::default(),
            sweep: None,
        }
    }
}

fn harness(fail: Option<&'static str>) -> Harness {
    let log = Arc::new(Mutex::new(Log::default()));
    let mut registry = Registry::default();
    registry.add(Memory { log: log.clone(), fail, kind: "test_thing", takes: 1 });
    registry.add(Memory { log: log.clone(), fail, kind: "test_slow", takes: 600 });
    registry.add(Memory { log: log.clone(), fail, kind: "test_eks", takes: 1 });
    let sdk = aws_config::SdkConfig::builder().build();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    Harness { log, registry, cx: Arc::new(Context::from_sdk(sdk, "t", "us-west-2")), _dir: dir, path }
}

async fn apply(h: &Harness, graph: &ResourceGraph, state: State, parallelism: usize) -> (Outcome, Vec<Event>, State) {
    let plan = diff(graph, &state, &h.registry, &[]);
    let handle = Arc::new(StateHandle::new(Box::new(LocalBackend::new(&h.path)), state));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let outcome = walk(&plan, h.walk(handle.clone(), parallelism, tx)).await;
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    (outcome, events, handle.snapshot())
}

/// A resource of the kind whose operations typically take ten minutes (an EKS cluster, say).
fn slow(name: &str, deps: &[&str]) -> Resource {
    let refs: Vec<Value> = deps.iter().map(|d| value::reference(&Address::new("thing", d), "id")).collect();
    Resource::new(Address::new("slow", name), "test_slow", json!({ "zone": "a", "needs": refs }))
}

/// a ← b ← d, a ← c ← d (diamond), plus an independent e.
fn diamond() -> ResourceGraph {
    ResourceGraph::from_resources(vec![
        thing("a", &[]),
        thing("b", &["a"]),
        thing("c", &["a"]),
        thing("d", &["b", "c"]),
        thing("e", &[]),
    ])
    .unwrap()
}

#[tokio::test]
async fn creates_in_dependency_order_concurrently_and_persists_state() {
    let h = harness(None);
    let (outcome, _, state) = apply(&h, &diamond(), State::new("t", "us-west-2"), 10).await;
    assert!(outcome.ok());
    assert_eq!(outcome.done, 5);
    let calls = h.log.lock().unwrap().calls.clone();
    let pos = |n: &str| calls.iter().position(|c| c == &format!("create thing.{n}")).unwrap();
    assert!(pos("a") < pos("b") && pos("a") < pos("c") && pos("b") < pos("d") && pos("c") < pos("d"));
    assert!(h.log.lock().unwrap().max_running >= 2, "independent resources run at once");
    // d's reference to b was resolved to b's id before d was created.
    let d = state.get(&Address::new("thing", "d")).unwrap();
    assert_eq!(d.attributes["needs"], json!(["id-b", "id-c"]));
    let on_disk = LocalBackend::new(&h.path).load().await.unwrap().unwrap();
    assert_eq!(on_disk.resources.len(), 5);
    // Intent and result of each create are two writes.
    assert_eq!(on_disk.serial, 10);
}

#[tokio::test]
async fn parallelism_one_runs_one_at_a_time() {
    let h = harness(None);
    let (outcome, _, _) = apply(&h, &diamond(), State::new("t", "us-west-2"), 1).await;
    assert!(outcome.ok());
    assert_eq!(h.log.lock().unwrap().max_running, 1);
}

#[tokio::test]
async fn a_failure_skips_only_its_dependents() {
    let h = harness(Some("thing.b"));
    let (outcome, events, state) = apply(&h, &diamond(), State::new("t", "us-west-2"), 10).await;
    assert_eq!(outcome.failed.len(), 1);
    assert_eq!(outcome.skipped, vec![Address::new("thing", "d")]);
    for ok in ["a", "c", "e"] {
        assert_eq!(state.get(&Address::new("thing", ok)).unwrap().status, Status::Ready);
    }
    // The failed create stays recorded as an intent, so the next run looks for it before creating again.
    assert!(matches!(state.get(&Address::new("thing", "b")).unwrap().status, Status::Creating { .. }));
    assert!(state.get(&Address::new("thing", "d")).is_none());
    assert!(events.iter().any(|e| matches!(e, Event::Failed { hint: Some(h), .. } if h == "do something")));
}

#[tokio::test]
async fn second_apply_changes_nothing_and_replace_deletes_before_creating() {
    let h = harness(None);
    let (_, _, state) = apply(&h, &diamond(), State::new("t", "us-west-2"), 10).await;
    let plan = diff(&diamond(), &state, &h.registry, &[]);
    assert!(plan.changes.is_empty(), "{:#?}", plan.changes);

    let mut moved = thing("a", &[]);
    moved.attrs.insert("zone".into(), json!("b"));
    let g = ResourceGraph::from_resources(vec![
        moved,
        thing("b", &["a"]),
        thing("c", &["a"]),
        thing("d", &["b", "c"]),
        thing("e", &[]),
    ])
    .unwrap();
    let plan = diff(&g, &state, &h.registry, &[]);
    assert_eq!(plan.change(&Address::new("thing", "a")).unwrap().action, Action::Replace);
    // b and c reference a's id, which will be new: they are updated (needs is not force-new), after a.
    assert_eq!(plan.change(&Address::new("thing", "b")).unwrap().action, Action::Update);
    let (outcome, events, _) = apply(&h, &g, state, 10).await;
    assert!(outcome.ok(), "{outcome:?}");
    let order: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Finished { address, op, .. } => Some(format!("{op:?} {address}")),
            _ => None,
        })
        .collect();
    let pos = |s: &str| order.iter().position(|x| x == s).unwrap();
    assert!(pos("Delete thing.a") < pos("Create thing.a"));
    assert!(pos("Create thing.a") < pos("Update thing.b"));
}

#[tokio::test]
async fn destroy_deletes_dependents_first() {
    let h = harness(None);
    let g = diamond();
    let (_, _, state) = apply(&h, &g, State::new("t", "us-west-2"), 10).await;
    let plan = crate::plan::diff_destroy(&g, &state, &h.registry);
    let handle = Arc::new(StateHandle::new(Box::new(LocalBackend::new(&h.path)), state));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let outcome = walk(&plan, h.walk(handle.clone(), 10, tx)).await;
    assert!(outcome.ok());
    assert!(handle.snapshot().resources.is_empty());
    let mut order = Vec::new();
    while let Ok(Event::Finished { address, .. } | Event::Started { address, .. }) = rx.try_recv() {
        order.push(address.name.clone());
    }
    let last = |n: &str| order.iter().rposition(|x| x == n).unwrap();
    let first = |n: &str| order.iter().position(|x| x == n).unwrap();
    assert!(last("d") < first("b") || last("d") < first("c"));
    assert!(last("b") < first("a") && last("c") < first("a"));
}

#[tokio::test]
async fn an_interrupt_stops_new_operations_and_keeps_what_finished() {
    let h = harness(None);
    let plan = diff(&diamond(), &State::new("t", "us-west-2"), &h.registry, &[]);
    let handle = Arc::new(StateHandle::new(Box::new(LocalBackend::new(&h.path)), State::new("t", "us-west-2")));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let interrupt: Interrupt = Default::default();
    let flag = interrupt.clone();
    // Interrupt while the first operation runs (each takes 20 ms): it finishes, nothing else starts.
    let watcher = tokio::spawn(async move {
        while let Some(e) = rx.recv().await {
            if matches!(e, Event::Started { .. }) {
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
    });
    let outcome = walk(&plan, Walk { interrupt, ..h.walk(handle.clone(), 1, tx) }).await;
    watcher.await.unwrap();
    assert!(!outcome.ok());
    assert_eq!(outcome.done, 1);
    assert_eq!(outcome.not_started, 4);
    assert_eq!(handle.snapshot().resources.len(), 1);
}

/// a, b and c are ready at once, one at a time: b first (a ten-minute operation waits on it), then a and c in
/// address order (one call each after them). Address order alone would have run a first, delaying the slow one.
fn chain_behind_b() -> ResourceGraph {
    ResourceGraph::from_resources(vec![thing("a", &[]), thing("b", &[]), thing("c", &[]), slow("s", &["b"])]).unwrap()
}

#[tokio::test]
async fn the_operation_with_the_longest_path_after_it_starts_first() {
    let h = harness(None);
    let (outcome, _, state) = apply(&h, &chain_behind_b(), State::new("t", "us-west-2"), 1).await;
    assert!(outcome.ok(), "{outcome:?}");
    let calls = h.log.lock().unwrap().calls.clone();
    assert_eq!(calls, ["create thing.b", "create slow.s", "create thing.a", "create thing.c"]);

    // Destroy walks the reverse edges by the same rule: the slow delete before a and c (b waits for it), then
    // the three one-call deletes in address order.
    h.log.lock().unwrap().calls.clear();
    let plan = crate::plan::diff_destroy(&chain_behind_b(), &state, &h.registry);
    let handle = Arc::new(StateHandle::new(Box::new(LocalBackend::new(&h.path)), state));
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let outcome = walk(&plan, h.walk(handle, 1, tx)).await;
    assert!(outcome.ok(), "{outcome:?}");
    let calls = h.log.lock().unwrap().calls.clone();
    assert_eq!(calls, ["delete id-s", "delete id-a", "delete id-b", "delete id-c"]);
}

#[tokio::test]
async fn with_room_for_all_the_ready_operations_the_order_does_not_hold_any_back() {
    let h = harness(None);
    let (outcome, _, _) = apply(&h, &chain_behind_b(), State::new("t", "us-west-2"), 10).await;
    assert!(outcome.ok(), "{outcome:?}");
    let l = h.log.lock().unwrap();
    assert_eq!(l.max_running, 3, "a, b and c run together: {:?}", l.calls);
    assert_eq!(l.calls.last().map(String::as_str), Some("create slow.s"));
}

#[test]
fn remaining_path_adds_the_typical_durations_along_the_longest_chain() {
    let h = harness(None);
    let g = ResourceGraph::from_resources(vec![
        thing("a", &[]),
        thing("b", &["a"]),
        slow("s", &["a"]),
        thing("c", &["b"]),
        thing("e", &[]),
    ])
    .unwrap();
    let plan = diff(&g, &State::new("t", "us-west-2"), &h.registry, &[]);
    let ops = operations(&plan, &State::new("t", "us-west-2"));
    let remaining = remaining_path(&ops, &h.registry);
    let of = |kind: &str, name: &str| {
        let ix = ops.node_indices().find(|&ix| ops[ix].address == Address::new(kind, name)).unwrap();
        remaining[ix.index()]
    };
    assert_eq!(
        [of("thing", "a"), of("thing", "b"), of("slow", "s"), of("thing", "c"), of("thing", "e")],
        [601, 2, 600, 1, 1]
    );
}

/// A teardown's shape: `slow.k` stands for an object in the cluster (discovery runs after it), `thing.subnet`
/// for what found resources use (held back by discovery), `eks.e` for the cluster's chain (held by nothing).
fn teardown_graph() -> ResourceGraph {
    let eks = Resource::new(Address::new("eks", "e"), "test_eks", json!({ "zone": "a" }));
    ResourceGraph::from_resources(vec![thing("subnet", &[]), slow("k", &["subnet"]), eks]).unwrap()
}

fn found_instance() -> ResourceState {
    ResourceState {
        address: Address::new("found", "instance"),
        kind: "test_thing".into(),
        id: Some("id-instance".into()),
        status: Status::Ready,
        attributes: Attrs::new(),
        outputs: Attrs::new(),
        dependencies: vec![Address::new("thing", "subnet")],
        imported: false,
        address_tag: crate::state::AddressTag::Path,
    }
}

async fn destroy_with_sweep(h: &Harness, fails: bool) -> (Outcome, Vec<Event>, State) {
    let (_, _, state) = apply(h, &teardown_graph(), State::new("t", "us-west-2"), 10).await;
    h.log.lock().unwrap().calls.clear();
    let plan = crate::plan::diff_destroy(&teardown_graph(), &state, &h.registry);
    let handle = Arc::new(StateHandle::new(Box::new(LocalBackend::new(&h.path)), state));
    let (log, state) = (h.log.clone(), handle.clone());
    let discover = async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        log.lock().unwrap().calls.push("discovered".into());
        if fails {
            return Err(ProviderError::new("ec2:DescribeInstances", "Boom", "no"));
        }
        state.update(|s| s.resources.insert(found_instance().address.clone(), found_instance())).await.unwrap();
        Ok(vec![found_instance().address])
    };
    let sweep = Sweep { before: |k| k == "test_slow", gated: |k| k == "test_thing", discover: Box::pin(discover) };
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let outcome = walk(&plan, Walk { sweep: Some(sweep), ..h.walk(handle.clone(), 10, tx) }).await;
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    (outcome, events, handle.snapshot())
}

#[tokio::test]
async fn a_sweep_runs_after_its_before_kinds_holds_back_only_the_gated_ones_and_its_finds_join_the_walk() {
    let h = harness(None);
    let (outcome, _, state) = destroy_with_sweep(&h, false).await;
    assert!(outcome.ok(), "{outcome:?}");
    assert_eq!(outcome.done, 4, "three resources of state and the one found");
    assert!(state.resources.is_empty(), "{:?}", state.resources.keys());
    let calls = h.log.lock().unwrap().calls.clone();
    let pos = |c: &str| calls.iter().position(|x| x == c).unwrap_or_else(|| panic!("{c} not in {calls:?}"));
    assert!(pos("delete id-k") < pos("discovered"), "discovery after the in-cluster delete: {calls:?}");
    assert!(pos("delete id-e") < pos("discovered"), "the ungated delete did not wait for discovery: {calls:?}");
    assert!(pos("discovered") < pos("delete id-instance"), "{calls:?}");
    assert!(pos("delete id-instance") < pos("delete id-subnet"), "the found instance before its subnet: {calls:?}");
}

#[tokio::test]
async fn a_failed_sweep_skips_what_it_held_back_and_nothing_else() {
    let h = harness(None);
    let (outcome, events, state) = destroy_with_sweep(&h, true).await;
    assert_eq!(outcome.failed.iter().map(|(a, _)| a.clone()).collect::<Vec<_>>(), [sweep_address()]);
    assert_eq!(outcome.skipped, [Address::new("thing", "subnet")]);
    assert_eq!(outcome.done, 2);
    assert_eq!(outcome.not_started, 0);
    assert!(state.get(&Address::new("thing", "subnet")).is_some());
    assert!(events.iter().any(|e| matches!(e, Event::Skipped { because, .. } if *because == sweep_address())));
}

/// A node group and CoreDNS: CoreDNS is created once the group exists, but in an upgrade the group's update
/// waits for CoreDNS's (the add-ons before the nodes), and neither edge makes a cycle.
#[tokio::test]
async fn an_existence_edge_orders_creates_and_an_upgrade_edge_orders_updates() {
    let h = harness(None);
    let graph = |size: u32| {
        let mut group = thing("group", &[]).update_after(&Address::new("thing", "dns"));
        let mut dns = thing("dns", &[]).after_created(&Address::new("thing", "group"));
        for r in [&mut group, &mut dns] {
            r.attrs.insert("size".into(), json!(size));
        }
        ResourceGraph::from_resources(vec![group, dns]).unwrap()
    };
    let finished = |events: &[Event]| -> Vec<String> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::Finished { address, op, .. } => Some(format!("{op:?} {address}")),
                _ => None,
            })
            .collect()
    };
    let (outcome, events, state) = apply(&h, &graph(1), State::new("t", "us-west-2"), 10).await;
    assert!(outcome.ok(), "{outcome:?}");
    assert_eq!(finished(&events), ["Create thing.group", "Create thing.dns"]);

    let plan = diff(&graph(2), &state, &h.registry, &[]);
    assert!(plan.changes.iter().all(|c| c.action == Action::Update), "{:#?}", plan.changes);
    let (outcome, events, _) = apply(&h, &graph(2), state, 10).await;
    assert!(outcome.ok(), "{outcome:?}");
    assert_eq!(finished(&events), ["Update thing.dns", "Update thing.group"]);
}

//! Exec: carries out a [`Plan`]. Each change becomes one or two operations (a replace is a delete then a
//! create) in a DAG: creates and updates wait for what they reference, deletes wait for what depends on them.
//! The walk runs every operation as soon as its predecessors are done, up to `parallelism` at once, and when
//! more are ready than that, the one with the longest chain of work after it first (by the kinds' typical
//! durations); a failure skips only what depends on it. State is persisted after every operation, and intent before every create.
//! The events it reports are defined in [`crate::events`], where the providers that report progress reach them too.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::Direction;
use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinSet;

pub use crate::events::{Event, Op};

mod step;
use step::run_step;

use crate::graph::{Address, Resource};
use crate::plan::{Action, Plan};
use crate::providers::{Context, ProviderError, Registry};
use crate::state::{StateError, StateHandle};

/// How a walk ended.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Operations that succeeded.
    pub done: usize,
    /// Operations that failed, each with its error.
    pub failed: Vec<(Address, String)>,
    /// Operations not attempted because something they depend on failed.
    pub skipped: Vec<Address>,
    /// Operations never started because the walk was interrupted.
    pub not_started: usize,
}

impl Outcome {
    /// Whether every operation of the walk succeeded.
    pub fn ok(&self) -> bool {
        self.failed.is_empty() && self.skipped.is_empty() && self.not_started == 0
    }
}

/// Set (by Ctrl-C, say) to stop starting operations; those already running finish and are recorded.
pub type Interrupt = Arc<AtomicBool>;

#[derive(Debug, Clone)]
struct Step {
    address: Address,
    kind: String,
    op: Op,
    /// The [`Sweep`]'s discovery, not an operation on a resource.
    sweep: bool,
    /// A create-before-destroy replacement's create: the old object moves to the deposed address first.
    depose: bool,
}

/// Discovery in the middle of a walk, as a node of it (a teardown's sweep of what the stack owns outside
/// state): it runs once every operation on a kind `before` selects is done, and returns the addresses of the
/// entries it added to state; those join the walk as deletes, ordered by their dependencies, while operations
/// on kinds `gated` selects wait for it. Everything else goes on meanwhile: no barrier between the phases.
pub struct Sweep<'a> {
    /// Whether operations on a kind must finish before the sweep runs (in a teardown: the in-cluster objects).
    pub before: fn(&str) -> bool,
    /// Whether operations on a kind wait for the sweep (in a teardown: the AWS kinds what it finds may use).
    pub gated: fn(&str) -> bool,
    /// The discovery: adds what it finds to state and returns those addresses.
    pub discover: Pin<Box<dyn Future<Output = Result<Vec<Address>, ProviderError>> + 'a>>,
}

/// The address a failed [`Sweep`] is reported under, and what the operations it held back were skipped for.
pub fn sweep_address() -> Address {
    Address::new("teardown", "discovery")
}

#[derive(Debug, thiserror::Error)]
enum StepError {
    #[error("{0}")]
    Provider(#[from] ProviderError),
    #[error("{0}")]
    State(#[from] StateError),
    #[error("{0}")]
    Engine(String),
}

impl StepError {
    fn hint(&self) -> Option<String> {
        match self {
            StepError::Provider(p) => p.hint.clone(),
            _ => None,
        }
    }
}

/// Everything a step needs, shared by the tasks of one walk.
struct Shared {
    cx: Arc<Context>,
    registry: Registry,
    state: Arc<StateHandle>,
    desired: HashMap<Address, Resource>,
}

/// Builds the operation DAG of `plan`. Public for tests and for the critical-path estimate.
fn operations(plan: &Plan, prior: &crate::state::State) -> DiGraph<Step, ()> {
    let mut g = DiGraph::new();
    let mut up: HashMap<Address, NodeIndex> = HashMap::new();
    let mut down: HashMap<Address, NodeIndex> = HashMap::new();
    // Old objects of create-before-destroy replacements, by their successor's address: deleted last.
    let mut handed: HashMap<Address, NodeIndex> = HashMap::new();
    for c in &plan.changes {
        let step = |op| Step { address: c.address.clone(), kind: c.kind.clone(), op, sweep: false, depose: false };
        match c.action {
            Action::Create => {
                up.insert(c.address.clone(), g.add_node(step(Op::Create)));
            }
            Action::Update => {
                up.insert(c.address.clone(), g.add_node(step(Op::Update)));
            }
            Action::Replace => {
                let d = g.add_node(step(Op::Delete));
                let u = g.add_node(step(Op::Create));
                g.add_edge(d, u, ());
                down.insert(c.address.clone(), d);
                up.insert(c.address.clone(), u);
            }
            Action::ReplaceCreateFirst => {
                let u = g.add_node(Step { depose: true, ..step(Op::Create) });
                let d = g.add_node(Step { address: c.address.deposed(), ..step(Op::Delete) });
                g.add_edge(u, d, ());
                up.insert(c.address.clone(), u);
                handed.insert(c.address.clone(), d);
            }
            Action::Delete => {
                let d = g.add_node(step(Op::Delete));
                down.insert(c.address.clone(), d);
                // The old object of a replacement an earlier apply did not finish.
                if let Some(successor) = c.address.deposed_of() {
                    handed.insert(successor, d);
                }
            }
            Action::Forget => {
                down.insert(c.address.clone(), g.add_node(step(Op::Forget)));
            }
        }
    }
    let desired: HashMap<&Address, &Resource> = plan.resources.iter().map(|r| (&r.address, r)).collect();
    let updated = |g: &DiGraph<Step, ()>, ix: NodeIndex| g[ix].op == Op::Update;
    for (a, &ix) in &up {
        let Some(r) = desired.get(a) else { continue };
        for dep in r.dependencies() {
            let Some(&d) = up.get(&dep) else { continue };
            // What needs its dependency only to exist does not wait for the dependency's update.
            if !(r.needs_existing.contains(&dep) && updated(&g, d)) {
                g.update_edge(d, ix, ());
            }
        }
        if updated(&g, ix) {
            for other in &r.updated_after {
                if let Some(&o) = up.get(other).filter(|&&o| updated(&g, o)) {
                    g.update_edge(o, ix, ());
                }
            }
        }
        // The old object goes once its successor and what depends on it are done.
        for dep in r.dependencies() {
            if let Some(&d) = handed.get(&dep) {
                g.update_edge(ix, d, ());
            }
        }
    }
    for (successor, &d) in &handed {
        if let Some(&u) = up.get(successor) {
            g.update_edge(u, d, ());
        }
    }
    for r in prior.resources.values() {
        let Some(&dependent) = down.get(&r.address) else { continue };
        for dep in &r.dependencies {
            if let Some(&d) = down.get(dep) {
                g.update_edge(dependent, d, ());
            }
        }
    }
    g
}

/// What a walk works with besides its plan.
pub struct Walk<'a> {
    /// Where operations act: the AWS clients, the cluster's access, the stack's tags.
    pub cx: Arc<Context>,
    /// The providers, one per resource kind, that carry out each operation.
    pub registry: &'a Registry,
    /// The state each operation writes its result into.
    pub state: Arc<StateHandle>,
    /// How many operations run at once (at least one).
    pub parallelism: usize,
    /// Where every operation's start, progress and end are reported.
    pub events: UnboundedSender<Event>,
    /// Set by a signal: no operation starts after it, those running finish.
    pub interrupt: Interrupt,
    /// Destroy's discovery, run among the operations ([`Sweep`]); `None` for every other walk.
    pub sweep: Option<Sweep<'a>>,
}

/// Carries out `plan` against AWS as `w` says, reporting on `w.events`.
pub async fn walk(plan: &Plan, w: Walk<'_>) -> Outcome {
    let Walk { cx, registry, state, parallelism, events, interrupt, sweep } = w;
    let mut g = operations(plan, &state.snapshot());
    let mut discover = sweep.map(|s| (add_sweep(&mut g, s.before, s.gated), s.discover));
    cx.report_to(Some(events.clone()));
    let shared = Arc::new(Shared {
        cx,
        registry: registry.clone(),
        state,
        desired: plan.resources.iter().map(|r| (r.address.clone(), r.clone())).collect(),
    });
    let mut waiting: BTreeMap<NodeIndex, usize> =
        g.node_indices().map(|ix| (ix, g.neighbors_directed(ix, Direction::Incoming).count())).collect();
    let mut remaining = remaining_path(&g, registry);
    let mut ready: Vec<NodeIndex> = waiting.iter().filter(|(_, &n)| n == 0).map(|(&ix, _)| ix).collect();
    by_priority(&g, &remaining, &mut ready);
    let mut outcome = Outcome::default();
    let mut tasks: JoinSet<(NodeIndex, Result<Option<String>, StepError>, std::time::Duration)> = JoinSet::new();
    let mut blocked: BTreeMap<NodeIndex, Address> = BTreeMap::new();
    let mut started: HashSet<NodeIndex> = HashSet::new();
    let mut finished: HashSet<NodeIndex> = HashSet::new();
    // The sweep's discovery once its node is ready: polled beside the tasks (it borrows, so it is no task).
    let mut discovering: Option<(NodeIndex, Pin<Box<dyn Future<Output = _> + '_>>)> = None;

    loop {
        while tasks.len() < parallelism.max(1) && !interrupt.load(Ordering::SeqCst) {
            let Some(ix) = ready.pop() else { break };
            started.insert(ix);
            if let Some(cause) = blocked.get(&ix).cloned() {
                let s = &g[ix];
                if !s.sweep {
                    let _ =
                        events.send(Event::Skipped { address: s.address.clone(), op: s.op, because: cause.clone() });
                    outcome.skipped.push(s.address.clone());
                }
                finished.insert(ix);
                release(&g, ix, &mut waiting, &mut ready, Some((&cause, &mut blocked)));
                continue;
            }
            if g[ix].sweep {
                discovering = discover.take().map(|(_, future)| (ix, future));
                continue;
            }
            let step = g[ix].clone();
            let shared = shared.clone();
            let typical = typical_secs(&step, &shared.registry);
            let typical_s = (typical >= 10).then_some(typical);
            let _ = events.send(Event::Started { address: step.address.clone(), op: step.op, typical_s });
            tasks.spawn(async move {
                let start = Instant::now();
                let r = run_step(&shared, &step).await;
                (ix, r, start.elapsed())
            });
        }
        if tasks.is_empty() && discovering.is_none() {
            break;
        }
        let joined = tokio::select! {
            Some(joined) = tasks.join_next(), if !tasks.is_empty() => joined,
            found = async { discovering.as_mut().expect("invariant: polled only while discovering").1.as_mut().await },
                if discovering.is_some() => {
                let (ix, _) = discovering.take().expect("invariant: polled only while discovering");
                finished.insert(ix);
                match found {
                    Ok(added) => {
                        let snapshot = shared.state.snapshot();
                        splice(&mut g, &snapshot, &added, &mut waiting, &started, &finished, &mut ready);
                        remaining = remaining_path(&g, registry);
                        release(&g, ix, &mut waiting, &mut ready, None);
                    }
                    Err(e) => {
                        let cause = g[ix].address.clone();
                        outcome.failed.push((cause.clone(), e.to_string()));
                        let _ = events.send(Event::Failed {
                            address: cause.clone(),
                            op: Op::Delete,
                            elapsed: std::time::Duration::ZERO,
                            error: e.to_string(),
                            hint: e.hint.clone(),
                        });
                        release(&g, ix, &mut waiting, &mut ready, Some((&cause, &mut blocked)));
                    }
                }
                by_priority(&g, &remaining, &mut ready);
                continue;
            }
        };
        let (ix, result, elapsed) = joined.expect("invariant: step tasks do not panic");
        finished.insert(ix);
        let s = &g[ix];
        match result {
            Ok(id) => {
                outcome.done += 1;
                let _ = events.send(Event::Finished { address: s.address.clone(), op: s.op, elapsed, id });
                release(&g, ix, &mut waiting, &mut ready, None);
            }
            Err(e) => {
                outcome.failed.push((s.address.clone(), e.to_string()));
                let _ = events.send(Event::Failed {
                    address: s.address.clone(),
                    op: s.op,
                    elapsed,
                    error: e.to_string(),
                    hint: e.hint(),
                });
                let cause = s.address.clone();
                release(&g, ix, &mut waiting, &mut ready, Some((&cause, &mut blocked)));
            }
        }
        by_priority(&g, &remaining, &mut ready);
    }
    let bookkeeping =
        g.node_indices().filter(|&ix| g[ix].sweep && !outcome.failed.iter().any(|(a, _)| *a == g[ix].address)).count();
    outcome.not_started = g.node_count() - bookkeeping - outcome.done - outcome.failed.len() - outcome.skipped.len();
    shared.cx.report_to(None);
    outcome
}

/// Orders `ready` to be popped from the end: the longest remaining path first, then the first address, so the
/// order is reproducible.
fn by_priority(g: &DiGraph<Step, ()>, remaining: &[u64], ready: &mut [NodeIndex]) {
    ready.sort_by(|a, b| {
        remaining[a.index()].cmp(&remaining[b.index()]).then_with(|| g[*b].address.cmp(&g[*a].address))
    });
}

/// Adds the sweep's node: after every operation on a `before` kind, before every one on a `gated` kind. If that
/// would make a cycle (a gated operation some `before` one waits for), the sweep holds nothing back.
fn add_sweep(g: &mut DiGraph<Step, ()>, before: fn(&str) -> bool, gated: fn(&str) -> bool) -> NodeIndex {
    let others: Vec<NodeIndex> = g.node_indices().collect();
    let ix =
        g.add_node(Step { address: sweep_address(), kind: String::new(), op: Op::Delete, sweep: true, depose: false });
    for other in others {
        if before(&g[other].kind) {
            g.add_edge(other, ix, ());
        } else if gated(&g[other].kind) {
            g.add_edge(ix, other, ());
        }
    }
    if petgraph::algo::is_cyclic_directed(&*g) {
        let held: Vec<_> =
            g.edges_directed(ix, Direction::Outgoing).map(|e| petgraph::visit::EdgeRef::id(&e)).collect();
        for e in held.into_iter().rev() {
            g.remove_edge(e);
        }
    }
    ix
}

/// Adds the deletes of the entries a sweep `added` to state, each after what depends on it (its dependents,
/// found or in state, that have not finished) and before what it depends on that has not started; returns
/// nothing, but pushes onto `ready` those that wait for nothing.
fn splice(
    g: &mut DiGraph<Step, ()>,
    state: &crate::state::State,
    added: &[Address],
    waiting: &mut BTreeMap<NodeIndex, usize>,
    started: &HashSet<NodeIndex>,
    finished: &HashSet<NodeIndex>,
    ready: &mut Vec<NodeIndex>,
) {
    let mut node: HashMap<Address, NodeIndex> = g
        .node_indices()
        .filter(|&ix| !g[ix].sweep && matches!(g[ix].op, Op::Delete | Op::Forget))
        .map(|ix| (g[ix].address.clone(), ix))
        .collect();
    let mut new = Vec::new();
    for a in added {
        let Some(r) = state.get(a) else { continue };
        if node.contains_key(a) {
            continue;
        }
        let ix =
            g.add_node(Step { address: a.clone(), kind: r.kind.clone(), op: Op::Delete, sweep: false, depose: false });
        waiting.insert(ix, 0);
        node.insert(a.clone(), ix);
        new.push(ix);
    }
    let is_new: HashSet<NodeIndex> = new.iter().copied().collect();
    for r in state.resources.values() {
        let Some(&dependent) = node.get(&r.address) else { continue };
        for dep in &r.dependencies {
            let Some(&dependency) = node.get(dep) else { continue };
            if !is_new.contains(&dependent) && !is_new.contains(&dependency) {
                continue; // an edge the walk already has
            }
            if is_new.contains(&dependent) && started.contains(&dependency) {
                continue; // too late to hold it back; its delete may wait for the found one in AWS
            }
            if is_new.contains(&dependency) && finished.contains(&dependent) {
                continue;
            }
            if g.find_edge(dependent, dependency).is_some() {
                continue;
            }
            g.add_edge(dependent, dependency, ());
            let w = waiting.get_mut(&dependency).expect("invariant: every operation has a predecessor count");
            if *w == 0 && !is_new.contains(&dependency) {
                ready.retain(|&x| x != dependency);
            }
            *w += 1;
        }
    }
    ready.extend(new.into_iter().filter(|ix| waiting[ix] == 0));
}

/// The typical seconds of `step`, from its kind's [`crate::providers::Typical`]; an unknown kind counts as one call.
fn typical_secs(step: &Step, registry: &Registry) -> u64 {
    if step.sweep {
        return 0; // discovery's reads: no wait worth ordering by
    }
    let typical = registry.get(&step.kind).map_or(crate::providers::Typical::ONE_CALL, |p| p.descriptor().typical);
    u64::from(match step.op {
        Op::Create => typical.create,
        Op::Update => typical.update,
        Op::Delete => typical.delete,
        Op::Forget => 0,
    })
}

/// For each operation (by node index), the typical seconds of the longest chain that starts with it: itself and
/// the longest of what waits on it. A cycle (only a hand-edited state could make one; its operations never
/// become ready) leaves every operation at zero: address order.
fn remaining_path(g: &DiGraph<Step, ()>, registry: &Registry) -> Vec<u64> {
    let Ok(order) = petgraph::algo::toposort(g, None) else { return vec![0; g.node_count()] };
    let mut remaining = vec![0u64; g.node_count()];
    for &ix in order.iter().rev() {
        let after = g.neighbors_directed(ix, Direction::Outgoing).map(|n| remaining[n.index()]).max().unwrap_or(0);
        remaining[ix.index()] = typical_secs(&g[ix], registry) + after;
    }
    remaining
}

/// Marks `ix` finished: its successors lose one predecessor; with a `cause`, they are blocked by it.
fn release(
    g: &DiGraph<Step, ()>,
    ix: NodeIndex,
    waiting: &mut BTreeMap<NodeIndex, usize>,
    ready: &mut Vec<NodeIndex>,
    cause: Option<(&Address, &mut BTreeMap<NodeIndex, Address>)>,
) {
    let mut cause = cause;
    for n in g.neighbors_directed(ix, Direction::Outgoing) {
        if let Some((c, blocked)) = cause.as_mut() {
            blocked.entry(n).or_insert_with(|| (*c).clone());
        }
        let w = waiting.get_mut(&n).expect("invariant: every operation has a predecessor count");
        *w -= 1;
        if *w == 0 {
            ready.push(n);
        }
    }
}

#[cfg(test)]
mod tests;

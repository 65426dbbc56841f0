//! The teardown sequence, shared by `kbp destroy`, `kbp destroy --from-tags` and `kbp gc`:
//!
//! 1. **In the cluster**, while its controllers still run: Services of type LoadBalancer, Ingresses and claims
//!    whose volumes are deleted with them go first ([`in_cluster`](super::in_cluster)), bounded, so the AWS Load
//!    Balancer Controller and the EBS CSI driver delete what they made; then the objects kbp applied (NodePools,
//!    whose nodes Karpenter drains and terminates, node classes, the controller, the CRDs).
//! 2. **One walk** ([`crate::exec::walk`]): everything in state deleted in the order the dependency edges give,
//!    with one parallelism, one event stream and a state write after every delete; **discovery** is a node of
//!    it ([`exec::Sweep`]): once the objects kbp applied in the cluster are deleted (Karpenter's nodes on their
//!    way out), what the stack owns outside state is found and added to state as ordinary entries
//!    ([`super::discover::merge`]), whose deletes join the walk. Only the kinds something found
//!    may use wait for it; the EKS chain (add-ons, node groups, the cluster) goes on meanwhile.
//! 4. **Final scan** ([`Teardown::scan`]): anything of the stack still in the region, for the caller to report.
//!
//! Every step can be rerun: state records each delete and discovery looks at what exists, so a teardown killed
//! at any point finishes when run again.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;

use super::discover::{self, Look};
use crate::exec::{self, Event, Interrupt, Outcome};
use crate::graph::ResourceGraph;
use crate::plan::{self, Plan};
use crate::providers::tagged::Owner;
use crate::providers::{Context, Found, ProviderError, Registry, Result};
use crate::state::{State, StateHandle};

/// How a teardown runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// How many deletes run at once.
    pub parallelism: usize,
    /// IAM roles Karpenter's nodes use (their instance profiles are Karpenter's).
    pub node_roles: Vec<String>,
    /// How long in-cluster controllers get to release what they made before the sweep deletes it instead.
    pub release_budget: Duration,
}

/// One stack's teardown; see the module documentation.
pub struct Teardown<'a> {
    cx: Arc<Context>,
    registry: &'a Registry,
    name: String,
    id: Option<String>,
    look: Look,
    options: Options,
}

/// What [`Teardown::run`] did.
#[derive(Debug, Default)]
pub struct Report {
    /// What the walk did: operations done, failed, skipped and not started.
    pub outcome: Outcome,
    /// How many resources outside state (discovered) were in the walk.
    pub discovered: usize,
}

impl<'a> Teardown<'a> {
    /// The teardown of a stack whose state kbp holds (`state`'s lineage identifies it).
    pub fn of_state(cx: Arc<Context>, registry: &'a Registry, state: &State, options: Options) -> Self {
        let (name, id) = (state.stack.clone(), Some(state.lineage.clone()));
        Teardown { cx, registry, name, id, look: Look::OutsideState, options }
    }

    /// The teardown of a stack known only by its tags: its name, and its ID when known.
    pub fn of_tags(cx: Arc<Context>, registry: &'a Registry, name: &str, id: Option<&str>, options: Options) -> Self {
        let (name, id) = (name.to_string(), id.map(str::to_string));
        Teardown { cx, registry, name, id, look: Look::Everything, options }
    }

    /// The region it works in.
    pub fn region(&self) -> &str {
        &self.cx.region
    }

    fn who(&self) -> Owner<'_> {
        Owner { name: &self.name, id: self.id.as_deref() }
    }

    /// What the stack owns beyond `state`; only reads.
    pub async fn discover(&self, state: &State) -> Result<Vec<Found>> {
        discover::discover(&self.cx, self.registry, state, self.who(), self.look, &self.options.node_roles).await
    }

    /// The plan: every delete of `state` plus what [`Teardown::discover`] finds, and the finds. Only reads.
    pub async fn plan(&self, state: &State, graph: &ResourceGraph) -> Result<(Plan, Vec<Found>)> {
        let found = self.discover(state).await?;
        Ok((self.plan_with(state, graph, &found), found))
    }

    /// The plan of every delete of `state` plus `found` (what [`Teardown::discover`] found).
    pub fn plan_with(&self, state: &State, graph: &ResourceGraph, found: &[Found]) -> Plan {
        let mut all = state.clone();
        discover::merge(&mut all, found);
        plan::diff_destroy(graph, &all, self.registry)
    }

    /// Runs the sequence of the module documentation against `state`, reporting every operation on `events`
    /// and anything the user should know (a controller that is gone) through `note`.
    pub async fn run(
        &self,
        state: &Arc<StateHandle>,
        graph: &ResourceGraph,
        events: UnboundedSender<Event>,
        interrupt: Interrupt,
        note: &(dyn Fn(String) + Sync),
    ) -> Result<Report> {
        let mut report = Report::default();

        // 1. In the cluster.
        if let Some(attrs) =
            state.snapshot().resources.values().find(|r| r.kind.starts_with("k8s_")).map(|r| r.attributes.clone())
        {
            match super::in_cluster::release(&self.cx, &attrs, self.options.release_budget).await {
                Ok(released) => {
                    for what in &released.deleted {
                        note(format!("released {what}"));
                    }
                    for what in &released.stuck {
                        note(format!(
                            "warning: {what} was not released in {}: its controller is gone; the sweep deletes what it made",
                            humantime::format_duration(self.options.release_budget)
                        ));
                    }
                }
                Err(e) => note(format!(
                    "warning: could not release load balancers and volumes in the cluster: {e}; the sweep deletes them"
                )),
            }
        }
        // 2 and 3: one walk of every delete, discovery a node of it after the objects in the cluster and before
        // what something found may use ([`held_by_discovery`]); the found entries join the walk.
        let failure: std::sync::Mutex<Option<ProviderError>> = std::sync::Mutex::new(None);
        let discovered = std::sync::atomic::AtomicUsize::new(0);
        let discover = async {
            let found = self.discover(&state.snapshot()).await;
            let added = match found {
                Ok(found) => state.update(|s| discover::merge(s, &found)).await.map_err(|e| {
                    ProviderError::new("kbp:state", "", format!("recording what discovery found: {e}"))
                        .with_hint("fix access to the state, then run the same command again")
                }),
                Err(e) => Err(e),
            };
            match &added {
                Ok(added) => discovered.store(added.len(), std::sync::atomic::Ordering::SeqCst),
                Err(e) => *failure.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(e.clone()),
            }
            added
        };
        let sweep = exec::Sweep { before: in_cluster_kind, gated: held_by_discovery, discover: Box::pin(discover) };
        let p = plan::diff_destroy(graph, &state.snapshot(), self.registry);
        let w = exec::Walk {
            cx: self.cx.clone(),
            registry: self.registry,
            state: state.clone(),
            parallelism: self.options.parallelism,
            events,
            interrupt,
            sweep: Some(sweep),
        };
        report.outcome = exec::walk(&p, w).await;
        if let Some(e) = failure.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner) {
            return Err(e);
        }
        report.discovered = discovered.load(std::sync::atomic::Ordering::SeqCst);
        Ok(report)
    }

    /// Anything of the stack still in the region, by its tags and by what controllers made for its cluster.
    pub async fn scan(&self) -> Result<Vec<Found>> {
        let empty = State::new(&self.name, &self.cx.region);
        discover::discover(&self.cx, self.registry, &empty, self.who(), Look::Everything, &self.options.node_roles)
            .await
    }
}

/// After an apply: second resources at one of the stack's addresses (creates whose outcome was unknown) that
/// landed after kbp had looked for them, recorded in `state` and deleted by the same walk as everything else.
/// Returns what was found and how deleting it went.
pub async fn delete_duplicates(
    cx: Arc<Context>,
    registry: &Registry,
    state: &Arc<StateHandle>,
    parallelism: usize,
    events: UnboundedSender<Event>,
) -> Result<(Vec<Found>, Outcome)> {
    let snapshot = state.snapshot();
    let who = Owner { name: &snapshot.stack, id: Some(&snapshot.lineage) };
    let found = super::orphans(&snapshot, super::stack(&cx, registry, who).await?);
    if found.is_empty() {
        return Ok((found, Outcome::default()));
    }
    let added = state.update(|s| discover::merge(s, &found)).await.map_err(|e| {
        ProviderError::new("kbp:state", "", format!("recording duplicates: {e}"))
            .with_hint("fix access to the state; `kbp destroy` removes them too")
    })?;
    let mut p = plan::diff_destroy(&ResourceGraph::default(), &state.snapshot(), registry);
    p.changes.retain(|c| added.contains(&c.address));
    let w = exec::Walk {
        cx,
        registry,
        state: state.clone(),
        parallelism,
        events,
        interrupt: Interrupt::default(),
        sweep: None,
    };
    let outcome = exec::walk(&p, w).await;
    Ok((found, outcome))
}

/// What runs before discovery: the objects kbp applied in the cluster (NodePools first, so Karpenter's nodes
/// are on their way out when discovery looks).
fn in_cluster_kind(kind: &str) -> bool {
    kind.starts_with("k8s_")
}

/// What waits for discovery: every AWS kind something found outside state may use (a subnet, a security group,
/// a role…) or be deleted after. The EKS kinds do not wait (nothing found depends on them in a way AWS
/// enforces), so the cluster's chain, the longest of a teardown, never waits for the sweep.
fn held_by_discovery(kind: &str) -> bool {
    !in_cluster_kind(kind) && !kind.starts_with("aws_eks_")
}

//! Making a plan, one way for every command that shows or applies one (`kbp plan`, `kbp drift`, `kbp apply`):
//! refresh, the blueprint's `[[import]]` blocks, the diff the [`Mode`] asks for (shaped by `--replace` and
//! `--target`), the objects of in-cluster changes, drift, and the notes, in that order. What only a command
//! knows (its lock, the caller, a saved plan's file) stays with the command.

use std::sync::Arc;

use crate::blueprint::Blueprint;
use crate::graph::{Address, ResourceGraph};
use crate::providers::{Context, ProviderError, Registry};
use crate::state::{ResourceState, State};

use super::{shape, Moved, Plan, Refreshed};

/// What a plan is for (as Terraform's plan modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Bring the stack to the blueprint.
    Normal,
    /// Delete everything state holds.
    Destroy,
    /// Change nothing: show what changed outside kbp (`--refresh-only`, `kbp drift`).
    RefreshOnly,
}

/// Everything a plan is made from.
pub struct Request<'a> {
    /// What kind of plan.
    pub mode: Mode,
    /// The AWS and cluster access the refresh and the notes read with.
    pub cx: Arc<Context>,
    /// The providers, one per kind.
    pub registry: &'a Registry,
    /// The blueprint the graph was compiled from (its `[[import]]` blocks, its advisories).
    pub blueprint: &'a Blueprint,
    /// The desired resources.
    pub graph: &'a ResourceGraph,
    /// State with the blueprint's `[[moved]]` blocks carried out ([`moved_state`]), and the moves they made.
    pub state: &'a State,
    /// The `[[moved]]` blocks that moved an entry in `state`, for the plan to show and apply to write.
    pub moved: Vec<Moved>,
    /// Whether to read AWS and the cluster (`--refresh`); a refresh-only plan always does.
    pub refresh: bool,
    /// How many resources refresh reads at once (`--parallelism`).
    pub parallelism: usize,
    /// `--replace` and `--target`, as the user wrote them.
    pub replace: &'a [String],
    /// `--target`: the addresses the plan is narrowed to.
    pub targets: &'a [String],
}

/// A plan and the refreshed state it was made against.
pub struct Made {
    /// The plan.
    pub plan: Plan,
    /// State as refresh read it, which apply carries on from.
    pub refreshed: Refreshed,
}

/// Makes the plan `r` asks for; see the module documentation. Only reads AWS and the cluster.
pub async fn make(r: Request<'_>) -> anyhow::Result<Made> {
    let refresh = r.refresh || r.mode == Mode::RefreshOnly;
    let mut refreshed = if refresh {
        super::refresh(r.cx.clone(), r.registry, r.state, Some(r.graph), r.parallelism).await.map_err(refresh_failed)?
    } else {
        Refreshed::as_recorded(r.state)
    };
    let imported = match r.mode {
        Mode::Normal => import_blocks(&r.cx, r.registry, r.graph, r.blueprint, &mut refreshed.state).await?,
        Mode::Destroy | Mode::RefreshOnly => Vec::new(),
    };
    let mut p = match r.mode {
        Mode::Destroy => super::diff_destroy(r.graph, &refreshed.state, r.registry),
        Mode::Normal | Mode::RefreshOnly => shaped(r.graph, &refreshed, r.registry, r.replace, r.targets)?,
    };
    p.adopting(&refreshed);
    super::objects::attach(&mut p, r.state).await;
    p.importing(imported);
    if r.mode != Mode::Destroy {
        p.drift = super::drift::drift(r.state, &refreshed);
    }
    match r.mode {
        Mode::Normal => p.moved = r.moved,
        Mode::RefreshOnly => {
            p.refreshing_only();
            p.drift.extend(super::notes::unmanaged_access_entries(&r.cx, &refreshed.state).await?);
        }
        Mode::Destroy => {}
    }
    if r.mode != Mode::Destroy {
        p.warnings.splice(0..0, crate::blueprint::advisories(r.blueprint));
        p.warnings.extend(super::notes::notes(&r.cx, &p, &refreshed.state).await);
    }
    Ok(Made { plan: p, refreshed })
}

/// A failed refresh as the one-line error (with its hint) a command reports.
pub fn refresh_failed((address, e): (Address, ProviderError)) -> anyhow::Error {
    let hint = e.hint.as_deref().map(|h| format!("\n  hint: {h}")).unwrap_or_default();
    anyhow::anyhow!("refreshing {address}: {e}{hint}")
}

/// The blueprint's `[[import]]` blocks whose address `state` lacks, read and added to it (see
/// [`super::import::blocks`]); the entries added, for [`Plan::importing`].
async fn import_blocks(
    cx: &Context,
    registry: &Registry,
    graph: &ResourceGraph,
    bp: &Blueprint,
    state: &mut State,
) -> anyhow::Result<Vec<ResourceState>> {
    let mut blocks = Vec::new();
    for b in &bp.import {
        let to: Address = b.to.parse().map_err(|e| anyhow::anyhow!("[[import]] to `{}`: {e}", b.to))?;
        blocks.push((to, b.id.clone()));
    }
    Ok(super::import::blocks(cx, registry, graph, state, &blocks).await?)
}

/// The stored state with the blueprint's `[[moved]]` blocks carried out in memory, and the moves they made: plan
/// and apply refresh and diff this, and applying writes the moves first ([`Plan::moved`]).
pub fn moved_state(state: &State, bp: &Blueprint, graph: &ResourceGraph) -> anyhow::Result<(State, Vec<Moved>)> {
    let mut moved = state.clone();
    let done =
        super::moves(&mut moved, &bp.moved, |a| graph.get(a).map(|r| r.kind.clone())).map_err(anyhow::Error::msg)?;
    Ok((moved, done))
}

/// The plan of `graph` against `refreshed` with the replacements `replace` asks for, narrowed to `targets`.
/// Addresses that name nothing are refused.
fn shaped(
    graph: &ResourceGraph,
    refreshed: &Refreshed,
    registry: &Registry,
    replace: &[String],
    targets: &[String],
) -> anyhow::Result<Plan> {
    let in_state = |a: &Address| refreshed.state.get(a).is_some();
    let replace = shape::addresses("--replace", replace, graph, in_state).map_err(anyhow::Error::msg)?;
    let targets = shape::addresses("--target", targets, graph, in_state).map_err(anyhow::Error::msg)?;
    let mut p = super::diff_replacing(graph, &refreshed.state, registry, &refreshed.gone, &replace);
    shape::target(&mut p, graph, &targets);
    Ok(p)
}

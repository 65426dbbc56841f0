//! `kbp destroy`: a teardown that leaves nothing behind, in four steps.
//!
//! 1. The in-cluster objects go first: NodePools (Karpenter drains and terminates their nodes), node classes,
//!    the controller, the CRDs — bounded, and tolerant of a cluster that no longer answers.
//! 2. Then what Karpenter and in-cluster controllers made outside kbp's state (instances, launch templates,
//!    instance profiles, network interfaces, load-balancer security groups) is found by its tags and removed,
//!    waiting for instances to terminate.
//! 3. Then the state's resources, in reverse dependency order.
//! 4. Finally a scan of the region for anything of the stack still there, reported.
//!
//! Every step can be rerun: state records each delete, and the sweep and the scan look at what exists, so a
//! destroy killed at any point finishes when run again. `--from-tags NAME` does steps 2–4 from tags alone.

use std::sync::Arc;

use anyhow::Context as _;

use super::args::{DestroyArgs, Global};
use super::common::{self, FAILED};
use super::run::{interrupt_on_ctrl_c, print_plan, summarize_walk};
use crate::blueprint::Blueprint;
use crate::exec;
use crate::graph::compile::kinds;
use crate::plan::{self, Plan};
use crate::providers::{Context, Registry};
use crate::state::{State, StateHandle};
use crate::teardown::{self, Inventory, Item, Scope, Step};
use crate::ui::{json, say, timestamp_now, Ui};

pub async fn run(a: DestroyArgs, g: &Global) -> u8 {
    let ui = Ui::new(a.run.json, g.no_color);
    let result = match (&a.from_tags, &a.blueprint) {
        (Some(name), _) => from_tags(&a, name, ui).await,
        (None, Some(path)) => {
            let args = super::args::BlueprintArgs { blueprint: path.clone(), sets: a.sets.clone() };
            let (bp, graph) = match common::load(&args, ui.color) {
                Ok(x) => x,
                Err(code) => return code,
            };
            with_state(&a, &bp, &graph, ui).await
        }
        (None, None) => Err(anyhow::anyhow!("name a blueprint, or a stack with --from-tags")),
    };
    result.unwrap_or_else(|e| common::report(&e))
}

async fn with_state(
    a: &DestroyArgs,
    bp: &Blueprint,
    graph: &crate::graph::ResourceGraph,
    ui: Ui,
) -> anyhow::Result<u8> {
    let stack = &bp.cluster.name;
    let location = common::state_location(a.state.state.as_ref(), bp);
    let locked = common::lock_state(&location, a.state.lock_timeout, stack, &bp.cluster.region, "destroy").await?;
    let mut cx = common::context(stack, &bp.cluster.region, &a.run).await;
    super::preflight::identity(&cx).await?;
    cx.destroying = true;
    let cx = Arc::new(cx);
    let registry = Registry::aws();
    let refreshed =
        common::refresh(cx.clone(), &registry, &locked.state, Some(graph), a.run.parallelism as usize).await?;
    let p = plan::diff_destroy(graph, &refreshed.state, &registry);
    let scope = scope_of(stack, &refreshed.state, vec![bp.karpenter.node_role_name.clone()]);
    let found = sweep(&cx, &scope, &refreshed.state).await?;
    print_plan(&p, ui)?;
    show_leftovers(&found, ui, "would also be deleted");
    if a.dry_run {
        return Ok(0);
    }
    if !p.has_changes() && found.items.is_empty() {
        return Ok(final_scan(&cx, &scope, ui).await);
    }
    if !a.auto_approve && !common::confirm(&format!("\nDo you want to destroy stack {stack}?"))? {
        eprintln!("destroy cancelled.");
        return Ok(FAILED);
    }
    let state = Arc::new(StateHandle::new(locked.backend, refreshed.state));

    // 1. In the cluster.
    let in_cluster = |c: &plan::Change| c.kind.starts_with("k8s_");
    let outcome = walk(&only(&p, in_cluster), &cx, &registry, &state, a, ui).await;
    if !outcome.ok() {
        return Ok(incomplete(&p.summary, &outcome, &state));
    }
    // 2. What Karpenter and controllers made, found again now that the NodePools are gone, and duplicates of the
    //    stack's own resources.
    let found = sweep(&cx, &scope, &state.snapshot()).await?;
    let failed = remove(&cx, &found, ui).await;
    // 3. The state's resources.
    let outcome = walk(&only(&p, |c| !in_cluster(c)), &cx, &registry, &state, a, ui).await;
    json::summarize(serde_json::json!({ "leftovers_removed": found.items.len() - failed, "leftovers_failed": failed }));
    if !outcome.ok() || failed > 0 {
        return Ok(incomplete(&p.summary, &outcome, &state));
    }
    summarize_walk(&p.summary, &outcome, &state);
    say(format!(
        "\nDestroy complete! Resources: {} destroyed, {} leftovers removed. State: {}",
        p.summary.destroy,
        found.items.len(),
        state.describe()
    ));
    // 4. Anything left?
    Ok(final_scan(&cx, &scope, ui).await)
}

/// What destroy removes besides state's resources: Karpenter's and controllers' leftovers, and second resources at
/// one of the stack's addresses (creates whose outcome was unknown).
async fn sweep(cx: &Context, scope: &Scope, state: &State) -> anyhow::Result<Inventory> {
    let mut found = teardown::leftovers(cx, scope).await.context("looking for leftovers outside state")?;
    let duplicates = teardown::orphans(cx, state).await.context("looking for duplicates of the stack's resources")?;
    found.items.extend(duplicates.items);
    Ok(found)
}

/// `--from-tags NAME`: no state; the stack is what carries its tags, plus what Karpenter made for its cluster.
async fn from_tags(a: &DestroyArgs, name: &str, ui: Ui) -> anyhow::Result<u8> {
    let region = common::default_region(a.region.as_deref()).await?;
    let mut cx = common::context(name, &region, &a.run).await;
    super::preflight::identity(&cx).await?;
    cx.destroying = true;
    let cx = Arc::new(cx);
    let (leftovers, tagged) = discover(&cx, name).await?;
    show_leftovers(&leftovers, ui, "made for the cluster outside kbp, to delete");
    show_leftovers(&tagged, ui, &format!("tagged kbp:stack={name}, to delete"));
    if a.dry_run {
        return Ok(0);
    }
    if leftovers.items.is_empty() && tagged.items.is_empty() {
        say(format!("Nothing of stack {name} found in {region}."));
        json::summarize(serde_json::json!({ "leftovers_removed": 0, "left": 0 }));
        return Ok(0);
    }
    if !a.auto_approve && !common::confirm(&format!("\nDo you want to destroy stack {name} found by its tags?"))? {
        eprintln!("destroy cancelled.");
        return Ok(FAILED);
    }
    let failed = destroy_found(&cx, &leftovers, &tagged, ui).await;
    let removed = leftovers.items.len() + tagged.items.len() - failed;
    json::summarize(serde_json::json!({ "leftovers_removed": removed, "leftovers_failed": failed }));
    if failed > 0 {
        eprintln!("\ndestroy incomplete: {failed} resources could not be deleted; run `kbp destroy --from-tags {name}` again.");
        return Ok(FAILED);
    }
    say(format!("\nDestroy complete! {removed} resources deleted."));
    Ok(final_scan(&cx, &scope_of(name, &State::new(name, &region), Vec::new()), ui).await)
}

/// Everything of stack `name` the region holds: (leftovers of its cluster, resources tagged for it).
pub(super) async fn discover(cx: &Context, name: &str) -> anyhow::Result<(Inventory, Inventory)> {
    let tagged = teardown::stack(cx, name).await.context("looking for the stack's tagged resources")?;
    // Karpenter's instance profiles hang off the stack's roles; the node role is one of them.
    let scope = Scope {
        stack: name.to_string(),
        vpc_ids: Vec::new(),
        node_roles: tagged.items.iter().filter(|i| i.kind == teardown::Kind::IamRole).map(|i| i.id.clone()).collect(),
        keep: tagged.items.iter().map(|i| i.id.clone()).collect(),
    };
    let leftovers = teardown::leftovers(cx, &scope).await.context("looking for leftovers")?;
    Ok((leftovers, tagged))
}

/// Deletes the leftovers, then the tagged resources; returns how many could not be deleted.
pub(super) async fn destroy_found(cx: &Context, leftovers: &Inventory, tagged: &Inventory, ui: Ui) -> usize {
    let failed = remove(cx, leftovers, ui).await;
    failed + remove(cx, tagged, ui).await
}

/// The stack's VPCs and the IDs kbp's state owns (never leftovers).
fn scope_of(stack: &str, state: &State, node_roles: Vec<String>) -> Scope {
    let vpc_ids = state.resources.values().filter(|r| r.kind == kinds::VPC).filter_map(|r| r.id.clone()).collect();
    Scope { stack: stack.to_string(), vpc_ids, node_roles, keep: teardown::held_ids(state) }
}

fn only(p: &Plan, keep: impl Fn(&plan::Change) -> bool) -> Plan {
    let mut q = p.clone();
    q.changes.retain(|c| keep(c));
    q
}

async fn walk(
    p: &Plan,
    cx: &Arc<Context>,
    registry: &Registry,
    state: &Arc<StateHandle>,
    a: &DestroyArgs,
    ui: Ui,
) -> exec::Outcome {
    if !p.has_changes() {
        return exec::Outcome::default();
    }
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let renderer = tokio::spawn(ui.render_events(rx));
    let outcome = exec::walk(
        p,
        cx.clone(),
        registry,
        state.clone(),
        a.run.parallelism as usize,
        tx,
        interrupt_on_ctrl_c("destroy"),
    )
    .await;
    let _ = renderer.await;
    outcome
}

fn incomplete(planned: &plan::Summary, outcome: &exec::Outcome, state: &StateHandle) -> u8 {
    summarize_walk(planned, outcome, state);
    eprintln!(
        "\ndestroy incomplete: {} operations failed, {} skipped, {} not started. What succeeded is in state {}; fix the error and run `kbp destroy` again.",
        outcome.failed.len(),
        outcome.skipped.len(),
        outcome.not_started,
        state.describe()
    );
    FAILED
}

fn show_leftovers(found: &Inventory, ui: Ui, what: &str) {
    if found.items.is_empty() {
        return;
    }
    if ui.json {
        json::emit(&json::Line::Leftovers { what, items: &found.items });
    } else {
        println!("\nOutside kbp's state, {what}:\n{found}");
    }
}

/// Deletes `found`, one progress line (or JSON line) per step; returns how many could not be deleted.
pub(super) async fn remove(cx: &Context, found: &Inventory, ui: Ui) -> usize {
    if found.items.is_empty() {
        return 0;
    }
    let report = |item: &Item, step: Step| {
        let (verb, error) = match &step {
            Step::Deleting => ("deleting", None),
            Step::Deleted if item.kind == teardown::Kind::KmsKey => ("scheduled for deletion (AWS waits 7 days)", None),
            Step::Deleted => ("deleted", None),
            Step::Failed(e) => ("FAILED", Some(e.clone())),
        };
        if ui.json {
            json::emit(&json::Line::Leftover { kind: item.kind, id: &item.id, step: verb, error: error.as_deref() });
        } else {
            let error = error.map(|e| format!(": {e}")).unwrap_or_default();
            eprintln!("{} {} {}: {verb}{error}", timestamp_now(), item.kind.label(), item.id);
        }
    };
    let failed = teardown::delete(cx, &found.items, &report).await;
    failed.len()
}

/// Looks for anything of the stack still in the region; 0 when nothing is, else lists it and returns 1.
async fn final_scan(cx: &Context, scope: &Scope, ui: Ui) -> u8 {
    let scan = async {
        let mut left = teardown::stack(cx, &scope.stack).await?;
        left.items.extend(teardown::leftovers(cx, scope).await?.items);
        Ok::<_, crate::providers::ProviderError>(left)
    };
    match scan.await {
        Ok(left) => {
            let lines: Vec<String> = left.items.iter().map(ToString::to_string).collect();
            let items: Vec<serde_json::Value> =
                left.items.iter().map(|i| serde_json::to_value(i).unwrap_or_default()).collect();
            json::summarize(serde_json::json!({ "left": items.len() }));
            json::emit(&json::Line::FinalScan { region: &cx.region, left: &items });
            if items.is_empty() {
                if !ui.json {
                    println!("Final scan: nothing of stack {} is left in {}.", scope.stack, cx.region);
                }
                return 0;
            }
            if !ui.json {
                eprintln!(
                    "\nFinal scan: still in {}:\n{}\n  hint: run `kbp destroy` again; if it stays, delete it by hand",
                    cx.region,
                    lines.join("\n")
                );
            }
            FAILED
        }
        Err(e) => common::report(&anyhow::anyhow!("the final scan failed: {e}")),
    }
}

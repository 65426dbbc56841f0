//! `kbp destroy`: the teardown engine ([`crate::teardown::engine`]) driven from the command line: lock and
//! refresh the state (or, with `--from-tags`, find the stack by its tags), show the plan with what was found
//! outside state, ask, run, report, and scan the region for anything left.

use std::sync::Arc;

use anyhow::Context as _;

use super::args::{DestroyArgs, Global, RunArgs};
use super::common::{self, FAILED};
use super::report::{print_plan, show_found, summarize_walk};
use super::signals;
use crate::graph::ResourceGraph;
use crate::plan;
use crate::providers::{Context, Found, Registry};
use crate::state::{State, StateHandle};
use crate::teardown::{discover, engine, Options, Teardown};
use crate::ui::{json, say, Ui};

/// How long controllers get to delete the load balancers and volumes of the Services, Ingresses and claims
/// teardown deletes in the cluster.
const RELEASE_BUDGET: std::time::Duration = std::time::Duration::from_secs(180);

pub(super) async fn run(a: DestroyArgs, g: &Global) -> u8 {
    let ui = Ui::new(a.run.json, g.no_color).every(a.run.progress_interval);
    let result = match (&a.from_tags, &a.blueprint) {
        (Some(name), _) => from_tags(&a, name, ui).await,
        (None, Some(path)) => {
            let args = super::args::BlueprintArgs::at(path, &a.layers);
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

pub(super) fn options(run: &RunArgs, node_roles: Vec<String>) -> Options {
    Options { parallelism: run.parallelism as usize, node_roles, release_budget: release_budget() }
}

/// [`RELEASE_BUDGET`], or `KBP_RELEASE_TIMEOUT` (a duration such as `20s`) where a test or a slow controller
/// needs another.
fn release_budget() -> std::time::Duration {
    std::env::var("KBP_RELEASE_TIMEOUT").ok().and_then(|v| humantime::parse_duration(&v).ok()).unwrap_or(RELEASE_BUDGET)
}

async fn with_state(
    a: &DestroyArgs,
    bp: &crate::blueprint::Blueprint,
    graph: &ResourceGraph,
    ui: Ui,
) -> anyhow::Result<u8> {
    let stack = &bp.cluster.name;
    let locked = common::lock_stack(&a.state, bp, "destroy").await?;
    let mut cx = common::context(stack, &bp.cluster.region, &a.run).await;
    super::preflight::identity(&cx).await?;
    cx.destroying = true;
    let cx = Arc::new(cx);
    let registry = Registry::builtin();
    let options = options(&a.run, vec![bp.karpenter.node_role_name.clone()]);
    let teardown = Teardown::of_state(cx.clone(), &registry, &locked.state, options);
    // Discovery looks past what state holds, which refresh does not change but for dropping what is gone (and
    // so is not found either): the two run at once.
    let refresh = plan::refresh(cx.clone(), &registry, &locked.state, Some(graph), a.run.parallelism as usize);
    let (refreshed, found) = tokio::join!(refresh, teardown.discover(&locked.state));
    let refreshed = refreshed.map_err(crate::plan::make::refresh_failed)?;
    let found = found.context("looking for the stack's resources outside state")?;
    let p = teardown.plan_with(&refreshed.state, graph, &found);
    let state = Arc::new(StateHandle::new(locked.backend, refreshed.state));
    drive(a, &teardown, state, (p, found), graph, ui).await
}

/// `--from-tags NAME`: no state; the stack is what carries its tags, plus what Karpenter and controllers made
/// for its cluster, held in memory for this run (a rerun finds what is left by the tags again).
async fn from_tags(a: &DestroyArgs, name: &str, ui: Ui) -> anyhow::Result<u8> {
    let region = common::default_region(a.region.as_deref()).await?;
    let mut cx = common::context(name, &region, &a.run).await;
    super::preflight::identity(&cx).await?;
    cx.destroying = true;
    let cx = Arc::new(cx);
    let registry = Registry::builtin();
    let teardown = Teardown::of_tags(cx.clone(), &registry, name, a.stack_id.as_deref(), options(&a.run, Vec::new()));
    let state = Arc::new(StateHandle::in_memory(State::new(name, &region)));
    let graph = ResourceGraph::default();
    let planned = teardown.plan(&state.snapshot(), &graph).await.context("looking for the stack's resources")?;
    drive(a, &teardown, state, planned, &graph, ui).await
}

/// Show the plan `(p, found)`, confirm, run, report, scan: the same for a stack with state and one found by
/// its tags.
async fn drive(
    a: &DestroyArgs,
    teardown: &Teardown<'_>,
    state: Arc<StateHandle>,
    (p, found): (plan::Plan, Vec<Found>),
    graph: &ResourceGraph,
    ui: Ui,
) -> anyhow::Result<u8> {
    let stack = state.snapshot().stack.clone();
    print_plan(&p, ui)?;
    show_found(&found, ui, "found outside kbp's state, deleted with the stack");
    if a.dry_run {
        return Ok(0);
    }
    if !p.has_changes() {
        say(format!("Nothing of stack {stack} to delete."));
        return Ok(final_scan(teardown, &stack, ui).await);
    }
    if !a.auto_approve && !common::confirm(&format!("\nDo you want to destroy stack {stack}?"))? {
        eprintln!("destroy cancelled.");
        return Ok(FAILED);
    }
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let renderer = tokio::spawn(ui.render_events(rx));
    let note = |line: String| {
        if let Some(warning) = line.strip_prefix("warning: ") {
            common::warn(&[warning.to_string()]);
        } else {
            say(line);
        }
    };
    let walking = signals::walking("destroy");
    let report = teardown.run(&state, graph, tx, walking.interrupt.clone(), &note).await;
    drop(walking);
    let _ = renderer.await;
    let report = report.context("destroying the stack")?;
    summarize_walk(&p.summary, &report.outcome, &state);
    json::summarize(serde_json::json!({ "discovered": report.discovered }));
    if !report.outcome.ok() {
        return Ok(incomplete(&report, &state, a));
    }
    say(format!(
        "\nDestroy complete! Resources: {} destroyed ({} found outside state). State: {}",
        report.outcome.done,
        report.discovered,
        state.describe()
    ));
    Ok(final_scan(teardown, &stack, ui).await)
}

fn incomplete(report: &engine::Report, state: &StateHandle, a: &DestroyArgs) -> u8 {
    let again = match &a.from_tags {
        Some(name) => format!("kbp destroy --from-tags {name}"),
        None => "kbp destroy".to_string(),
    };
    super::report::report_incomplete(again.trim_start_matches("kbp "), &report.outcome, &state.describe());
    FAILED
}

/// Looks for anything of the stack still in the region; 0 when nothing is, else lists it and returns 1.
pub(super) async fn final_scan(teardown: &Teardown<'_>, stack: &str, ui: Ui) -> u8 {
    match teardown.scan().await {
        Ok(left) => {
            let items = discover::listing(&left);
            json::summarize(serde_json::json!({ "left": items.len() }));
            let region = teardown.region();
            json::emit(&json::Line::FinalScan { region, left: &items });
            if left.is_empty() {
                if !ui.json {
                    println!("Final scan: nothing of stack {stack} is left in {region}.");
                }
                return 0;
            }
            if !ui.json {
                eprintln!(
                    "\nFinal scan: still in {region}:\n{}\n  hint: run `kbp destroy` again; if it stays, delete it by hand",
                    discover::describe(&left)
                );
            }
            FAILED
        }
        Err(e) => common::report(&anyhow::anyhow!("the final scan failed: {e}")),
    }
}

/// For `gc`: one stack found by its tags, destroyed without questions; `Ok(true)` when nothing is left.
pub(super) async fn destroy_by_tags(
    cx: Arc<Context>,
    name: &str,
    id: Option<&str>,
    run: &RunArgs,
    ui: Ui,
) -> anyhow::Result<(bool, usize)> {
    let registry = Registry::builtin();
    let teardown = Teardown::of_tags(cx.clone(), &registry, name, id, options(run, Vec::new()));
    let state = Arc::new(StateHandle::in_memory(State::new(name, &cx.region)));
    let graph = ResourceGraph::default();
    let (p, found) = teardown.plan(&state.snapshot(), &graph).await.context("looking for the stack's resources")?;
    show_found(&found, ui, &format!("stack {name}, found by its tags, to delete"));
    if !p.has_changes() {
        return Ok((true, 0));
    }
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let renderer = tokio::spawn(ui.render_events(rx));
    let note = |line: String| say(line);
    let walking = signals::walking("gc");
    let report = teardown.run(&state, &graph, tx, walking.interrupt.clone(), &note).await;
    drop(walking);
    let _ = renderer.await;
    let report = report.context("destroying the stack")?;
    Ok((report.outcome.ok(), report.outcome.done))
}

//! `kbp apply`: refresh, plan, confirm, walk, report.

use std::sync::Arc;

use anyhow::{bail, Context as _};

use super::args::{ApplyArgs, Global, RunArgs};
use super::common::{self, FAILED};
use super::report::{print_plan, report_incomplete, summarize_walk};
use crate::exec;
use crate::plan::{self, Plan};
use crate::providers::{Context, Registry};
use crate::state::StateHandle;
use crate::ui::{json, Ui};

pub(super) async fn apply(a: ApplyArgs, g: &Global) -> u8 {
    let ui = Ui::new(a.run.json, g.no_color);
    let saved = match Plan::load(&a.file) {
        Ok(p) => p,
        Err(e) => return common::report(&anyhow::anyhow!(e)),
    };
    let result = match saved {
        Some(_) if a.refresh_only => Err(anyhow::anyhow!(
            "--refresh-only takes a blueprint, not a saved plan\n  hint: run `kbp apply BLUEPRINT --refresh-only`"
        )),
        Some(p) => apply_saved(p, &a, ui).await,
        None if a.refresh_only => super::drift::accept(&a, ui).await,
        None => apply_blueprint(&a, ui).await,
    };
    result.unwrap_or_else(|e| common::report(&e))
}

async fn apply_blueprint(a: &ApplyArgs, ui: Ui) -> anyhow::Result<u8> {
    let bp_args = super::args::BlueprintArgs::at(&a.file, &a.layers);
    let (bp, graph) = match common::load(&bp_args, ui.color) {
        Ok(x) => x,
        Err(code) => return Ok(code),
    };
    let locked = common::lock_stack(&a.state, &bp, "apply").await?;
    let mut cx = common::context(&bp.cluster.name, &bp.cluster.region, &a.run).await;
    let naming = common::naming_blueprint(&bp_args);
    common::refuse_renamed_cluster(&locked, naming.as_deref(), a.shaping.new_stack)?;
    let (state, moved) = crate::plan::make::moved_state(&locked.state, &bp, &graph)?;
    let me = super::preflight::stack(&cx, &bp, &state).await?;
    cx.applying = true;
    let ttl = match (a.ttl, &bp.cluster.ttl) {
        (Some(d), _) => Some(d),
        (None, Some(text)) => Some(super::args::parse_duration(text).map_err(anyhow::Error::msg)?),
        (None, None) => None,
    };
    if let Some(ttl) = ttl {
        cx.lifetime_tags = common::lifetime_tags(&cx, ttl).await?;
    }
    let cx = Arc::new(cx);
    let made =
        common::make_plan(plan::Mode::Normal, cx.clone(), (&bp, &graph), (&state, moved), &a.shaping, &a.run).await?;
    let (mut p, mut refreshed) = (made.plan, made.refreshed);
    common::refuse_second_copy(&locked, &p.adopted, a.shaping.adopt)?;
    (p.account, p.partition) = (Some(me.account), Some(me.partition));
    // Which file names this stack, for the next plan to tell a rename in it from a second stack.
    if naming.is_some() {
        refreshed.state.blueprint = naming;
    }
    let state = Arc::new(StateHandle::new(locked.backend, refreshed.state));
    let code = execute(p, cx, &Registry::builtin(), state, &a.run, a.auto_approve, ui, "apply").await?;
    locked.guard.release().await?;
    Ok(code)
}

async fn apply_saved(p: Plan, a: &ApplyArgs, ui: Ui) -> anyhow::Result<u8> {
    let s = &a.shaping;
    if !s.targets.is_empty() || !s.replace.is_empty() || !s.refresh || s.adopt {
        bail!("--target, --replace, --refresh and --adopt do not apply to a saved plan: it was made with whatever they said\n  hint: pass them to `kbp plan --out` instead");
    }
    if !a.layers.sets.is_empty() {
        bail!("--set does not apply to a saved plan: the plan already fixes every value\n  hint: make a new plan with the --set flags");
    }
    // Everything below changes nothing until `execute`; what the plan needs is checked first.
    plan::inputs::check(&p).map_err(|why| {
        anyhow::anyhow!("the saved plan cannot be applied: {why}\n  hint: run `kbp plan --out` again with this kbp")
    })?;
    // The plan goes back to the state it was made against, which it records; --state may only name the same.
    let recorded = p.state_location.clone().unwrap_or_else(|| crate::state::location::default_local(&p.stack));
    let location = match &a.state.state {
        Some(given) if !given.same_place(&recorded) => bail!(
            "the saved plan was made against state {recorded}, not {given}\n  hint: drop --state (and KBP_STATE) to apply it where it was made, or make a new plan against {given}"
        ),
        Some(given) => given.clone().in_region(&p.region),
        None => recorded.in_region(&p.region),
    };
    let locked = common::lock_state(&location, a.state.lock_timeout, &p.stack, &p.region, "apply").await?;
    if locked.existed && p.state_lineage.as_deref().is_some_and(|l| l != locked.state.lineage) {
        bail!(
            "the saved plan was made for another state (lineage {}), not {}\n  hint: run `kbp plan --out` again",
            p.state_lineage.as_deref().unwrap_or("none"),
            locked.backend.describe()
        );
    }
    if p.state_serial != locked.state.serial || (p.state_lineage.is_some() && !locked.existed) {
        bail!(
            "the state changed since the plan was saved (serial {} then, {} now)\n  hint: run `kbp plan --out` again and review the new plan",
            p.state_serial,
            locked.state.serial
        );
    }
    let mut cx = common::context(&p.stack, &p.region, &a.run).await;
    let me = super::preflight::identity(&cx).await?;
    if let Some(planned) = p.account.as_deref().filter(|&acct| acct != me.account) {
        bail!(
            "the saved plan was made in AWS account {planned}, but these credentials are of account {}\n  hint: apply it with the credentials it was planned with, or make a new plan",
            me.account
        );
    }
    cx.saved_crds = p.inputs.crds.clone().map(Arc::new);
    cx.saved_chart = p.inputs.chart.clone().map(Arc::new);
    let cx = Arc::new(cx);
    let registry = Registry::builtin();
    let state = Arc::new(StateHandle::new(locked.backend, locked.state));
    // The plan was reviewed when it was saved: applying a file is the approval.
    let code = execute(p, cx, &registry, state, &a.run, true, ui, "apply").await?;
    locked.guard.release().await?;
    Ok(code)
}

#[allow(clippy::too_many_arguments)]
async fn execute(
    p: Plan,
    cx: Arc<Context>,
    registry: &Registry,
    state: Arc<StateHandle>,
    run: &RunArgs,
    auto_approve: bool,
    ui: Ui,
    verb: &str,
) -> anyhow::Result<u8> {
    print_plan(&p, ui)?;
    common::warn(&p.warnings);
    if !p.has_changes() {
        return Ok(0);
    }
    if !auto_approve && !common::confirm(&format!("\nDo you want to {verb} these changes to stack {}?", p.stack))? {
        eprintln!("{verb} cancelled.");
        return Ok(FAILED);
    }
    if !p.moved.is_empty() {
        // The renames first: what follows is planned at the new addresses. Those already made are skipped.
        state
            .update(|s| {
                for m in &p.moved {
                    if s.get(&m.to).is_none() {
                        let _ = crate::state::edit::rename(s, &m.from, &m.to);
                    }
                }
            })
            .await
            .context("writing the [[moved]] renames into state")?;
    }
    if !p.adopted.is_empty() || !p.imported.is_empty() {
        // What refresh found by the stack's tags, and what [[import]] blocks read, goes into state first: the
        // changes below may update it.
        state
            .update(|s| {
                for r in p.adopted.iter().chain(&p.imported) {
                    s.resources.insert(r.address.clone(), r.clone());
                }
            })
            .await
            .context("writing the adopted and imported resources into state")?;
    }
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let operations = p.changes.iter().map(|c| if c.action.replaces() { 2 } else { 1 }).sum();
    let renderer = tokio::spawn(ui.every(run.progress_interval).render_counted(rx, Some(operations)));
    let walking = super::signals::walking(verb);
    let w = exec::Walk {
        cx: cx.clone(),
        registry,
        state: state.clone(),
        parallelism: run.parallelism as usize,
        events: tx,
        interrupt: walking.interrupt.clone(),
        sweep: None,
    };
    let outcome = exec::walk(&p, w).await;
    drop(walking);
    let _ = renderer.await;
    // A duplicate can only come from a create sent twice: one kbp retried after an unknown outcome (or resumed
    // from an earlier run), or one the SDK retried. Without either, every create is in state exactly once, and
    // the scan (a second or so of tag lookups in every service) is skipped.
    let creates_sent_twice = cx.uncertain_creates() || crate::aws::call_totals().1 > 0;
    let duplicates_left = if verb == "apply" && outcome.ok() && p.summary.add > 0 && creates_sent_twice {
        remove_duplicates(cx.clone(), registry, &state, run, ui).await
    } else {
        0
    };
    let s = &p.summary;
    summarize_walk(s, &outcome, &state);
    json::summarize(serde_json::json!({ "duplicates_left": duplicates_left }));
    if outcome.ok() {
        crate::ui::say(format!(
            "\nApply complete! Resources: {} added, {} changed, {} destroyed. State: {}",
            s.add,
            s.change,
            s.destroy,
            state.describe()
        ));
    } else {
        report_incomplete(verb, &outcome, &state.describe());
    }
    Ok(if outcome.ok() { 0 } else { FAILED })
}

/// After creates, removes second resources at one of the stack's addresses: creates whose outcome was unknown
/// (an answer lost, an earlier run killed with its request in flight) that landed after kbp had looked for them.
/// Returns how many could not be removed (a warning: the stack itself is complete).
async fn remove_duplicates(
    cx: Arc<Context>,
    registry: &Registry,
    state: &Arc<StateHandle>,
    run: &RunArgs,
    ui: Ui,
) -> usize {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let renderer = tokio::spawn(ui.render_events(rx));
    let result = crate::teardown::engine::delete_duplicates(cx, registry, state, run.parallelism as usize, tx).await;
    let _ = renderer.await;
    let (found, outcome) = match result {
        Ok(x) => x,
        Err(e) => {
            common::warn(&[format!("could not remove duplicates of the stack's resources: {e}")]);
            return 0;
        }
    };
    super::report::show_found(
        &found,
        ui,
        "duplicates of the stack's resources (creates whose answer was lost), removed",
    );
    let failed = outcome.failed.len() + outcome.skipped.len() + outcome.not_started;
    if failed > 0 {
        common::warn(&[format!(
            "{failed} duplicates could not be removed; `kbp apply` tries again, `kbp destroy` removes them"
        )]);
    }
    failed
}

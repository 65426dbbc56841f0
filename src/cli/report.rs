//! What the commands that plan and walk print: the plan (text, or the `plan` JSON line), a walk's `--json`
//! summary, the line that ends a walk that did not finish, and what was found outside state. Apply, destroy and
//! `apply --refresh-only` all report through here, so the same event reads the same in each.

use crate::exec;
use crate::plan::{self, render, Plan};
use crate::providers::Found;
use crate::state::StateHandle;
use crate::teardown::discover;
use crate::ui::{json, Ui};

/// The plan, as text on stdout or as the `plan` JSON line.
pub(super) fn print_plan(p: &Plan, ui: Ui) -> anyhow::Result<()> {
    if ui.json {
        // The inputs a saved plan carries (the CRDs, a megabyte) are for applying, not for reading.
        let shown;
        let p = if p.inputs.is_empty() {
            p
        } else {
            shown = Plan { inputs: Default::default(), ..p.clone() };
            &shown
        };
        json::emit(&json::Line::Plan { plan: p });
    } else {
        print!("{}", render::human(p, &render::Style { color: ui.color }));
    }
    Ok(())
}

/// What a walk did, for the `--json` summary: the plan's counts, the operations done, failed, skipped and not
/// started, and where state is.
pub(super) fn summarize_walk(planned: &plan::Summary, outcome: &exec::Outcome, state: &StateHandle) {
    json::summarize(serde_json::json!({
        "changes": planned,
        "done": outcome.done,
        "failed": outcome.failed.iter().map(|(a, e)| serde_json::json!({"address": a, "error": e})).collect::<Vec<_>>(),
        "skipped": outcome.skipped,
        "not_started": outcome.not_started,
        "state": state.describe(),
    }));
}

/// The line that ends a walk that did not finish: what was done and what was not, and how to go on, which
/// differs when a signal (Ctrl-C, a cancelled CI job) stopped it rather than an error.
pub(super) fn report_incomplete(verb: &str, outcome: &exec::Outcome, state: &str) {
    let counts = format!(
        "{} operations done, {} failed, {} skipped because of a failure, {} not started",
        outcome.done,
        outcome.failed.len(),
        outcome.skipped.len(),
        outcome.not_started
    );
    match super::signals::received() {
        Some(stop) if outcome.failed.is_empty() => eprintln!(
            "\nInterrupted ({}): {counts}. What finished is in state {state}; run `kbp {verb}` again to continue.",
            stop.name()
        ),
        Some(stop) => eprintln!(
            "\nInterrupted ({}): {counts}. What finished is in state {state}; fix the error and run `kbp {verb}` again.",
            stop.name()
        ),
        None => eprintln!(
            "\n{verb} incomplete: {counts}. What succeeded is in state {state}; fix the error and run `kbp {verb}` again."
        ),
    }
}

/// What was found outside state (`what` says which and what happens to it), listed on stdout or as a
/// `leftovers` JSON line; nothing when nothing was found.
pub(super) fn show_found(found: &[Found], ui: Ui, what: &str) {
    if found.is_empty() {
        return;
    }
    if ui.json {
        json::emit(&json::Line::Leftovers { what, items: &discover::listing(found) });
    } else {
        println!("\nOutside kbp's state, {what}:\n{}", discover::describe(found));
    }
}

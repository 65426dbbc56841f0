//! `kbp drift` (a scheduled CI job's `plan --refresh-only --detailed-exitcode`) and `kbp apply --refresh-only`,
//! which accepts the drift into state: the refreshed attributes replace the recorded ones, resources deleted
//! outside kbp leave state, and nothing in AWS or the cluster changes. What drift is, is `plan::drift`'s.

use super::args::{ApplyArgs, BlueprintArgs, PlanArgs, PlanFormat, StackArgs};
use super::common::{self, FAILED};
use crate::plan;
use crate::providers::Registry;
use crate::state::StateHandle;
use crate::ui::{json, Ui};

/// The plan `kbp drift` makes: a refresh-only plan of the stack, with `--detailed-exitcode`.
pub(super) fn plan_args(stack: StackArgs) -> PlanArgs {
    let format = if stack.run.json { PlanFormat::Json } else { PlanFormat::Text };
    PlanArgs {
        stack,
        format,
        out: None,
        detailed_exitcode: true,
        destroy: false,
        refresh_only: true,
        refresh_catalog: false,
        shaping: super::args::Shaping {
            targets: Vec::new(),
            replace: Vec::new(),
            refresh: true,
            adopt: false,
            new_stack: false,
        },
    }
}

/// `kbp apply FILE --refresh-only`: refresh under the state lock, show the drift, and (once approved) write the
/// refreshed resources into state in one write.
pub(super) async fn accept(a: &ApplyArgs, ui: Ui) -> anyhow::Result<u8> {
    let bp_args = BlueprintArgs::at(&a.file, &a.layers);
    let (bp, graph) = match common::load(&bp_args, ui.color) {
        Ok(x) => x,
        Err(code) => return Ok(code),
    };
    let locked = common::lock_stack(&a.state, &bp, "apply").await?;
    let cx = common::aws(&bp.cluster.name, &bp.cluster.region, &a.run).await;
    let me = super::preflight::stack(&cx, &bp, &locked.state).await?;
    let registry = Registry::builtin();
    let refreshed = plan::refresh(cx, &registry, &locked.state, Some(&graph), a.run.parallelism as usize)
        .await
        .map_err(crate::plan::make::refresh_failed)?;
    let mut p = plan::diff(&graph, &refreshed.state, &registry, &refreshed.gone);
    p.drift = plan::drift::drift(&locked.state, &refreshed);
    p.refreshing_only();
    (p.account, p.partition) = (Some(me.account), Some(me.partition));
    super::report::print_plan(&p, ui)?;
    if !refreshed.adopted.is_empty() {
        common::warn(&[format!(
            "{} resources found in AWS by the stack's tags are not in state; --refresh-only leaves them out\n  hint: \
             `kbp apply` adopts them",
            refreshed.adopted.len()
        )]);
    }
    let drifted = p.drift.len();
    if drifted == 0 {
        json::summarize(serde_json::json!({ "drift": 0 }));
        locked.guard.release().await?;
        return Ok(0);
    }
    let question = format!("\nAccept these changes into the state of stack {}? AWS is not changed.", p.stack);
    if !a.auto_approve && !common::confirm(&question)? {
        eprintln!("apply cancelled.");
        return Ok(FAILED);
    }
    let accepted = plan::drift::accept(&locked.state, &refreshed);
    let state = StateHandle::new(locked.backend, locked.state);
    state.update(|s| s.resources = accepted.resources).await?;
    json::summarize(serde_json::json!({ "drift": drifted, "state": state.describe() }));
    crate::ui::say(format!(
        "\nAccepted the drift of {drifted} resources into state {}; nothing in AWS was changed.",
        state.describe()
    ));
    locked.guard.release().await?;
    Ok(0)
}

//! `kbp plan`: refresh, diff, show; optionally save the plan for `kbp apply FILE`.

use anyhow::Context as _;

use super::args::{Global, PlanArgs};
use super::common::{self, FAILED};
use crate::plan::{self, render};
use crate::providers::Registry;
use crate::ui::Ui;

pub async fn run(a: PlanArgs, g: &Global) -> u8 {
    let ui = Ui::new(a.run.json, g.no_color);
    let (bp, graph) = match common::load(&a.bp, ui.color) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let result = async {
        let locked = common::lock_state(&a.state, &bp.cluster.name, &bp.cluster.region, "plan")?;
        let cx = common::aws(&bp.cluster.name, &bp.cluster.region, &a.run).await;
        let registry = Registry::aws();
        let parallelism = a.run.parallelism as usize;
        let refreshed = common::refresh(cx, &registry, &locked.state, Some(&graph), parallelism).await?;
        let mut p = if a.destroy {
            plan::diff_destroy(&graph, &refreshed.state, &registry)
        } else {
            plan::diff(&graph, &refreshed.state, &registry, &refreshed.gone)
        };
        // A saved plan is checked against the state as stored, not as refreshed in memory.
        p.state_serial = locked.state.serial;
        if !locked.existed {
            p.state_lineage = None;
        }
        if a.run.json {
            println!("{}", serde_json::to_string_pretty(&p).context("rendering the plan")?);
        } else {
            print!("{}", render::human(&p, &render::Style { color: ui.color }));
        }
        if let Some(out) = &a.out {
            p.save(out).with_context(|| format!("saving the plan to {}", out.display()))?;
            if !a.run.json {
                println!("\nSaved the plan to {}. Apply exactly it with: kbp apply {}", out.display(), out.display());
            }
        }
        anyhow::Ok(p.has_changes())
    }
    .await;
    match result {
        Ok(true) if a.detailed_exitcode => 2,
        Ok(_) => 0,
        Err(e) => {
            common::report(&e);
            FAILED
        }
    }
}

//! `kbp plan`: refresh, diff, show; optionally save the plan for `kbp apply FILE`. With `--refresh-only` (and
//! as `kbp drift`), the drift alone: what changed outside kbp since it last wrote state.
//!
//! A plan of changes also says what the stack costs ([`crate::simulate::cost`]). Its instance prices come from
//! the catalog kbp has cached, whatever its age, so a plan makes no AWS call for them; `--refresh-catalog`
//! reads the catalog from AWS first, and a failure there is a warning, never a failed plan.

use anyhow::Context as _;
use aws_config::SdkConfig;

use super::args::{Global, PlanArgs, PlanFormat};
use super::common::{self, FAILED};
use crate::catalog::CatalogCache;
use crate::plan::{self, render};
use crate::simulate::catalog::Catalog;
use crate::ui::{json, Ui};

/// The region's catalog for the cost block: read from AWS with `refresh`, else the cached one of any age; `None`
/// (with a warning when something went wrong, not when nothing is cached) otherwise.
async fn catalog_for_cost(sdk: &SdkConfig, region: &str, refresh: bool) -> Option<Catalog> {
    let warn = |text: String| common::warn(&[text]);
    if refresh {
        return match crate::catalog::load(sdk, region, true).await {
            Ok(loaded) => {
                warn_all(&loaded.warnings);
                Some(loaded.catalog)
            }
            Err(e) => {
                warn(format!("the plan's cost has no instance prices: {e}"));
                None
            }
        };
    }
    let cache = CatalogCache::default_location()?;
    cache.read_any_age(region).unwrap_or_else(|why| {
        warn(format!(
            "the plan's cost has no instance prices: {why}\n  hint: run `kbp plan --refresh-catalog` to read the catalog again"
        ));
        None
    })
}

fn warn_all(warnings: &[crate::catalog::Warning]) {
    common::warn(&warnings.iter().map(ToString::to_string).collect::<Vec<_>>());
}

pub(super) async fn run(a: PlanArgs, g: &Global) -> u8 {
    let format = if a.stack.run.json { PlanFormat::Json } else { a.format };
    let ui = Ui::new(format != PlanFormat::Text, g.no_color);
    if a.refresh_only && format == PlanFormat::Markdown {
        return common::report(&anyhow::anyhow!(
            "--refresh-only prints text or JSON, not markdown\n  hint: use --format text or --json"
        ));
    }
    let (bp, graph) = match common::load(&a.stack.bp, ui.color) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let result = async {
        let locked = common::lock_stack(&a.stack.state, &bp, "plan").await?;
        if !a.destroy {
            let naming = common::naming_blueprint(&a.stack.bp);
            common::refuse_renamed_cluster(&locked, naming.as_deref(), a.shaping.new_stack)?;
        }
        let (state, moved) = plan::make::moved_state(&locked.state, &bp, &graph)?;
        let cx = common::aws(&bp.cluster.name, &bp.cluster.region, &a.stack.run).await;
        let me = if a.destroy {
            super::preflight::identity(&cx).await?
        } else {
            super::preflight::stack(&cx, &bp, &state).await?
        };
        let mode = match (a.destroy, a.refresh_only) {
            (true, _) => plan::Mode::Destroy,
            (false, true) => plan::Mode::RefreshOnly,
            (false, false) => plan::Mode::Normal,
        };
        let made =
            common::make_plan(mode, cx.clone(), (&bp, &graph), (&state, moved), &a.shaping, &a.stack.run).await?;
        let mut p = made.plan;
        if mode == plan::Mode::Normal {
            common::refuse_second_copy(&locked, &p.adopted, a.shaping.adopt)?;
        }
        (p.account, p.partition) = (Some(me.account), Some(me.partition));
        // A saved plan is checked against the state as stored, not as refreshed in memory, and goes back to it.
        p.state_serial = locked.state.serial;
        if !locked.existed {
            p.state_lineage = None;
        }
        p.state_location = Some(locked.location.clone());
        if !a.destroy && !a.refresh_only {
            let catalog = catalog_for_cost(&cx.sdk, &bp.cluster.region, a.refresh_catalog).await;
            p.cost = Some(crate::simulate::cost::stack_cost(&bp, catalog.as_ref()));
        }
        match format {
            PlanFormat::Json => json::emit(&json::Line::Plan { plan: &p }),
            PlanFormat::Markdown => print!("{}", plan::markdown::markdown(&p)),
            PlanFormat::Text => print!("{}", render::human(&p, &render::Style { color: ui.color })),
        }
        common::warn(&p.warnings);
        if let Some(out) = &a.out {
            plan::inputs::carry(&mut p).await?;
            p.save(out).with_context(|| format!("saving the plan to {}", out.display()))?;
            let message =
                format!("Saved the plan to {}. Apply exactly it with: kbp apply {}", out.display(), out.display());
            match format {
                PlanFormat::Text => println!("\n{message}"),
                _ => eprintln!("{message}"),
            }
        }
        locked.guard.release().await?;
        json::summarize(serde_json::json!({
            "changes": p.summary,
            "has_changes": p.has_changes(),
            "saved_to": a.out.as_ref().map(|o| o.display().to_string()),
            "drift": p.drift.len(),
        }));
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

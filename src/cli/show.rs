//! `kbp show PLANFILE`: a saved plan as `kbp plan` printed it (text, Markdown or JSON), with where it applies,
//! for whoever approves the apply job and for the job's log. Reads nothing but the file.

use super::args::{Global, PlanFormat, ShowArgs};
use super::common::{self, FAILED};
use crate::plan::{markdown, render, Plan};
use crate::ui::Ui;

pub(super) fn run(a: ShowArgs, g: &Global) -> u8 {
    let format = if a.json { PlanFormat::Json } else { a.format };
    let ui = Ui::new(format != PlanFormat::Text, g.no_color);
    let plan = match Plan::load(&a.file) {
        Ok(Some(p)) => p,
        Ok(None) => {
            return common::report(&anyhow::anyhow!(
            "{} is not a plan saved by `kbp plan --out`\n  hint: `kbp plan BLUEPRINT` shows the plan of a blueprint",
            a.file.display()
        ))
        }
        Err(e) => return common::report(&anyhow::anyhow!(e)),
    };
    // What the plan carries for applying (the CRDs) is named, not printed.
    let carried = plan.inputs.crds.as_ref().map(|b| {
        format!(
            "{} CRDs of Karpenter {} (sha256 {}, read from {})",
            b.documents.len(),
            b.version,
            &b.sha256[..12],
            b.source
        )
    });
    let shown = Plan { inputs: Default::default(), ..plan };
    match format {
        PlanFormat::Json => match serde_json::to_string(&shown) {
            Ok(text) => println!("{text}"),
            Err(e) => {
                eprintln!("error: cannot print the plan as JSON: {e}");
                return FAILED;
            }
        },
        PlanFormat::Markdown => print!("{}", markdown::markdown(&shown)),
        PlanFormat::Text => {
            let state = shown
                .state_location
                .as_ref()
                .map_or_else(|| "the default local state".to_string(), ToString::to_string);
            println!(
                "Saved plan {} (kbp {}), to apply to state {state} at serial {}{}.\n",
                a.file.display(),
                shown.kbp_version,
                shown.state_serial,
                carried.map(|c| format!("; carries {c}")).unwrap_or_default()
            );
            print!("{}", render::human(&shown, &render::Style { color: ui.color }));
        }
    }
    0
}

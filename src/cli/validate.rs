//! `kbp validate`: parse and check a blueprint, report every problem, touch nothing.

use super::args::{Global, ValidateArgs};
use super::common::FAILED;
use crate::blueprint;
use crate::diag::Diagnostics;
use crate::ui::json;

/// With `--json`: one `diagnostic` event per problem, and the verdict and counts in the summary (`listed` says
/// how many diagnostics there are when there are more than `diag::KEPT` of one severity).
fn report_json(valid: bool, d: &Diagnostics) {
    for item in &d.items {
        json::emit(&json::Line::Diagnostic(item));
    }
    let c = d.counts();
    json::summarize(
        serde_json::json!({ "valid": valid, "errors": c.errors, "warnings": c.warnings, "listed": c.listed }),
    );
}

pub fn run(a: ValidateArgs, g: &Global) -> u8 {
    let ui = crate::ui::Ui::new(a.json, g.no_color);
    match blueprint::check_layered(&a.bp.blueprint, &a.bp.overlays, &a.bp.sets) {
        Ok(mut loaded) => {
            let crds = super::crd_check::offline(&mut loaded);
            super::crd_check::name_fields(&mut loaded, crds.as_ref());
            let graph = match crate::graph::compile(&loaded.blueprint) {
                Ok(graph) => graph,
                Err(e) => {
                    return super::common::report(&anyhow::anyhow!(
                        "the blueprint compiles to an invalid graph: {e}\n  hint: this is a kbp bug; please report it with the blueprint"
                    ))
                }
            };
            // `[[import]]` tables name addresses of the compiled graph.
            let addresses: Vec<String> = graph.in_order().iter().map(|r| r.address.to_string()).collect();
            if let Err(d) = loaded.imports(&addresses) {
                return invalid(&d, a.json, ui.color);
            }
            if let Err(d) = super::aws_contract::check(&loaded, &graph) {
                return invalid(&d, a.json, ui.color);
            }
            if let Some(crds) = &crds {
                if let Err(d) = super::crd_check::check(&loaded, &graph, crds) {
                    return invalid(&d, a.json, ui.color);
                }
            }
            let bp = loaded.blueprint;
            let warnings = loaded.warnings;
            if a.json {
                report_json(true, &warnings);
                return 0;
            }
            if !warnings.is_empty() {
                eprint!("{}", warnings.render(ui.color));
            }
            if a.print {
                print!("{}", blueprint::to_toml(&bp));
            } else {
                println!(
                    "{}: valid ({} node pools, {} node classes)",
                    a.bp.blueprint.display(),
                    bp.node_pools.len(),
                    bp.node_classes.len()
                );
            }
            0
        }
        Err(d) => invalid(&d, a.json, ui.color),
    }
}

fn invalid(d: &Diagnostics, json: bool, color: bool) -> u8 {
    if json {
        report_json(false, d);
    } else {
        eprint!("{}", d.render(color));
    }
    FAILED
}

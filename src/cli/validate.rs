//! `kbp validate`: parse and check a blueprint, report every problem, touch nothing.

use super::args::{Global, ValidateArgs};
use super::common::FAILED;
use crate::blueprint;
use crate::diag::Diagnostics;
use crate::ui::json;

/// With `--json`: one `diagnostic` event per problem, and the verdict and counts in the summary (`listed` says
/// how many diagnostics there are when there are more than `diag::KEPT` of one severity).
fn report_json(valid: bool, d: &Diagnostics) {
    for item in d.items() {
        json::emit(&json::Line::Diagnostic(item));
    }
    let c = d.counts();
    json::summarize(
        serde_json::json!({ "valid": valid, "errors": c.errors, "warnings": c.warnings, "listed": c.listed }),
    );
}

pub(super) fn run(a: ValidateArgs, g: &Global) -> u8 {
    let color = crate::color::enabled(g.no_color, crate::color::Stream::Stderr);
    let mut loaded = match blueprint::check_partial(&a.bp.blueprint, &a.bp.layers.overlays, &a.bp.layers.sets) {
        Ok(loaded) => loaded,
        Err(d) => return invalid(&d, a.json, color),
    };
    let crds = super::crd_check::offline(&mut loaded);
    super::crd_check::name_fields(&mut loaded, crds.as_ref());
    match crate::graph::compile(&loaded.blueprint) {
        // One run reports everything: the schema's errors, then what the checks of the compiled stack find in
        // the parts those errors leave alone. Each check returns every diagnostic so far with its own.
        Ok(graph) => {
            // `[[import]]` tables name addresses of the compiled graph.
            let addresses: Vec<String> = graph.in_order().iter().map(|r| r.address.to_string()).collect();
            if let Err(d) = loaded.imports(&addresses) {
                loaded.warnings = d;
            }
            if let Err(d) = super::aws_contract::check(&loaded, &graph) {
                loaded.warnings = d;
            }
            if let Some(crds) = &crds {
                if let Err(d) = super::crd_check::check(&loaded, &graph, crds) {
                    loaded.warnings = d;
                }
            }
            super::chart_check::check(&mut loaded, &graph);
        }
        // Built from the placeholders of refused values: the errors already reported are what to fix.
        Err(_) if loaded.has_errors() => {}
        Err(e) => {
            return super::common::report(&anyhow::anyhow!(
                "the blueprint compiles to an invalid graph: {e}\n  hint: this is a kbp bug; please report it with the blueprint"
            ))
        }
    }
    if loaded.has_errors() {
        return invalid(&loaded.warnings, a.json, color);
    }
    let bp = loaded.blueprint;
    let warnings = loaded.warnings;
    if a.json {
        report_json(true, &warnings);
        return 0;
    }
    if !warnings.is_empty() {
        eprint!("{}", warnings.render(color));
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

fn invalid(d: &Diagnostics, json: bool, color: bool) -> u8 {
    if json {
        report_json(false, d);
    } else {
        eprint!("{}", d.render(color));
    }
    FAILED
}

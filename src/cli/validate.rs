//! `kbp validate`: parse and check a blueprint, report every problem, touch nothing.

use std::io::Write;

use serde::Serialize;

use super::args::{Global, ValidateArgs};
use super::common::FAILED;
use crate::blueprint;
use crate::diag::{Diagnostic, Diagnostics};

/// What `--json` prints: the verdict, how many errors and warnings there are, and the diagnostics themselves
/// (all of them, unless there are more than `diag::KEPT` of one severity: `listed` says how many are there).
#[derive(Serialize)]
struct Report<'a> {
    valid: bool,
    errors: usize,
    warnings: usize,
    listed: usize,
    diagnostics: &'a [Diagnostic],
}

fn print_json(valid: bool, d: &Diagnostics) {
    let c = d.counts();
    let report = Report { valid, errors: c.errors, warnings: c.warnings, listed: c.listed, diagnostics: &d.items };
    // Written as it is serialized, not built in memory first; a closed stdout (`| head`) is not worth a message.
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer(&mut out, &report).map_err(std::io::Error::from).and_then(|()| writeln!(out));
}

pub fn run(a: ValidateArgs, g: &Global) -> u8 {
    let ui = crate::ui::Ui::new(a.json, g.no_color);
    match blueprint::check(&a.bp.blueprint, &a.bp.sets) {
        Ok(loaded) => {
            let bp = loaded.blueprint;
            let warnings = loaded.warnings;
            if let Err(e) = crate::graph::compile(&bp) {
                eprintln!("error: the blueprint compiles to an invalid graph: {e}");
                return FAILED;
            }
            if a.json {
                print_json(true, &warnings);
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
        Err(d) => {
            if a.json {
                print_json(false, &d);
            } else {
                eprint!("{}", d.render(ui.color));
            }
            FAILED
        }
    }
}

//! `kbp validate`: parse and check a blueprint, report every problem, touch nothing.

use super::args::{Global, ValidateArgs};
use super::common::FAILED;
use crate::blueprint;

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
                println!("{}", serde_json::json!({ "valid": true, "diagnostics": warnings.items }));
                return 0;
            }
            if !warnings.items.is_empty() {
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
                println!("{}", serde_json::json!({ "valid": false, "diagnostics": d.items }));
            } else {
                eprint!("{}", d.render(ui.color));
            }
            FAILED
        }
    }
}

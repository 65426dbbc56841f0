//! Plans narrowed or forced by the user, as Terraform's `-target` and `-replace`: a targeted plan holds only the
//! changes of the resources named and of what they depend on; a replacement is planned for a resource nothing
//! in the blueprint changed (a node group to roll, a key to rotate).

use std::collections::BTreeSet;

use super::{summarize, Action, Plan};
use crate::graph::{Address, ResourceGraph};

/// Parses the addresses given to `flag`, each of which the blueprint's graph (or, for a deletion, state) must
/// hold.
pub fn addresses(
    flag: &str,
    given: &[String],
    graph: &ResourceGraph,
    in_state: impl Fn(&Address) -> bool,
) -> Result<Vec<Address>, String> {
    given
        .iter()
        .map(|text| {
            let address: Address = text.parse().map_err(|e| format!("{flag} {text}: {e}"))?;
            if graph.get(&address).is_none() && !in_state(&address) {
                return Err(format!(
                    "{flag} {text}: the blueprint has no resource at this address, and state holds none\n  hint: `kbp graph --format json` lists the blueprint's addresses, `kbp state list` those in state"
                ));
            }
            Ok(address)
        })
        .collect()
}

/// The targets and everything they depend on, transitively.
fn with_dependencies(graph: &ResourceGraph, targets: &[Address]) -> BTreeSet<Address> {
    let mut seen: BTreeSet<Address> = BTreeSet::new();
    let mut todo: Vec<Address> = targets.to_vec();
    while let Some(a) = todo.pop() {
        if !seen.insert(a.clone()) {
            continue;
        }
        if let Some(r) = graph.get(&a) {
            todo.extend(r.dependencies());
        }
    }
    seen
}

/// Keeps only the changes of `targets` and what they depend on; says how many were left out.
pub fn target(p: &mut Plan, graph: &ResourceGraph, targets: &[Address]) {
    if targets.is_empty() {
        return;
    }
    let kept = with_dependencies(graph, targets);
    let before = p.changes.len();
    p.changes.retain(|c| kept.contains(&c.address));
    let left_out = before - p.changes.len();
    let (adopt, import) = (p.summary.adopt, p.summary.import);
    p.summary = summarize(&p.changes);
    (p.summary.adopt, p.summary.import) = (adopt, import);
    let named: Vec<String> = targets.iter().map(ToString::to_string).collect();
    p.warnings.push(format!(
        "a targeted plan (--target {}): {left_out} other changes of the stack are left out, and the stack may not match the blueprint after it\n  hint: run a plan without --target once the exception is over",
        named.join(", ")
    ));
}

/// Whether every requested replacement is in the plan as one (a resource not yet created is simply created).
pub fn replaced(p: &Plan, replace: &[Address]) -> Vec<Address> {
    replace
        .iter()
        .filter(|a| !p.changes.iter().any(|c| &c.address == *a && (c.action.replaces() || c.action == Action::Create)))
        .cloned()
        .collect()
}

//! Duplicates of a stack's own resources: what carries the stack's tags and the `kbp:address` of a resource
//! that state holds under another ID. They come from creates whose outcome was unknown (an answer lost, a run
//! killed with the request in flight) made before kbp looked for them; left alone they cost money and block
//! deleting the VPC.

use std::collections::BTreeSet;

use crate::providers::Found;
use crate::state::State;

/// Of `tagged` (the stack's resources found by its tags), those state does not hold but whose address it holds:
/// a second resource at one address. Anything tagged for the stack without such a twin is left out (it is not
/// demonstrably a duplicate).
pub fn orphans(state: &State, tagged: Vec<Found>) -> Vec<Found> {
    let held = held_ids(state);
    let addresses: BTreeSet<String> = state.resources.keys().map(|a| a.to_string()).collect();
    tagged
        .into_iter()
        .filter(|f| !held.contains(&f.id) && f.name.as_ref().is_some_and(|a| addresses.contains(a)))
        .collect()
}

/// Every ID, ARN and name state records for its resources.
pub fn held_ids(state: &State) -> BTreeSet<String> {
    let mut held = BTreeSet::new();
    for r in state.resources.values() {
        held.extend(r.id.clone());
        held.extend(r.outputs.values().filter_map(|v| v.as_str().map(str::to_string)));
    }
    held
}

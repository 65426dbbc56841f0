//! Duplicates of a stack's own resources: what carries the stack's tags and the `kbp:address` of a resource
//! that state holds under another ID. They come from creates whose outcome was unknown (an answer lost, a run
//! killed with the request in flight) made before kbp looked for them; left alone they cost money and block
//! deleting the VPC.

use std::collections::BTreeSet;

use super::{stack, Inventory};
use crate::providers::{Context, ProviderError};
use crate::state::State;

/// What [`stack()`] finds of `state`'s stack that state does not hold, but whose address it holds: a second
/// resource at one address. Anything tagged for the stack without such a twin is left out (it is not
/// demonstrably a duplicate).
pub async fn orphans(cx: &Context, state: &State) -> Result<Inventory, ProviderError> {
    let mut found = stack(cx, &state.stack).await?;
    let held = held_ids(state);
    let addresses: BTreeSet<String> = state.resources.keys().map(|a| a.to_string()).collect();
    found.items.retain(|i| !held.contains(&i.id) && i.name.as_ref().is_some_and(|a| addresses.contains(a)));
    Ok(found)
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

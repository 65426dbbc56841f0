//! Finding a stack by its tags alone (`kbp destroy --from-tags`, `kbp gc`, duplicates after an apply): every
//! kind the registry holds whose descriptor says it is found by its tags
//! ([`WithoutState::Tags`]) lists what is tagged `kbp:stack=<name>` (and,
//! when the stack's ID is known, not tagged with another `kbp:stack-id`), all kinds at once, as [`Found`] entries
//! naming what each uses so the engine orders the deletes. How a kind looks (one tag-filtered Describe per EC2
//! type, IAM's lists and each entity's tags, one tag query for queues, rules and keys) is its provider's.

use crate::providers::tagged::{Owner, Search};
use crate::providers::{Context, Found, Registry, Result, WithoutState};

/// Everything of the stack `who` in the region (and in IAM, which is global); only reads.
pub async fn stack(cx: &Context, registry: &Registry, who: Owner<'_>) -> Result<Vec<Found>> {
    let search = Search::new(who);
    let by_tags = registry.providers().filter(|p| p.descriptor().without_state == WithoutState::Tags);
    // Boxed: the kinds' futures together are too big for a test thread's stack in a debug build.
    let found = futures::future::try_join_all(by_tags.map(|p| Box::pin(p.tagged(cx, &search)))).await?;
    let mut all: Vec<Found> = found.into_iter().flatten().filter(|f| !f.id.is_empty()).collect();
    all.sort_by(|a, b| (a.kind, &a.id).cmp(&(b.kind, &b.id)));
    all.dedup_by(|a, b| a.kind == b.kind && a.id == b.id);
    Ok(all)
}

//! Teardown: one engine that destroys a stack so that nothing is left, whether kbp's state knows all of it, part
//! of it, or none of it (`kbp destroy`, `kbp destroy --from-tags`, `kbp gc`).
//!
//! The sequence ([`engine`]): release what in-cluster controllers made while they still run ([`in_cluster`]),
//! delete the in-cluster objects kbp applied, then discover what the stack owns outside state ([`discover`]),
//! add it to state as ordinary entries with inferred dependencies, and delete everything in one
//! [`exec::walk`](crate::exec::walk) ordered by those edges; finally scan the region for anything left.
//!
//! Also here: finding a stack by its tags ([`stack()`]), the region's stacks for `gc` ([`stacks()`]), and
//! duplicates of a stack's own resources ([`orphans()`]).

pub mod discover;
pub mod engine;
pub mod in_cluster;
mod orphans;
mod stack;
mod stacks;

use time::OffsetDateTime;

pub use engine::{Options, Teardown};
pub use orphans::{held_ids, orphans};
pub use stack::stack;
pub use stacks::stacks;

/// A kbp stack found in the region by its tags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackInfo {
    /// The stack's name (`kbp:stack`, its `cluster.name`).
    pub name: String,
    /// `kbp:stack-id` (the state lineage), which tells two stacks of one name apart; `None` for stacks made
    /// before kbp set it.
    pub id: Option<String>,
    /// `kbp:owner`: who applied it (sandbox stacks).
    pub owner: Option<String>,
    /// `kbp:expires` (sandbox stacks); `None` when absent or not RFC 3339.
    pub expires: Option<OffsetDateTime>,
    /// The EKS cluster's creation time, when asked for (`stacks(cx, true)`); `None` otherwise, and without a
    /// cluster (EC2 does not say when a VPC was made).
    pub created: Option<OffsetDateTime>,
}

impl StackInfo {
    /// Whether it has an expiry that has passed at `now`.
    pub fn expired_at(&self, now: OffsetDateTime) -> bool {
        self.expires.is_some_and(|e| e <= now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_is_compared_with_now() {
        let now = OffsetDateTime::now_utc();
        let info = |expires| StackInfo { name: "s".into(), id: None, owner: None, expires, created: None };
        assert!(info(Some(now - time::Duration::hours(1))).expired_at(now));
        assert!(!info(Some(now + time::Duration::hours(1))).expired_at(now));
        assert!(!info(None).expired_at(now));
    }
}

//! `aws_sqs_queue_policy`: the attributes the compiler emits for a queue's policy and its provider reads
//! ([`super`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The policy of the queue `R` names (its URL).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueuePolicy<R> {
    /// The queue's URL: a reference to the queue.
    pub queue_url: R,
    /// The policy document; the ARNs in it are references until the engine resolves them.
    pub policy: Value,
}

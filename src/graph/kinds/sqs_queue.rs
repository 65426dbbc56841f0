//! `aws_sqs_queue`: the attributes the compiler emits for the interruption queue and its provider reads
//! ([`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// An SQS queue; nothing of it comes from other resources.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Queue {
    /// The queue's name, unique in the account and region.
    pub name: String,
    /// How long SQS keeps an unread message (60 to 1,209,600).
    pub message_retention_seconds: i64,
    /// Whether SQS encrypts messages at rest with keys of its own (SSE-SQS).
    pub sqs_managed_sse_enabled: bool,
    /// The user's tags; kbp's own are added where the resource is made.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

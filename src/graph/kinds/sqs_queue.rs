//! `aws_sqs_queue`: the attributes the compiler emits for the interruption queue and its provider reads
//! ([`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// An SQS queue; nothing of it comes from other resources.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Queue {
    pub name: String,
    pub message_retention_seconds: i64,
    pub sqs_managed_sse_enabled: bool,
    /// The user's tags; kbp's own are added where the resource is made.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

//! `aws_eventbridge_rule`: the attributes the compiler emits for an EventBridge rule and its provider reads
//! ([`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An EventBridge rule with one target, the queue `R` names (its ARN).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rule<R> {
    /// The rule's name, unique on the event bus.
    pub name: String,
    /// What the rule is for, in words.
    #[serde(default)]
    pub description: Option<String>,
    /// The events the rule matches (an EventBridge event pattern).
    pub event_pattern: Value,
    /// `ENABLED` or `DISABLED`, as EventBridge spells it; a rule kbp makes is enabled unless the graph says
    /// otherwise.
    #[serde(default = "enabled")]
    pub state: String,
    /// The ID of the rule's one target, unique within the rule.
    pub target_id: String,
    /// The target's ARN: the interruption queue.
    pub target_arn: R,
    /// The user's tags; kbp's own are added where the resource is made.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

fn enabled() -> String {
    "ENABLED".to_string()
}

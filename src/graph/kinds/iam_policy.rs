//! `aws_iam_policy`: the attributes the compiler emits for a customer-managed IAM policy (Karpenter's controller
//! permissions) and its provider reads ([`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A customer-managed policy; its document names other resources (the queue, the node role, the cluster).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Policy {
    /// The policy's name, unique in the account.
    pub name: String,
    /// The IAM path the policy lives under; `/` by default.
    #[serde(default = "super::root_path")]
    pub path: String,
    /// What the policy is for, in words; IAM cannot change it after creation.
    #[serde(default)]
    pub description: Option<String>,
    /// The policy document; what it names of other resources are references until the engine resolves them.
    pub policy: Value,
    /// The user's tags; kbp's own are added where the resource is made.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

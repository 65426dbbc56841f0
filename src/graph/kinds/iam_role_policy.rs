//! `aws_iam_role_policy`: the attributes an inline role policy's provider reads ([`super`]). No blueprint
//! compiles one today; the kind is registered for a graph or state that names one.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A policy document embedded in a role rather than attached to it: it has no ARN and goes when the role goes.
/// The role may be another resource's output, so it is `R`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RolePolicy<R> {
    /// The name of the role that holds the policy; with `name`, the policy's identity, so a change replaces it.
    pub role: R,
    /// The policy's name, unique among the role's inline policies.
    pub name: String,
    /// The policy document, which IAM replaces in place when it changes.
    pub policy: Value,
}

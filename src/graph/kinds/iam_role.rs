//! `aws_iam_role`: the attributes the compiler emits for an IAM role and its provider reads ([`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An IAM role; its trust policy may name other resources (the cluster's OIDC provider).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Role {
    /// The role's name, unique in the account.
    pub name: String,
    /// The IAM path the role lives under; `/` by default.
    #[serde(default = "super::root_path")]
    pub path: String,
    /// What the role is for, in words.
    #[serde(default)]
    pub description: Option<String>,
    /// The trust policy document; what it names of other resources are references until the engine resolves
    /// them.
    pub assume_role_policy: Value,
    /// Seconds, 3,600 to 43,200; `None` leaves IAM's default (an hour).
    #[serde(default)]
    pub max_session_duration: Option<i32>,
    /// The user's tags; kbp's own are added where the resource is made.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

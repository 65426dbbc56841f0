//! `aws_kms_key`: the attributes the compiler emits for a KMS key (the cluster's secrets key) and its provider
//! reads ([`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A symmetric KMS key under an alias; nothing of it comes from other resources.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Key {
    /// `alias/…`, unique in the account and region.
    pub alias: String,
    /// What the key is for, in words.
    #[serde(default)]
    pub description: Option<String>,
    /// Yearly rotation of the key material; on unless the graph says otherwise.
    #[serde(default = "on")]
    pub enable_key_rotation: bool,
    /// The days between the deletion request and the key's end (7 to 30).
    #[serde(default = "a_week")]
    pub deletion_window_in_days: i32,
    /// The user's tags; kbp's own are added where the resource is made.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

fn on() -> bool {
    true
}

fn a_week() -> i32 {
    7
}

//! `aws_eip`: the attributes the compiler emits for an Elastic IP (a NAT gateway's public address) and its
//! provider reads ([`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// An Elastic IP address; nothing of it comes from other resources.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Eip {
    /// The address's domain: `vpc`, the only one AWS still allocates in and the one a NAT gateway takes
    /// (EC2-Classic's `standard` is retired). `vpc` when left out.
    #[serde(default = "vpc")]
    pub domain: String,
    /// The user's tags and the address's `Name`; kbp's own are added where the resource is made.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

fn vpc() -> String {
    "vpc".to_string()
}

//! `aws_vpc`: the attributes the compiler emits for the VPC kbp creates and its provider reads ([`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A VPC; nothing of it comes from other resources.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Vpc {
    /// The VPC's primary IPv4 range, which its subnets carve up; AWS cannot change it in place.
    pub cidr_block: String,
    /// Whether the Amazon-provided DNS server answers in the VPC; nodes need it to resolve the cluster's
    /// endpoint. On when left out, as AWS makes a VPC.
    #[serde(default = "on")]
    pub enable_dns_support: bool,
    /// Whether instances get public DNS host names; EKS needs it for a private endpoint. On when left out.
    #[serde(default = "on")]
    pub enable_dns_hostnames: bool,
    /// The user's tags and the VPC's `Name`; kbp's own are added where the resource is made.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

fn on() -> bool {
    true
}

//! `aws_subnet`: the attributes the compiler emits for a subnet of the VPC kbp creates and its provider reads
//! ([`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A subnet in one availability zone of the VPC `R` names (its ID).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Subnet<R> {
    /// The VPC the subnet is made in.
    pub vpc_id: R,
    /// The subnet's IPv4 range, within the VPC's.
    pub cidr_block: String,
    /// The zone the subnet lies in (`us-west-2a`); where, in turn, the nodes launched in it run.
    pub availability_zone: String,
    /// Whether instances launched in the subnet get a public IPv4 address: on for the public tier only. Off when
    /// left out, as AWS makes a subnet.
    #[serde(default)]
    pub map_public_ip_on_launch: bool,
    /// The user's tags, the tier's discovery and load-balancer tags and the subnet's `Name`; kbp's own are added
    /// where the resource is made.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

//! `aws_nat_gateway`: the attributes the compiler emits for a NAT gateway and its provider reads ([`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A NAT gateway in the public subnet `R` names, with the Elastic IP `R` names (their IDs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NatGateway<R> {
    /// The public subnet the gateway sits in; private subnets' traffic leaves through it.
    pub subnet_id: R,
    /// The allocation ID of the Elastic IP the gateway sends from; `None` leaves the choice to AWS (a private
    /// gateway has none).
    #[serde(default)]
    pub allocation_id: Option<R>,
    /// `public` (to the internet, through the VPC's internet gateway) or `private` (to other networks only).
    /// `public` when left out, as AWS makes one.
    #[serde(default = "public")]
    pub connectivity_type: String,
    /// The user's tags and the gateway's `Name`; kbp's own are added where the resource is made.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

fn public() -> String {
    "public".to_string()
}

//! `aws_internet_gateway`: the attributes the compiler emits for the VPC's internet gateway and its provider
//! reads ([`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// An internet gateway attached to the VPC `R` names (its ID).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InternetGateway<R> {
    /// The VPC the gateway is attached to; a gateway serves one VPC at a time.
    pub vpc_id: R,
    /// The user's tags and the gateway's `Name`; kbp's own are added where the resource is made.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

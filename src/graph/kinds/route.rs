//! `aws_route`: the attributes the compiler emits for a route and its provider reads ([`super`]).

use serde::{Deserialize, Serialize};

/// A route in the table `R` names, to the internet gateway or the NAT gateway `R` names (their IDs): exactly one
/// of the two targets is set. AWS gives a route no ID and no tags.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Route<R> {
    /// The table the route is in.
    pub route_table_id: R,
    /// The traffic the route sends to its target; a table holds one route per destination.
    pub destination_cidr_block: String,
    /// The internet gateway the route sends to (a public subnet's way out); `None` (null) when the target is a
    /// NAT gateway.
    #[serde(default)]
    pub gateway_id: Option<R>,
    /// The NAT gateway the route sends to (a private subnet's way out); `None` (null) when the target is an
    /// internet gateway.
    #[serde(default)]
    pub nat_gateway_id: Option<R>,
}

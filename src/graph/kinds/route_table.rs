//! `aws_route_table`: the attributes the compiler emits for a route table and its provider reads ([`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// An empty route table in the VPC `R` names (its ID); its routes and subnets are resources of their own
/// ([`super::route`], [`super::route_table_association`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouteTable<R> {
    /// The VPC the table routes for; a table cannot move to another.
    pub vpc_id: R,
    /// The user's tags and the table's `Name`; kbp's own are added where the resource is made.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

//! `aws_route_table_association`: the attributes the compiler emits for a subnet's route table and its provider
//! reads ([`super`]).

use serde::{Deserialize, Serialize};

/// Which route table (`R`, its ID) the subnet `R` names uses; AWS gives a subnet one table at a time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouteTableAssociation<R> {
    /// The subnet whose traffic the table routes; another subnet is another association.
    pub subnet_id: R,
    /// The table the subnet uses; moving the subnet to another table is done in place.
    pub route_table_id: R,
}

//! `aws_existing_vpc`: the attributes the compiler emits for a VPC the stack uses but does not own (`vpc.id`)
//! and its provider reads ([`super`]).

use serde::{Deserialize, Serialize};

/// A VPC kbp looks up and never changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExistingVpc {
    /// The VPC's ID (`vpc-…`), as the blueprint's `vpc.id` gives it; also the resource's ID.
    pub vpc_id: String,
}

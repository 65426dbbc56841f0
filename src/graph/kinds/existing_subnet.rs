//! `aws_existing_subnet`: the attributes the compiler emits for a subnet of a VPC the stack uses but does not
//! own (`vpc.private_subnet_ids`, `vpc.public_subnet_ids`) and its provider reads ([`super`]).

use serde::{Deserialize, Serialize};

/// A subnet kbp looks up and never changes, which must lie in the existing VPC `R` names (its ID).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExistingSubnet<R> {
    /// The subnet's ID (`subnet-…`), as the blueprint lists it; also the resource's ID.
    pub subnet_id: String,
    /// The VPC the subnet must be in: the existing VPC's `id` output, so a subnet of another VPC fails the
    /// apply.
    pub vpc_id: R,
}

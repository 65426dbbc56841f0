//! `aws_iam_service_linked_role`: the attributes the compiler emits for a service-linked role and its provider
//! reads ([`super`]).

use serde::{Deserialize, Serialize};

/// A role an AWS service assumes on the account's behalf; IAM names it and fixes its permissions, so the
/// service is all kbp asks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServiceLinkedRole {
    /// The service principal the role is for, such as `spot.amazonaws.com` (the role EC2 needs before it
    /// launches Spot instances); IAM derives the role's name and path from it.
    pub aws_service_name: String,
}

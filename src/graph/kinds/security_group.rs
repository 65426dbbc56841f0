//! `aws_security_group`: the attributes the compiler emits for the node security group and its provider reads
//! ([`super`]). Its rules are the provider's, fixed, not attributes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A security group in the VPC `R` names (its ID).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SecurityGroup<R> {
    /// The group's name, unique in its VPC; AWS cannot change it in place.
    pub name: String,
    /// What the group is for, as the EC2 console shows it; AWS cannot change it in place and takes only some
    /// characters in it.
    pub description: String,
    /// The VPC the group belongs to: the one kbp creates or the existing one.
    pub vpc_id: R,
    /// The user's tags, Karpenter's discovery tag (how EC2NodeClasses select the group) and the group's `Name`;
    /// kbp's own are added where the resource is made.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

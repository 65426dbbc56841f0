//! `aws_iam_instance_profile`: the attributes an instance profile's provider reads ([`super`]). No blueprint
//! compiles one today: Karpenter makes its own, one per EC2NodeClass, which teardown finds; the kind is
//! registered for a graph or state that names one.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The container through which EC2 hands a role to an instance's software. The role may be another resource's
/// output, so it is `R`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstanceProfile<R> {
    /// The profile's name, unique in the account; EC2 launches name the profile by it.
    pub name: String,
    /// The IAM path the profile lives under; a change replaces the profile.
    #[serde(default = "super::root_path")]
    pub path: String,
    /// The name of the role the profile holds (IAM allows at most one); `None` for an empty profile.
    #[serde(default)]
    pub role: Option<R>,
    /// The user's tags; kbp's own are added where the resource is made.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

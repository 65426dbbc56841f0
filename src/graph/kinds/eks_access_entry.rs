//! `aws_eks_access_entry`: the attributes the compiler emits for an access entry and its provider reads
//! ([`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// An access entry of the cluster `R` names, for the principal `R` names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccessEntry<R> {
    /// The cluster's name: a reference to the cluster.
    pub cluster_name: R,
    /// The IAM role or user the entry lets into the cluster (the Karpenter node role, an admin role).
    pub principal_arn: R,
    /// `STANDARD`, or a node type (`EC2_LINUX`, `EC2_WINDOWS`, …) whose permissions come from the type.
    #[serde(rename = "type")]
    pub entry_type: String,
    /// Access policies over the whole cluster.
    #[serde(default)]
    pub policy_arns: Vec<String>,
    /// Access policies over some namespaces: policy ARN → namespaces.
    #[serde(default)]
    pub namespace_policies: BTreeMap<String, Vec<String>>,
    /// The Kubernetes user name the principal is seen as; `None` lets EKS choose.
    #[serde(default)]
    pub username: Option<String>,
    /// Kubernetes groups the principal is a member of (for RBAC bindings of the cluster's own).
    #[serde(default)]
    pub kubernetes_groups: Vec<String>,
    /// The user's tags; kbp's own are added where the resource is made.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

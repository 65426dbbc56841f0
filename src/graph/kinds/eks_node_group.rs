//! `aws_eks_node_group`: the attributes the compiler emits for the controller's managed node group and its
//! provider reads ([`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A managed node group of the cluster `R` names, its nodes in the role and subnets `R` names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeGroup<R> {
    pub cluster_name: R,
    pub name: String,
    pub node_role_arn: R,
    pub subnet_ids: Vec<R>,
    pub ami_type: String,
    pub instance_types: Vec<String>,
    pub capacity_type: String,
    pub scaling: Scaling,
    /// Root disk in GiB.
    pub disk_size: Option<i32>,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    #[serde(default)]
    pub taints: Vec<KubeTaint>,
    /// The Kubernetes version of the nodes: the cluster's unless pinned (absent in attributes older kbp recorded).
    #[serde(default)]
    pub version: Option<String>,
    /// A pinned AMI release; none is the latest for the version, at creation and at each version update.
    #[serde(default)]
    pub release_version: Option<String>,
    /// How many nodes EKS takes out of service at once (absent in attributes older kbp recorded).
    #[serde(default)]
    pub update_config: Option<UpdateConfig>,
    /// The user's tags; kbp's own are added where the resource is made.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scaling {
    pub min_size: i32,
    pub max_size: i32,
    pub desired_size: i32,
}

/// A taint as Kubernetes (and the blueprint) spells it: effect `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct KubeTaint {
    pub key: String,
    pub value: Option<String>,
    pub effect: String,
}

/// At most this many nodes, or this percentage of them, out of service at once during an update.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UpdateConfig {
    pub max_unavailable: Option<i32>,
    pub max_unavailable_percentage: Option<i32>,
}

//! `aws_eks_node_group`: the attributes the compiler emits for the controller's managed node group and its
//! provider reads ([`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A managed node group of the cluster `R` names, its nodes in the role and subnets `R` names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeGroup<R> {
    /// The cluster's name: a reference to the cluster.
    pub cluster_name: R,
    /// The node group's name, unique within the cluster.
    pub name: String,
    /// The role the nodes run as.
    pub node_role_arn: R,
    /// The subnets the nodes are launched in.
    pub subnet_ids: Vec<R>,
    /// The AMI family EKS launches: `AL2023_x86_64_STANDARD`, `BOTTLEROCKET_ARM_64`, ….
    pub ami_type: String,
    /// The instance types the group may launch.
    pub instance_types: Vec<String>,
    /// `ON_DEMAND` or `SPOT`.
    pub capacity_type: String,
    /// How many nodes.
    pub scaling: Scaling,
    /// Root disk in GiB.
    pub disk_size: Option<i32>,
    /// Kubernetes labels on every node.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Kubernetes taints on every node (the controller group's keeps other pods off).
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

/// The node group's size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scaling {
    /// The fewest nodes.
    pub min_size: i32,
    /// The most nodes.
    pub max_size: i32,
    /// How many nodes EKS keeps running.
    pub desired_size: i32,
}

/// A taint as Kubernetes (and the blueprint) spells it: effect `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct KubeTaint {
    /// The taint's key.
    pub key: String,
    /// Its value; `None` for a taint with a key only.
    pub value: Option<String>,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: String,
}

/// At most this many nodes, or this percentage of them, out of service at once during an update.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UpdateConfig {
    /// A number of nodes; set this or the percentage.
    pub max_unavailable: Option<i32>,
    /// A percentage of the nodes; set this or the number.
    pub max_unavailable_percentage: Option<i32>,
}

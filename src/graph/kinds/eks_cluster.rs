//! `aws_eks_cluster`: the attributes the compiler emits for the cluster and its provider reads ([`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// An EKS cluster; `R` holds what comes from other resources (the cluster role, subnets, security groups and
/// the secrets key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cluster<R> {
    /// The cluster's name, unique in the account and region; EKS cannot rename a cluster.
    pub name: String,
    /// The Kubernetes minor version, `1.33`.
    pub version: String,
    /// The cluster role EKS assumes to manage AWS resources for the control plane.
    pub role_arn: R,
    /// The subnets the control plane's network interfaces go in (at least two zones).
    pub subnet_ids: Vec<R>,
    /// Security groups for those interfaces, besides the one EKS makes.
    pub security_group_ids: Vec<R>,
    /// Whether the API server answers on a public endpoint.
    pub endpoint_public_access: bool,
    /// Whether it answers inside the VPC.
    pub endpoint_private_access: bool,
    /// The CIDR blocks the public endpoint answers.
    pub public_access_cidrs: Vec<String>,
    /// How principals authenticate: `API` (access entries) or `API_AND_CONFIG_MAP`.
    pub authentication_mode: String,
    /// Control-plane log types sent to CloudWatch Logs; absent (a state of an older kbp): kbp leaves logging as
    /// it is.
    #[serde(default)]
    pub log_types: Option<Vec<String>>,
    /// The KMS key that envelope-encrypts Kubernetes secrets; null: none.
    #[serde(default)]
    pub encryption_key_arn: Option<R>,
    /// The user's tags; kbp's own are added where the resource is made.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

//! `aws_eks_cluster`: the attributes the compiler emits for the cluster and its provider reads ([`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// An EKS cluster; `R` holds what comes from other resources (the cluster role, subnets, security groups and
/// the secrets key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cluster<R> {
    pub name: String,
    pub version: String,
    pub role_arn: R,
    pub subnet_ids: Vec<R>,
    pub security_group_ids: Vec<R>,
    pub endpoint_public_access: bool,
    pub endpoint_private_access: bool,
    pub public_access_cidrs: Vec<String>,
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

//! `aws_eks_pod_identity_association`: the attributes the compiler emits for Karpenter's Pod Identity
//! association and its provider reads ([`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The role `R` names, given to a service account's pods in the cluster `R` names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PodIdentityAssociation<R> {
    /// The cluster's name: a reference to the cluster.
    pub cluster_name: R,
    /// The namespace of the service account.
    pub namespace: String,
    /// The service account whose pods get the role (Karpenter's controller).
    pub service_account: String,
    /// The role those pods' credentials are for.
    pub role_arn: R,
    /// The user's tags; kbp's own are added where the resource is made.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

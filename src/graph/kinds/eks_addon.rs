//! `aws_eks_addon`: the attributes the compiler emits for an EKS add-on and its provider reads ([`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An EKS add-on of the cluster `R` names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Addon<R> {
    /// The cluster's name: a reference to the cluster.
    pub cluster_name: R,
    /// The add-on as EKS names it: `vpc-cni`, `coredns`, `kube-proxy`, `eks-pod-identity-agent`.
    pub addon_name: String,
    /// Pinned by the blueprint; `None` follows the default of the cluster's version.
    pub addon_version: Option<String>,
    /// The cluster version an unpinned version follows (absent in attributes older kbp recorded).
    #[serde(default)]
    pub kubernetes_version: Option<String>,
    /// The add-on's configuration as a JSON object; none for null or `{}`.
    pub configuration_values: Option<Value>,
    /// What EKS does with fields set outside it: `OVERWRITE`, `PRESERVE` or `NONE`.
    pub resolve_conflicts: Option<String>,
    /// The user's tags; kbp's own are added where the resource is made.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

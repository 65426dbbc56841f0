//! `k8s_node_pool`: the attributes the compiler emits for one of Karpenter's NodePools and its provider reads
//! ([`super`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::in_cluster::ClusterAccess;

/// One NodePool, applied whole as `manifest`, in the cluster `R` names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodePool<R> {
    /// The object as kbp applies it (`apiVersion`, `kind`, `metadata`, `spec`).
    pub manifest: Value,
    /// The health a refresh must find, from Karpenter's `Ready` condition, for no change to be due (`ready`).
    pub health: String,
    /// The cluster the object lives in.
    pub cluster: ClusterAccess<R>,
}

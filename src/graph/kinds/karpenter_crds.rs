//! `k8s_karpenter_crds`: the attributes the compiler emits for Karpenter's CRDs and their provider reads
//! ([`super`]).

use serde::{Deserialize, Serialize};

use super::in_cluster::ClusterAccess;

/// The CRDs of one Karpenter release, in the cluster `R` names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Crds<R> {
    /// The Karpenter release whose CRDs these are (`karpenter.version`); each CRD is annotated with it.
    pub version: String,
    /// Where the release's chart is (`oci://…` or a local directory): its `crds/` are read unless `crds_dir` is
    /// set.
    pub chart: String,
    /// A local directory of CRD manifests read instead of the chart's (`karpenter.crds_dir`).
    pub crds_dir: Option<String>,
    /// The cluster they are installed in.
    pub cluster: ClusterAccess<R>,
}

//! What every in-cluster kind (`k8s_…`) carries besides its own attributes: where the object lives, as the
//! attributes the compiler emits and the Kubernetes providers read ([`super`]).

use serde::{Deserialize, Serialize};

/// The EKS cluster an object lives in, all three from the cluster's outputs (`R`): the providers connect to
/// its endpoint, trust its CA and sign their token for its name. A new cluster means new objects, so the
/// providers make this attribute force-new.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterAccess<R> {
    /// The EKS cluster's name, which the token kbp presents is signed for.
    pub name: R,
    /// The cluster's API server URL (`https://…`).
    pub endpoint: R,
    /// The cluster's CA certificate, base64-encoded PEM as EKS reports it.
    pub certificate_authority_data: R,
}

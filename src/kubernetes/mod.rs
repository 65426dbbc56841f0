//! The in-cluster stage: what kbp puts into the cluster once it answers. Manifests rendered from the project's
//! templates, Karpenter's CRDs from the release's chart, cluster access with an EKS token, server-side apply
//! and the waits that follow it. The providers of the in-cluster kinds (`providers::kubernetes`) use this; it
//! knows nothing of plans or state.

pub mod core;
pub mod manifests;
pub mod oci;
pub mod openapi;
pub mod validate;

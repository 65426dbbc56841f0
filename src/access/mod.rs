//! Cluster access: how kbp (and kubectl through `kbp token`) authenticates to an EKS cluster's API server.
//! Owns the EKS bearer token, the Kubernetes clients made with it, and the kubeconfig entry `kbp kubeconfig`
//! writes; knows nothing of what is applied in the cluster.

pub mod cluster;
pub mod kubeconfig;
pub mod token;

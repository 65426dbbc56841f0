//! Cluster access: how kbp (and kubectl through `kbp token`) authenticates to an EKS cluster's API server.
//! Owns the EKS bearer token; knows nothing of what is applied in the cluster.

pub mod token;

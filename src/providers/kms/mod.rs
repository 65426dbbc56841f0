//! KMS: the key that envelope-encrypts the cluster's Kubernetes secrets.

pub(crate) mod key;

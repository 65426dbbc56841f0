//! What an EKS cluster is on both sides of kbp's calls: the attributes the compiler emits ([`Spec`], the typed
//! seam's), the cluster as EKS describes it ([`Described`]), and the configuration both the create and the
//! in-place updates read and write (secrets encryption, control-plane logging).

use aws_sdk_eks::types::EncryptionConfig;

use super::sorted;

pub(super) type Described = aws_sdk_eks::types::Cluster;

/// The attributes the compiler emits for a cluster, references resolved ([`crate::graph::kinds`]).
pub(super) type Spec = crate::graph::kinds::eks_cluster::Cluster<String>;

/// Envelope encryption with the KMS key `key_arn`. EKS once took the resources to encrypt (`secrets`); it now
/// encrypts all Kubernetes API data with the key and that field is deprecated, so it is left out.
pub(super) fn secrets_encryption(key_arn: &str) -> EncryptionConfig {
    let provider = aws_sdk_eks::types::Provider::builder().key_arn(key_arn).build();
    EncryptionConfig::builder().provider(provider).build()
}

/// The KMS key that envelope-encrypts the cluster's secrets, if any (a cluster has at most one).
pub(super) fn secrets_key(c: &Described) -> Option<&str> {
    c.encryption_config().iter().find_map(|e| e.provider().and_then(|p| p.key_arn()))
}

/// The control-plane log types that are on, sorted.
pub(super) fn enabled_log_types(c: &Described) -> Vec<String> {
    let setups = c.logging().map(|l| l.cluster_logging()).unwrap_or_default();
    let on = setups.iter().filter(|s| s.enabled() == Some(true)).flat_map(|s| s.types());
    sorted(&on.map(|t| t.as_str().to_string()).collect::<Vec<_>>())
}

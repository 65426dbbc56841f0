//! `aws_iam_openid_connect_provider`: the attributes the compiler emits for the cluster's OIDC identity provider
//! and its provider reads ([`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The cluster's OIDC issuer registered with IAM, so that roles may trust the service-account tokens it signs
/// (IRSA). The issuer is known only once the cluster exists, so its URL is `R`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenIdConnectProvider<R> {
    /// The issuer's URL (the cluster's `oidc_issuer` output); IAM keeps it without `https://`, and the
    /// provider's ARN ends in it.
    pub url: R,
    /// The audiences IAM accepts in a token (its `aud` claim); `sts.amazonaws.com` for the tokens EKS projects
    /// into pods.
    #[serde(default)]
    pub client_id_list: Vec<String>,
    /// Fingerprints of the issuer's TLS certificates; left out (`None`), IAM trusts the issuer through its own
    /// certificate authorities, which is what EKS issuers need.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thumbprint_list: Option<Vec<String>>,
    /// The user's tags; kbp's own are added where the resource is made.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

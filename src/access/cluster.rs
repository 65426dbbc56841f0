//! Kubernetes clients for a stack's cluster. By default from what kbp knows of the cluster (endpoint and CA from
//! state) with an EKS token made in-process from the AWS credential chain; or, for users whose access differs
//! (a bastion proxy, another identity), from a kubeconfig file and context (`--kubeconfig`, `--context`).

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use aws_config::SdkConfig;
use aws_credential_types::provider::ProvideCredentials;
use base64::Engine;
use serde_json::json;

use super::token;

/// A token is good for 15 minutes; a client older than this gets a new one.
const CLIENT_LIFETIME: Duration = Duration::from_secs(10 * 60);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// The cluster as kbp's state knows it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Cluster {
    /// The EKS cluster name, which the token is made for.
    pub name: String,
    /// The cluster's AWS region.
    pub region: String,
    /// The API server's URL, `https://…` as EKS reports it.
    pub endpoint: String,
    /// `certificateAuthority.data` as EKS reports it: base64 of the PEM.
    pub ca_data: String,
}

/// How kbp reaches the cluster's API server.
#[derive(Debug, Clone, Default)]
pub enum Access {
    /// The endpoint and CA from state, with an EKS token.
    #[default]
    Eks,
    /// A kubeconfig file (`None`: the standard `KUBECONFIG`/`~/.kube/config`) and context (`None`: its current one).
    Kubeconfig {
        /// The kubeconfig file (`--kubeconfig`).
        path: Option<PathBuf>,
        /// The context to use (`--context`).
        context: Option<String>,
    },
}

/// Why no Kubernetes client could be made for the cluster; [`AccessError::hint`] says what to do.
#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    /// The endpoint recorded for the cluster does not parse as a URL.
    #[error("cluster {cluster}: its endpoint `{endpoint}` is not a URL: {message}")]
    Endpoint {
        /// The EKS cluster name.
        cluster: String,
        /// The endpoint as recorded.
        endpoint: String,
        /// The URL parser's error.
        message: String,
    },
    /// The CA data recorded for the cluster (named) is not base64 of a PEM certificate.
    #[error("cluster {0}: its certificate authority data is not base64 PEM")]
    CertificateAuthority(String),
    /// No EKS token could be made from the AWS credentials.
    #[error(transparent)]
    Token(#[from] token::TokenError),
    /// The kubeconfig file or context cannot be read or used.
    #[error("kubeconfig: {0}")]
    Kubeconfig(String),
    /// kube-rs could not build a client from the configuration (a TLS or proxy setting, say).
    #[error("cannot build a Kubernetes client: {0}")]
    Client(String),
}

impl AccessError {
    /// What the user can do about it, where kbp knows; kept out of the message so callers carry it as data.
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            AccessError::CertificateAuthority(_) => Some("refresh state with `kbp plan`, or use --kubeconfig"),
            AccessError::Kubeconfig(_) => {
                Some("check --kubeconfig and --context, or leave them out to use the cluster in state")
            }
            AccessError::Token(e) => e.hint(),
            AccessError::Endpoint { .. } | AccessError::Client(_) => None,
        }
    }
}

/// Makes and caches clients, one per cluster, renewing them before their token expires.
pub struct Clients {
    access: Access,
    sdk: SdkConfig,
    cache: tokio::sync::Mutex<HashMap<Cluster, (kube::Client, Instant)>>,
}

impl Clients {
    /// Clients reached as `access` says, with tokens from the credentials of `sdk`.
    pub fn new(access: Access, sdk: SdkConfig) -> Self {
        Clients { access, sdk, cache: tokio::sync::Mutex::new(HashMap::new()) }
    }

    /// A client for `cluster`, from the cache while its token is fresh, else made (and cached) anew.
    pub async fn client(&self, cluster: &Cluster) -> Result<kube::Client, AccessError> {
        let mut cache = self.cache.lock().await;
        if let Some((client, made)) = cache.get(cluster) {
            if made.elapsed() < CLIENT_LIFETIME {
                return Ok(client.clone());
            }
        }
        let config = match &self.access {
            Access::Eks => self.eks_config(cluster).await?,
            Access::Kubeconfig { path, context } => kubeconfig_config(path.as_ref(), context.clone()).await?,
        };
        let client = kube::Client::try_from(config).map_err(|e| AccessError::Client(e.to_string()))?;
        cache.insert(cluster.clone(), (client.clone(), Instant::now()));
        Ok(client)
    }

    async fn eks_config(&self, cluster: &Cluster) -> Result<kube::Config, AccessError> {
        let url = cluster.endpoint.parse().map_err(|e: http::uri::InvalidUri| AccessError::Endpoint {
            cluster: cluster.name.clone(),
            endpoint: cluster.endpoint.clone(),
            message: e.to_string(),
        })?;
        let mut config = kube::Config::new(url);
        config.root_cert = Some(vec![ca_der(cluster)?]);
        config.connect_timeout = Some(CONNECT_TIMEOUT);
        config.read_timeout = Some(READ_TIMEOUT);
        let provider = self
            .sdk
            .credentials_provider()
            .ok_or_else(|| token::TokenError::Credentials("no credentials provider".into()))?;
        let credentials =
            provider.provide_credentials().await.map_err(|e| token::TokenError::Credentials(e.to_string()))?;
        let bearer = token::token(&cluster.name, &cluster.region, &credentials, SystemTime::now())?;
        config.auth_info =
            serde_json::from_value(json!({ "token": bearer })).map_err(|e| AccessError::Client(e.to_string()))?;
        Ok(config)
    }
}

async fn kubeconfig_config(path: Option<&PathBuf>, context: Option<String>) -> Result<kube::Config, AccessError> {
    let options = kube::config::KubeConfigOptions { context, ..Default::default() };
    let result = match path {
        Some(path) => {
            let file = kube::config::Kubeconfig::read_from(path)
                .map_err(|e| AccessError::Kubeconfig(format!("{}: {e}", path.display())))?;
            kube::Config::from_custom_kubeconfig(file, &options).await
        }
        None => kube::Config::from_kubeconfig(&options).await,
    };
    result.map_err(|e| AccessError::Kubeconfig(e.to_string()))
}

/// The DER bytes of the cluster's CA certificate.
fn ca_der(cluster: &Cluster) -> Result<Vec<u8>, AccessError> {
    let bad = || AccessError::CertificateAuthority(cluster.name.clone());
    let b64 = base64::engine::general_purpose::STANDARD;
    let pem = b64.decode(cluster.ca_data.trim()).map_err(|_| bad())?;
    let pem = String::from_utf8(pem).map_err(|_| bad())?;
    let body: String = pem
        .lines()
        .skip_while(|l| !l.starts_with("-----BEGIN CERTIFICATE-----"))
        .skip(1)
        .take_while(|l| !l.starts_with("-----END CERTIFICATE-----"))
        .collect();
    b64.decode(body.trim()).ok().filter(|der| !der.is_empty()).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(ca_data: &str) -> Cluster {
        Cluster {
            name: "c".into(),
            region: "us-west-2".into(),
            endpoint: "https://127.0.0.1:1".into(),
            ca_data: ca_data.into(),
        }
    }

    #[test]
    fn the_ca_is_read_from_base64_pem() {
        let b64 = base64::engine::general_purpose::STANDARD;
        let pem = format!("-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n", b64.encode([1u8, 2, 3]));
        assert_eq!(ca_der(&cluster(&b64.encode(pem))).unwrap(), vec![1, 2, 3]);
        assert!(matches!(ca_der(&cluster("not base64!")), Err(AccessError::CertificateAuthority(_))));
        assert!(matches!(ca_der(&cluster(&b64.encode("no pem here"))), Err(AccessError::CertificateAuthority(_))));
    }
}

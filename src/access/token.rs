//! EKS bearer tokens, made in-process the way `aws eks get-token` makes them: a presigned STS
//! GetCallerIdentity URL, with the cluster name in the signed `x-k8s-aws-id` header, base64url-encoded behind
//! `k8s-aws-v1.`. The API server asks STS who signed it, so the token proves the caller's IAM identity.
//! Made here with the SDK's own signer (aws-sigv4) because kube-rs has no EKS authentication and the only other
//! way is running the AWS CLI for every token.

use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{sign, SignableBody, SignableRequest, SignatureLocation, SigningSettings};
use aws_sigv4::sign::v4;
use base64::Engine;
use serde_json::{json, Value};
use time::OffsetDateTime;

/// The header that binds a token to one cluster.
pub const CLUSTER_HEADER: &str = "x-k8s-aws-id";
const PREFIX: &str = "k8s-aws-v1.";
/// The presigned URL's own lifetime; EKS accepts a token for 15 minutes from signing regardless.
const URL_EXPIRES: Duration = Duration::from_secs(60);
/// When kubectl should ask for a new token: a minute before EKS stops accepting it.
const TOKEN_LIFETIME: Duration = Duration::from_secs(14 * 60);

/// Why no EKS bearer token could be made; [`TokenError::hint`] says what to do.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// The AWS credential chain gave no credentials (the chain's error).
    #[error("no AWS credentials: {0}")]
    Credentials(String),
    /// Presigning the STS `GetCallerIdentity` request failed (the signer's error).
    #[error("signing the STS request failed: {0}")]
    Signing(String),
}

impl TokenError {
    /// What the user can do about it, where kbp knows; kept out of the message so callers carry it as data.
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            TokenError::Credentials(_) => {
                Some("configure the AWS credential chain (AWS_PROFILE, `aws sso login`, environment variables)")
            }
            TokenError::Signing(_) => None,
        }
    }
}

/// A bearer token for `cluster` in `region`, signed with `credentials` at `now`.
pub fn token(cluster: &str, region: &str, credentials: &Credentials, now: SystemTime) -> Result<String, TokenError> {
    let host = format!("sts.{region}.amazonaws.com");
    let base = format!("https://{host}/?Action=GetCallerIdentity&Version=2011-06-15");
    let mut settings = SigningSettings::default();
    settings.signature_location = SignatureLocation::QueryParams;
    settings.expires_in = Some(URL_EXPIRES);
    let identity = credentials.clone().into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name("sts")
        .time(now)
        .settings(settings)
        .build()
        .map_err(|e| TokenError::Signing(e.to_string()))?
        .into();
    let headers = [("host", host.as_str()), (CLUSTER_HEADER, cluster)];
    let request = SignableRequest::new("GET", base.as_str(), headers.into_iter(), SignableBody::Bytes(&[]))
        .map_err(|e| TokenError::Signing(e.to_string()))?;
    let (instructions, _signature) =
        sign(request, &params).map_err(|e| TokenError::Signing(e.to_string()))?.into_parts();
    let (_, query) = instructions.into_parts();
    let mut url = base;
    for (name, value) in query {
        url.push('&');
        url.push_str(name);
        url.push('=');
        url.push_str(&urlencoding::encode(&value));
    }
    Ok(format!("{PREFIX}{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(url)))
}

/// The presigned URL inside a token, or None if it is not a kbp/EKS token.
pub fn decode(token: &str) -> Option<String> {
    let encoded = token.strip_prefix(PREFIX)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(encoded).ok()?;
    String::from_utf8(bytes).ok()
}

/// The ExecCredential kubectl's exec plugin protocol expects on stdout.
pub fn exec_credential(token: &str, now: SystemTime) -> Value {
    let expires = OffsetDateTime::from(now + TOKEN_LIFETIME);
    let format = time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    json!({
        "kind": "ExecCredential",
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "spec": {},
        "status": { "expirationTimestamp": expires.format(&format).unwrap_or_default(), "token": token },
    })
}

/// Loads credentials from the standard AWS chain and makes a token.
pub async fn from_environment(cluster: &str, region: &str) -> Result<String, TokenError> {
    use aws_credential_types::provider::ProvideCredentials;
    let sdk = aws_config::defaults(aws_config::BehaviorVersion::latest())
        .region(aws_config::Region::new(region.to_string()))
        .load()
        .await;
    let provider =
        sdk.credentials_provider().ok_or_else(|| TokenError::Credentials("no credentials provider".into()))?;
    let credentials = provider.provide_credentials().await.map_err(|e| TokenError::Credentials(e.to_string()))?;
    token(cluster, region, &credentials, SystemTime::now())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn creds() -> Credentials {
        Credentials::new("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", None, None, "test")
    }

    #[test]
    fn token_is_a_presigned_get_caller_identity_url_bound_to_the_cluster() {
        let t =
            token("demo", "us-west-2", &creds(), SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000)).unwrap();
        assert!(t.starts_with("k8s-aws-v1."));
        assert!(!t.contains('='), "base64url without padding");
        let url = decode(&t).unwrap();
        assert!(
            url.starts_with("https://sts.us-west-2.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15&"),
            "{url}"
        );
        for part in
            ["X-Amz-Algorithm=AWS4-HMAC-SHA256", "X-Amz-Expires=60", "X-Amz-Date=20231114T221320Z", "X-Amz-Signature="]
        {
            assert!(url.contains(part), "{part} in {url}");
        }
        assert!(url.contains("X-Amz-SignedHeaders=host%3Bx-k8s-aws-id"), "{url}");
        assert!(url.contains("X-Amz-Credential=AKIDEXAMPLE%2F20231114%2Fus-west-2%2Fsts%2Faws4_request"), "{url}");
    }

    #[test]
    fn the_signature_depends_on_the_cluster() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let a = decode(&token("a", "us-west-2", &creds(), now).unwrap()).unwrap();
        let b = decode(&token("b", "us-west-2", &creds(), now).unwrap()).unwrap();
        let sig = |u: &str| u.split("X-Amz-Signature=").nth(1).unwrap().to_string();
        assert_ne!(sig(&a), sig(&b));
        assert_eq!(sig(&a).len(), 64);
    }

    #[test]
    fn exec_credential_has_the_client_authentication_shape() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let c = exec_credential("k8s-aws-v1.x", now);
        assert_eq!(c["kind"], "ExecCredential");
        assert_eq!(c["apiVersion"], "client.authentication.k8s.io/v1beta1");
        assert_eq!(c["status"]["token"], "k8s-aws-v1.x");
        assert_eq!(c["status"]["expirationTimestamp"], "2023-11-14T22:27:20Z");
    }
}

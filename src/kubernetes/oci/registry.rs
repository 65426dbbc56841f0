//! One pull of a chart from its OCI registry over the distribution API: the manifest by tag, its chart layer,
//! the blob checked against the manifest's size and digest. A registry that answers 401 gets one anonymous
//! bearer token from the service its challenge names; connection failures, 5xx and 429 are tried again.

use crate::backoff::{Attempt, Backoff};
use std::time::Duration;

use reqwest::header::{ACCEPT, WWW_AUTHENTICATE};
use reqwest::StatusCode;
use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{ChartRef, OciError};

const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
pub(super) const CHART_LAYER_MEDIA_TYPE: &str = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";
/// The chart layer's media type in artifacts pushed by Helm 3.0–3.6, which Helm still reads.
const LEGACY_CHART_LAYER_MEDIA_TYPE: &str = "application/tar+gzip";
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// Tries per request when the connection fails or the registry answers 5xx or 429.
const RETRY: Backoff =
    Backoff { attempts: 3, first: Duration::from_millis(500), max: Duration::from_secs(2), jitter: false };
/// Registries accept manifests up to 4 MiB (OCI distribution spec); anything larger is not a chart manifest.
const MAX_MANIFEST_BYTES: u64 = 4 << 20;
const MAX_SMALL_BODY_BYTES: u64 = 1 << 20;

pub(super) fn sha256_digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

pub(super) struct Pulled {
    pub(super) archive: Vec<u8>,
    pub(super) manifest_digest: String,
}

#[derive(Deserialize)]
struct Manifest {
    #[serde(rename = "schemaVersion")]
    schema_version: u32,
    #[serde(default)]
    layers: Vec<Descriptor>,
}

#[derive(Deserialize)]
struct Descriptor {
    #[serde(rename = "mediaType")]
    media_type: String,
    digest: String,
    size: u64,
}

pub(super) async fn pull(chart: &ChartRef, tag: &str, version: &str) -> Result<Pulled, OciError> {
    let mut registry = Registry::new(chart)?;
    let protocol = |what, reason: String| OciError::Protocol { registry: chart.registry.clone(), what, reason };

    let url = format!("{}/manifests/{tag}", chart.api_base());
    let got = registry.get(&url, MANIFEST_MEDIA_TYPE, MAX_MANIFEST_BYTES).await?;
    match got.status {
        StatusCode::OK => {}
        StatusCode::NOT_FOUND => {
            let detail = registry_error(&got.body).map(|e| format!(", {e}")).unwrap_or_default();
            return Err(if detail.contains("NAME_UNKNOWN") {
                OciError::ChartNotFound { chart: chart.to_string(), registry: chart.registry.clone(), detail }
            } else {
                OciError::VersionNotFound { chart: chart.to_string(), version: version.to_string(), detail }
            });
        }
        status => return Err(registry.status_error(&url, status, &got.body)),
    }
    if got.body.len() as u64 > MAX_MANIFEST_BYTES {
        return Err(protocol("manifest", format!("it is larger than {MAX_MANIFEST_BYTES} bytes")));
    }
    let manifest_digest = sha256_digest(&got.body);
    let manifest: Manifest = serde_json::from_slice(&got.body)
        .map_err(|e| protocol("manifest", format!("not an OCI image manifest: {e}")))?;
    if manifest.schema_version != 2 {
        return Err(protocol("manifest", format!("schemaVersion {}, not 2", manifest.schema_version)));
    }
    let layer = [CHART_LAYER_MEDIA_TYPE, LEGACY_CHART_LAYER_MEDIA_TYPE]
        .iter()
        .find_map(|media_type| manifest.layers.iter().find(|l| l.media_type == *media_type))
        .ok_or_else(|| OciError::NotAChart {
            chart: chart.to_string(),
            version: version.to_string(),
            found: manifest.layers.iter().map(|l| l.media_type.as_str()).collect::<Vec<_>>().join(", "),
        })?;
    let hex_ok = |hex: &str| hex.len() == 64 && hex.chars().all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c));
    if !layer.digest.strip_prefix("sha256:").is_some_and(hex_ok) {
        return Err(protocol("manifest", format!("chart layer digest `{}` is not a sha256 digest", layer.digest)));
    }

    let url = format!("{}/blobs/{}", chart.api_base(), layer.digest);
    let got = registry.get(&url, "*/*", layer.size).await?;
    if got.status != StatusCode::OK {
        return Err(registry.status_error(&url, got.status, &got.body));
    }
    let mismatch = |what, expected: String, actual: String| OciError::Mismatch {
        chart: chart.to_string(),
        version: version.to_string(),
        what,
        expected,
        actual,
    };
    let size = got.body.len() as u64;
    if size != layer.size {
        // The read stops one byte past the listed size.
        let actual =
            if size > layer.size { format!("more than {} bytes", layer.size) } else { format!("{size} bytes") };
        return Err(mismatch("size", format!("{} bytes", layer.size), actual));
    }
    let actual = sha256_digest(&got.body);
    if actual != layer.digest {
        return Err(mismatch("digest", layer.digest.clone(), actual));
    }
    tracing::info!(%chart, version, digest = %layer.digest, "pulled the chart archive");
    Ok(Pulled { archive: got.body, manifest_digest })
}

/// One pull's conversation with a registry: the HTTP client, and the bearer token once the registry asked for one
/// (reused for the blob).
struct Registry<'a> {
    chart: &'a ChartRef,
    http: reqwest::Client,
    token: Option<String>,
}

struct Fetched {
    status: StatusCode,
    challenges: Vec<String>,
    body: Vec<u8>,
}

impl<'a> Registry<'a> {
    fn new(chart: &'a ChartRef) -> Result<Self, OciError> {
        // reqwest follows redirects (registries send blobs to S3 or a CDN) and drops the Authorization header when
        // a redirect changes host, port or scheme, so the registry's token never reaches the CDN.
        let mut builder = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(REQUEST_TIMEOUT)
            .user_agent(concat!("kbp/", env!("CARGO_PKG_VERSION")));
        if chart.plain_http() {
            // A proxy from HTTP_PROXY/HTTPS_PROXY cannot reach a registry on this machine's loopback.
            builder = builder.no_proxy();
        }
        let http = builder.build().map_err(|e| OciError::Network {
            chart: chart.to_string(),
            registry: chart.registry.clone(),
            detail: format!("cannot set up an HTTP client: {}", chain(&e)),
        })?;
        Ok(Registry { chart, http, token: None })
    }

    /// GET `url`; a 401 is answered once with an anonymous bearer token from the service its challenge names.
    async fn get(&mut self, url: &str, accept: &str, limit: u64) -> Result<Fetched, OciError> {
        let mut fresh_token = false;
        loop {
            let got = self.fetch(url, accept, self.token.as_deref(), limit).await?;
            if got.status != StatusCode::UNAUTHORIZED {
                return Ok(got);
            }
            if fresh_token {
                return Err(
                    self.unauthorized(format!("HTTP 401 to GET {url}, even with a token from its token service"))
                );
            }
            self.token = Some(self.anonymous_token(&got.challenges).await?);
            fresh_token = true;
        }
    }

    async fn anonymous_token(&self, challenges: &[String]) -> Result<String, OciError> {
        let Some((_, params)) = challenges.iter().map(|c| parse_challenge(c)).find(|(scheme, _)| scheme == "bearer")
        else {
            let offered = if challenges.is_empty() { "no challenge".to_string() } else { challenges.join("; ") };
            return Err(self.unauthorized(format!("HTTP 401 with {offered}: it wants credentials")));
        };
        let param = |name: &str| params.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str());
        let realm = param("realm")
            .filter(|realm| reqwest::Url::parse(realm).is_ok_and(|u| matches!(u.scheme(), "http" | "https")))
            .ok_or_else(|| {
                self.protocol("authentication challenge", format!("no http(s) realm in `{}`", challenges.join("; ")))
            })?;
        // The challenge's own scope may be registry-specific (public.ecr.aws says `aws`); a pull needs this one.
        let scope = format!("repository:{}:pull", self.chart.repository);
        let mut url = format!("{realm}{}", if realm.contains('?') { '&' } else { '?' });
        if let Some(service) = param("service") {
            url.push_str(&format!("service={}&", urlencoding::encode(service)));
        }
        url.push_str(&format!("scope={}", urlencoding::encode(&scope)));
        let got = self.fetch(&url, "application/json", None, MAX_SMALL_BODY_BYTES).await?;
        if got.status != StatusCode::OK {
            let detail = registry_error(&got.body).map(|e| format!(", {e}")).unwrap_or_default();
            return Err(
                self.unauthorized(format!("its token service {realm} answered HTTP {}{detail}", got.status.as_u16()))
            );
        }
        #[derive(Deserialize)]
        struct TokenResponse {
            token: Option<String>,
            access_token: Option<String>,
        }
        let response: TokenResponse =
            serde_json::from_slice(&got.body).map_err(|e| self.protocol("token response", e.to_string()))?;
        response
            .token
            .filter(|t| !t.is_empty())
            .or(response.access_token.filter(|t| !t.is_empty()))
            .ok_or_else(|| self.protocol("token response", "it holds neither `token` nor `access_token`".to_string()))
    }

    /// One GET, tried again on connection failures, timeouts, 5xx and 429; the body is read up to one byte past
    /// `limit`.
    async fn fetch(&self, url: &str, accept: &str, token: Option<&str>, limit: u64) -> Result<Fetched, OciError> {
        let network = |e: &reqwest::Error| OciError::Network {
            chart: self.chart.to_string(),
            registry: self.chart.registry.clone(),
            detail: chain(e),
        };
        RETRY
            .run(url, |_| async {
                match self.fetch_once(url, accept, token, limit).await {
                    Ok(got) if retryable(got.status) => {
                        Attempt::Again { why: format!("GET answered HTTP {}", got.status.as_u16()), last: Ok(got) }
                    }
                    Ok(got) => Attempt::Done(Ok(got)),
                    Err(e) if e.is_builder() || e.is_redirect() => Attempt::Done(Err(network(&e))),
                    Err(e) => Attempt::Again { why: format!("GET failed ({})", chain(&e)), last: Err(network(&e)) },
                }
            })
            .await
    }

    async fn fetch_once(&self, url: &str, accept: &str, token: Option<&str>, limit: u64) -> reqwest::Result<Fetched> {
        let mut request = self.http.get(url).header(ACCEPT, accept);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let mut response = request.send().await?;
        let status = response.status();
        let challenges = response
            .headers()
            .get_all(WWW_AUTHENTICATE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(str::to_string)
            .collect();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await? {
            body.extend_from_slice(&chunk);
            if body.len() as u64 > limit {
                body.truncate(usize::try_from(limit).unwrap_or(usize::MAX).saturating_add(1));
                break;
            }
        }
        Ok(Fetched { status, challenges, body })
    }

    fn status_error(&self, url: &str, status: StatusCode, body: &[u8]) -> OciError {
        let detail = registry_error(body).map(|e| format!(", {e}")).unwrap_or_default();
        if status == StatusCode::FORBIDDEN {
            return self.unauthorized(format!("HTTP 403 to GET {url}{detail}"));
        }
        OciError::Status {
            registry: self.chart.registry.clone(),
            url: url.to_string(),
            status: status.as_u16(),
            detail,
        }
    }

    fn unauthorized(&self, detail: String) -> OciError {
        OciError::Unauthorized { chart: self.chart.to_string(), registry: self.chart.registry.clone(), detail }
    }

    fn protocol(&self, what: &'static str, reason: String) -> OciError {
        OciError::Protocol { registry: self.chart.registry.clone(), what, reason }
    }
}

fn retryable(status: StatusCode) -> bool {
    status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS
}

/// An error and its sources, `: `-separated: reqwest's own message names only the URL.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

/// The codes and messages of a registry's error body (`{"errors":[{"code":…,"message":…}]}`).
fn registry_error(body: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let errors: Vec<String> = value
        .get("errors")?
        .as_array()?
        .iter()
        .map(|e| {
            let field = |name| e.get(name).and_then(Value::as_str).unwrap_or_default();
            format!("{}: {}", field("code"), field("message")).trim_end_matches(": ").to_string()
        })
        .collect();
    (!errors.is_empty()).then(|| errors.join("; "))
}

/// `Bearer realm="…",service="…"` as its lowercased scheme and its parameters (lowercased names, unquoted values).
fn parse_challenge(header: &str) -> (String, Vec<(String, String)>) {
    let header = header.trim_start();
    let (scheme, mut rest) = header.split_at(header.find(char::is_whitespace).unwrap_or(header.len()));
    let mut params = Vec::new();
    loop {
        rest = rest.trim_start_matches(|c: char| c == ',' || c.is_whitespace());
        let Some(eq) = rest.find('=') else { break };
        let key = rest[..eq].trim().to_ascii_lowercase();
        rest = rest[eq + 1..].trim_start();
        let mut value = String::new();
        if let Some(quoted) = rest.strip_prefix('"') {
            let mut end = quoted.len();
            let mut chars = quoted.char_indices();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => value.extend(chars.next().map(|(_, escaped)| escaped)),
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => value.push(c),
                }
            }
            rest = &quoted[end..];
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            value = rest[..end].trim().to_string();
            rest = &rest[end..];
        }
        params.push((key, value));
    }
    (scheme.to_ascii_lowercase(), params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_challenges_parse_with_quoted_values() {
        let (scheme, params) = parse_challenge(
            r#"Bearer realm="https://public.ecr.aws/token/",service="public.ecr.aws",scope="repository:a/b:pull,push", error="in\"valid""#,
        );
        assert_eq!(scheme, "bearer");
        let expected = [
            ("realm", "https://public.ecr.aws/token/"),
            ("service", "public.ecr.aws"),
            ("scope", "repository:a/b:pull,push"),
            ("error", "in\"valid"),
        ];
        assert_eq!(params, expected.map(|(k, v)| (k.to_string(), v.to_string())));
        assert_eq!(parse_challenge(r#"Basic realm="x""#).0, "basic");
    }

    #[test]
    fn registry_error_bodies_give_code_and_message() {
        let body = br#"{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown","detail":{}}]}"#;
        assert_eq!(registry_error(body).as_deref(), Some("MANIFEST_UNKNOWN: manifest unknown"));
        assert_eq!(registry_error(b"<html>"), None);
    }
}

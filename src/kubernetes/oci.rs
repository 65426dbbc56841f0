//! Karpenter's CustomResourceDefinitions from the release's Helm chart. The chart archive is pulled from its
//! OCI registry the way `helm pull oci://…` does it (anonymously: an anonymous bearer token when the registry
//! asks for one), kept in an on-disk cache by registry, repository and version, and the files under its
//! `crds/` directory are parsed into JSON values. Air-gapped installs read the same CRDs from a local directory.
//!
//! Owns the OCI distribution client and the chart cache. Applying the CRDs to a cluster is not done here.

use std::ffi::OsString;
use std::fmt;
use std::fs;
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::{Component, Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use reqwest::header::{ACCEPT, WWW_AUTHENTICATE};
use reqwest::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
const CHART_LAYER_MEDIA_TYPE: &str = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";
/// The chart layer's media type in artifacts pushed by Helm 3.0–3.6, which Helm still reads.
const LEGACY_CHART_LAYER_MEDIA_TYPE: &str = "application/tar+gzip";
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// Tries per request when the connection fails or the registry answers 5xx or 429.
const ATTEMPTS: u32 = 3;
const FIRST_RETRY_DELAY: Duration = Duration::from_millis(500);
/// Registries accept manifests up to 4 MiB (OCI distribution spec); anything larger is not a chart manifest.
const MAX_MANIFEST_BYTES: u64 = 4 << 20;
const MAX_SMALL_BODY_BYTES: u64 = 1 << 20;
/// A file in a chart larger than this, decompressed, is not a CRD file kbp should parse.
const MAX_CHART_FILE_BYTES: u64 = 64 << 20;
const AIR_GAP: &str = "or set karpenter.crds_dir to a directory holding the CRDs for air-gapped use";

#[derive(Debug, thiserror::Error)]
pub enum OciError {
    #[error("`{input}` is not an OCI chart reference: {reason}\n  hint: write like `oci://public.ecr.aws/karpenter/karpenter`, without a tag: the tag is karpenter.version")]
    Reference { input: String, reason: String },
    #[error("`{version}` cannot be a chart version: OCI tags are letters, digits, `.`, `_` and `-`\n  hint: write karpenter.version like `1.14.1`")]
    Version { version: String },
    #[error("no directory for kbp's cache: none of KBP_CACHE_DIR, XDG_CACHE_HOME and HOME is set\n  hint: set KBP_CACHE_DIR to a writable directory")]
    NoCacheDir,
    #[error("cannot reach registry {registry} for chart {chart}: {detail}\n  hint: check network access to {registry} (DNS, proxy, firewall), {}", AIR_GAP)]
    Network { chart: String, registry: String, detail: String },
    #[error("chart {chart} has no version {version} (HTTP 404{detail})\n  hint: check karpenter.version, {}", AIR_GAP)]
    VersionNotFound { chart: String, version: String, detail: String },
    #[error("registry {registry} has no chart {chart} (HTTP 404{detail})\n  hint: check karpenter.chart, {}", AIR_GAP)]
    ChartNotFound { chart: String, registry: String, detail: String },
    #[error("registry {registry} refused an anonymous pull of {chart}: {detail}\n  hint: kbp pulls charts without credentials; point karpenter.chart at a public registry or mirror, {}", AIR_GAP)]
    Unauthorized { chart: String, registry: String, detail: String },
    #[error("registry {registry} answered HTTP {status} to GET {url}{detail}\n  hint: retry later, {}", AIR_GAP)]
    Status { registry: String, url: String, status: u16, detail: String },
    #[error("registry {registry} sent a {what} kbp cannot use: {reason}\n  hint: check that karpenter.chart names a registry serving Helm charts (OCI distribution), {}", AIR_GAP)]
    Protocol { registry: String, what: &'static str, reason: String },
    #[error("{chart} version {version} is not a Helm chart: its manifest has no layer of media type {CHART_LAYER_MEDIA_TYPE} (layers: {found})\n  hint: check karpenter.chart, {}", AIR_GAP)]
    NotAChart { chart: String, version: String, found: String },
    #[error("the chart archive of {chart} version {version} has {what} {actual}, but its manifest says {expected}\n  hint: the registry, or a proxy or CDN in between, served other bytes than it lists; retry, {}", AIR_GAP)]
    Mismatch { chart: String, version: String, what: &'static str, expected: String, actual: String },
    #[error(
        "the chart archive is not a readable .tgz: {reason}\n  hint: check that karpenter.chart is a Helm chart, {}",
        AIR_GAP
    )]
    Archive { reason: String },
    #[error("cannot read {path}: {source}\n  hint: check karpenter.crds_dir (relative to the blueprint file) and its permissions")]
    Read { path: PathBuf, source: io::Error },
    #[error("{file}: not valid YAML: {source}\n  hint: fix the file, or move it out of the directory")]
    Yaml { file: String, source: serde_yaml::Error },
    #[error("{file}: a CustomResourceDefinition without metadata.name\n  hint: fix the file, or move it out of the directory")]
    Unnamed { file: String },
    #[error("{name} is defined twice in {place}\n  hint: keep one copy of each CustomResourceDefinition")]
    Duplicate { name: String, place: String },
    #[error("no CustomResourceDefinition in {place}\n  hint: {hint}")]
    NoCrds { place: String, hint: String },
}

/// A Helm chart in an OCI registry: `oci://host[:port]/path/to/chart`, the form `helm pull` takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChartRef {
    /// `host` or `host:port` (`[v6 address]:port` for IPv6).
    pub registry: String,
    /// The repository path inside the registry, without a tag.
    pub repository: String,
}

impl FromStr for ChartRef {
    type Err = OciError;

    fn from_str(s: &str) -> Result<Self, OciError> {
        let fail = |reason: &str| OciError::Reference { input: s.to_string(), reason: reason.to_string() };
        let rest = s.strip_prefix("oci://").ok_or_else(|| fail("it does not start with oci://"))?;
        let rest = rest.trim_end_matches('/');
        let (registry, repository) = rest.split_once('/').unwrap_or((rest, ""));
        let host_ok = !registry.is_empty()
            && registry.chars().all(|c| c.is_ascii_alphanumeric() || ".-:[]".contains(c))
            && reqwest::Url::parse(&format!("http://{registry}/")).is_ok_and(|u| u.host_str().is_some());
        if !host_ok {
            return Err(fail("it names no registry host"));
        }
        if repository.is_empty() {
            return Err(fail("it names a registry but no repository in it"));
        }
        if repository.contains('@') {
            return Err(fail("it carries a digest"));
        }
        if repository.rsplit('/').next().is_some_and(|last| last.contains(':')) {
            return Err(fail("it carries a tag"));
        }
        // The distribution spec's repository name grammar, loosely: lowercase components joined by `.`, `_`, `-`.
        let component_ok = |part: &str| {
            part.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                && part.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                && part.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c))
        };
        if !repository.split('/').all(component_ok) {
            return Err(fail("repository paths are lowercase letters, digits, `.`, `_` and `-`, separated by `/`"));
        }
        Ok(ChartRef { registry: registry.to_string(), repository: repository.to_string() })
    }
}

impl fmt::Display for ChartRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "oci://{}/{}", self.registry, self.repository)
    }
}

impl ChartRef {
    /// Registries are spoken to over HTTPS, except loopback ones (`localhost`, `127.0.0.0/8`, `[::1]`, any
    /// port), which get plain HTTP: the rule docker and containerd apply to local registries by default.
    pub fn plain_http(&self) -> bool {
        let host = match self.registry.strip_prefix('[') {
            Some(v6) => {
                return v6.split(']').next().and_then(|a| a.parse::<Ipv6Addr>().ok()).is_some_and(|a| a.is_loopback())
            }
            None => self.registry.split(':').next().unwrap_or_default(),
        };
        host.eq_ignore_ascii_case("localhost") || host.parse::<Ipv4Addr>().is_ok_and(|a| a.is_loopback())
    }

    /// `scheme://registry/v2/repository`, under which manifests and blobs live.
    fn api_base(&self) -> String {
        let scheme = if self.plain_http() { "http" } else { "https" };
        format!("{scheme}://{}/v2/{}", self.registry, self.repository)
    }
}

/// Chart archives on disk: `<dir>/<registry>/<repository>/<tag>.tgz`, and next to it `<tag>.json` recording
/// the manifest and archive digests of the pull. An archive is used only while its sha256 matches the record.
#[derive(Debug, Clone)]
pub struct ChartCache {
    dir: PathBuf,
}

#[derive(Debug, Serialize, Deserialize)]
struct CacheRecord {
    chart: String,
    version: String,
    manifest_digest: String,
    archive_digest: String,
    size: u64,
}

impl ChartCache {
    /// `charts/` under `$KBP_CACHE_DIR`, else `$XDG_CACHE_HOME/kbp`, else `$HOME/.cache/kbp`.
    pub fn default_location() -> Result<Self, OciError> {
        cache_root(|name| std::env::var_os(name)).map(|root| Self::at(root.join("charts"))).ok_or(OciError::NoCacheDir)
    }

    /// A cache keeping its archives directly under `dir`.
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        ChartCache { dir: dir.into() }
    }

    /// The chart archive (.tgz bytes) of `chart` at `version`: from the cache when its digest still matches,
    /// else pulled anonymously from the registry (its digest and size checked against the manifest) and cached.
    /// A `+` in the version becomes `_` in the tag, as Helm does, since OCI tags cannot hold `+`.
    pub async fn chart(&self, chart: &ChartRef, version: &str) -> Result<Vec<u8>, OciError> {
        let tag = tag_of(version)?;
        let (archive_path, record_path) = self.paths(chart, &tag);
        match read_cached(&archive_path, &record_path) {
            Ok(Some(bytes)) => {
                tracing::debug!(%chart, version, path = %archive_path.display(), "chart archive from the cache");
                return Ok(bytes);
            }
            Ok(None) => {}
            Err(reason) => {
                tracing::warn!(path = %archive_path.display(), "cached chart archive is unusable ({reason}); pulling it again")
            }
        }
        let pulled = pull(chart, &tag, version).await?;
        let record = CacheRecord {
            chart: chart.to_string(),
            version: version.to_string(),
            manifest_digest: pulled.manifest_digest,
            archive_digest: sha256_digest(&pulled.archive),
            size: pulled.archive.len() as u64,
        };
        // The archive goes first: a record never points at an archive that was not completely written.
        let stored = serde_json::to_vec_pretty(&record).map_err(io::Error::other).and_then(|json| {
            write_atomically(&archive_path, &pulled.archive)?;
            write_atomically(&record_path, &json)
        });
        if let Err(e) = stored {
            // Not fatal: the archive is in hand; the next run pulls it again.
            tracing::warn!(path = %archive_path.display(), "cannot cache the chart archive: {e}; set KBP_CACHE_DIR to a writable directory");
        }
        Ok(pulled.archive)
    }

    fn paths(&self, chart: &ChartRef, tag: &str) -> (PathBuf, PathBuf) {
        // `:`, `[` and `]` of host:port are not portable in file names; repository components are already safe.
        let registry: String = chart
            .registry
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || ".-".contains(c) { c } else { '_' })
            .collect();
        let dir = chart.repository.split('/').fold(self.dir.join(registry), |dir, part| dir.join(part));
        (dir.join(format!("{tag}.tgz")), dir.join(format!("{tag}.json")))
    }
}

fn cache_root(var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let dir = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    dir("KBP_CACHE_DIR")
        // The XDG base directory spec says to ignore relative paths.
        .or_else(|| dir("XDG_CACHE_HOME").filter(|d| d.is_absolute()).map(|d| d.join("kbp")))
        .or_else(|| dir("HOME").map(|d| d.join(".cache").join("kbp")))
}

/// The OCI tag of a chart version: Helm writes semver's `+` as `_`.
fn tag_of(version: &str) -> Result<String, OciError> {
    let tag = version.replace('+', "_");
    let ok = tag.len() <= 128
        && tag.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        && tag.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    if ok {
        Ok(tag)
    } else {
        Err(OciError::Version { version: version.to_string() })
    }
}

/// The cached archive if both files are there and agree; Err says why a present entry cannot be used.
fn read_cached(archive: &Path, record: &Path) -> Result<Option<Vec<u8>>, String> {
    let read = |path: &Path| match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    };
    let (Some(record), Some(bytes)) = (read(record)?, read(archive)?) else { return Ok(None) };
    let record: CacheRecord = serde_json::from_slice(&record).map_err(|e| format!("unreadable record: {e}"))?;
    let actual = sha256_digest(&bytes);
    if actual != record.archive_digest {
        return Err(format!("its digest is {actual}, recorded {}", record.archive_digest));
    }
    Ok(Some(bytes))
}

/// Writes through a temporary file in the same directory and a rename, so readers see the old file or the new
/// one, never a partial one.
fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", uuid::Uuid::new_v4()));
    let written = fs::File::create(&tmp)
        .and_then(|mut file| file.write_all(bytes).and_then(|()| file.sync_all()))
        .and_then(|()| fs::rename(&tmp, path));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

fn sha256_digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

struct Pulled {
    archive: Vec<u8>,
    manifest_digest: String,
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

async fn pull(chart: &ChartRef, tag: &str, version: &str) -> Result<Pulled, OciError> {
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
        let mut attempt = 1;
        loop {
            let failure = match self.fetch_once(url, accept, token, limit).await {
                Ok(got) if attempt >= ATTEMPTS || !retryable(got.status) => return Ok(got),
                Err(e) if attempt >= ATTEMPTS || e.is_builder() || e.is_redirect() => {
                    return Err(OciError::Network {
                        chart: self.chart.to_string(),
                        registry: self.chart.registry.clone(),
                        detail: chain(&e),
                    })
                }
                Ok(got) => format!("HTTP {}", got.status.as_u16()),
                Err(e) => chain(&e),
            };
            let delay = FIRST_RETRY_DELAY * 2u32.pow(attempt - 1);
            tracing::debug!(url, attempt, "GET failed ({failure}); trying again in {delay:?}");
            tokio::time::sleep(delay).await;
            attempt += 1;
        }
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

/// The CRD documents in a chart archive: every `*.yaml`/`*.yml` file under `<chart>/crds/` (the archive's
/// top-level directory, whatever the chart's name), split into YAML documents, keeping only
/// `kind: CustomResourceDefinition`; sorted by metadata.name. Errors if there is none.
pub fn crds_from_chart(tgz: &[u8]) -> Result<Vec<Value>, OciError> {
    let unreadable = |e: io::Error| OciError::Archive { reason: e.to_string() };
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(tgz));
    let mut crds = Vec::new();
    for entry in archive.entries().map_err(unreadable)? {
        let entry = entry.map_err(unreadable)?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry.path().map_err(unreadable)?.into_owned();
        let mut parts = Vec::new();
        for component in path.components() {
            match component {
                Component::Normal(part) => parts.push(part),
                Component::CurDir => {}
                _ => {
                    parts.clear();
                    break;
                }
            }
        }
        if parts.len() < 3 || parts[1] != "crds" || !is_yaml(&path) {
            continue;
        }
        let mut text = Vec::new();
        entry.take(MAX_CHART_FILE_BYTES).read_to_end(&mut text).map_err(unreadable)?;
        crds.extend(crds_in(&text, &path.display().to_string())?);
    }
    sorted(
        crds,
        "the crds/ directory of the chart archive".to_string(),
        "this chart ships no CRDs under crds/; set karpenter.crds_dir to a directory holding them",
    )
}

/// The CRD documents in the `*.yaml`/`*.yml` files of `dir` (not its subdirectories), for air-gapped installs:
/// filtered and sorted like [`crds_from_chart`]. Errors name the file.
pub fn crds_from_dir(dir: &Path) -> Result<Vec<Value>, OciError> {
    fn unreadable(path: &Path) -> impl FnOnce(io::Error) -> OciError + '_ {
        move |source| OciError::Read { path: path.to_path_buf(), source }
    }
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).map_err(unreadable(dir))? {
        let path = entry.map_err(unreadable(dir))?.path();
        if is_yaml(&path) && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    let mut crds = Vec::new();
    for file in &files {
        let text = fs::read(file).map_err(unreadable(file))?;
        crds.extend(crds_in(&text, &file.display().to_string())?);
    }
    sorted(
        crds,
        dir.display().to_string(),
        "put the release's CRD files (the chart's crds/*.yaml) there, or leave karpenter.crds_dir out to pull the chart",
    )
}

fn is_yaml(path: &Path) -> bool {
    path.extension().is_some_and(|ext| ext == "yaml" || ext == "yml")
}

fn crds_in(text: &[u8], file: &str) -> Result<Vec<Value>, OciError> {
    let mut crds = Vec::new();
    for document in serde_yaml::Deserializer::from_slice(text) {
        let value = Value::deserialize(document).map_err(|source| OciError::Yaml { file: file.to_string(), source })?;
        if value.get("kind").and_then(Value::as_str) != Some("CustomResourceDefinition") {
            continue;
        }
        if value.pointer("/metadata/name").and_then(Value::as_str).is_none() {
            return Err(OciError::Unnamed { file: file.to_string() });
        }
        crds.push(value);
    }
    Ok(crds)
}

fn sorted(mut crds: Vec<Value>, place: String, hint: &str) -> Result<Vec<Value>, OciError> {
    let name = |crd: &Value| crd.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default().to_string();
    if crds.is_empty() {
        return Err(OciError::NoCrds { place, hint: hint.to_string() });
    }
    crds.sort_by_key(name);
    if let Some(twice) = crds.windows(2).find(|pair| name(&pair[0]) == name(&pair[1])) {
        return Err(OciError::Duplicate { name: name(&twice[0]), place });
    }
    Ok(crds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(s: &str) -> ChartRef {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn chart_references_parse_into_registry_and_repository() {
        let c = chart("oci://public.ecr.aws/karpenter/karpenter");
        assert_eq!((c.registry.as_str(), c.repository.as_str()), ("public.ecr.aws", "karpenter/karpenter"));
        assert_eq!(c.to_string(), "oci://public.ecr.aws/karpenter/karpenter");
        let c = chart("oci://127.0.0.1:5000/charts/kar_pen-ter.x/");
        assert_eq!((c.registry.as_str(), c.repository.as_str()), ("127.0.0.1:5000", "charts/kar_pen-ter.x"));
        assert_eq!(chart("oci://[::1]:5000/karpenter").registry, "[::1]:5000");
    }

    #[test]
    fn chart_references_that_are_not_oci_say_why() {
        for (bad, why) in [
            ("https://public.ecr.aws/karpenter/karpenter", "does not start with oci://"),
            ("public.ecr.aws/karpenter/karpenter", "does not start with oci://"),
            ("oci://public.ecr.aws", "no repository"),
            ("oci://public.ecr.aws/", "no repository"),
            ("oci:///karpenter", "no registry host"),
            ("oci://user@host/karpenter", "no registry host"),
            ("oci://public.ecr.aws/karpenter/karpenter:1.14.1", "carries a tag"),
            ("oci://public.ecr.aws/karpenter/karpenter@sha256:00", "carries a digest"),
            ("oci://public.ecr.aws/Karpenter/karpenter", "lowercase"),
            ("oci://public.ecr.aws/karpenter//karpenter", "lowercase"),
            ("oci://public.ecr.aws/../karpenter", "lowercase"),
        ] {
            let err = bad.parse::<ChartRef>().expect_err(bad).to_string();
            assert!(err.contains(why) && err.contains("hint:"), "{bad}: {err}");
        }
    }

    #[test]
    fn only_loopback_registries_use_plain_http() {
        for local in
            ["localhost", "LocalHost:5000", "127.0.0.1", "127.0.0.1:5000", "127.1.2.3:80", "[::1]", "[::1]:5000"]
        {
            let c = ChartRef { registry: local.to_string(), repository: "k".to_string() };
            assert!(c.plain_http(), "{local}");
            assert!(c.api_base().starts_with("http://"), "{local}");
        }
        for remote in [
            "public.ecr.aws",
            "localhost.example.com",
            "128.0.0.1",
            "10.0.0.1:5000",
            "[::2]:5000",
            "[::ffff:127.0.0.1]",
        ] {
            let c = ChartRef { registry: remote.to_string(), repository: "k".to_string() };
            assert!(!c.plain_http(), "{remote}");
            assert_eq!(c.api_base(), format!("https://{remote}/v2/k"));
        }
    }

    #[test]
    fn versions_become_oci_tags_like_helm_makes_them() {
        assert_eq!(tag_of("1.14.1").unwrap(), "1.14.1");
        assert_eq!(tag_of("1.14.1+build.5").unwrap(), "1.14.1_build.5");
        for bad in ["", "../1.0.0", ".1", "1.0/0", "1 0", &"1".repeat(129)] {
            assert!(matches!(tag_of(bad), Err(OciError::Version { .. })), "{bad}");
        }
    }

    #[test]
    fn the_cache_lives_under_kbp_cache_dir_then_xdg_then_home() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| OsString::from(v))
        };
        let all = env(&[("KBP_CACHE_DIR", "/k"), ("XDG_CACHE_HOME", "/x"), ("HOME", "/h")]);
        assert_eq!(cache_root(all), Some(PathBuf::from("/k")));
        assert_eq!(cache_root(env(&[("KBP_CACHE_DIR", ""), ("XDG_CACHE_HOME", "/x")])), Some(PathBuf::from("/x/kbp")));
        assert_eq!(cache_root(env(&[("XDG_CACHE_HOME", "rel"), ("HOME", "/h")])), Some(PathBuf::from("/h/.cache/kbp")));
        assert_eq!(cache_root(env(&[])), None);
    }

    #[test]
    fn cache_paths_are_one_directory_per_registry_and_repository() {
        let cache = ChartCache::at("/c");
        let (archive, record) = cache.paths(&chart("oci://[::1]:5000/karpenter/karpenter"), "1.14.1");
        assert_eq!(archive, PathBuf::from("/c/___1__5000/karpenter/karpenter/1.14.1.tgz"));
        assert_eq!(record, PathBuf::from("/c/___1__5000/karpenter/karpenter/1.14.1.json"));
    }

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

    #[test]
    fn crds_in_skips_empty_documents_and_other_kinds() {
        let text = b"---\nkind: ConfigMap\nmetadata: {name: x}\n---\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.b}\n";
        let crds = crds_in(text, "f.yaml").unwrap();
        assert_eq!(crds.len(), 1);
        assert_eq!(crds[0]["metadata"]["name"], "a.b");
        let err = crds_in(b"kind: CustomResourceDefinition\nmetadata: {}\n", "f.yaml").unwrap_err();
        assert!(matches!(err, OciError::Unnamed { .. }), "{err}");
    }

    #[test]
    fn a_crd_defined_twice_is_an_error() {
        let crd = |name: &str| serde_json::json!({"kind": "CustomResourceDefinition", "metadata": {"name": name}});
        let err = sorted(vec![crd("b"), crd("a"), crd("b")], "d".to_string(), "h").unwrap_err();
        assert!(err.to_string().starts_with("b is defined twice in d"), "{err}");
    }

    #[test]
    fn an_archive_that_is_not_gzip_is_an_error_not_a_panic() {
        assert!(matches!(crds_from_chart(b"not a tgz"), Err(OciError::Archive { .. })));
    }
}

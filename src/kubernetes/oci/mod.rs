//! Karpenter's CustomResourceDefinitions from the release's Helm chart. The chart archive is pulled from its
//! OCI registry the way `helm pull oci://…` does it (`registry`: anonymously, with an anonymous bearer token
//! when the registry asks for one), kept in an on-disk cache by registry, repository and version (`cache`), and
//! the files under its `crds/` directory are parsed into JSON values (`chart`). Air-gapped installs read the
//! same CRDs from a local directory. Chart references and tags are `reference`.
//!
//! Owns the OCI distribution client and the chart cache. Applying the CRDs to a cluster is not done here.
//!
//! Why not an OCI client crate: `oci-client` (0.18, on the same reqwest 0.13) would do most of the pull: the
//! anonymous token, accepted layer media types, digest checks, the registry's error codes, plain HTTP for the
//! registries it is told of. What it lacks is a retry: a pull that meets a dropped connection, a 5xx or a 429
//! fails at once, where kbp tries again with a backoff; it also reads a manifest whole, whatever its size.
//! Moving the protocol onto `oci-client`, with kbp's retry around its calls and the cache and error hints kept
//! here, is a known follow-up.

mod cache;
mod chart;
mod reference;
mod registry;

use std::io;
use std::path::{Path, PathBuf};

use self::cache::parsed_location as parsed;

pub use self::cache::ChartCache;
pub use self::chart::{crds_from_chart, crds_from_dir};
use self::chart::{crds_of_chart, crds_of_dir};
pub use self::reference::ChartRef;
use self::registry::CHART_LAYER_MEDIA_TYPE;

const AIR_GAP: &str = "or set karpenter.chart to a local chart directory or .tgz for air-gapped use";

/// Why Karpenter's chart or CRDs could not be pulled, read or parsed; each message ends with a hint.
#[derive(Debug, thiserror::Error)]
pub enum OciError {
    /// `karpenter.chart` does not parse as `oci://registry/repository`.
    #[error("`{input}` is not an OCI chart reference: {reason}\n  hint: write like `oci://public.ecr.aws/karpenter/karpenter`, without a tag: the tag is karpenter.version")]
    Reference {
        /// The reference as written.
        input: String,
        /// Which part is wrong.
        reason: String,
    },
    /// `karpenter.version` cannot be used as an OCI tag.
    #[error("`{version}` cannot be a chart version: OCI tags are letters, digits, `.`, `_` and `-`\n  hint: write karpenter.version like `1.14.1`")]
    Version {
        /// The version as written.
        version: String,
    },
    /// No environment variable names a place for kbp's chart cache.
    #[error("no directory for kbp's cache: none of KBP_CACHE_DIR, XDG_CACHE_HOME and HOME is set\n  hint: set KBP_CACHE_DIR to a writable directory")]
    NoCacheDir,
    /// The registry could not be reached (DNS, connection, TLS, timeout), retries included.
    #[error("cannot reach registry {registry} for chart {chart}: {detail}\n  hint: check network access to {registry} (DNS, proxy, firewall), {}", AIR_GAP)]
    Network {
        /// The chart reference, `oci://registry/repository`.
        chart: String,
        /// Registry host, such as `public.ecr.aws`.
        registry: String,
        /// The HTTP client's error chain.
        detail: String,
    },
    /// The registry has the chart but no tag for the version (HTTP 404).
    #[error("chart {chart} has no version {version} (HTTP 404{detail})\n  hint: check karpenter.version, {}", AIR_GAP)]
    VersionNotFound {
        /// The chart reference, `oci://registry/repository`.
        chart: String,
        /// The version asked for, without a leading `v`.
        version: String,
        /// The registry's error code and message after a `, `; empty when it sent none.
        detail: String,
    },
    /// The registry has no repository of that name (HTTP 404 with `NAME_UNKNOWN`).
    #[error("registry {registry} has no chart {chart} (HTTP 404{detail})\n  hint: check karpenter.chart, {}", AIR_GAP)]
    ChartNotFound {
        /// The chart reference, `oci://registry/repository`.
        chart: String,
        /// Registry host.
        registry: String,
        /// The registry's error code and message after a `, `; empty when it sent none.
        detail: String,
    },
    /// The registry refused an anonymous pull: HTTP 401 or 403, or its token service said no.
    #[error("registry {registry} refused an anonymous pull of {chart}: {detail}\n  hint: kbp pulls charts without credentials; point karpenter.chart at a public registry or mirror, {}", AIR_GAP)]
    Unauthorized {
        /// The chart reference, `oci://registry/repository`.
        chart: String,
        /// Registry host.
        registry: String,
        /// What was refused: the request, the HTTP status and the registry's message.
        detail: String,
    },
    /// The registry answered a GET with an HTTP status kbp does not expect.
    #[error("registry {registry} answered HTTP {status} to GET {url}{detail}\n  hint: retry later, {}", AIR_GAP)]
    Status {
        /// Registry host.
        registry: String,
        /// The URL that was fetched.
        url: String,
        /// HTTP status code.
        status: u16,
        /// The registry's error code and message after a `, `; empty when it sent none.
        detail: String,
    },
    /// The registry answered with something the OCI distribution protocol does not allow.
    #[error("registry {registry} sent a {what} kbp cannot use: {reason}\n  hint: check that karpenter.chart names a registry serving Helm charts (OCI distribution), {}", AIR_GAP)]
    Protocol {
        /// Registry host.
        registry: String,
        /// The part at fault: `manifest`, `token response`, …
        what: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The tag's manifest has no Helm chart layer: the repository holds images, not a chart.
    #[error("{chart} version {version} is not a Helm chart: its manifest has no layer of media type {CHART_LAYER_MEDIA_TYPE} (layers: {found})\n  hint: check karpenter.chart, {}", AIR_GAP)]
    NotAChart {
        /// The chart reference, `oci://registry/repository`.
        chart: String,
        /// The version (tag) pulled.
        version: String,
        /// The media types of the manifest's layers, comma-separated.
        found: String,
    },
    /// The chart layer's size or digest differs from what the manifest lists.
    #[error("the chart archive of {chart} version {version} has {what} {actual}, but its manifest says {expected}\n  hint: the registry, or a proxy or CDN in between, served other bytes than it lists; retry, {}", AIR_GAP)]
    Mismatch {
        /// The chart reference, `oci://registry/repository`.
        chart: String,
        /// The version (tag) pulled.
        version: String,
        /// `size` or `digest`.
        what: &'static str,
        /// The value the manifest lists.
        expected: String,
        /// The value of the bytes received.
        actual: String,
    },
    /// The chart archive is not a gzip-compressed tar kbp can read.
    #[error(
        "the chart archive is not a readable .tgz: {reason}\n  hint: check that karpenter.chart is a Helm chart, {}",
        AIR_GAP
    )]
    Archive {
        /// The decompressor's or tar reader's error.
        reason: String,
    },
    /// A CRD file or directory, or a local chart, could not be read from disk.
    #[error("cannot read {path}: {source}\n  hint: check karpenter.crds_dir (relative to the blueprint file) and its permissions")]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// A CRD file is not valid YAML.
    #[error("{file}: not valid YAML: {source}\n  hint: fix the file, or move it out of the directory")]
    Yaml {
        /// The file, on disk or inside the chart.
        file: String,
        /// The YAML parser's error.
        source: serde_norway::Error,
    },
    /// A CustomResourceDefinition has no `metadata.name`.
    #[error("{file}: a CustomResourceDefinition without metadata.name\n  hint: fix the file, or move it out of the directory")]
    Unnamed {
        /// The file holding it.
        file: String,
    },
    /// Two CustomResourceDefinitions share a name.
    #[error("{name} is defined twice in {place}\n  hint: keep one copy of each CustomResourceDefinition")]
    Duplicate {
        /// The CRD name, such as `nodepools.karpenter.sh`.
        name: String,
        /// The directory or chart they were read from.
        place: String,
    },
    /// A chart or directory holds no CustomResourceDefinition at all.
    #[error("no CustomResourceDefinition in {place}\n  hint: {hint}")]
    NoCrds {
        /// The directory or chart looked in.
        place: String,
        /// What to check, for that kind of place.
        hint: String,
    },
    /// A chart (local or cached) cannot be loaded for rendering.
    #[error("the chart at {place} cannot be used: {reason}\n  hint: point karpenter.chart at a Helm chart directory (holding Chart.yaml) or a chart .tgz, or at oci://…")]
    Chart {
        /// Where the chart is: a path, or the registry reference and version.
        place: String,
        /// Why it cannot be loaded.
        reason: String,
    },
}

/// The release's chart, whole: a local directory or `.tgz` when `chart` is a path, else the `oci://` chart at
/// `version` through kbp's cache (pulled when not cached yet). With where it came from, for messages.
pub async fn release_chart(chart: &str, version: &str) -> Result<(crate::helm::chart::Chart, String), OciError> {
    if let Some(local) = local_chart(chart)? {
        return Ok(local);
    }
    let Pulled { reference, version, archive, .. } = pull(chart, version).await?;
    let place = format!("{reference} {version}");
    let chart = crate::helm::chart::Chart::from_archive(&archive)
        .map_err(|e| OciError::Chart { place: place.clone(), reason: e.to_string() })?;
    Ok((chart, place))
}

/// As [`release_chart`], without the network: `None` when an `oci://` chart is not in the cache yet.
pub fn offline_chart(chart: &str, version: &str) -> Result<Option<(crate::helm::chart::Chart, String)>, OciError> {
    if let Some(local) = local_chart(chart)? {
        return Ok(Some(local));
    }
    let version = version.trim_start_matches('v');
    let reference: ChartRef = chart.parse()?;
    let cache = ChartCache::default_location()?;
    let Some(archive) = cache.cached(&reference, version)? else { return Ok(None) };
    let place = format!("the cached chart {reference} {version}");
    let chart = crate::helm::chart::Chart::from_archive(&archive)
        .map_err(|e| OciError::Chart { place: place.clone(), reason: e.to_string() })?;
    Ok(Some((chart, place)))
}

/// The CRDs of a chart named by a path: its `crds/` directory, or those in the `.tgz`.
fn local_crds(chart: &str) -> Result<Option<(Vec<serde_json::Value>, String)>, OciError> {
    if chart.starts_with("oci://") {
        return Ok(None);
    }
    let path = Path::new(chart);
    let place = format!("the chart at {chart}");
    if path.is_dir() {
        return Ok(Some((crds_of_dir(&path.join("crds"), parsed().as_deref())?, place)));
    }
    let bytes = std::fs::read(path).map_err(|source| OciError::Read { path: path.to_path_buf(), source })?;
    Ok(Some((crds_of_chart(&bytes, parsed().as_deref())?, place)))
}

/// A chart named by a path rather than `oci://`: a directory holding `Chart.yaml`, or a packaged `.tgz`.
fn local_chart(chart: &str) -> Result<Option<(crate::helm::chart::Chart, String)>, OciError> {
    if chart.starts_with("oci://") {
        return Ok(None);
    }
    let path = Path::new(chart);
    let failed = |reason: String| OciError::Chart { place: chart.to_string(), reason };
    let loaded = if path.is_dir() {
        crate::helm::chart::Chart::from_dir(path)
    } else {
        let bytes = std::fs::read(path).map_err(|e| failed(e.to_string()))?;
        crate::helm::chart::Chart::from_archive(&bytes)
    };
    let chart_files = loaded.map_err(|e| failed(e.to_string()))?;
    Ok(Some((chart_files, format!("the chart at {chart}"))))
}

/// The CRDs of a Karpenter release and where they came from: `crds_dir` when set, else the release's chart
/// through kbp's cache (pulled when not cached yet). For `kbp init` and apply's preflight.
pub async fn release_crds(
    chart: &str,
    version: &str,
    crds_dir: Option<&str>,
) -> Result<(Vec<serde_json::Value>, String), OciError> {
    if let Some(dir) = crds_dir {
        return Ok((crds_of_dir(Path::new(dir), parsed().as_deref())?, format!("karpenter.crds_dir {dir}")));
    }
    if let Some(found) = local_crds(chart)? {
        return Ok(found);
    }
    let Pulled { reference, version, cache, archive } = pull(chart, version).await?;
    let place = cache.place_of(&reference, &version)?.display().to_string();
    Ok((crds_of_chart(&archive, parsed().as_deref())?, place))
}

/// An `oci://` chart's archive at `version` (a leading `v` dropped), through kbp's cache: pulled when not cached
/// yet.
struct Pulled {
    reference: ChartRef,
    version: String,
    cache: ChartCache,
    archive: Vec<u8>,
}

async fn pull(chart: &str, version: &str) -> Result<Pulled, OciError> {
    let version = version.trim_start_matches('v').to_string();
    let reference: ChartRef = chart.parse()?;
    let cache = ChartCache::default_location()?;
    let archive = cache.chart(&reference, &version).await?;
    Ok(Pulled { reference, version, cache, archive })
}

/// Where the CRDs that validate a blueprint were found, or why they were not.
pub enum OfflineCrds {
    /// The CRDs, and where they came from (for messages).
    Found(Vec<serde_json::Value>, String),
    /// Neither `karpenter.crds_dir` nor the cache holds them: what was looked at.
    Missing(String),
}

/// The CRDs of the blueprint's Karpenter release without touching the network: from `crds_dir` when set, else
/// from kbp's chart cache (filled by `kbp init`, preflight or apply). An unreadable directory or chart is an
/// error; a cache without the release is [`OfflineCrds::Missing`].
pub fn offline_crds(chart: &str, version: &str, crds_dir: Option<&str>) -> Result<OfflineCrds, OciError> {
    if let Some(dir) = crds_dir {
        let crds = crds_of_dir(Path::new(dir), parsed().as_deref())?;
        return Ok(OfflineCrds::Found(crds, format!("karpenter.crds_dir {dir}")));
    }
    if let Some((crds, place)) = local_crds(chart)? {
        return Ok(OfflineCrds::Found(crds, place));
    }
    let version = version.trim_start_matches('v');
    let chart: ChartRef = chart.parse()?;
    let cache = ChartCache::default_location()?;
    match cache.cached(&chart, version)? {
        Some(archive) => {
            let crds = crds_of_chart(&archive, parsed().as_deref())?;
            Ok(OfflineCrds::Found(crds, format!("the cached chart {chart} {version}")))
        }
        None => Ok(OfflineCrds::Missing(format!("{}", cache.place_of(&chart, version)?.display()))),
    }
}

//! The on-disk cache of chart archives, so a chart version is pulled once per machine, and a pull that the
//! record no longer vouches for (its digest changed on disk) is made again.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::reference::{tag_of, ChartRef};
use super::registry::{pull, sha256_digest};
use super::OciError;
use crate::cache_dir::cache_root;

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
        cache_root().map(|root| Self::at(root.join("charts"))).ok_or(OciError::NoCacheDir)
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

    /// The archive of `chart` at `version` when the cache holds it intact; never pulls (for offline checks).
    pub fn cached(&self, chart: &ChartRef, version: &str) -> Result<Option<Vec<u8>>, OciError> {
        let tag = tag_of(version)?;
        let (archive_path, record_path) = self.paths(chart, &tag);
        Ok(read_cached(&archive_path, &record_path).unwrap_or(None))
    }

    /// Where the cache keeps `chart` at `version` (for messages).
    pub fn place_of(&self, chart: &ChartRef, version: &str) -> Result<PathBuf, OciError> {
        Ok(self.paths(chart, &tag_of(version)?).0)
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

/// Where kbp keeps what it parsed of CRD files (`parsed/` beside `charts/`), when there is a cache directory.
pub(super) fn parsed_location() -> Option<PathBuf> {
    cache_root().map(|root| root.join("parsed"))
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
pub(super) fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_paths_are_one_directory_per_registry_and_repository() {
        let cache = ChartCache::at("/c");
        let (archive, record) = cache.paths(&"oci://[::1]:5000/karpenter/karpenter".parse().unwrap(), "1.14.1");
        assert_eq!(archive, PathBuf::from("/c/___1__5000/karpenter/karpenter/1.14.1.tgz"));
        assert_eq!(record, PathBuf::from("/c/___1__5000/karpenter/karpenter/1.14.1.json"));
    }
}

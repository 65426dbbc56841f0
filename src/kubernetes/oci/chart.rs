//! The CRDs in a chart: the YAML files under the archive's `crds/` directory (or, air-gapped, a directory of
//! them), split into documents, kept when they are CustomResourceDefinitions, sorted by name.
//!
//! Parsing the YAML is most of what reading the CRDs costs (about 2 ms for Karpenter's three files, a fifth of a
//! whole `kbp validate`), so the commands that read them on every run keep what each file parsed to as JSON in
//! kbp's cache, named by the sha256 of the file's bytes (`parsed/<digest>.json`): a changed file is a new entry,
//! and an entry that cannot be read is parsed again.

use std::fs;
use std::io;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::cache::write_atomically;
use super::registry::sha256_digest;
use super::OciError;

/// A file in a chart larger than this, decompressed, is not a CRD file kbp should parse.
const MAX_CHART_FILE_BYTES: u64 = 64 << 20;

/// The CRD documents in a chart archive: every `*.yaml`/`*.yml` file under `<chart>/crds/` (the archive's
/// top-level directory, whatever the chart's name), split into YAML documents, keeping only
/// `kind: CustomResourceDefinition`; sorted by metadata.name. Errors if there is none.
pub fn crds_from_chart(tgz: &[u8]) -> Result<Vec<Value>, OciError> {
    crds_of_chart(tgz, None)
}

/// [`crds_from_chart`], each file's parse kept in (and taken from) the `parsed` directory when given.
pub(super) fn crds_of_chart(tgz: &[u8], parsed: Option<&Path>) -> Result<Vec<Value>, OciError> {
    let files = crate::helm::chart::archive_files(tgz, MAX_CHART_FILE_BYTES)
        .map_err(|e| OciError::Archive { reason: e.to_string() })?;
    let mut crds = Vec::new();
    for (parts, bytes) in files {
        let path = parts.join("/");
        if parts.len() < 3 || parts[1] != "crds" || !is_yaml(Path::new(&path)) {
            continue;
        }
        crds.extend(crds_in(&bytes, &path, parsed)?);
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
    crds_of_dir(dir, None)
}

/// [`crds_from_dir`], each file's parse kept in (and taken from) the `parsed` directory when given.
pub(super) fn crds_of_dir(dir: &Path, parsed: Option<&Path>) -> Result<Vec<Value>, OciError> {
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
        crds.extend(crds_in(&text, &file.display().to_string(), parsed)?);
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

/// The CRD documents of one file, from the `parsed` cache when it has this file's bytes, else parsed (and kept
/// there: a cache that cannot be written is only slower).
fn crds_in(text: &[u8], file: &str, parsed: Option<&Path>) -> Result<Vec<Value>, OciError> {
    let Some(dir) = parsed else { return parse_crds(text, file) };
    let entry = dir.join(format!("{}.json", sha256_digest(text).trim_start_matches("sha256:")));
    if let Some(crds) = fs::read(&entry).ok().and_then(|json| serde_json::from_slice(&json).ok()) {
        return Ok(crds);
    }
    let crds = parse_crds(text, file)?;
    let kept = serde_json::to_vec(&crds).map_err(io::Error::other).and_then(|json| write_atomically(&entry, &json));
    if let Err(e) = kept {
        tracing::debug!(path = %entry.display(), "cannot keep the parsed CRDs: {e}");
    }
    Ok(crds)
}

fn parse_crds(text: &[u8], file: &str) -> Result<Vec<Value>, OciError> {
    let mut crds = Vec::new();
    for document in serde_norway::Deserializer::from_slice(text) {
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

    #[test]
    fn crds_in_skips_empty_documents_and_other_kinds() {
        let text = b"---\nkind: ConfigMap\nmetadata: {name: x}\n---\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.b}\n";
        let crds = crds_in(text, "f.yaml", None).unwrap();
        assert_eq!(crds.len(), 1);
        assert_eq!(crds[0]["metadata"]["name"], "a.b");
        let err = crds_in(b"kind: CustomResourceDefinition\nmetadata: {}\n", "f.yaml", None).unwrap_err();
        assert!(matches!(err, OciError::Unnamed { .. }), "{err}");
    }

    #[test]
    fn a_file_parsed_once_is_read_from_the_cache_by_its_bytes_and_a_broken_entry_is_parsed_again() {
        let parsed = tempfile::tempdir().unwrap();
        let text = b"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.b}\n";
        let first = crds_in(text, "f.yaml", Some(parsed.path())).unwrap();
        let entries: Vec<_> = fs::read_dir(parsed.path()).unwrap().map(|e| e.unwrap().path()).collect();
        assert_eq!(entries.len(), 1, "one entry per file content");
        assert_eq!(serde_json::from_slice::<Vec<Value>>(&fs::read(&entries[0]).unwrap()).unwrap(), first);
        // What the entry says is what a second read gives: the YAML is not parsed again.
        let planted = serde_json::json!([{"kind": "CustomResourceDefinition", "metadata": {"name": "from.cache"}}]);
        fs::write(&entries[0], planted.to_string()).unwrap();
        assert_eq!(Value::Array(crds_in(text, "f.yaml", Some(parsed.path())).unwrap()), planted);
        // Other bytes are another entry; an unreadable entry is parsed again and replaced.
        crds_in(b"kind: ConfigMap\n", "g.yaml", Some(parsed.path())).unwrap();
        assert_eq!(fs::read_dir(parsed.path()).unwrap().count(), 2);
        fs::write(&entries[0], "{ not json").unwrap();
        assert_eq!(crds_in(text, "f.yaml", Some(parsed.path())).unwrap(), first);
        assert_eq!(serde_json::from_slice::<Vec<Value>>(&fs::read(&entries[0]).unwrap()).unwrap(), first);
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

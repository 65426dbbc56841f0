//! `kbp kubeconfig`: a context for the stack's cluster in a kubeconfig file, whose user runs `kbp token` as its
//! exec credential plugin, so kubectl authenticates the way kbp does. Entries of other clusters, and every key
//! kbp does not write, are kept; the file is replaced atomically and stays private (0600).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// What the context is made of.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The name of the cluster, user and context entries (the cluster's ARN, as `aws eks update-kubeconfig` does).
    pub name: String,
    /// The EKS cluster name `kbp token` makes tokens for.
    pub cluster: String,
    /// The cluster's AWS region, passed to `kbp token`.
    pub region: String,
    /// The API server's URL (the kubeconfig cluster's `server`).
    pub endpoint: String,
    /// The cluster CA as EKS reports it, base64 of the PEM (`certificate-authority-data`).
    pub ca_data: String,
    /// The AWS profile to run `kbp token` with, if one was in use.
    pub profile: Option<String>,
    /// The `kbp` command to run.
    pub command: String,
}

/// Why the kubeconfig file could not be updated; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum KubeconfigError {
    /// The existing file could not be read, or is not a YAML kubeconfig.
    #[error("{path}: {message}")]
    Read {
        /// The kubeconfig file.
        path: String,
        /// The I/O or YAML error.
        message: String,
    },
    /// The file (or its directory) could not be written.
    #[error("{path}: cannot write: {message}")]
    Write {
        /// The kubeconfig file.
        path: String,
        /// The I/O error.
        message: String,
    },
}

/// Where kubectl looks first: the first path in `KUBECONFIG`, else `~/.kube/config`.
pub fn default_path() -> PathBuf {
    if let Some(first) = std::env::var_os("KUBECONFIG").and_then(|v| std::env::split_paths(&v).next()) {
        if !first.as_os_str().is_empty() {
            return first;
        }
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
    home.join(".kube").join("config")
}

/// `existing` (a kubeconfig document, or nothing) with `entry`'s cluster, user and context set, and the context
/// made current.
pub fn merge(existing: Option<Value>, entry: &Entry) -> Value {
    let mut doc = match existing {
        Some(Value::Object(map)) => Value::Object(map),
        _ => json!({ "apiVersion": "v1", "kind": "Config", "preferences": {} }),
    };
    let args = ["token", "--cluster", &entry.cluster, "--region", &entry.region];
    let mut exec = json!({
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "command": entry.command,
        "args": args,
        "interactiveMode": "Never",
        "provideClusterInfo": false,
    });
    if let Some(profile) = &entry.profile {
        exec["env"] = json!([{ "name": "AWS_PROFILE", "value": profile }]);
    }
    upsert(
        &mut doc,
        "clusters",
        &entry.name,
        "cluster",
        json!({
            "server": entry.endpoint,
            "certificate-authority-data": entry.ca_data,
        }),
    );
    upsert(&mut doc, "users", &entry.name, "user", json!({ "exec": exec }));
    upsert(&mut doc, "contexts", &entry.name, "context", json!({ "cluster": entry.name, "user": entry.name }));
    doc["current-context"] = json!(entry.name);
    doc
}

/// Sets the entry `name` of the list `list` (replacing one of that name, else appending).
fn upsert(doc: &mut Value, list: &str, name: &str, key: &str, body: Value) {
    let item = json!({ "name": name, key: body });
    match doc.get_mut(list).and_then(Value::as_array_mut) {
        Some(items) => match items.iter_mut().find(|i| i["name"] == name) {
            Some(existing) => *existing = item,
            None => items.push(item),
        },
        None => doc[list] = json!([item]),
    }
}

/// Reads `path` (absent is fine), merges `entry` and writes it back.
pub fn write(path: &Path, entry: &Entry) -> Result<(), KubeconfigError> {
    let shown = path.display().to_string();
    let existing =
        match std::fs::read_to_string(path) {
            Ok(text) if text.trim().is_empty() => None,
            Ok(text) => Some(serde_norway::from_str::<Value>(&text).map_err(|e| KubeconfigError::Read {
                path: shown.clone(),
                message: format!("not a kubeconfig: {e}"),
            })?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(KubeconfigError::Read { path: shown, message: e.to_string() }),
        };
    let text = serde_norway::to_string(&merge(existing, entry))
        .map_err(|e| KubeconfigError::Write { path: shown.clone(), message: e.to_string() })?;
    let err = |e: std::io::Error| KubeconfigError::Write { path: shown.clone(), message: e.to_string() };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(err)?;
    }
    let tmp = path.with_extension(format!("kbp-{}.tmp", std::process::id()));
    {
        use std::io::Write;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&tmp).map_err(err)?;
        file.write_all(text.as_bytes()).map_err(err)?;
        file.sync_all().map_err(err)?;
    }
    std::fs::rename(&tmp, path).map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str) -> Entry {
        Entry {
            name: format!("arn:aws:eks:us-west-2:123456789012:cluster/{name}"),
            cluster: name.into(),
            region: "us-west-2".into(),
            endpoint: "https://example".into(),
            ca_data: "Q0E=".into(),
            profile: Some("dev".into()),
            command: "kbp".into(),
        }
    }

    #[test]
    fn a_new_file_gets_one_context_using_kbp_token() {
        let doc = merge(None, &entry("demo"));
        assert_eq!(doc["current-context"], entry("demo").name);
        let user = &doc["users"][0]["user"]["exec"];
        assert_eq!(user["command"], "kbp");
        assert_eq!(user["args"], json!(["token", "--cluster", "demo", "--region", "us-west-2"]));
        assert_eq!(user["env"][0]["value"], "dev");
        assert_eq!(doc["clusters"][0]["cluster"]["server"], "https://example");
    }

    #[test]
    fn merging_keeps_other_entries_and_replaces_its_own() {
        let other = json!({
            "apiVersion": "v1", "kind": "Config", "current-context": "kind",
            "clusters": [{ "name": "kind", "cluster": { "server": "https://kind" } }],
            "users": [{ "name": "kind", "user": { "token": "x" } }],
            "contexts": [{ "name": "kind", "context": { "cluster": "kind", "user": "kind" } }],
        });
        let once = merge(Some(other), &entry("demo"));
        let mut changed = entry("demo");
        changed.endpoint = "https://moved".into();
        let twice = merge(Some(once), &changed);
        assert_eq!(twice["clusters"].as_array().unwrap().len(), 2);
        assert_eq!(twice["contexts"].as_array().unwrap().len(), 2);
        assert_eq!(twice["clusters"][0]["cluster"]["server"], "https://kind");
        assert_eq!(twice["clusters"][1]["cluster"]["server"], "https://moved");
    }

    #[test]
    fn the_file_is_written_private_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/config");
        write(&path, &entry("a")).unwrap();
        write(&path, &entry("b")).unwrap();
        let doc: Value = serde_norway::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(doc["contexts"].as_array().unwrap().len(), 2);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
    }
}

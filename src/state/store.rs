//! Where state lives and how it is guarded. A [`Backend`] loads, persists (atomically) and locks; the local one
//! keeps `<path>` beside a `<path>.lock` held with an OS file lock (released by the OS if kbp dies, so a killed
//! run never leaves a stale lock) and stamped with who holds it.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use fs4::fs_std::FileExt;
use serde::{Deserialize, Serialize};

use super::{State, FORMAT_VERSION};

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("cannot {action} state file {path}: {source}")]
    Io { action: &'static str, path: PathBuf, source: std::io::Error },
    #[error("state file {path} is not valid kbp state: {source}\n  hint: restore it from the `.backup` beside it, or move it away to start over (kbp will then not know what it created)")]
    Corrupt { path: PathBuf, source: serde_json::Error },
    #[error("state file {path} has format version {found}; this kbp reads version {FORMAT_VERSION}\n  hint: use the kbp version that wrote it ({written_by})")]
    Version { path: PathBuf, found: u32, written_by: String },
    #[error("state {path} is locked by {holder}\n  hint: wait for that run to finish, or pass --lock-timeout 5m to wait for it")]
    Locked { path: PathBuf, holder: String },
}

/// Who holds a lock: written into the lock file so a second run can name the holder.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LockInfo {
    pub operation: String,
    pub pid: u32,
    pub host: String,
    pub user: String,
    pub since: String,
}

impl std::fmt::Display for LockInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`kbp {}` (pid {} on {}, user {}, since {})",
            self.operation, self.pid, self.host, self.user, self.since
        )
    }
}

/// Held for as long as the state is in use; dropping it releases the lock.
pub struct LockGuard {
    _file: File,
}

pub trait Backend: Send + Sync {
    fn load(&self) -> Result<Option<State>, StateError>;
    fn persist(&self, state: &State) -> Result<(), StateError>;
    /// Takes the lock for `operation`, waiting up to `timeout` for another holder to let go.
    fn lock(&self, operation: &str, timeout: Duration) -> Result<LockGuard, StateError>;
    /// Where the state is, for messages.
    fn describe(&self) -> String;
}

pub struct LocalBackend {
    path: PathBuf,
}

impl LocalBackend {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        LocalBackend { path: path.into() }
    }

    pub fn describe_path(&self) -> String {
        self.path.display().to_string()
    }

    fn lock_path(&self) -> PathBuf {
        let mut p = self.path.clone().into_os_string();
        p.push(".lock");
        p.into()
    }

    fn io(&self, action: &'static str, source: std::io::Error) -> StateError {
        StateError::Io { action, path: self.path.clone(), source }
    }
}

impl Backend for LocalBackend {
    fn load(&self) -> Result<Option<State>, StateError> {
        let text = match fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.io("read", e)),
        };
        let probe: serde_json::Value =
            serde_json::from_str(&text).map_err(|source| StateError::Corrupt { path: self.path.clone(), source })?;
        let found = probe.get("format_version").and_then(|v| v.as_u64()).unwrap_or(0) as u32;
        if found != FORMAT_VERSION {
            let written_by = probe.get("kbp_version").and_then(|v| v.as_str()).unwrap_or("unknown").to_string();
            return Err(StateError::Version { path: self.path.clone(), found, written_by });
        }
        serde_json::from_value(probe)
            .map(Some)
            .map_err(|source| StateError::Corrupt { path: self.path.clone(), source })
    }

    /// Temp file in the same directory, fsync, rename over the old one, fsync the directory: a reader (or a crash)
    /// sees the old state or the new one, never half of one.
    fn persist(&self, state: &State) -> Result<(), StateError> {
        let dir = self.path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        fs::create_dir_all(dir).map_err(|e| self.io("create the directory of", e))?;
        let mut tmp = self.path.clone().into_os_string();
        tmp.push(format!(".tmp.{}", std::process::id()));
        let tmp = PathBuf::from(tmp);
        let text = serde_json::to_vec_pretty(state).expect("invariant: state serializes to JSON");
        let mut f = open_private(&tmp, true).map_err(|e| self.io("write", e))?;
        f.write_all(&text)
            .and_then(|_| f.write_all(b"\n"))
            .and_then(|_| f.sync_all())
            .map_err(|e| self.io("write", e))?;
        drop(f);
        fs::rename(&tmp, &self.path).map_err(|e| self.io("replace", e))?;
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }

    fn lock(&self, operation: &str, timeout: Duration) -> Result<LockGuard, StateError> {
        let path = self.lock_path();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(|e| self.io("create the directory of", e))?;
        }
        let mut file = open_private(&path, false).map_err(|e| self.io("lock", e))?;
        let start = Instant::now();
        loop {
            match FileExt::try_lock_exclusive(&file) {
                Ok(true) => break,
                Ok(false) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(self.io("lock", e)),
            }
            if start.elapsed() >= timeout {
                let mut text = String::new();
                let _ = file.seek(SeekFrom::Start(0)).and_then(|_| file.read_to_string(&mut text));
                let holder = serde_json::from_str::<LockInfo>(&text)
                    .map(|i| i.to_string())
                    .unwrap_or_else(|_| "another kbp process".to_string());
                return Err(StateError::Locked { path: self.path.clone(), holder });
            }
            std::thread::sleep(Duration::from_millis(200).min(timeout));
        }
        let info = LockInfo {
            operation: operation.to_string(),
            pid: std::process::id(),
            host: hostname(),
            user: std::env::var("USER").unwrap_or_else(|_| "unknown".to_string()),
            since: crate::ui::timestamp_now(),
        };
        let text = serde_json::to_string(&info).expect("invariant: lock info serializes");
        file.set_len(0)
            .and_then(|_| file.seek(SeekFrom::Start(0)))
            .and_then(|_| file.write_all(text.as_bytes()))
            .and_then(|_| file.sync_all())
            .map_err(|e| self.io("lock", e))?;
        Ok(LockGuard { _file: file })
    }

    fn describe(&self) -> String {
        self.path.display().to_string()
    }
}

/// Opens (creating) a file only its owner may read: state holds ARNs, endpoints and CA data.
fn open_private(path: &Path, truncate: bool) -> std::io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true).write(true).create(true).truncate(truncate);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path)
}

fn hostname() -> String {
    fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown host".to_string())
}

/// The state in use by one run: loaded once, changed through [`StateHandle::update`], which bumps the serial and
/// persists before returning, so nothing a provider did is ever only in memory.
pub struct StateHandle {
    backend: Box<dyn Backend>,
    state: Mutex<State>,
}

impl StateHandle {
    pub fn new(backend: Box<dyn Backend>, state: State) -> Self {
        StateHandle { backend, state: Mutex::new(state) }
    }

    pub fn snapshot(&self) -> State {
        self.state.lock().expect("invariant: state mutex is never poisoned (no panics while held)").clone()
    }

    pub fn update<T>(&self, f: impl FnOnce(&mut State) -> T) -> Result<T, StateError> {
        let mut s = self.state.lock().expect("invariant: state mutex is never poisoned (no panics while held)");
        let out = f(&mut s);
        s.serial += 1;
        self.backend.persist(&s)?;
        Ok(out)
    }

    pub fn describe(&self) -> String {
        self.backend.describe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{ResourceState, Status};

    fn sample_state() -> State {
        let mut s = State::new("demo", "us-west-2");
        let a: crate::graph::Address = "vpc.main".parse().unwrap();
        s.resources.insert(
            a.clone(),
            ResourceState {
                address: a,
                kind: "aws_vpc".into(),
                id: Some("vpc-1".into()),
                status: Status::Ready,
                attributes: serde_json::Map::new(),
                outputs: serde_json::Map::new(),
                dependencies: vec![],
            },
        );
        s
    }

    #[test]
    fn persists_atomically_with_private_mode_and_loads_back() {
        let dir = tempfile::tempdir().unwrap();
        let b = LocalBackend::new(dir.path().join(".kbp/demo.state.json"));
        assert!(b.load().unwrap().is_none());
        let s = sample_state();
        b.persist(&s).unwrap();
        assert_eq!(b.load().unwrap().unwrap(), s);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(dir.path().join(".kbp/demo.state.json")).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let leftovers: Vec<_> = fs::read_dir(dir.path().join(".kbp")).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temp file is left behind");
    }

    #[test]
    fn a_second_lock_fails_naming_the_holder_and_is_free_after_drop() {
        let dir = tempfile::tempdir().unwrap();
        let b = LocalBackend::new(dir.path().join("s.json"));
        let g = b.lock("apply", Duration::ZERO).unwrap();
        // A second open file description on the same file conflicts, as a second process would.
        let err = b.lock("plan", Duration::from_millis(300)).err().expect("locked");
        let msg = err.to_string();
        assert!(msg.contains("kbp apply") && msg.contains(&std::process::id().to_string()), "{msg}");
        drop(g);
        assert!(b.lock("plan", Duration::ZERO).is_ok());
    }

    #[test]
    fn rejects_corrupt_and_future_state_with_a_hint() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.json");
        fs::write(&p, "{not json").unwrap();
        assert!(matches!(LocalBackend::new(&p).load(), Err(StateError::Corrupt { .. })));
        fs::write(&p, r#"{"format_version": 99, "kbp_version": "9.0.0"}"#).unwrap();
        let e = LocalBackend::new(&p).load().unwrap_err();
        assert!(e.to_string().contains("9.0.0"));
    }

    #[test]
    fn handle_bumps_the_serial_and_persists_each_update() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.json");
        let h = StateHandle::new(Box::new(LocalBackend::new(&p)), State::new("demo", "us-west-2"));
        h.update(|s| s.resources.clear()).unwrap();
        h.update(|_| ()).unwrap();
        let on_disk = LocalBackend::new(&p).load().unwrap().unwrap();
        assert_eq!(on_disk.serial, 2);
    }
}

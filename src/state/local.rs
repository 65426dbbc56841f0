//! State in a local file: `<path>` beside a `<path>.lock` held with an OS file lock (released by the OS if kbp
//! dies, so a killed run never leaves a stale lock) and stamped with who holds it.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fs4::fs_std::FileExt;

use super::backend::{decode, encode, Backend, Document, LockGuard, LockInfo, MovedPointer, StateError};
use super::location::Location;
use super::State;

const CORRUPT_HINT: &str = "restore the file from your own copy, or move it away to start over (kbp then no longer \
     knows what it created: `kbp destroy --from-tags CLUSTER` still finds it by its tags)";

pub struct LocalBackend {
    path: PathBuf,
    location: Location,
}

impl LocalBackend {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        LocalBackend { location: Location::Local { path: path.clone() }, path }
    }

    fn lock_path(&self) -> PathBuf {
        let mut p = self.path.clone().into_os_string();
        p.push(".lock");
        p.into()
    }

    fn io(&self, action: &'static str, source: std::io::Error) -> StateError {
        StateError::Io { action, path: self.path.clone(), source }
    }

    /// Temp file in the same directory, fsync, rename over the old one, fsync the directory: a reader (or a crash)
    /// sees the old document or the new one, never half of one.
    fn replace_with(&self, bytes: &[u8]) -> Result<(), StateError> {
        let dir = self.path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        fs::create_dir_all(dir).map_err(|e| self.io("create the directory of", e))?;
        let mut tmp = self.path.clone().into_os_string();
        tmp.push(format!(".tmp.{}", std::process::id()));
        let tmp = PathBuf::from(tmp);
        let mut f = open_private(&tmp, true).map_err(|e| self.io("write", e))?;
        f.write_all(bytes).and_then(|_| f.sync_all()).map_err(|e| self.io("write", e))?;
        drop(f);
        fs::rename(&tmp, &self.path).map_err(|e| self.io("replace", e))?;
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }

    fn holder(file: &mut File) -> Option<LockInfo> {
        let mut text = String::new();
        file.seek(SeekFrom::Start(0)).and_then(|_| file.read_to_string(&mut text)).ok()?;
        serde_json::from_str::<LockInfo>(&text).ok()
    }
}

#[async_trait::async_trait]
impl Backend for LocalBackend {
    fn location(&self) -> &Location {
        &self.location
    }

    async fn load(&self) -> Result<Option<State>, StateError> {
        let bytes = match fs::read(&self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.io("read", e)),
        };
        match decode(&bytes, &self.location, CORRUPT_HINT)? {
            Document::State(s) => Ok(Some(*s)),
            Document::Moved(to) => Err(StateError::Moved { location: self.location.to_string(), to: Box::new(to) }),
        }
    }

    /// The local file has one writer at a time (the lock), so there is no one else's write to refuse.
    async fn persist(&self, state: &State) -> Result<(), StateError> {
        self.replace_with(&encode(state))
    }

    async fn lock(&self, operation: &str, timeout: Duration) -> Result<LockGuard, StateError> {
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
                let holder =
                    Self::holder(&mut file).map(|i| i.to_string()).unwrap_or_else(|| "another kbp process".to_string());
                return Err(StateError::Locked {
                    location: self.describe(),
                    holder,
                    hint: "wait for that run to finish, or pass --lock-timeout 5m to wait for it".to_string(),
                });
            }
            tokio::time::sleep(Duration::from_millis(200).min(timeout)).await;
        }
        let info = LockInfo::new(operation, None);
        let text = serde_json::to_string(&info).expect("invariant: lock info serializes");
        file.set_len(0)
            .and_then(|_| file.seek(SeekFrom::Start(0)))
            .and_then(|_| file.write_all(text.as_bytes()))
            .and_then(|_| file.sync_all())
            .map_err(|e| self.io("lock", e))?;
        Ok(LockGuard::local(info, file))
    }

    /// A local lock cannot outlive its holder: the OS releases it when the process ends. So there is never a
    /// stale one to remove; a live holder is named instead.
    async fn force_unlock(&self, id: &str) -> Result<LockInfo, StateError> {
        let mut file = open_private(&self.lock_path(), false).map_err(|e| self.io("lock", e))?;
        let free = matches!(FileExt::try_lock_exclusive(&file), Ok(true));
        let holder = Self::holder(&mut file);
        let _ = FileExt::unlock(&file);
        let message = match (free, holder) {
            (true, _) => format!("state {} is not locked", self.describe()),
            (false, Some(h)) if h.id == id || h.id.is_empty() => {
                format!("state {} is locked by {h}, a process that is still running", self.describe())
            }
            (false, Some(h)) => format!("state {} is locked by {h}, not by lock ID {id}", self.describe()),
            (false, None) => format!("state {} is locked by a process that is still running", self.describe()),
        };
        Err(StateError::Unlock {
            message,
            hint: "a local lock is released by the operating system as soon as its process ends, even when \
                   killed: wait for that run, or stop it"
                .to_string(),
        })
    }

    async fn retire(&self, to: &Location) -> Result<(), StateError> {
        self.replace_with(&MovedPointer::to(to))
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

    #[tokio::test]
    async fn persists_atomically_with_private_mode_and_loads_back() {
        let dir = tempfile::tempdir().unwrap();
        let b = LocalBackend::new(dir.path().join(".kbp/demo.state.json"));
        assert!(b.load().await.unwrap().is_none());
        let s = sample_state();
        b.persist(&s).await.unwrap();
        assert_eq!(b.load().await.unwrap().unwrap(), s);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(dir.path().join(".kbp/demo.state.json")).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let leftovers: Vec<_> = fs::read_dir(dir.path().join(".kbp")).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temp file is left behind");
    }

    #[tokio::test]
    async fn a_second_lock_fails_naming_the_holder_and_is_free_after_drop() {
        let dir = tempfile::tempdir().unwrap();
        let b = LocalBackend::new(dir.path().join("s.json"));
        let g = b.lock("apply", Duration::ZERO).await.unwrap();
        // A second open file description on the same file conflicts, as a second process would.
        let err = b.lock("plan", Duration::from_millis(300)).await.err().expect("locked");
        let msg = err.to_string();
        assert!(msg.contains("kbp apply") && msg.contains(&std::process::id().to_string()), "{msg}");
        let unlock = b.force_unlock(&g.info.id).await.unwrap_err().to_string();
        assert!(unlock.contains("still running"), "{unlock}");
        drop(g);
        assert!(b.lock("plan", Duration::ZERO).await.is_ok());
    }

    #[tokio::test]
    async fn rejects_corrupt_and_future_state_with_a_hint_that_exists() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.json");
        fs::write(&p, "{not json").unwrap();
        let e = LocalBackend::new(&p).load().await.unwrap_err();
        assert!(matches!(e, StateError::Corrupt { .. }));
        assert!(!e.to_string().contains(".backup"), "kbp writes no .backup: {e}");
        fs::write(&p, r#"{"format_version": 99, "kbp_version": "9.0.0"}"#).unwrap();
        let e = LocalBackend::new(&p).load().await.unwrap_err();
        assert!(e.to_string().contains("9.0.0"));
    }

    #[tokio::test]
    async fn a_retired_state_points_to_where_it_went() {
        let dir = tempfile::tempdir().unwrap();
        let b = LocalBackend::new(dir.path().join("s.json"));
        b.persist(&sample_state()).await.unwrap();
        let to: Location = "s3://acme-state/kbp/demo.state.json".parse().unwrap();
        b.retire(&to).await.unwrap();
        let e = b.load().await.unwrap_err();
        assert!(matches!(&e, StateError::Moved { to: t, .. } if **t == to), "{e}");
        assert!(e.to_string().contains("--state s3://acme-state/kbp/demo.state.json"), "{e}");
    }
}

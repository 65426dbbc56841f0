//! State in a local file: `<path>` beside a `<path>.lock` held with an OS file lock (released by the OS if kbp
//! dies, so a killed run never leaves a stale lock) and stamped with who holds it, and a `<path>.backup` of the
//! state as it was before the last run that changed it.
//!
//! `<path>` is the state file's real place: symlinks in the path the user gave are resolved first
//! ([`super::real_path`]), so a run through a link and a run through the real path take the same lock, and a write
//! replaces the file the link points to, leaving the link a link.

use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use fs4::fs_std::FileExt;

use super::backend::{decode, encode, Backend, Document, LockGuard, LockInfo, MovedPointer, StateError};
use super::location::Location;
use super::real_path::resolve;
use super::State;
use crate::private_file::{self, dir_of, with_suffix};

const CORRUPT_HINT: &str = "restore the file from your own copy, or move it away to start over (kbp then no longer \
     knows what it created: `kbp destroy --from-tags CLUSTER` still finds it by its tags)";

/// State in a local file, with an OS lock on `<path>.lock` and a `<path>.backup` of the state before the run.
pub struct LocalBackend {
    /// As the user gave it: what messages name.
    path: PathBuf,
    location: Location,
    /// The real file, resolved on first use.
    resolved: OnceLock<PathBuf>,
    /// Set once this run's first write kept the previous state as `.backup` (or found none to keep); later
    /// writes of the run leave the backup alone, so it holds the state from before the run.
    backed_up: Mutex<bool>,
}

impl LocalBackend {
    /// The backend of the state file `path`; nothing is read or created until used.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        LocalBackend {
            location: Location::Local { path: path.clone() },
            path,
            resolved: OnceLock::new(),
            backed_up: Mutex::new(false),
        }
    }

    /// The state file's real path (see [`resolve`]), resolved once so the lock and every write name one file.
    fn real_path(&self) -> Result<&Path, StateError> {
        if let Some(p) = self.resolved.get() {
            return Ok(p);
        }
        let p = resolve(&self.path)?;
        Ok(self.resolved.get_or_init(|| p))
    }

    fn io(&self, action: &'static str, source: std::io::Error) -> StateError {
        StateError::Io { action, path: self.path.clone(), source }
    }

    /// Writes `bytes` whole and atomically (see [`private_file::write_atomically`]); the first write of this
    /// backend over an existing file keeps that file as `.backup` first.
    fn replace_with(&self, bytes: &[u8]) -> Result<(), StateError> {
        let path = self.real_path()?;
        private_file::create_dir_all(dir_of(path)).map_err(|e| self.io("create the directory of", e))?;
        let mut backed_up = self.backed_up.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if !*backed_up {
            match fs::read(path) {
                Ok(previous) => private_file::write_atomically(&with_suffix(path, ".backup"), &previous)
                    .map_err(|e| self.io("back up", e))?,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(self.io("back up", e)),
            }
            *backed_up = true;
        }
        private_file::write_atomically(path, bytes).map_err(|e| self.io("write", e))
    }

    fn open_lock(&self) -> Result<File, StateError> {
        let path = with_suffix(self.real_path()?, ".lock");
        private_file::create_dir_all(dir_of(&path)).map_err(|e| self.io("create the directory of", e))?;
        private_file::open_lock_file(&path).map_err(|e| self.io("lock", e))
    }

    /// How to recover from a state file that does not parse: from the backup where there is one.
    fn corrupt_hint(&self, path: &Path) -> String {
        let backup = with_suffix(path, ".backup");
        if !backup.is_file() {
            return CORRUPT_HINT.to_string();
        }
        format!(
            "{} holds the state as it was before the last kbp run that changed it: check it and copy it over {}; \
             or {CORRUPT_HINT}",
            backup.display(),
            path.display()
        )
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
        let path = self.real_path()?;
        let bytes = match fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.io("read", e)),
        };
        match decode(&bytes, &self.location, &self.corrupt_hint(path))? {
            Document::State(s) => Ok(Some(*s)),
            Document::Moved(to) => Err(StateError::Moved { location: self.location.to_string(), to: Box::new(to) }),
        }
    }

    /// The local file has one writer at a time (the lock), so there is no one else's write to refuse.
    async fn persist(&self, state: &State) -> Result<(), StateError> {
        self.replace_with(&encode(state))
    }

    async fn lock(&self, operation: &str, timeout: Duration) -> Result<LockGuard, StateError> {
        let mut file = self.open_lock()?;
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
        let mut file = self.open_lock()?;
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
                imported: false,
                address_tag: crate::state::AddressTag::Path,
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
        assert!(!e.to_string().contains(".backup"), "no run kept a .backup here: {e}");
        fs::write(&p, r#"{"format_version": 99, "kbp_version": "9.0.0"}"#).unwrap();
        let e = LocalBackend::new(&p).load().await.unwrap_err();
        assert!(e.to_string().contains("9.0.0"));

        fs::write(&p, encode(&sample_state())).unwrap();
        LocalBackend::new(&p).persist(&State::new("demo", "us-west-2")).await.unwrap();
        fs::write(&p, "{not json").unwrap();
        let e = LocalBackend::new(&p).load().await.unwrap_err().to_string();
        let backup = resolve(&p).unwrap().display().to_string() + ".backup";
        assert!(e.contains(&format!("{backup} holds the state as it was before")), "{e}");
    }

    #[tokio::test]
    async fn the_backup_holds_the_state_from_before_the_runs_first_write() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.json");
        let backup = dir.path().join("s.json.backup");
        let first_run = LocalBackend::new(&p);
        let mut s = sample_state();
        first_run.persist(&s).await.unwrap();
        assert!(!backup.exists(), "there was nothing before the first write to keep");
        s.serial = 1;
        first_run.persist(&s).await.unwrap();
        assert!(!backup.exists(), "a file this run made is not a previous state");

        let before = fs::read(&p).unwrap();
        let second_run = LocalBackend::new(&p);
        for serial in 2..5 {
            s.serial = serial;
            second_run.persist(&s).await.unwrap();
            assert_eq!(fs::read(&backup).unwrap(), before, "after write with serial {serial}");
        }
        assert_eq!(LocalBackend::new(&backup).load().await.unwrap().unwrap().serial, 1);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(fs::metadata(&backup).unwrap().permissions().mode() & 0o777, 0o600);
        }
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 2, "state and backup, no temp file: {names:?}");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_link_and_its_target_share_one_lock_and_writes_keep_the_link() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("states")).unwrap();
        let real = dir.path().join("states/demo.state.json");
        let link = dir.path().join("demo.state.json");
        std::os::unix::fs::symlink("states/demo.state.json", &link).unwrap();

        let through_link = LocalBackend::new(&link);
        let held = through_link.lock("apply", Duration::ZERO).await.unwrap();
        let err = LocalBackend::new(&real).lock("plan", Duration::ZERO).await.err().expect("one lock for both");
        assert!(err.to_string().contains("kbp apply"), "{err}");
        drop(held);
        let held = LocalBackend::new(&real).lock("apply", Duration::ZERO).await.unwrap();
        assert!(through_link.lock("plan", Duration::ZERO).await.is_err(), "and the other way round");
        drop(held);

        let s = sample_state();
        LocalBackend::new(&real).persist(&State::new("demo", "us-west-2")).await.unwrap();
        through_link.persist(&s).await.unwrap();
        through_link.persist(&s).await.unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link is still a link");
        assert_eq!(LocalBackend::new(&real).load().await.unwrap().unwrap(), s);
        assert!(dir.path().join("states/demo.state.json.backup").is_file(), "beside the real file");
        assert!(!dir.path().join("demo.state.json.lock").exists(), "no second lock beside the link");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_link_out_of_its_directory_is_refused_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let target = elsewhere.path().join("victim.json");
        fs::create_dir(dir.path().join(".kbp")).unwrap();
        let link = dir.path().join(".kbp/demo.state.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let b = LocalBackend::new(&link);
        let e = b.lock("apply", Duration::ZERO).await.err().expect("refused").to_string();
        assert!(e.contains("is a symbolic link to") && e.contains("outside the directory"), "{e}");
        assert!(e.contains("hint: ") && e.contains("--state"), "{e}");
        assert!(b.persist(&sample_state()).await.is_err());
        assert!(b.load().await.is_err());
        assert_eq!(fs::read_dir(elsewhere.path()).unwrap().count(), 0, "nothing written where the link leads");
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

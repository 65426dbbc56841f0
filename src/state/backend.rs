//! What every state backend does — load, persist (atomically, never over someone else's write), lock, unlock —
//! and the errors it reports. [`super::open`] picks the backend for a [`Location`]; the engine sees only the trait.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::location::Location;
use super::{State, FORMAT_VERSION};

/// Why state could not be read, written, locked or unlocked; every message but `Io`'s ends with a hint.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// A local state or lock file could not be read, written, backed up or locked.
    #[error("cannot {action} state file {path}: {source}")]
    Io {
        /// What was being done: `read`, `write`, `back up`, `lock`, …
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The state document does not parse as kbp state (empty, truncated, not JSON, wrong shape).
    #[error("state {location} is not valid kbp state: {detail}\n  hint: {hint}")]
    Corrupt {
        /// Where the state is, as `--state` takes it.
        location: String,
        /// What is wrong with the document.
        detail: String,
        /// How to recover at this backend (a backup, the bucket's versions).
        hint: String,
    },
    /// The state was written in a format version this kbp does not read.
    #[error("state {location} has format version {found}; this kbp reads version {FORMAT_VERSION}\n  hint: use the kbp version that wrote it ({written_by})")]
    Version {
        /// Where the state is.
        location: String,
        /// The format version in the document.
        found: u32,
        /// The kbp version recorded as its writer.
        written_by: String,
    },
    /// The state here is a pointer left by `kbp state migrate`: the state now lives at `to`.
    #[error("state {location} was moved to {to} (kbp state migrate)\n  hint: pass --state {to} (or set KBP_STATE), or name it in the blueprint's [state] table")]
    Moved {
        /// Where the pointer is.
        location: String,
        /// Where the state was migrated to.
        to: Box<Location>,
    },
    /// Another run holds the state lock, and it was not released within the lock timeout.
    #[error("state {location} is locked by {holder}\n  hint: {hint}")]
    Locked {
        /// Where the state is.
        location: String,
        /// Who holds the lock, as [`LockInfo`] displays it.
        holder: String,
        /// How to wait for or remove the lock.
        hint: String,
    },
    /// An S3 call on the state bucket failed.
    #[error("{operation} on {location}: {message}\n  hint: {hint}")]
    Remote {
        /// The S3 API call, such as `s3:GetObject`.
        operation: &'static str,
        /// Where the state is.
        location: String,
        /// The service's error code and message.
        message: String,
        /// What to check: credentials, bucket, region, KMS key.
        hint: String,
    },
    /// Another writer changed the state since this run read it; this run's write was refused, not applied.
    #[error("state {location} was changed by another writer since this run read it, so this run's change was not written\n  hint: {hint}")]
    Conflict {
        /// Where the state is.
        location: String,
        /// How the other write may have happened, and how to go on from it.
        hint: String,
    },
    /// `kbp force-unlock` could not remove the lock: not locked, another lock ID, or a live local holder.
    #[error("{message}\n  hint: {hint}")]
    Unlock {
        /// What was found instead of the lock named.
        message: String,
        /// What to do about it.
        hint: String,
    },
    /// A state command that would lose or mix up state (`push`, `rm`, `mv`, `migrate`).
    #[error("{message}\n  hint: {hint}")]
    Refused {
        /// What the command would have lost or mixed up.
        message: String,
        /// How to do it safely, or force it.
        hint: String,
    },
}

/// Who holds a lock: written into the lock so that a second run, or `kbp force-unlock`, can name the holder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LockInfo {
    /// What `kbp force-unlock` takes.
    #[serde(default)]
    pub id: String,
    /// The `kbp` command that took the lock (`apply`, `destroy`, `state push`…).
    pub operation: String,
    /// The caller's AWS ARN (remote locks), so a lock held by a CI role reads as such.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub who: Option<String>,
    /// Process ID of the holder, on `host`.
    pub pid: u32,
    /// Host name of the machine the holder runs on.
    pub host: String,
    /// Login name of the holder (`$USER`, or `unknown`).
    pub user: String,
    /// RFC 3339, UTC.
    pub since: String,
}

impl LockInfo {
    /// A lock record for `operation` by this process, stamped now, with a fresh lock ID.
    pub fn new(operation: &str, who: Option<String>) -> Self {
        LockInfo {
            id: uuid::Uuid::new_v4().to_string(),
            operation: operation.to_string(),
            who,
            pid: std::process::id(),
            host: hostname(),
            user: std::env::var("USER").unwrap_or_else(|_| "unknown".to_string()),
            since: now_rfc3339(),
        }
    }

    /// How long ago the lock was taken, such as `3m 12s`; `None` if `since` does not parse.
    pub fn age(&self) -> Option<String> {
        let since = time::OffsetDateTime::parse(&self.since, &time::format_description::well_known::Rfc3339).ok()?;
        let secs = (time::OffsetDateTime::now_utc() - since).whole_seconds().max(0) as u64;
        Some(humantime::format_duration(Duration::from_secs(secs)).to_string())
    }
}

impl std::fmt::Display for LockInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`kbp {}` (", self.operation)?;
        if let Some(who) = &self.who {
            write!(f, "{who}, ")?;
        }
        write!(f, "pid {} on {}, user {}, since {}", self.pid, self.host, self.user, self.since)?;
        if let Some(age) = self.age() {
            write!(f, ", {age} ago")?;
        }
        if !self.id.is_empty() {
            write!(f, ", lock ID {}", self.id)?;
        }
        write!(f, ")")
    }
}

/// Releases a lock that the operating system does not release for us (a remote lock object).
#[async_trait::async_trait]
pub trait Release: Send + Sync {
    /// Deletes the lock (the S3 lock object) so that other runs may take it.
    async fn release(&self) -> Result<(), StateError>;
}

/// Held for as long as the state is in use. A local lock goes with the guard (and with the process, if it
/// dies); a remote one is released by [`LockGuard::release`], or at the latest by [`release_held_locks`] when
/// the command ends, whatever path it ends by.
pub struct LockGuard {
    /// Who holds the lock, as written into it.
    pub info: LockInfo,
    _file: Option<std::fs::File>,
    remote: Option<Arc<dyn Release>>,
}

/// Remote locks taken by this process and not yet released.
static HELD: Mutex<Vec<(String, Arc<dyn Release>)>> = Mutex::new(Vec::new());

impl LockGuard {
    pub(super) fn local(info: LockInfo, file: std::fs::File) -> Self {
        LockGuard { info, _file: Some(file), remote: None }
    }

    pub(super) fn remote(info: LockInfo, release: Arc<dyn Release>) -> Self {
        held().push((info.id.clone(), release.clone()));
        LockGuard { info, _file: None, remote: Some(release) }
    }

    /// Releases a remote lock now, reporting failure; a local lock is released when the guard drops.
    pub async fn release(mut self) -> Result<(), StateError> {
        if let Some(r) = self.remote.take() {
            held().retain(|(id, _)| id != &self.info.id);
            r.release().await?;
        }
        Ok(())
    }
}

fn held() -> std::sync::MutexGuard<'static, Vec<(String, Arc<dyn Release>)>> {
    HELD.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Releases every remote lock this process still holds; returns the errors of those it could not. Called when
/// a command ends (success, error or interrupt), so only a killed process leaves a lock behind.
pub async fn release_held_locks() -> Vec<StateError> {
    let pending: Vec<_> = std::mem::take(&mut *held());
    let mut errors = Vec::new();
    for (_, r) in pending {
        if let Err(e) = r.release().await {
            errors.push(e);
        }
    }
    errors
}

/// One place state lives (a local file, an S3 object), with its lock. [`super::open`] picks the implementation.
#[async_trait::async_trait]
pub trait Backend: Send + Sync {
    /// Where this backend's state lives.
    fn location(&self) -> &Location;
    /// The state, `None` where there is none yet.
    async fn load(&self) -> Result<Option<State>, StateError>;
    /// Writes `state` whole and atomically; refused (never overwriting) if another writer changed it since
    /// this backend last read or wrote it.
    async fn persist(&self, state: &State) -> Result<(), StateError>;
    /// Takes the lock for `operation`, waiting up to `timeout` for another holder to let go.
    async fn lock(&self, operation: &str, timeout: Duration) -> Result<LockGuard, StateError>;
    /// Who holds the lock now, where the backend can tell without taking it.
    async fn holder(&self) -> Result<Option<LockInfo>, StateError> {
        Ok(None)
    }
    /// Removes the lock `id` left by a run that can no longer release it; returns who held it.
    async fn force_unlock(&self, id: &str) -> Result<LockInfo, StateError>;
    /// Replaces the state with a pointer to `to`, after a migration, so nothing reads a stale copy here.
    async fn retire(&self, to: &Location) -> Result<(), StateError>;
    /// What the user should know about where the state lives (history not kept, say); empty when all is well.
    async fn advice(&self) -> Vec<String> {
        Vec::new()
    }
    /// The location for messages, as `--state` would take it.
    fn describe(&self) -> String {
        self.location().to_string()
    }
}

/// What a state document holds: a state, or the pointer a migration left behind.
pub(super) enum Document {
    State(Box<State>),
    Moved(Location),
}

/// The pointer [`Backend::retire`] writes.
#[derive(Serialize, Deserialize)]
pub(super) struct MovedPointer {
    pub format_version: u32,
    pub moved_to: Location,
    pub moved_at: String,
}

impl MovedPointer {
    pub(super) fn to(to: &Location) -> Vec<u8> {
        let p = MovedPointer { format_version: FORMAT_VERSION, moved_to: to.clone(), moved_at: now_rfc3339() };
        serde_json::to_vec_pretty(&p).expect("invariant: a moved pointer serializes to JSON")
    }
}

/// Decodes a state document read from `location`; `corrupt_hint` says how to recover at that backend.
pub(super) fn decode(bytes: &[u8], location: &Location, corrupt_hint: &str) -> Result<Document, StateError> {
    let corrupt =
        |detail: String| StateError::Corrupt { location: location.to_string(), detail, hint: corrupt_hint.to_string() };
    let probe: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
        if bytes.is_empty() {
            corrupt("it is empty".to_string())
        } else if e.is_eof() {
            corrupt(format!("it is truncated ({} bytes, {e})", bytes.len()))
        } else {
            corrupt(e.to_string())
        }
    })?;
    if let Some(to) = probe.get("moved_to") {
        let to = serde_json::from_value(to.clone()).map_err(|e| corrupt(format!("a broken moved_to: {e}")))?;
        return Ok(Document::Moved(to));
    }
    let found = probe.get("format_version").and_then(|v| v.as_u64()).unwrap_or(0) as u32;
    if found != FORMAT_VERSION {
        let written_by = probe.get("kbp_version").and_then(|v| v.as_str()).unwrap_or("unknown").to_string();
        return Err(StateError::Version { location: location.to_string(), found, written_by });
    }
    serde_json::from_value(probe).map(|s| Document::State(Box::new(s))).map_err(|e| corrupt(e.to_string()))
}

/// Encodes `state` as written everywhere: pretty JSON (diffable), ending in a newline.
pub(super) fn encode(state: &State) -> Vec<u8> {
    let mut text = serde_json::to_vec_pretty(state).expect("invariant: state serializes to JSON");
    text.push(b'\n');
    text
}

/// Now, as RFC 3339 UTC with milliseconds: how state records when things happened.
pub(crate) fn now_rfc3339() -> String {
    let now = time::OffsetDateTime::now_utc();
    let now = now.replace_millisecond(now.millisecond()).unwrap_or(now);
    now.format(&time::format_description::well_known::Rfc3339).unwrap_or_else(|_| now.unix_timestamp().to_string())
}

fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown host".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_tells_empty_truncated_moved_and_future_documents_apart() {
        let here = Location::Local { path: "s.json".into() };
        let err = |bytes: &[u8]| match decode(bytes, &here, "HINT") {
            Err(e) => e.to_string(),
            Ok(_) => panic!("decoded {:?}", String::from_utf8_lossy(bytes)),
        };
        assert!(err(b"").contains("it is empty"));
        let whole = encode(&State::new("demo", "us-west-2"));
        let e = err(&whole[..whole.len() / 2]);
        assert!(e.contains("truncated") && e.contains("HINT"), "{e}");
        assert!(err(br#"{"format_version": 99, "kbp_version": "9.0.0"}"#).contains("9.0.0"));
        let to: Location = "s3://acme-state/k.json".parse().unwrap();
        assert!(matches!(decode(&MovedPointer::to(&to), &here, ""), Ok(Document::Moved(l)) if l == to));
        assert!(matches!(decode(&whole, &here, ""), Ok(Document::State(s)) if s.stack == "demo"));
    }

    #[test]
    fn lock_info_names_the_holder_its_age_and_id() {
        let mut info = LockInfo::new("apply", Some("arn:aws:iam::123456789012:role/ci".into()));
        info.since = "2020-01-01T00:00:00Z".to_string();
        let text = info.to_string();
        assert!(text.contains("`kbp apply`") && text.contains("role/ci") && text.contains(&info.id), "{text}");
        assert!(text.contains("ago"), "{text}");
    }
}

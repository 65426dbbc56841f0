//! State in S3, for teams and CI: the document at `s3://bucket/key`, encrypted at rest (SSE-KMS with the
//! configured key, else SSE-S3), every write conditional on the ETag this run last read or wrote (`If-Match`;
//! `If-None-Match: *` for the first), so an update never overwrites another writer's. The lock is an object
//! `<key>.lock` created only if absent (`If-None-Match: *`, S3's native locking, no DynamoDB table), holding
//! who took it; a run killed outright leaves it, and `kbp force-unlock ID` removes it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{BucketVersioningStatus, ServerSideEncryption};

use super::backend::{decode, encode, Backend, Document, LockGuard, LockInfo, MovedPointer, Release, StateError};
use super::location::{Location, S3Location};
use super::State;
use failure::{hint, one_line, Failure, Unsent};

mod failure;

/// How often a waiting run (`--lock-timeout`) tries the lock again.
const LOCK_RETRY: Duration = Duration::from_secs(1);

/// State in an S3 object: conditional writes on its ETag, a `<key>.lock` object as the lock.
pub struct S3Backend {
    client: aws_sdk_s3::Client,
    sts: aws_sdk_sts::Client,
    s3: S3Location,
    location: Location,
    /// The ETag of the object as this run last read or wrote it; `None` when it does not exist (yet).
    seen: Mutex<Option<String>>,
}

impl S3Backend {
    /// Clients for the bucket from the standard AWS chain, with the location's region, profile and role.
    pub async fn connect(s3: &S3Location) -> S3Backend {
        let mut sdk = crate::aws::load(s3.region.as_deref(), s3.profile.as_deref()).await;
        if let Some(role) = &s3.role_arn {
            let provider = aws_config::sts::AssumeRoleProvider::builder(role)
                .session_name("kbp-state")
                .configure(&sdk)
                .build()
                .await;
            sdk = sdk
                .into_builder()
                .credentials_provider(aws_credential_types::provider::SharedCredentialsProvider::new(provider))
                .build();
        }
        S3Backend::with_config(s3, &sdk)
    }

    /// Clients for the bucket from an AWS configuration loaded elsewhere.
    pub fn with_config(s3: &S3Location, sdk: &aws_config::SdkConfig) -> S3Backend {
        S3Backend {
            client: crate::aws_client!(aws_sdk_s3, sdk),
            sts: crate::aws_client!(aws_sdk_sts, sdk),
            location: Location::S3(s3.clone()),
            s3: s3.clone(),
            seen: Mutex::new(None),
        }
    }

    fn lock_key(&self) -> String {
        format!("{}.lock", self.s3.key)
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.seen.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One line saying what failed and a hint for what to do about it.
    fn explain(&self, f: Failure) -> StateError {
        let hint = hint(&self.s3, &f, self.client.config().region().is_some());
        let code = if f.code.is_empty() { String::new() } else { format!("{}: ", f.code) };
        StateError::Remote {
            operation: f.operation,
            location: self.describe(),
            message: format!("{code}{}", if f.message.is_empty() { "(no message)" } else { &f.message }),
            hint,
        }
    }

    /// The object's bytes and ETag; `None` if there is no such object.
    async fn get(&self, key: &str) -> Result<Option<(Vec<u8>, Option<String>)>, Failure> {
        let out = match self.client.get_object().bucket(&self.s3.bucket).key(key).send().await {
            Ok(out) => out,
            Err(e) => {
                let f = Failure::of("s3:GetObject", e);
                return if f.is_missing_key() { Ok(None) } else { Err(f) };
            }
        };
        let etag = out.e_tag().map(str::to_string);
        let bytes = out.body.collect().await.map_err(|e| Failure {
            operation: "s3:GetObject",
            status: None,
            code: String::new(),
            message: format!("reading the object's body: {}", one_line(&crate::aws::causes(&e))),
            cause: Unsent::No,
        })?;
        Ok(Some((bytes.into_bytes().to_vec(), etag)))
    }

    /// Writes `bytes` at the state key only if it is as this run last saw it; returns the new ETag.
    async fn put_state(&self, bytes: Vec<u8>) -> Result<Option<String>, StateError> {
        let expected = self.seen().clone();
        let mut put = self
            .client
            .put_object()
            .bucket(&self.s3.bucket)
            .key(&self.s3.key)
            .content_type("application/json")
            .body(ByteStream::from(bytes));
        put = match &self.s3.kms_key_id {
            Some(key) => put.server_side_encryption(ServerSideEncryption::AwsKms).ssekms_key_id(key),
            None => put.server_side_encryption(ServerSideEncryption::Aes256),
        };
        put = match &expected {
            Some(etag) => put.if_match(etag),
            None => put.if_none_match("*"),
        };
        match put.send().await {
            Ok(out) => Ok(out.e_tag().map(str::to_string)),
            Err(e) => {
                let f = Failure::of("s3:PutObject", e);
                // If-Match on an object deleted meanwhile answers 404: someone else's write all the same.
                if f.is_precondition() || (expected.is_some() && f.is_missing_key()) {
                    Err(StateError::Conflict {
                        location: self.describe(),
                        hint: "someone wrote this state while this run held the lock (a `kbp force-unlock` of a \
                               live run, or a `kbp state push`); nothing was overwritten. What this run changed in \
                               AWS carries kbp:address tags, so the next `kbp apply` adopts it: run it again"
                            .to_string(),
                    })
                } else {
                    Err(self.explain(f))
                }
            }
        }
    }

    async fn caller(&self) -> Option<String> {
        self.sts.get_caller_identity().send().await.ok().and_then(|o| o.arn().map(str::to_string))
    }

    async fn read_lock(&self) -> Result<Option<LockInfo>, StateError> {
        match self.get(&self.lock_key()).await.map_err(|f| self.explain(f))? {
            None => Ok(None),
            // A lock object that is not ours to read still holds the lock: show what can be shown.
            Some((bytes, _)) => Ok(Some(serde_json::from_slice(&bytes).unwrap_or_else(|_| LockInfo {
                id: String::new(),
                operation: "(unreadable lock)".to_string(),
                who: None,
                pid: 0,
                host: "unknown".to_string(),
                user: "unknown".to_string(),
                since: String::new(),
            }))),
        }
    }

    fn force_unlock_hint(&self, id: &str) -> String {
        format!(
            "wait for that run to finish (--lock-timeout 10m waits); if it was killed, remove its lock with \
             `kbp force-unlock {id} --state {}`",
            self.describe()
        )
    }
}

/// Deletes this run's lock object, if it is still this run's.
struct S3Lock {
    client: aws_sdk_s3::Client,
    bucket: String,
    key: String,
    id: String,
    location: String,
}

#[async_trait::async_trait]
impl Release for S3Lock {
    async fn release(&self) -> Result<(), StateError> {
        let remote = |operation, f: Failure| StateError::Remote {
            operation,
            location: self.location.clone(),
            message: format!("{} {}", f.code, f.message),
            hint: format!("remove the lock with `kbp force-unlock {} --state {}`", self.id, self.location),
        };
        let current = match self.client.get_object().bucket(&self.bucket).key(&self.key).send().await {
            Ok(out) => out.body.collect().await.ok().map(|b| b.into_bytes().to_vec()),
            Err(e) => {
                let f = Failure::of("s3:GetObject", e);
                if f.is_missing_key() {
                    return Ok(());
                }
                return Err(remote("s3:GetObject", f));
            }
        };
        let holder = current.and_then(|b| serde_json::from_slice::<LockInfo>(&b).ok());
        if holder.is_some_and(|h| h.id != self.id) {
            // Someone force-unlocked this run and took the lock since: theirs now, not ours to remove.
            return Ok(());
        }
        match self.client.delete_object().bucket(&self.bucket).key(&self.key).send().await {
            Ok(_) => Ok(()),
            Err(e) => Err(remote("s3:DeleteObject", Failure::of("s3:DeleteObject", e))),
        }
    }
}

#[async_trait::async_trait]
impl Backend for S3Backend {
    fn location(&self) -> &Location {
        &self.location
    }

    async fn load(&self) -> Result<Option<State>, StateError> {
        let Some((bytes, etag)) = self.get(&self.s3.key).await.map_err(|f| self.explain(f))? else {
            *self.seen() = None;
            return Ok(None);
        };
        *self.seen() = etag;
        let hint = format!(
            "restore an earlier version of the object (`aws s3api list-object-versions --bucket {} --prefix {}`, \
             then copy the good one back), or push a good copy with `kbp state push FILE --force`",
            self.s3.bucket, self.s3.key
        );
        match decode(&bytes, &self.location, &hint)? {
            Document::State(s) => Ok(Some(*s)),
            Document::Moved(to) => Err(StateError::Moved { location: self.describe(), to: Box::new(to) }),
        }
    }

    async fn persist(&self, state: &State) -> Result<(), StateError> {
        let etag = self.put_state(encode(state)).await?;
        *self.seen() = etag;
        Ok(())
    }

    async fn lock(&self, operation: &str, timeout: Duration) -> Result<LockGuard, StateError> {
        let info = LockInfo::new(operation, self.caller().await);
        let body = serde_json::to_vec_pretty(&info).expect("invariant: lock info serializes");
        let start = Instant::now();
        loop {
            let put = self
                .client
                .put_object()
                .bucket(&self.s3.bucket)
                .key(self.lock_key())
                .content_type("application/json")
                .if_none_match("*")
                .body(ByteStream::from(body.clone()));
            let f = match put.send().await {
                Ok(_) => break,
                Err(e) => Failure::of("s3:PutObject", e),
            };
            if !f.is_precondition() {
                return Err(self.explain(f));
            }
            // Held: by whom? (It may have been released between the two calls: then try again at once.)
            let Some(holder) = self.read_lock().await? else { continue };
            if start.elapsed() >= timeout {
                return Err(StateError::Locked {
                    location: self.describe(),
                    hint: self.force_unlock_hint(if holder.id.is_empty() { "LOCK_ID" } else { &holder.id }),
                    holder: holder.to_string(),
                });
            }
            tokio::time::sleep(LOCK_RETRY.min(timeout.saturating_sub(start.elapsed()))).await;
        }
        let release = S3Lock {
            client: self.client.clone(),
            bucket: self.s3.bucket.clone(),
            key: self.lock_key(),
            id: info.id.clone(),
            location: self.describe(),
        };
        Ok(LockGuard::remote(info, Arc::new(release)))
    }

    async fn holder(&self) -> Result<Option<LockInfo>, StateError> {
        self.read_lock().await
    }

    async fn force_unlock(&self, id: &str) -> Result<LockInfo, StateError> {
        let Some(holder) = self.read_lock().await? else {
            return Err(StateError::Unlock {
                message: format!("state {} is not locked", self.describe()),
                hint: "there is nothing to unlock".to_string(),
            });
        };
        if holder.id != id {
            return Err(StateError::Unlock {
                message: format!("state {} is locked by {holder}, not by lock ID {id}", self.describe()),
                hint: "pass the lock ID the error of the blocked run shows; a lock is only removed by its own ID"
                    .to_string(),
            });
        }
        match self.client.delete_object().bucket(&self.s3.bucket).key(self.lock_key()).send().await {
            Ok(_) => Ok(holder),
            Err(e) => Err(self.explain(Failure::of("s3:DeleteObject", e))),
        }
    }

    async fn retire(&self, to: &Location) -> Result<(), StateError> {
        let etag = self.put_state(MovedPointer::to(to)).await?;
        *self.seen() = etag;
        Ok(())
    }

    async fn advice(&self) -> Vec<String> {
        match self.client.get_bucket_versioning().bucket(&self.s3.bucket).send().await {
            Ok(out) if out.status() == Some(&BucketVersioningStatus::Enabled) => Vec::new(),
            Ok(_) => vec![format!(
                "bucket {b} has versioning off: earlier versions of the state are not kept, so a bad write cannot \
                 be undone\n  hint: `aws s3api put-bucket-versioning --bucket {b} --versioning-configuration \
                 Status=Enabled`",
                b = self.s3.bucket
            )],
            Err(e) => {
                let f = Failure::of("s3:GetBucketVersioning", e);
                vec![format!(
                    "could not tell whether bucket {} keeps versions: {} {}",
                    self.s3.bucket, f.code, f.message
                )]
            }
        }
    }
}

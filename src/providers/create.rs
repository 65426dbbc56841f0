//! Creating a resource without ever making two. A create can fail after AWS carried it out: the answer was
//! lost (connection dropped, timeout, a 5xx), or an earlier attempt — in this run, or in a run that died with
//! the request in flight — made it already. Every create goes through [`create_once`], which
//!
//! - before re-sending a create interrupted in an earlier run, waits until that request can no longer be in
//!   flight ([`settle`]) and looks for what it made, by the kbp tags or unique name written in the create call;
//! - after a failure whose outcome is unknown, waits the same and looks again before sending it again;
//! - after "already exists", adopts the resource if it carries this stack's and address's tags (an earlier
//!   attempt of ours), and reports the conflict otherwise.
//!
//! What is adopted is read, then brought to the desired attributes with the provider's update, so the result is
//! the same as a create that went through. Creates with a client token are idempotent at AWS already; this
//! covers the ones without (CreateVpc, AllocateAddress, kms:CreateKey…) and the unique-name ones (IAM, EKS).

use crate::backoff::{Attempt, Backoff};
use std::time::{Duration, SystemTime};

use super::{Applied, Context, Desired, Provider, ProviderError};
use crate::providers::Result;

/// How many times a create whose outcome stayed unknown (and whose resource was not found) is sent again.
const ATTEMPTS: u32 = 3;

/// How long a request can still be on its way to AWS after kbp lost track of it (`KBP_SETTLE_DELAY`).
pub fn settle() -> Duration {
    std::env::var("KBP_SETTLE_DELAY")
        .ok()
        .and_then(|v| humantime::parse_duration(&v).ok())
        .unwrap_or(Duration::from_secs(10))
}

/// Creates `desired`, or adopts what an earlier attempt made. `resumed_from` is when an earlier run recorded its
/// intent to create this resource (it died before knowing the outcome).
pub async fn create_once(
    provider: &dyn Provider,
    cx: &Context,
    desired: &Desired<'_>,
    resumed_from: Option<SystemTime>,
) -> Result<Applied> {
    if let Some(started) = resumed_from {
        cx.uncertain_create();
        let landed_by = started + settle();
        if let Ok(wait) = landed_by.duration_since(SystemTime::now()) {
            tracing::info!(address = %desired.address, ?wait, "an interrupted create may still land; waiting before looking for it");
            tokio::time::sleep(wait).await;
        }
        if let Some(id) = provider.find(cx, desired).await? {
            return adopt(provider, cx, desired, &id).await;
        }
    }
    // After a create whose outcome is unknown, and the time it takes to land, what it made is looked for before
    // the create is sent again.
    Backoff::every(settle(), ATTEMPTS)
        .run("create", |attempt| async move {
            if attempt > 1 {
                match provider.find(cx, desired).await {
                    Ok(Some(id)) => return Attempt::Done(adopt(provider, cx, desired, &id).await),
                    Ok(None) => {}
                    Err(e) => return Attempt::Done(Err(e)),
                }
            }
            let e = match provider.create(cx, desired).await {
                Ok(applied) => return Attempt::Done(Ok(applied)),
                Err(e) => e,
            };
            if e.is_already_exists() {
                // Ours if it carries our tags (an attempt whose answer was lost), else someone else's: say so.
                return Attempt::Done(match provider.find(cx, desired).await {
                    Ok(Some(id)) => adopt(provider, cx, desired, &id).await,
                    Ok(None) => Err(e),
                    Err(found) => Err(found),
                });
            }
            if !e.outcome_unknown || attempt >= ATTEMPTS {
                return Attempt::Done(Err(e));
            }
            tracing::warn!(address = %desired.address, error = %e, "outcome of the create unknown; looking for what it made");
            cx.uncertain_create();
            Attempt::Again { why: format!("the create's outcome is unknown ({e})"), last: Err(e) }
        })
        .await
}

/// Takes `id` as the resource at `desired.address`: reads it, and updates it to the desired attributes.
async fn adopt(provider: &dyn Provider, cx: &Context, desired: &Desired<'_>, id: &str) -> Result<Applied> {
    tracing::info!(address = %desired.address, id, "adopting what an earlier create made");
    let observed = provider.read(cx, id, desired.attrs).await?.ok_or_else(|| {
        ProviderError::new("kbp:adopt", "", format!("{} was found as {id} but is gone when read", desired.address))
            .with_hint("run kbp again")
    })?;
    provider.wait_ready(cx, desired.address, id).await?;
    let mut applied = provider.update(cx, id, &observed.attrs, desired).await?;
    let mut outputs = observed.outputs;
    outputs.extend(applied.outputs);
    applied.outputs = outputs;
    Ok(applied)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Mutex;

    use async_trait::async_trait;
    use serde_json::json;

    use super::*;
    use crate::graph::{Address, Attrs};
    use crate::providers::WithoutState;
    use crate::providers::{Descriptor, Observed};

    /// A fake AWS: creates may "lose their answer" (carried out, then an unknown-outcome error), or all be
    /// refused with `refusal` (making nothing); `creates` counts the attempts.
    #[derive(Default)]
    struct Lossy {
        made: Mutex<Vec<String>>,
        lose_answers: AtomicU32,
        already_exists_if_made: bool,
        refusal: Option<ProviderError>,
        creates: AtomicU32,
        updates: AtomicU32,
    }

    #[async_trait]
    impl Provider for Lossy {
        fn descriptor(&self) -> Descriptor {
            Descriptor::new("thing", WithoutState::Tags, &[])
        }
        async fn read(&self, _: &Context, id: &str, _: &Attrs) -> Result<Option<Observed>> {
            let found = self.made.lock().unwrap().iter().any(|m| m == id);
            Ok(found.then(|| Observed {
                attrs: serde_json::Map::new(),
                outputs: json!({"id": id}).as_object().unwrap().clone(),
            }))
        }
        async fn find(&self, _: &Context, _: &Desired<'_>) -> Result<Option<String>> {
            Ok(self.made.lock().unwrap().first().cloned())
        }
        async fn create(&self, _: &Context, _: &Desired<'_>) -> Result<Applied> {
            self.creates.fetch_add(1, Ordering::SeqCst);
            if let Some(e) = &self.refusal {
                return Err(e.clone());
            }
            let mut made = self.made.lock().unwrap();
            if self.already_exists_if_made && !made.is_empty() {
                return Err(ProviderError::new("iam:CreateRole", "EntityAlreadyExists", "taken"));
            }
            let id = format!("id-{}", made.len() + 1);
            made.push(id.clone());
            if self.lose_answers.load(Ordering::SeqCst) > 0 {
                self.lose_answers.fetch_sub(1, Ordering::SeqCst);
                let mut e = ProviderError::new("ec2:CreateVpc", "", "connection closed before message completed");
                e.outcome_unknown = true;
                return Err(e);
            }
            Ok(Applied { id, outputs: serde_json::Map::new() })
        }
        async fn update(&self, _: &Context, id: &str, _: &Attrs, _: &Desired<'_>) -> Result<Applied> {
            self.updates.fetch_add(1, Ordering::SeqCst);
            Ok(Applied { id: id.to_string(), outputs: serde_json::Map::new() })
        }
        async fn delete(&self, _: &Context, _: &str, _: &Attrs) -> Result<()> {
            Ok(())
        }
    }

    fn cx() -> Context {
        std::env::set_var("KBP_SETTLE_DELAY", "10ms");
        Context::from_sdk(aws_config::SdkConfig::builder().build(), "t", "us-west-2")
    }

    fn desired<'a>(address: &'a Address, attrs: &'a Attrs) -> Desired<'a> {
        Desired { address, attrs, kbp_tags: Default::default(), client_token: "tok", replaces: None }
    }

    #[tokio::test]
    async fn a_lost_answer_is_adopted_not_created_again() {
        let p = Lossy { lose_answers: AtomicU32::new(1), ..Default::default() };
        let (a, attrs) = (Address::new("thing", "x"), Attrs::new());
        let applied = create_once(&p, &cx(), &desired(&a, &attrs), None).await.unwrap();
        assert_eq!(applied.id, "id-1");
        assert_eq!(applied.outputs["id"], "id-1", "outputs read from what was adopted");
        assert_eq!(p.made.lock().unwrap().len(), 1, "one resource, not two");
        assert_eq!(p.updates.load(Ordering::SeqCst), 1, "the adopted resource is brought to the desired state");
    }

    #[tokio::test]
    async fn already_exists_is_adopted_when_ours_and_reported_when_not() {
        let p = Lossy { already_exists_if_made: true, ..Default::default() };
        p.made.lock().unwrap().push("id-earlier".into());
        let (a, attrs) = (Address::new("thing", "x"), Attrs::new());
        assert_eq!(create_once(&p, &cx(), &desired(&a, &attrs), None).await.unwrap().id, "id-earlier");

        let taken = ProviderError::new("iam:CreateRole", "EntityAlreadyExists", "taken");
        let p = Lossy { refusal: Some(taken), ..Default::default() };
        let e = create_once(&p, &cx(), &desired(&a, &attrs), None).await.unwrap_err();
        assert!(e.is("EntityAlreadyExists"));
    }

    #[tokio::test]
    async fn a_resumed_create_that_landed_late_is_found_before_sending_again() {
        let p = Lossy::default();
        p.made.lock().unwrap().push("id-landed-late".into());
        let (a, attrs) = (Address::new("thing", "x"), Attrs::new());
        let applied = create_once(&p, &cx(), &desired(&a, &attrs), Some(SystemTime::now())).await.unwrap();
        assert_eq!(applied.id, "id-landed-late");
        assert_eq!(p.made.lock().unwrap().len(), 1);
    }

    #[tokio::test]
    async fn unknown_outcomes_are_retried_a_bounded_number_of_times() {
        // Never found (the fake sees nothing): every attempt "loses its answer" without making anything.
        let mut e = ProviderError::new("ec2:CreateVpc", "InternalError", "try later");
        e.outcome_unknown = true;
        let p = Lossy { refusal: Some(e), ..Default::default() };
        let (a, attrs) = (Address::new("thing", "x"), Attrs::new());
        assert!(create_once(&p, &cx(), &desired(&a, &attrs), None).await.is_err());
        assert_eq!(p.creates.load(Ordering::SeqCst), ATTEMPTS);
    }
}

//! Bounded waits for what AWS finishes asynchronously: a resource reaching a state (an EKS cluster becoming
//! `ACTIVE`, a NAT gateway `deleted`), and calls AWS refuses until something else has settled (a delete while
//! ENIs are released, a create naming an IAM role IAM does not show everywhere yet). Providers say only what
//! "done" and "refused for now" mean; the loop, its interval, the timeout error and the progress reports live
//! here.
//!
//! The interval is a fixed fraction of the time waited so far ([`LAG`]), between the budget's floor and ceiling:
//! the time between AWS reaching the state and kbp seeing it stays a few percent of the wait, whether the wait
//! is a 3-second add-on in the emulator or a 10-minute cluster in AWS, and a long wait still costs only tens
//! of calls per order of magnitude of its length.

use std::future::Future;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::{Context, ProviderError};
use crate::graph::Address;
use crate::providers::Result;

/// One look at a resource being waited on.
pub enum Poll<T> {
    Done(T),
    /// Not there yet; the string says what was seen (a state, an error message) for the progress report.
    Pending(String),
}

/// The interval between two looks, as a fraction of the time waited so far: what is done is seen at most
/// about 1.5 % late, so the four waits on an EKS stack's critical path together stay within a few percent of
/// it. Smaller costs more calls on long waits (about 1/LAG per tenfold of the wait's length, ~150: a ten-minute
/// cluster is looked at about 300 times, every 9 s at the end); larger lets the lags add up.
pub const LAG: f64 = 1.0 / 64.0;

/// How long to wait and how often to look: every `first_interval` at first (a fast API or an emulator answers
/// within a second), then every [`LAG`] of the time waited so far, at most every `max_interval`.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub timeout: Duration,
    pub first_interval: Duration,
    pub max_interval: Duration,
}

impl Budget {
    /// For operations of seconds to a few minutes: looks every 0.25 s for the first 16 s, then at most every 15 s.
    pub const fn minutes(m: u64) -> Self {
        Budget {
            timeout: Duration::from_secs(m * 60),
            first_interval: Duration::from_millis(250),
            max_interval: Duration::from_secs(15),
        }
    }

    /// For control-plane operations that take many minutes (an EKS cluster takes about ten to create): looks
    /// every 0.25 s for the first 16 s, then at most every 30 s. The floor is the same as for short waits: a
    /// control-plane wait on the critical path that ends early (an add-on in seconds) is seen as soon, and the
    /// few extra looks of its first seconds are nothing next to the ten minutes' ~300.
    pub const fn long_minutes(m: u64) -> Self {
        Budget {
            timeout: Duration::from_secs(m * 60),
            first_interval: Duration::from_millis(250),
            max_interval: Duration::from_secs(30),
        }
    }

    /// How long to sleep before the next look, `elapsed` into the wait.
    pub fn interval(&self, elapsed: Duration) -> Duration {
        elapsed.mul_f64(LAG).clamp(self.first_interval, self.max_interval.max(self.first_interval))
    }
}

/// One bounded wait: the AWS operation it is about (for errors), what it waits for (`cluster demo to become
/// ACTIVE`), its budget, and optionally the resource address its progress is reported under.
pub struct Wait<'a> {
    operation: &'a str,
    what: &'a str,
    budget: Budget,
    report: Option<(&'a Context, &'a Address)>,
}

impl<'a> Wait<'a> {
    pub fn new(operation: &'a str, what: &'a str, budget: Budget) -> Self {
        Wait { operation, what, budget, report: None }
    }

    /// Reports every look that is not done yet through [`Context::progress`], so the user sees AWS's status
    /// during a long wait. Without an address (a delete whose resource carried no kbp tags) it is only logged.
    pub fn reporting(mut self, cx: &'a Context, address: Option<&'a Address>) -> Self {
        self.report = address.map(|a| (cx, a));
        self
    }

    /// Calls `look` until it returns [`Poll::Done`], fails, or the budget runs out.
    pub async fn until<T, F, Fut>(&self, mut look: F) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<Poll<T>>>,
    {
        let start = Instant::now();
        loop {
            let seen = match look().await? {
                Poll::Done(v) => return Ok(v),
                Poll::Pending(seen) => seen,
            };
            let elapsed = start.elapsed();
            if elapsed >= self.budget.timeout {
                return Err(ProviderError::new(
                    self.operation,
                    "",
                    format!("gave up waiting for {} after {}s (last seen: {seen})", self.what, elapsed.as_secs()),
                )
                .with_hint(
                    "AWS is slower than usual or the resource is stuck; check it in the AWS console, then run kbp \
                     again",
                ));
            }
            match self.report {
                Some((cx, address)) => cx.progress(address, &seen, elapsed),
                None => {
                    tracing::info!(operation = self.operation, %seen, elapsed_s = elapsed.as_secs(), "waiting for {}", self.what)
                }
            }
            tokio::time::sleep(self.budget.interval(elapsed).min(self.budget.timeout - elapsed)).await;
        }
    }

    /// Runs `call` until AWS stops refusing it with an error `refused` accepts, within the budget. Out of time
    /// while still refused, the last refusal is returned (AWS's own words say what holds it) with `hint`.
    pub async fn while_refused<T, F, Fut>(
        &self,
        refused: impl Fn(&ProviderError) -> bool,
        hint: &str,
        mut call: F,
    ) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        // A Mutex, not a RefCell: provider futures must be Send.
        let last: Mutex<Option<ProviderError>> = Mutex::new(None);
        let waited = self
            .until(|| {
                let attempt = call();
                let (last, refused) = (&last, &refused);
                async move {
                    match attempt.await {
                        Ok(v) => Ok(Poll::Done(v)),
                        Err(e) if refused(&e) => {
                            let seen = format!("{}: {}", e.code, e.message);
                            *last.lock().unwrap_or_else(PoisonError::into_inner) = Some(e);
                            Ok(Poll::Pending(seen))
                        }
                        Err(e) => Err(e),
                    }
                }
            })
            .await;
        match (waited, last.into_inner().unwrap_or_else(PoisonError::into_inner)) {
            (Err(timeout), Some(refusal)) if timeout.code.is_empty() => Err(refusal.with_hint(hint)),
            (r, _) => r,
        }
    }
}

/// [`Wait::until`] without progress reports.
pub async fn until<T, F, Fut>(operation: &str, what: &str, budget: Budget, look: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Poll<T>>>,
{
    Wait::new(operation, what, budget).until(look).await
}

/// For tests of retries: `refusal` the first two calls, then success; `calls` counts them.
#[cfg(test)]
pub(crate) fn refused_twice(calls: &std::sync::atomic::AtomicU32, refusal: ProviderError) -> Result<()> {
    if calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < 2 {
        Err(refusal)
    } else {
        Ok(())
    }
}

/// A budget for unit tests of waits: 200 ms, looking every few milliseconds.
#[cfg(test)]
pub(crate) const QUICK: Budget = Budget {
    timeout: Duration::from_millis(200),
    first_interval: Duration::from_millis(1),
    max_interval: Duration::from_millis(5),
};

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn quick() -> Budget {
        QUICK
    }

    /// When something finishing at `done` is first seen, looking as `budget` says from time zero.
    fn seen_at(budget: Budget, done: Duration) -> (Duration, u32) {
        let (mut t, mut looks) = (Duration::ZERO, 1);
        while t < done {
            t += budget.interval(t);
            looks += 1;
        }
        (t, looks)
    }

    #[test]
    fn the_lag_stays_a_few_percent_of_the_wait_at_any_length() {
        for budget in [Budget::minutes(15), Budget::long_minutes(30)] {
            for secs in [1.0, 3.0, 9.0, 30.0, 120.0, 600.0, 900.0] {
                let done = Duration::from_secs_f64(secs);
                let (seen, looks) = seen_at(budget, done);
                let lag = seen - done;
                // Within one interval of the moment it is done: the floor on short waits, LAG on long ones.
                let bound = budget.first_interval.max((done + budget.first_interval).mul_f64(LAG));
                assert!(lag <= bound, "{budget:?}: done at {secs}s, seen {lag:?} late (bound {bound:?})");
                // And it stays cheap: a fifteen-minute wait is well under four hundred looks.
                assert!(looks < 400, "{budget:?}: {looks} looks for a {secs}s wait");
            }
        }
        // The ceiling holds on very long waits.
        assert_eq!(Budget::minutes(60).interval(Duration::from_secs(3000)), Duration::from_secs(15));
        assert_eq!(Budget::minutes(1).interval(Duration::ZERO), Duration::from_millis(250));
    }

    #[tokio::test]
    async fn until_returns_once_done() {
        let n = AtomicU32::new(0);
        let v = until("op", "thing", quick(), || async {
            Ok(if n.fetch_add(1, Ordering::SeqCst) < 3 { Poll::Pending("pending".into()) } else { Poll::Done(5) })
        })
        .await;
        assert_eq!(v.unwrap(), 5);
        assert_eq!(n.load(Ordering::SeqCst), 4);
    }

    #[tokio::test]
    async fn until_times_out_with_what_was_seen() {
        let e = until::<(), _, _>("ec2:DescribeNatGateways", "nat-1", quick(), || async {
            Ok(Poll::Pending("pending".into()))
        })
        .await
        .unwrap_err();
        assert!(e.message.contains("nat-1") && e.message.contains("pending"), "{e}");
        assert!(e.hint.is_some());
    }

    #[tokio::test]
    async fn while_refused_retries_only_refusals_and_returns_the_last_one_on_timeout() {
        let wait = Wait::new("eks:DeleteCluster", "cluster demo", quick());
        let in_use = |e: &ProviderError| e.is("ResourceInUseException");
        let n = AtomicU32::new(0);
        let ok = wait
            .while_refused(in_use, "h", || async {
                refused_twice(&n, ProviderError::new("eks:DeleteCluster", "ResourceInUseException", "has node groups"))
            })
            .await;
        assert!(ok.is_ok());
        let e = wait
            .while_refused::<(), _, _>(in_use, "delete its node groups", || async {
                Err(ProviderError::new("eks:DeleteCluster", "ResourceInUseException", "has node groups"))
            })
            .await
            .unwrap_err();
        assert_eq!((e.code.as_str(), e.hint.as_deref()), ("ResourceInUseException", Some("delete its node groups")));
        let e = wait
            .while_refused::<(), _, _>(in_use, "h", || async {
                Err(ProviderError::new("eks:DeleteCluster", "AccessDeniedException", "no"))
            })
            .await
            .unwrap_err();
        assert_eq!(e.code, "AccessDeniedException");
    }

    #[tokio::test]
    async fn reports_pending_looks_under_the_address() {
        let cx = Context::from_sdk(aws_config::SdkConfig::builder().build(), "s", "us-west-2");
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        cx.report_to(Some(tx));
        let address = Address::new("eks_cluster", "main");
        let n = AtomicU32::new(0);
        let wait = Wait::new("eks:DescribeCluster", "cluster", quick()).reporting(&cx, Some(&address));
        wait.until(|| async {
            Ok(if n.fetch_add(1, Ordering::SeqCst) < 2 { Poll::Pending("CREATING".into()) } else { Poll::Done(()) })
        })
        .await
        .unwrap();
        let mut statuses = Vec::new();
        while let Ok(crate::events::Event::Waiting { address: a, status, .. }) = rx.try_recv() {
            assert_eq!(a, address);
            statuses.push(status);
        }
        assert_eq!(statuses, ["CREATING", "CREATING"]);
    }
}

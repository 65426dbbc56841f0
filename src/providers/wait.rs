//! Bounded waits for what AWS finishes asynchronously: a resource reaching a state (an EKS cluster becoming
//! `ACTIVE`, a NAT gateway `deleted`), and calls AWS refuses until something else has settled (a delete while
//! ENIs are released, a create naming an IAM role IAM does not show everywhere yet). Providers say only what
//! "done" and "refused for now" mean, and how long it usually takes; the loop, its schedule, the timeout error
//! and the progress reports live here.
//!
//! How often a wait looks ([`Budget::interval`]): at once, since an emulator or a fast API is done before the
//! first sleep; then every `first_interval` (a quarter second) while that is the longest interval below. A
//! wait that knows how long what it waits for usually takes (its due time: [`Budget::expecting`], the kind's
//! [`Typical`](super::Typical) time for the operation) looks rarely before it: every third ([`EARLY`]) of the
//! time waited so far or of the time left until the due time, whichever is shorter, so the intervals grow by a
//! third up to half-way and then shrink towards the due time. From where [`LAG`] of the time waited is the
//! longer (573 s into a 600-s wait), and throughout a wait with no typical time, the interval is [`LAG`] of the
//! time waited, within the budget's floor and ceiling: what is done then is seen at most about 1.5 % late.
//!
//! On an EKS cluster create (typical 600 s; `cargo bench --bench waits`): ACTIVE at 600 s is seen after 34
//! DescribeCluster calls instead of 299, at most 9.3 s late as before; at 900 s after 60 calls instead of 325;
//! twenty pipelines creating clusters at once make 680 calls in those ten minutes instead of 5,980. What is
//! done much earlier than usual (an emulator's scaled profile: a cluster in 6 s) is seen at most a third of the
//! time waited late (at 7.5 s), where the old schedule saw it within a quarter second or 1.5 %. The third is
//! the trade: at a quarter a ten-minute create costs 40 calls; at a half 25, but what is done early may be seen
//! half its time late, and the waits on an EKS stack's critical path add up.
//!
//! The timeout holds exactly: the last sleep is cut to end at it, and a last look is made then.

use std::future::Future;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use super::{Context, ProviderError};
use crate::graph::Address;
use crate::providers::Result;

/// One look at a resource being waited on.
pub enum Poll<T> {
    /// There: the value the wait returns.
    Done(T),
    /// Not there yet; the string says what was seen (a state, an error message) for the progress report.
    Pending(String),
}

/// The interval from shortly before the due time on, or throughout a wait with none, as a fraction of the time
/// waited so far: the four waits on an EKS stack's critical path together stay within a few percent of it.
/// Smaller costs more calls (about 1/LAG per tenfold of the time spent so); larger lets the lags add up.
pub const LAG: f64 = 1.0 / 64.0;

/// The interval before the due time, as a fraction of the time waited or of the time left, whichever is
/// shorter: what is done early is seen at most a third of the time waited late (why a third: module docs).
pub const EARLY: f64 = 1.0 / 3.0;

/// How long to wait and how often to look ([`Budget::interval`]): never more often than every `first_interval`
/// (a fast API or an emulator answers within a second), and where [`LAG`] rules at most every `max_interval`.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// How long to wait before giving up.
    pub timeout: Duration,
    /// The shortest interval between looks.
    pub first_interval: Duration,
    /// The longest interval between looks where [`LAG`] rules.
    pub max_interval: Duration,
    /// How long what is waited for usually takes ([`Budget::expecting`]); `None`: [`LAG`] rules throughout.
    pub expected: Option<Duration>,
}

/// A kind's budgets for its create, update and delete ([`Budget::for_each`]).
#[derive(Debug, Clone, Copy)]
pub struct Budgets {
    /// For a create.
    pub create: Budget,
    /// For an update.
    pub update: Budget,
    /// For a delete.
    pub delete: Budget,
}

impl Budget {
    /// For operations of seconds to a few minutes: looks every 0.25 s for the first 16 s, then at most every 15 s
    /// (until a typical time is [expected](Budget::expecting)).
    pub const fn minutes(m: u64) -> Self {
        Budget {
            timeout: Duration::from_secs(m * 60),
            first_interval: Duration::from_millis(250),
            max_interval: Duration::from_secs(15),
            expected: None,
        }
    }

    /// For control-plane operations that take many minutes (an EKS cluster takes about ten to create): looks
    /// every 0.25 s for the first 16 s, then at most every 30 s. The floor is the same as for short waits: a
    /// control-plane wait on the critical path that ends early (an add-on in seconds) is seen as soon.
    pub const fn long_minutes(m: u64) -> Self {
        Budget {
            timeout: Duration::from_secs(m * 60),
            first_interval: Duration::from_millis(250),
            max_interval: Duration::from_secs(30),
            expected: None,
        }
    }

    /// Waiting for what usually takes `typical_secs`: the provider's own figure for the operation, as its
    /// [`Descriptor`](super::Descriptor) states it (one `TYPICAL` const that the descriptor and the budgets
    /// read), so the number lives in one place. The wait then looks rarely before that due time; see the module
    /// documentation.
    pub const fn expecting(self, typical_secs: u32) -> Self {
        Budget { expected: Some(Duration::from_secs(typical_secs as u64)), ..self }
    }

    /// This budget for each of a kind's create, update and delete, each expecting the kind's typical time for
    /// it ([`Typical`](super::Typical), from its descriptor).
    pub const fn for_each(self, typical: super::Typical) -> Budgets {
        Budgets {
            create: self.expecting(typical.create),
            update: self.expecting(typical.update),
            delete: self.expecting(typical.delete),
        }
    }

    /// How long to sleep before the next look, `elapsed` into the wait: [`LAG`] of the time waited, between the
    /// floor and the ceiling; before the due time, [`EARLY`] of the time waited or of the time left, when that
    /// is longer.
    pub fn interval(&self, elapsed: Duration) -> Duration {
        let lagging = elapsed.mul_f64(LAG).clamp(self.first_interval, self.max_interval.max(self.first_interval));
        match self.expected {
            Some(due) => lagging.max(elapsed.min(due.saturating_sub(elapsed)).mul_f64(EARLY)),
            None => lagging,
        }
    }

    /// How long to sleep before the next look after one `elapsed` into the wait that was not done, or `None`
    /// when the budget is spent: the last sleep is cut to end at the timeout, so a last look is made then.
    pub fn next_look(&self, elapsed: Duration) -> Option<Duration> {
        (elapsed < self.timeout).then(|| self.interval(elapsed).min(self.timeout - elapsed))
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
    /// A wait on `what` (for messages) under `operation` (for errors), for at most `budget`.
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
            let Some(pause) = self.budget.next_look(elapsed) else {
                return Err(ProviderError::new(
                    self.operation,
                    "",
                    format!("gave up waiting for {} after {}s (last seen: {seen})", self.what, elapsed.as_secs()),
                )
                .with_hint(
                    "AWS is slower than usual or the resource is stuck; check it in the AWS console, then run kbp \
                     again",
                ));
            };
            match self.report {
                Some((cx, address)) => cx.progress(address, &seen, elapsed),
                None => {
                    tracing::info!(operation = self.operation, %seen, elapsed_s = elapsed.as_secs(), "waiting for {}", self.what)
                }
            }
            tokio::time::sleep(pause).await;
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
    expected: None,
};

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn quick() -> Budget {
        QUICK
    }

    /// When something finishing at `done` is first seen, and after how many looks, looking as `budget` says
    /// from time zero, as [`Wait::until`] does.
    fn seen_at(budget: Budget, done: Duration) -> (Duration, u32) {
        let (mut t, mut looks) = (Duration::ZERO, 1);
        while t < done {
            t += budget.next_look(t).expect("done within the budget");
            looks += 1;
        }
        (t, looks)
    }

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    /// An EKS cluster's create as the provider waits for it: up to 30 minutes, usually ten.
    const CLUSTER_CREATE: Budget = Budget::long_minutes(30).expecting(600);

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

    #[test]
    fn without_a_typical_duration_a_wait_looks_as_before() {
        // The schedule every wait had before typical durations: LAG of the time waited, floor to ceiling.
        let before = |b: Budget, t: Duration| t.mul_f64(1.0 / 64.0).clamp(b.first_interval, b.max_interval);
        // A kind of one call (a typical second) is not worth looking less often for.
        for budget in [Budget::minutes(15), Budget::long_minutes(30), QUICK, Budget::minutes(5).expecting(1)] {
            for ms in (0..3_600_000).step_by(125) {
                let t = Duration::from_millis(ms);
                assert_eq!(budget.interval(t), before(budget, t), "{budget:?} at {t:?}");
            }
        }
    }

    #[test]
    fn a_ten_minute_create_takes_under_forty_looks_and_is_seen_as_soon_as_before() {
        let before = Budget { expected: None, ..CLUSTER_CREATE };
        let (seen, looks) = seen_at(CLUSTER_CREATE, secs(600.0));
        let (_, looks_before) = seen_at(before, secs(600.0));
        assert!(looks <= 40, "{looks} looks for a cluster ACTIVE at 600 s (before: {looks_before})");
        assert!(seen - secs(600.0) <= before.interval(secs(600.0)), "seen at {seen:?}");
        // From shortly before the due time on, and however late, what is done is seen within the interval the
        // old schedule looked at, and with no more looks than it made.
        for tenths in 5760..=18000 {
            let done = secs(f64::from(tenths) / 10.0);
            let ((seen, looks), (_, looks_before)) = (seen_at(CLUSTER_CREATE, done), seen_at(before, done));
            assert!(seen - done <= before.interval(done), "done at {done:?}, seen at {seen:?}");
            assert!(looks < looks_before, "done at {done:?}: {looks} looks, {looks_before} before");
        }
        // Done at twice the typical time, a quarter of the looks.
        let (late, late_before) = (seen_at(CLUSTER_CREATE, secs(1200.0)).1, seen_at(before, secs(1200.0)).1);
        assert!(late * 4 < late_before, "done at 1200 s: {late} looks, {late_before} before");
    }

    #[test]
    fn what_is_done_early_is_seen_at_most_a_third_of_the_wait_late() {
        // An emulator scaling the typical ten minutes to 6, 30 or 60 s, and everything between a look at once
        // and the due time.
        for tenths in 0..=5760 {
            let done = secs(f64::from(tenths) / 10.0);
            let (seen, looks) = seen_at(CLUSTER_CREATE, done);
            let bound = CLUSTER_CREATE.first_interval.max(done.mul_f64(EARLY));
            assert!(seen - done <= bound, "done at {done:?}, seen at {seen:?} (bound {bound:?})");
            assert!(looks <= 40, "done at {done:?}: {looks} looks");
        }
        // What is done at once is seen by the first look.
        assert_eq!(seen_at(CLUSTER_CREATE, Duration::ZERO), (Duration::ZERO, 1));
    }

    #[test]
    fn the_timeout_holds_exactly() {
        // A wait never done looks a last time at its timeout, whatever its schedule would say next.
        let short = Budget { timeout: secs(45.0), ..Budget::minutes(1) };
        for budget in [short, short.expecting(600), CLUSTER_CREATE, QUICK, QUICK.expecting(1)] {
            let (mut t, mut looks) = (Duration::ZERO, 1);
            while let Some(pause) = budget.next_look(t) {
                t += pause;
                looks += 1;
            }
            assert_eq!(t, budget.timeout, "{budget:?} after {looks} looks");
        }
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

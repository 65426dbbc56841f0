//! Trying something again, one way for all of kbp: a number of attempts, a delay that doubles from a first one
//! up to a cap, with or without full jitter. The caller's attempt says whether it is done or worth another try
//! ([`Attempt`]), and may do something of its own between tries (a create whose answer was lost looks for
//! what it made before it sends again). The AWS SDK's own retries (throttling, 5xx, dropped connections) are
//! not these: they are configured once in [`crate::aws`].

use std::future::Future;
use std::time::Duration;

use rand::Rng;

/// How many attempts, and how long between them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backoff {
    /// Attempts in all, the first one included (at least one is made).
    pub attempts: u32,
    /// The delay after the first attempt; it doubles after each next one.
    pub first: Duration,
    /// The longest delay.
    pub max: Duration,
    /// Full jitter: each delay is drawn at random up to the doubled one, so that many callers do not retry in step.
    pub jitter: bool,
}

/// What one attempt came to.
pub enum Attempt<T> {
    /// Done: this is the answer, good or bad.
    Done(T),
    /// Worth another try, for the reason given (logged). With no attempts left, `last` is the answer.
    Again {
        /// Why another try is worth it, for the debug log.
        why: String,
        /// This attempt's answer, returned if no attempt is left.
        last: T,
    },
}

impl Backoff {
    /// A fixed delay between attempts.
    pub const fn every(delay: Duration, attempts: u32) -> Self {
        Backoff { attempts, first: delay, max: delay, jitter: false }
    }

    /// Runs `attempt` (given the attempt's number, from 1) until it is done or the attempts run out.
    pub async fn run<T, F, Fut>(&self, what: &str, mut attempt: F) -> T
    where
        F: FnMut(u32) -> Fut,
        Fut: Future<Output = Attempt<T>>,
    {
        let mut n = 1;
        loop {
            match attempt(n).await {
                Attempt::Done(answer) => return answer,
                Attempt::Again { last, .. } if n >= self.attempts => return last,
                Attempt::Again { why, .. } => {
                    let delay = self.delay(n);
                    tracing::debug!(what, attempt = n, ?delay, "{why}; trying again");
                    tokio::time::sleep(delay).await;
                    n += 1;
                }
            }
        }
    }

    /// The delay after attempt `n`: `first` × 2^(n-1), capped at `max`, drawn at random up to it with jitter.
    pub fn delay(&self, n: u32) -> Duration {
        let cap = self.first.saturating_mul(1u32 << n.saturating_sub(1).min(16)).min(self.max);
        if !self.jitter {
            return cap;
        }
        Duration::from_millis(rand::rng().random_range(0..=cap.as_millis().max(1) as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn the_delay_doubles_up_to_the_cap_and_jitter_stays_under_it() {
        let b =
            Backoff { attempts: 9, first: Duration::from_millis(100), max: Duration::from_millis(500), jitter: false };
        let delays: Vec<u128> = (1..=5).map(|n| b.delay(n).as_millis()).collect();
        assert_eq!(delays, [100, 200, 400, 500, 500]);
        let jittered = Backoff { jitter: true, ..b };
        assert!((1..=50).all(|n| jittered.delay(n) <= Duration::from_millis(500)));
        assert_eq!(Backoff::every(Duration::from_secs(3), 2).delay(7), Duration::from_secs(3));
    }

    #[tokio::test]
    async fn it_stops_when_done_or_when_the_attempts_run_out_with_the_last_answer() {
        let b = Backoff::every(Duration::from_millis(1), 3);
        let calls = AtomicU32::new(0);
        let answer: Result<u32, String> = b
            .run("test", |n| {
                calls.fetch_add(1, Ordering::SeqCst);
                async move {
                    if n < 2 {
                        Attempt::Again { why: "busy".into(), last: Err("busy".into()) }
                    } else {
                        Attempt::Done(Ok(n))
                    }
                }
            })
            .await;
        assert_eq!((answer, calls.load(Ordering::SeqCst)), (Ok(2), 2));
        let calls = AtomicU32::new(0);
        let answer: Result<u32, String> = b
            .run("test", |n| {
                calls.fetch_add(1, Ordering::SeqCst);
                async move { Attempt::Again { why: "busy".into(), last: Err(format!("busy at {n}")) } }
            })
            .await;
        assert_eq!((answer, calls.load(Ordering::SeqCst)), (Err("busy at 3".into()), 3));
    }
}

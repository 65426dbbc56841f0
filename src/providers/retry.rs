//! kbp's own retries, only for what AWS means by an error code rather than what a plain retry fixes (that is
//! the SDK's, configured once in [`crate::aws`]): the eventual consistency of a resource that was just created or
//! is still being released by another, and throttling of the few creates the SDK must not retry
//! ([`super::send::send_unretried`]).

use std::future::Future;
use std::time::Duration;

use crate::backoff::{Attempt, Backoff};
use crate::providers::Result;

/// How kbp's own retries pace themselves: exponential backoff with jitter ([`crate::backoff`]).
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// How many times an operation is tried in all.
    pub max_attempts: u32,
    /// The wait before the second try; it doubles with each try after.
    pub base_delay: Duration,
    /// The longest wait between two tries.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { max_attempts: 8, base_delay: Duration::from_millis(200), max_delay: Duration::from_secs(10) }
    }
}

/// Codes that mean "slow down" on every service: the request was refused, so sending it again is safe.
pub(crate) const THROTTLING: &[&str] = &[
    "Throttling",
    "ThrottlingException",
    // The Resource Groups Tagging API's spelling.
    "ThrottledException",
    "RequestLimitExceeded",
    "TooManyRequestsException",
    "RequestThrottled",
    "SlowDown",
    "PriorRequestNotComplete",
];

impl RetryPolicy {
    /// Runs `call` until it succeeds, fails with an error that is not one of `transient`, or the attempts run
    /// out. `transient` lists the codes that are eventual consistency for this call, such as
    /// `InvalidVpcID.NotFound` right after CreateVpc or `DependencyViolation` while an ENI is released.
    pub async fn run<T, F, Fut>(&self, transient: &[&str], mut call: F) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        self.backoff()
            .run("AWS request", |_| {
                let answer = call();
                async move {
                    match answer.await {
                        Err(e) if transient.contains(&e.code.as_str()) => {
                            Attempt::Again { why: format!("{} answered {}", e.operation, e.code), last: Err(e) }
                        }
                        done => Attempt::Done(done),
                    }
                }
            })
            .await
    }

    /// The policy's attempts and delays, with full jitter.
    fn backoff(&self) -> Backoff {
        Backoff { attempts: self.max_attempts, first: self.base_delay, max: self.max_delay, jitter: true }
    }

    /// A random delay up to base × 2^(attempt-1), capped.
    #[cfg(test)]
    fn delay(&self, attempt: u32) -> Duration {
        self.backoff().delay(attempt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::ProviderError;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn fast() -> RetryPolicy {
        RetryPolicy { max_attempts: 4, base_delay: Duration::from_millis(1), max_delay: Duration::from_millis(2) }
    }

    /// How many times [`fast`] sends a request that AWS always refuses with `code`, retrying `transient`; the
    /// run must end in that refusal.
    async fn attempts_when_refused(transient: &[&str], op: &str, code: &str) -> u32 {
        let n = AtomicU32::new(0);
        let r: Result<(), _> = fast()
            .run(transient, || async {
                n.fetch_add(1, Ordering::SeqCst);
                Err(ProviderError::new(op, code, "refused"))
            })
            .await;
        assert!(r.is_err());
        n.load(Ordering::SeqCst)
    }

    #[tokio::test]
    async fn retries_transient_codes_until_success() {
        let n = AtomicU32::new(0);
        let r = fast()
            .run(&["DependencyViolation"], || async {
                if n.fetch_add(1, Ordering::SeqCst) < 2 {
                    Err(ProviderError::new("ec2:DeleteSubnet", "DependencyViolation", "busy"))
                } else {
                    Ok(7)
                }
            })
            .await;
        assert_eq!(r.unwrap(), 7);
        assert_eq!(n.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn gives_up_after_max_attempts_and_on_other_codes() {
        assert_eq!(attempts_when_refused(THROTTLING, "iam:CreateRole", "Throttling").await, 4);
        assert_eq!(attempts_when_refused(&[], "iam:CreateRole", "MalformedPolicyDocument").await, 1);
    }

    #[tokio::test]
    async fn throttling_is_the_sdks_to_retry_unless_named() {
        let attempts = attempts_when_refused(&[], "ec2:DescribeVpcs", "RequestLimitExceeded").await;
        assert_eq!(attempts, 1, "the SDK already retried it");
    }

    #[test]
    fn delay_is_capped() {
        let p =
            RetryPolicy { max_attempts: 30, base_delay: Duration::from_millis(100), max_delay: Duration::from_secs(1) };
        for a in 1..30 {
            assert!(p.delay(a) <= Duration::from_secs(1));
        }
    }
}

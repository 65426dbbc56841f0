//! Bounded waits for EC2 resources that take a while: a NAT gateway becoming available or deleted, a VPC
//! leaving `pending`, and deletes that AWS refuses with `DependencyViolation` until something else (an ENI, a
//! mapped public IP) has been released. Kept apart from the providers, which only say what "done" means.

use std::future::Future;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::providers::ProviderError;

/// One look at a resource being waited on.
pub enum Poll<T> {
    Done(T),
    /// Not there yet; the string says what was seen (a state, an error message) for the progress log.
    Pending(String),
}

/// How long to wait and how often to look: the interval starts short (a fast API or an emulator answers
/// within a second) and grows to `max_interval`, so a ten-minute wait costs tens of calls, not hundreds.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub timeout: Duration,
    pub first_interval: Duration,
    pub max_interval: Duration,
}

impl Budget {
    pub const fn minutes(m: u64) -> Self {
        Budget {
            timeout: Duration::from_secs(m * 60),
            first_interval: Duration::from_millis(500),
            max_interval: Duration::from_secs(15),
        }
    }
}

/// Calls `look` until it returns [`Poll::Done`], fails, or `budget` runs out; `what` names the wait in the
/// progress log and in the timeout error (`NAT gateway nat-123 to become available`).
pub async fn until<T, F, Fut>(operation: &str, what: &str, budget: Budget, mut look: F) -> Result<T, ProviderError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Poll<T>, ProviderError>>,
{
    let start = Instant::now();
    let mut interval = budget.first_interval;
    loop {
        let seen = match look().await? {
            Poll::Done(v) => return Ok(v),
            Poll::Pending(seen) => seen,
        };
        let elapsed = start.elapsed();
        if elapsed >= budget.timeout {
            return Err(ProviderError::new(
                operation,
                "",
                format!("gave up waiting for {what} after {}s (last seen: {seen})", elapsed.as_secs()),
            )
            .with_hint(
                "AWS is slower than usual or the resource is stuck; check it in the AWS console, then run kbp again",
            ));
        }
        tracing::info!(operation, %seen, elapsed_s = elapsed.as_secs(), "waiting for {what}");
        tokio::time::sleep(interval.min(budget.timeout - elapsed)).await;
        interval = (interval * 3 / 2).min(budget.max_interval);
    }
}

/// Runs `call` (a delete or detach) until AWS stops answering `DependencyViolation` or `also_busy` codes,
/// within `budget`. AWS releases ENIs, NAT gateway addresses and public IP mappings minutes after the resource
/// that held them is gone, so a delete right after its dependents' deletes often fails like this at first.
pub async fn while_in_use<T, F, Fut>(
    operation: &str,
    what: &str,
    also_busy: &[&str],
    budget: Budget,
    mut call: F,
) -> Result<T, ProviderError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, ProviderError>>,
{
    // A Mutex, not a RefCell: provider futures must be Send.
    let last: Mutex<Option<ProviderError>> = Mutex::new(None);
    let waited = until(operation, what, budget, || {
        let attempt = call();
        let last = &last;
        async move {
            match attempt.await {
                Ok(v) => Ok(Poll::Done(v)),
                Err(e) if e.is("DependencyViolation") || also_busy.contains(&e.code.as_str()) => {
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
        // Out of time while still in use: AWS's own error says what holds it, which helps more than ours.
        (Err(timeout), Some(busy)) if timeout.code.is_empty() => Err(busy.with_hint(format!(
            "something outside this step still uses {what}; kbp waited {}s. Find it in the AWS console (ENIs, \
             load balancers, instances in the VPC), delete it, then run kbp again",
            budget.timeout.as_secs()
        ))),
        (r, _) => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn quick() -> Budget {
        Budget {
            timeout: Duration::from_millis(200),
            first_interval: Duration::from_millis(1),
            max_interval: Duration::from_millis(5),
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
    async fn while_in_use_retries_dependency_violation_and_reports_it_on_timeout() {
        let n = AtomicU32::new(0);
        let ok = while_in_use("ec2:DeleteSubnet", "subnet-1", &[], quick(), || async {
            if n.fetch_add(1, Ordering::SeqCst) < 2 {
                Err(ProviderError::new("ec2:DeleteSubnet", "DependencyViolation", "has ENIs"))
            } else {
                Ok(())
            }
        })
        .await;
        assert!(ok.is_ok());
        let e = while_in_use::<(), _, _>("ec2:DeleteSubnet", "subnet-1", &[], quick(), || async {
            Err(ProviderError::new("ec2:DeleteSubnet", "DependencyViolation", "has ENIs"))
        })
        .await
        .unwrap_err();
        assert_eq!(e.code, "DependencyViolation");
        assert!(e.hint.unwrap().contains("subnet-1"));
        let e = while_in_use::<(), _, _>("ec2:DeleteSubnet", "subnet-1", &[], quick(), || async {
            Err(ProviderError::new("ec2:DeleteSubnet", "UnauthorizedOperation", "no"))
        })
        .await
        .unwrap_err();
        assert_eq!(e.code, "UnauthorizedOperation");
    }
}

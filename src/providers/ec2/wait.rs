//! Bounded waits for EC2 resources: the generic loop ([`until`], [`Budget`], [`Poll`]) lives in
//! `providers::wait`; what is EC2's own is the delete that AWS refuses with `DependencyViolation` until something
//! else (an ENI, a mapped public IP) has been released.

use std::future::Future;

use crate::providers::wait::Wait;
pub use crate::providers::wait::{until, Budget, Poll};
use crate::providers::{ProviderError, Result};

/// Runs `call` (a delete or detach) until AWS stops answering `DependencyViolation` or `also_busy` codes,
/// within `budget`. AWS releases ENIs, NAT gateway addresses and public IP mappings minutes after the resource
/// that held them is gone, so a delete right after its dependents' deletes often fails like this at first.
pub async fn while_in_use<T, F, Fut>(
    operation: &str,
    what: &str,
    also_busy: &[&str],
    budget: Budget,
    call: F,
) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T>>,
{
    let hint = format!(
        "something outside this step still uses {what}; kbp waited {}s. Find it in the AWS console (ENIs, load \
         balancers, instances in the VPC), delete it, then run kbp again",
        budget.timeout.as_secs()
    );
    let in_use = |e: &ProviderError| e.is("DependencyViolation") || also_busy.contains(&e.code.as_str());
    Wait::new(operation, what, budget).while_refused(in_use, &hint, call).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::wait::refused_twice;
    use std::sync::atomic::AtomicU32;

    fn quick() -> Budget {
        crate::providers::wait::QUICK
    }

    #[tokio::test]
    async fn while_in_use_retries_dependency_violation_and_reports_it_on_timeout() {
        let n = AtomicU32::new(0);
        let ok = while_in_use("ec2:DeleteSubnet", "subnet-1", &[], quick(), || async {
            refused_twice(&n, ProviderError::new("ec2:DeleteSubnet", "DependencyViolation", "has ENIs"))
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

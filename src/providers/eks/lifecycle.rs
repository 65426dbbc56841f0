//! The life cycle EKS gives clusters, node groups and add-ons, and how kbp waits on it. Each has a status that
//! moves through CREATING, UPDATING or DELETING to ACTIVE (or to gone), health issues that say why one failed,
//! and runs one update at a time, which EKS reports as an Update (DescribeUpdate). Access entries and Pod
//! Identity associations have no status: they are usable when the call returns.

use std::collections::HashMap;
use std::future::Future;

use aws_sdk_eks::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_eks::types::{Addon, Cluster, Nodegroup, Update, UpdateStatus};

use super::{tagging, vanished};
use crate::graph::Address;
use crate::providers::attrs::ok_if_gone;
use crate::providers::send::send;
use crate::providers::wait::{Budget, Poll, Wait};
use crate::providers::{Context, ProviderError};

/// A resource EKS reports with a status and health issues.
pub trait Tracked: Send + Sync {
    /// AWS's status, such as `ACTIVE` or `CREATE_FAILED`.
    fn state(&self) -> &str;
    /// The health issues EKS reports, each as `code: message`.
    fn issues(&self) -> Vec<String>;
    fn tag_map(&self) -> Option<&HashMap<String, String>>;
    /// What to do when it failed, besides reading EKS's issues.
    const FAILURE_HINT: &'static str;
}

/// Clusters, node groups and add-ons report status, health and tags under the same names.
macro_rules! tracked {
    ($($ty:ident => $hint:expr),* $(,)?) => {$(
        impl Tracked for $ty {
            fn state(&self) -> &str {
                self.status().map_or("no status", |s| s.as_str())
            }
            fn issues(&self) -> Vec<String> {
                let issues = self.health().map(|h| h.issues()).unwrap_or_default();
                issues
                    .iter()
                    .map(|i| format!("{}: {}", i.code().map_or("", |c| c.as_str()), i.message().unwrap_or("no message")))
                    .collect()
            }
            fn tag_map(&self) -> Option<&HashMap<String, String>> {
                self.tags()
            }
            const FAILURE_HINT: &'static str = $hint;
        }
    )*};
}

tracked!(
    Cluster => "fix what AWS names (often the cluster role's trust policy or permissions, or subnets in fewer than \
        two availability zones), delete the failed cluster (`aws eks delete-cluster`), then run kbp again",
    Nodegroup => "fix what EKS names (often the node role's policies, subnets without a route to the internet or to \
        VPC endpoints, or instance types without capacity), then run kbp again",
    Addon => "fix what EKS names (coredns needs a node it tolerates; a rejected configuration names the bad field, \
        see `aws eks describe-addon-configuration`), then run kbp again",
);

/// A status EKS does not leave by itself: FAILED, CREATE_FAILED, UPDATE_FAILED, DELETE_FAILED, DEGRADED.
fn is_failed(state: &str) -> bool {
    state == "FAILED" || state == "DEGRADED" || state.ends_with("_FAILED")
}

fn failed<T: Tracked>(operation: &str, what: &str, r: &T) -> ProviderError {
    let issues = r.issues();
    let reason = if issues.is_empty() { "EKS reports no health issue".to_string() } else { issues.join("; ") };
    ProviderError::new(operation, r.state(), format!("{what} is {}: {reason}", r.state())).with_hint(T::FAILURE_HINT)
}

/// Waits until `describe` finds the resource (`what`, such as `node group controller`) in one of the `done`
/// states. A failed state not in `done` ends the wait with EKS's health issues, DELETING with "deleted outside
/// kbp"; anything else (CREATING, UPDATING, not visible yet) is reported and waited out.
pub async fn until_status<T, F, Fut>(
    cx: &Context,
    address: Option<&Address>,
    operation: &str,
    what: &str,
    done: &[&str],
    budget: Budget,
    describe: F,
) -> Result<T, ProviderError>
where
    T: Tracked,
    F: Fn() -> Fut,
    Fut: Future<Output = Result<Option<T>, ProviderError>>,
{
    let waiting = format!("{what} to become {}", done.join(" or "));
    Wait::new(operation, &waiting, budget)
        .reporting(cx, address)
        .until(|| async {
            let Some(r) = describe().await? else { return Ok(Poll::Pending("not visible yet".to_string())) };
            match r.state() {
                s if done.contains(&s) => Ok(Poll::Done(r)),
                s if is_failed(s) => Err(failed(operation, what, &r)),
                "DELETING" => Err(vanished(operation, what)),
                s => Ok(Poll::Pending(s.to_string())),
            }
        })
        .await
}

/// Deletes the resource `describe` finds (unless it is already DELETING) and waits until it is gone. The delete
/// is retried while EKS answers `ResourceInUseException` (another update runs, or for a cluster, node groups
/// remain), `in_use_hint` saying what to do if that lasts. Progress is reported under the resource's
/// `kbp:address` tag, since a delete is given no address.
pub async fn delete_and_wait<T, F, Fut, D, DFut, O>(
    cx: &Context,
    delete_op: &str,
    what: &str,
    budget: Budget,
    in_use_hint: &str,
    describe: F,
    delete: D,
) -> Result<(), ProviderError>
where
    T: Tracked,
    F: Fn() -> Fut,
    Fut: Future<Output = Result<Option<T>, ProviderError>>,
    D: FnMut() -> DFut,
    DFut: Future<Output = Result<O, ProviderError>>,
{
    let Some(r) = describe().await? else { return Ok(()) };
    let address = tagging::address(r.tag_map());
    if r.state() != "DELETING" {
        let deleted = Wait::new(delete_op, what, budget)
            .reporting(cx, address.as_ref())
            .while_refused(|e| e.is("ResourceInUseException"), in_use_hint, delete)
            .await;
        ok_if_gone(deleted.map(drop))?;
    }
    let waiting = format!("{what} to be deleted");
    Wait::new(delete_op, &waiting, budget)
        .reporting(cx, address.as_ref())
        .until(|| async {
            match describe().await? {
                None => Ok(Poll::Done(())),
                Some(r) if r.state() == "DELETE_FAILED" => Err(failed(delete_op, what, &r)),
                Some(r) => Ok(Poll::Pending(r.state().to_string())),
            }
        })
        .await
}

/// Sends a request that EKS refuses with `ResourceInUseException` while another update of the same resource
/// runs (EKS runs one at a time per cluster, node group or add-on), retrying within `budget`.
pub async fn send_when_idle<O, E, F, Fut>(
    cx: &Context,
    address: Option<&Address>,
    op: &str,
    what: &str,
    budget: Budget,
    request: F,
) -> Result<O, ProviderError>
where
    F: Fn() -> Fut + Copy,
    Fut: Future<Output = Result<O, SdkError<E>>>,
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    let hint = busy_hint(what, budget);
    Wait::new(op, what, budget)
        .reporting(cx, address)
        .while_refused(|e| e.is("ResourceInUseException"), &hint, || send(cx, op, &[], request))
        .await
}

/// What to do when `what` stays busy with another operation for all of `budget`.
pub fn busy_hint(what: &str, budget: Budget) -> String {
    format!(
        "{what} stayed busy with another operation for {} minutes; check its updates in the EKS console, then run \
         kbp again",
        budget.timeout.as_secs() / 60
    )
}

/// Which resource an EKS update (UpdateClusterConfig, UpdateNodegroupConfig, UpdateAddon, …) belongs to, for
/// DescribeUpdate.
pub struct UpdateOf<'a> {
    pub cluster: &'a str,
    pub nodegroup: Option<&'a str>,
    pub addon: Option<&'a str>,
}

/// Waits until the update AWS returned has finished, and fails with AWS's errors if it failed. An update that
/// comes back already finished (or without an ID) needs no wait; callers also wait for the resource's own status.
pub async fn wait_for_update(
    cx: &Context,
    address: Option<&Address>,
    of: UpdateOf<'_>,
    update: Option<&Update>,
    budget: Budget,
) -> Result<(), ProviderError> {
    let Some(update) = update else { return Ok(()) };
    let Some(id) = update.id() else { return Ok(()) };
    if finished(update)? {
        return Ok(());
    }
    let what = format!("update {id} of {}", of.nodegroup.or(of.addon).unwrap_or(of.cluster));
    Wait::new("eks:DescribeUpdate", &what, budget)
        .reporting(cx, address)
        .until(|| async {
            let described = send(cx, "eks:DescribeUpdate", &[], || {
                cx.eks()
                    .describe_update()
                    .name(of.cluster)
                    .update_id(id)
                    .set_nodegroup_name(of.nodegroup.map(str::to_string))
                    .set_addon_name(of.addon.map(str::to_string))
                    .send()
            })
            .await?;
            match described.update() {
                Some(u) if finished(u)? => Ok(Poll::Done(())),
                Some(u) => Ok(Poll::Pending(status_of(u))),
                None => Ok(Poll::Pending("no update reported yet".to_string())),
            }
        })
        .await
}

/// Whether the update succeeded (false while it runs); an error when it failed or was cancelled.
fn finished(u: &Update) -> Result<bool, ProviderError> {
    match u.status() {
        Some(UpdateStatus::Successful) => Ok(true),
        Some(UpdateStatus::Failed | UpdateStatus::Cancelled) => {
            let errors: Vec<String> = u
                .errors()
                .iter()
                .map(|e| {
                    let code = e.error_code().map_or("", |c| c.as_str());
                    format!("{code}: {}", e.error_message().unwrap_or("no message"))
                })
                .collect();
            let kind = u.r#type().map_or("update", |t| t.as_str());
            Err(ProviderError::new(
                "eks:DescribeUpdate",
                status_of(u).as_str(),
                format!("EKS {kind} {} {}: {}", u.id().unwrap_or(""), status_of(u), errors.join("; ")),
            )
            .with_hint("fix what AWS names above, then run kbp again: the change is still planned"))
        }
        _ => Ok(false),
    }
}

fn status_of(u: &Update) -> String {
    u.status().map_or("no status", |s| s.as_str()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_eks::types::{AddonHealth, AddonIssue, AddonIssueCode, AddonStatus};

    #[test]
    fn a_failed_update_names_aws_errors() {
        use aws_sdk_eks::types::{ErrorCode, ErrorDetail};
        let u = Update::builder()
            .id("u-1")
            .status(UpdateStatus::Failed)
            .errors(ErrorDetail::builder().error_code(ErrorCode::SubnetNotFound).error_message("subnet-1 gone").build())
            .build();
        let e = finished(&u).unwrap_err();
        assert!(e.message.contains("SubnetNotFound: subnet-1 gone"), "{e}");
        assert!(!finished(&Update::builder().status(UpdateStatus::InProgress).build()).unwrap());
        assert!(finished(&Update::builder().status(UpdateStatus::Successful).build()).unwrap());
    }

    #[test]
    fn failed_states_name_eks_issues() {
        assert!(is_failed("CREATE_FAILED") && is_failed("DEGRADED") && is_failed("FAILED"));
        assert!(!is_failed("ACTIVE") && !is_failed("CREATING") && !is_failed("DELETING"));
        let issue = AddonIssue::builder().code(AddonIssueCode::InsufficientNumberOfReplicas).message("0 of 2 ready");
        let a =
            Addon::builder().status(AddonStatus::Degraded).health(AddonHealth::builder().issues(issue.build()).build());
        let e = failed("eks:DescribeAddon", "add-on coredns", &a.build());
        assert_eq!(e.code, "DEGRADED");
        assert!(e.message.contains("add-on coredns is DEGRADED: InsufficientNumberOfReplicas: 0 of 2 ready"), "{e}");
    }
}

//! The life cycle EKS gives clusters, node groups and add-ons, and how kbp waits on it. Each has a status that
//! moves through CREATING, UPDATING or DELETING to ACTIVE (or to gone), health issues that say why one failed,
//! and runs one update at a time, which EKS reports as an Update (DescribeUpdate).
//!
//! [`Tracking`] is the one block the three kinds share: wait until ACTIVE after a create, send an update once
//! the resource is idle and wait for EKS's Update, delete and wait until it is gone. Each kind's file says only
//! how to describe one ([`Tracked`]) and what its calls are. Access entries and Pod Identity associations have
//! no status: they are usable when the call returns.

use std::collections::HashMap;
use std::future::Future;
use std::marker::PhantomData;

use async_trait::async_trait;
use aws_sdk_eks::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_eks::types::{Addon, Cluster, Nodegroup, Update, UpdateStatus};

use super::{tagging, vanished};
use crate::graph::Address;
use crate::providers::attrs::ok_if_gone;
use crate::providers::send::send;
use crate::providers::wait::{Budget, Poll, Wait};
use crate::providers::{Context, Desired, ProviderError, Result};

/// A cluster, or a node group or add-on in one: the names EKS's Describe and DescribeUpdate calls take.
#[derive(Debug, Clone, Copy)]
pub(super) struct Target<'a> {
    pub cluster: &'a str,
    pub nodegroup: Option<&'a str>,
    pub addon: Option<&'a str>,
}

impl<'a> Target<'a> {
    pub(super) fn cluster(name: &'a str) -> Self {
        Target { cluster: name, nodegroup: None, addon: None }
    }

    pub(super) fn nodegroup(cluster: &'a str, name: &'a str) -> Self {
        Target { cluster, nodegroup: Some(name), addon: None }
    }

    pub(super) fn addon(cluster: &'a str, name: &'a str) -> Self {
        Target { cluster, nodegroup: None, addon: Some(name) }
    }

    /// The resource's own name.
    pub(super) fn name(&self) -> &'a str {
        self.nodegroup.or(self.addon).unwrap_or(self.cluster)
    }
}

/// What clusters, node groups and add-ons report under the same names: a status, health issues and tags.
pub(super) trait Status: Send + Sync {
    /// AWS's status, such as `ACTIVE` or `CREATE_FAILED`.
    fn state(&self) -> &str;
    /// The health issues EKS reports, each as `code: message`.
    fn issues(&self) -> Vec<String>;
    fn tag_map(&self) -> Option<&HashMap<String, String>>;
    /// Its ARN, which tags are set on.
    fn arn(&self) -> Option<&str>;

    /// Whether it is not being deleted: one being deleted is gone for kbp, since nothing can stop the deletion.
    fn is_live(&self) -> bool {
        self.state() != "DELETING"
    }
}

macro_rules! status {
    ($($ty:ident => $arn:ident),*) => {$(
        impl Status for $ty {
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
            fn arn(&self) -> Option<&str> {
                self.$arn()
            }
        }
    )*};
}

status!(Cluster => arn, Nodegroup => nodegroup_arn, Addon => addon_arn);

/// A kind with a life cycle, as its own file knows it: its name in messages, its Describe call, and what to do
/// when one failed.
#[async_trait]
pub(super) trait Tracked: Status + Sized {
    /// What messages call one: `cluster`, `node group`, `add-on`.
    const NOUN: &'static str;
    /// Its Describe operation, named in errors.
    const DESCRIBE: &'static str;
    /// What to do when one failed, besides reading EKS's issues.
    const FAILURE_HINT: &'static str;

    /// The resource at `target`, or `None` when EKS does not know it.
    async fn describe(cx: &Context, target: Target<'_>) -> Result<Option<Self>>;
}

/// A status EKS does not leave by itself: FAILED, CREATE_FAILED, UPDATE_FAILED, DELETE_FAILED, DEGRADED.
fn is_failed(state: &str) -> bool {
    state == "FAILED" || state == "DEGRADED" || state.ends_with("_FAILED")
}

fn failed<T: Tracked>(operation: &str, what: &str, r: &T) -> ProviderError {
    let issues = r.issues();
    let reason = if issues.is_empty() { "EKS reports no health issue".to_string() } else { issues.join("; ") };
    ProviderError::new(operation, r.state(), format!("{what} is {}: {reason}", r.state())).with_hint(T::FAILURE_HINT)
}

/// One resource of kind `T` at `target`, and the budget of each wait on it: how long it may take, and how long
/// the operation usually takes (each kind passes its `Descriptor`'s typical time for the operation at hand).
pub(super) struct Tracking<'a, T> {
    cx: &'a Context,
    target: Target<'a>,
    budget: Budget,
    kind: PhantomData<fn() -> T>,
}

impl<'a, T: Tracked> Tracking<'a, T> {
    pub(super) fn new(cx: &'a Context, target: Target<'a>, budget: Budget) -> Self {
        Tracking { cx, target, budget, kind: PhantomData }
    }

    pub(super) fn context(&self) -> &'a Context {
        self.cx
    }

    /// `node group system`, as messages name it.
    pub(super) fn what(&self) -> String {
        format!("{} {}", T::NOUN, self.target.name())
    }

    pub(super) async fn describe(&self) -> Result<Option<T>> {
        T::describe(self.cx, self.target).await
    }

    /// The resource as a refresh reads it: one being deleted is gone, except in a destroy, which reads it as there
    /// (`cx.destroying`) so that a rerun of a killed destroy waits for it to go before deleting what it uses.
    pub(super) async fn read(&self) -> Result<Option<T>> {
        Ok(self.describe().await?.filter(|r| self.cx.destroying || r.is_live()))
    }

    /// The resource if `find` may adopt it: live, and carrying this stack's `kbp:stack` tag.
    pub(super) async fn find(&self) -> Result<Option<T>> {
        let found = self.describe().await?;
        Ok(found.filter(|r| r.is_live() && tagging::owned_by(r.tag_map(), &self.cx.stack)))
    }

    /// After an update of `current`: the tags `desired` asks for set on it (by its ARN), then it once ACTIVE.
    pub(super) async fn retag(&self, current: &T, desired: &Desired<'_>) -> Result<T> {
        let arn = current.arn().ok_or_else(|| super::missing(T::DESCRIBE, &format!("{} ARN", T::NOUN)))?;
        tagging::reconcile(self.cx, arn, current.tag_map(), desired).await?;
        self.wait_active(Some(desired.address)).await
    }

    /// Waits until it is ACTIVE (created, or done with an update); the failed states end the wait with EKS's
    /// health issues.
    pub(super) async fn wait_active(&self, address: Option<&Address>) -> Result<T> {
        self.wait_until(address, &["ACTIVE"]).await
    }

    /// Waits until it is in one of the `done` states. A failed state not in `done` ends the wait with EKS's
    /// health issues, DELETING with "deleted outside kbp"; anything else (CREATING, UPDATING, not visible yet) is
    /// reported and waited out.
    pub(super) async fn wait_until(&self, address: Option<&Address>, done: &[&str]) -> Result<T> {
        let what = self.what();
        let waiting = format!("{what} to become {}", done.join(" or "));
        Wait::new(T::DESCRIBE, &waiting, self.budget)
            .reporting(self.cx, address)
            .until(|| async {
                let Some(r) = self.describe().await? else { return Ok(Poll::Pending("not visible yet".to_string())) };
                match r.state() {
                    s if done.contains(&s) => Ok(Poll::Done(r)),
                    s if is_failed(s) => Err(failed(T::DESCRIBE, &what, &r)),
                    "DELETING" => Err(vanished(T::DESCRIBE, &what)),
                    s => Ok(Poll::Pending(s.to_string())),
                }
            })
            .await
    }

    /// Sends an in-place change (UpdateNodegroupConfig, UpdateAddon, UpdateClusterConfig, …), retried while
    /// EKS refuses it with `ResourceInUseException` because another update runs, then waits until the Update
    /// that `update` finds in the answer has finished. Callers wait for the resource's own status after it.
    pub(super) async fn update<O, E, F, Fut>(
        &self,
        address: Option<&Address>,
        op: &str,
        request: F,
        update: impl Fn(&O) -> Option<&Update>,
    ) -> Result<()>
    where
        F: Fn() -> Fut + Copy,
        Fut: Future<Output = Result<O, SdkError<E>>>,
        E: ProvideErrorMetadata + std::error::Error + 'static,
    {
        let (cx, what) = (self.cx, self.what());
        let hint = self.busy_hint();
        let out = Wait::new(op, &what, self.budget)
            .reporting(cx, address)
            .while_refused(|e| e.is("ResourceInUseException"), &hint, || send(cx, op, &[], request))
            .await?;
        self.wait_for_update(address, update(&out)).await
    }

    /// Deletes the resource (unless it is already DELETING) and waits until it is gone. The delete is retried
    /// while EKS answers `ResourceInUseException` (another update runs, or for a cluster, node groups remain),
    /// `in_use_hint` saying what to do if that lasts (by default: look at its updates). Progress is reported
    /// under the resource's `kbp:address` tag, since a delete is given no address.
    pub(super) async fn delete<O, E, F, Fut>(&self, op: &str, in_use_hint: Option<&str>, request: F) -> Result<()>
    where
        F: Fn() -> Fut + Copy,
        Fut: Future<Output = Result<O, SdkError<E>>>,
        E: ProvideErrorMetadata + std::error::Error + 'static,
    {
        let Some(r) = self.describe().await? else { return Ok(()) };
        let (cx, what) = (self.cx, self.what());
        let address = tagging::address(r.tag_map());
        if r.state() != "DELETING" {
            let hint = in_use_hint.map_or_else(|| self.busy_hint(), str::to_string);
            let deleted = Wait::new(op, &what, self.budget)
                .reporting(cx, address.as_ref())
                .while_refused(|e| e.is("ResourceInUseException"), &hint, || send(cx, op, &[], request))
                .await;
            ok_if_gone(deleted)?;
        }
        let waiting = format!("{what} to be deleted");
        Wait::new(op, &waiting, self.budget)
            .reporting(cx, address.as_ref())
            .until(|| async {
                match self.describe().await? {
                    None => Ok(Poll::Done(())),
                    Some(r) if r.state() == "DELETE_FAILED" => Err(failed(op, &what, &r)),
                    Some(r) => Ok(Poll::Pending(r.state().to_string())),
                }
            })
            .await
    }

    /// What to do when the resource stays busy with another operation for the whole budget.
    fn busy_hint(&self) -> String {
        format!(
            "{} stayed busy with another operation for {} minutes; check its updates in the EKS console, then run \
             kbp again",
            self.what(),
            self.budget.timeout.as_secs() / 60
        )
    }

    /// Waits until the update AWS returned has finished, and fails with AWS's errors if it failed. An update
    /// that comes back already finished (or without an ID) needs no wait.
    async fn wait_for_update(&self, address: Option<&Address>, update: Option<&Update>) -> Result<()> {
        let Some(update) = update else { return Ok(()) };
        let Some(id) = update.id() else { return Ok(()) };
        if finished(update)? {
            return Ok(());
        }
        let (cx, target) = (self.cx, self.target);
        let what = format!("update {id} of {}", target.name());
        Wait::new("eks:DescribeUpdate", &what, self.budget)
            .reporting(cx, address)
            .until(|| async {
                let described = send(cx, "eks:DescribeUpdate", &[], || {
                    cx.eks()
                        .describe_update()
                        .name(target.cluster)
                        .update_id(id)
                        .set_nodegroup_name(target.nodegroup.map(str::to_string))
                        .set_addon_name(target.addon.map(str::to_string))
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
}

/// Whether the update succeeded (false while it runs); an error when it failed or was cancelled.
fn finished(u: &Update) -> Result<bool> {
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

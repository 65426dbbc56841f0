//! EKS providers: the cluster, its managed node group, add-ons, access entries and Pod Identity associations, one
//! file per kind. Shared here: composite IDs, set-like lists and the retry for IAM roles EKS cannot see yet;
//! statuses, updates and the waits on them are in [`lifecycle`] (one create/update/delete-and-wait block for the
//! three kinds with a status), tags in [`tagging`].
//!
//! Not here: the node security group (an EC2 resource, `ec2/security_group.rs`), the IAM roles EKS assumes
//! (`iam/`), and anything inside the cluster (the Kubernetes providers).
//!
//! Everything EKS does to a cluster, node group or add-on takes minutes and runs one update at a time, so every
//! mutating call on one is followed by a bounded wait that reports AWS's status through `cx.progress`. Access
//! entries and Pod Identity associations have no status and are not waited on.

pub(crate) mod access_entry;
pub(crate) mod addon;
pub(crate) mod cluster;
mod cluster_spec;
mod cluster_update;
pub mod insights;
mod lifecycle;
mod node_drain;
pub(crate) mod node_group;
pub(crate) mod pod_identity_association;
mod tagging;

use std::future::Future;

use aws_sdk_eks::error::{ProvideErrorMetadata, SdkError};
use serde_json::Value;

use super::send::send;
use super::wait::{Budget, Wait};
use super::{Context, ProviderError};
use crate::graph::Attrs;
use crate::providers::Result;

/// How long IAM may take to show a role (or the policies just attached to it) to EKS.
const IAM_PROPAGATION: Budget = Budget::minutes(2);

/// The ID of a resource that lives inside a cluster: `<cluster>:<name>`. EKS cluster names cannot contain `:`,
/// so the first one separates them even when the name is an ARN.
pub(crate) fn join_id(cluster: &str, name: &str) -> String {
    format!("{cluster}:{name}")
}

/// Splits a `<cluster>:<name>` ID; `shape` names the second part in the error.
pub(crate) fn split_id<'a>(kind: &str, id: &'a str, shape: &str) -> Result<(&'a str, &'a str)> {
    id.split_once(':').filter(|(c, n)| !c.is_empty() && !n.is_empty()).ok_or_else(|| {
        ProviderError::new(kind, "", format!("`{id}` is not an ID of this kind (expected <cluster>:<{shape}>)"))
            .with_hint("the state file was edited by hand or is corrupt; fix the ID or remove the entry")
    })
}

/// Sorts the string lists under `keys`: AWS treats them as sets and does not promise to return them in the order
/// they were given, so desired (in `canonical`) and read both sort them.
pub(crate) fn sort_sets(mut attrs: Attrs, keys: &[&str]) -> Attrs {
    for key in keys {
        if let Some(Value::Array(items)) = attrs.get_mut(*key) {
            items.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
        }
    }
    attrs
}

/// A sorted copy of a set-like list AWS returns.
pub(crate) fn sorted(items: &[String]) -> Vec<String> {
    let mut v = items.to_vec();
    v.sort();
    v
}

/// Sends a request that names an IAM role (a cluster's, a node group's, a Pod Identity association's) or an
/// IAM principal (an access entry's). IAM is eventually consistent: a role created seconds earlier, or the
/// policy just attached to it, may not be visible to EKS yet, and EKS then refuses the request with
/// `InvalidParameterException` ("role … does not exist", "could not be assumed", "doesn't have the Amazon EKS
/// Managed Policies"). Only those refusals are retried, for up to two minutes.
pub(crate) async fn send_naming_role<O, E, F, Fut>(cx: &Context, op: &str, transient: &[&str], request: F) -> Result<O>
where
    F: Fn() -> Fut + Copy,
    Fut: Future<Output = Result<O, SdkError<E>>>,
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    let hint = "EKS kept refusing the IAM role or principal for two minutes; check that it exists, trusts the \
                right service (eks.amazonaws.com, ec2.amazonaws.com or pods.eks.amazonaws.com) and has its policies";
    Wait::new(op, "IAM to show the role to EKS", IAM_PROPAGATION)
        .while_refused(role_not_visible_yet, hint, || send(cx, op, transient, request))
        .await
}

/// EKS's wordings for "the IAM role or principal you name is not (yet) usable", as opposed to a request that
/// is invalid for good.
fn role_not_visible_yet(e: &ProviderError) -> bool {
    if !(e.is("InvalidParameterException") || e.is("InvalidRequestException")) {
        return false;
    }
    let m = e.message.to_ascii_lowercase();
    let about_iam = m.contains("role") || m.contains("principal");
    let not_yet = [
        "does not exist",
        "could not be assumed",
        "cannot be assumed",
        "unable to assume",
        "could not be found",
        "error in role params",
        "managed policies",
        "policy must include",
        "invalid principal",
    ];
    about_iam && not_yet.iter().any(|p| m.contains(p))
}

/// The error for an update whose resource disappeared since the plan was made.
pub(crate) fn vanished(operation: &str, what: &str) -> ProviderError {
    ProviderError::new(operation, "ResourceNotFoundException", format!("{what} no longer exists"))
        .with_hint("someone deleted it outside kbp; run `kbp plan` again: it will be planned for creation")
}

/// An error for a response that lacks a field AWS always sends.
pub(crate) fn missing(operation: &str, what: &str) -> ProviderError {
    ProviderError::new(operation, "", format!("AWS's response has no {what}"))
        .with_hint("retry; if it persists, the endpoint (AWS_ENDPOINT_URL?) may not be a real EKS API")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_split_at_the_first_colon() {
        assert_eq!(
            split_id("k", "demo:arn:aws:iam::1:role/x", "principal").unwrap(),
            ("demo", "arn:aws:iam::1:role/x")
        );
        assert_eq!(join_id("demo", "coredns"), "demo:coredns");
        assert!(split_id("k", "demo", "name").is_err());
        assert!(split_id("k", ":x", "name").is_err());
    }

    #[test]
    fn only_iam_visibility_refusals_are_retried() {
        let e = |code: &str, msg: &str| ProviderError::new("eks:CreateCluster", code, msg);
        assert!(role_not_visible_yet(&e(
            "InvalidParameterException",
            "Role with arn: arn:aws:iam::1:role/demo-cluster, could not be assumed because it does not exist or \
             the trusted entity is not correct"
        )));
        assert!(role_not_visible_yet(&e(
            "InvalidParameterException",
            "The provided role doesn't have the Amazon EKS Managed Policies associated with it."
        )));
        assert!(!role_not_visible_yet(&e(
            "InvalidParameterException",
            "Subnets specified must be in at least two AZs"
        )));
        assert!(!role_not_visible_yet(&e("AccessDeniedException", "role does not exist")));
    }

    #[test]
    fn set_like_lists_are_sorted() {
        let attrs = json!({"subnet_ids": ["b", "a"], "instance_types": ["m5", "c5"]}).as_object().cloned().unwrap();
        let sorted = sort_sets(attrs, &["subnet_ids"]);
        assert_eq!(sorted["subnet_ids"], json!(["a", "b"]));
        assert_eq!(sorted["instance_types"], json!(["m5", "c5"]));
    }
}

//! EC2 network providers: the VPC and what makes it routable (subnets, gateways, Elastic IPs, route tables,
//! routes and their subnet associations), one file per resource kind.
//!
//! A network the stack uses but does not own (`[vpc] id`) is looked up rather than made: `existing_vpc` and
//! `existing_subnet` check it exists and are never deleted; `subnet_tags` adds to such subnets only the tags
//! the cluster needs (never kbp's own) and puts back what they held when it goes.
//!
//! Also, delete only, what others leave for teardown to find: Karpenter's nodes, their launch templates and
//! detached network interfaces, EBS volumes of PersistentVolumeClaims and VPC endpoints.
//!
//! Shared here: each type's Describe call, named once and read through by one, by many, by filter, by the kbp
//! tags of an address and by the stack's tag ([`describe`]); tagging ([`tagging`]); deletes AWS refuses while
//! something is still released ([`wait`]). Attribute decoding and
//! "gone" handling are every service's ([`crate::providers::attrs`], re-exported here). Not here: prefix lists
//! (no blueprint needs them yet), or anything EKS creates in the VPC.

pub(crate) mod describe;
pub(crate) mod eip;
pub(crate) mod existing_subnet;
pub(crate) mod existing_vpc;
pub(crate) mod instance;
pub(crate) mod internet_gateway;
pub(crate) mod launch_template;
pub(crate) mod nat_gateway;
pub(crate) mod network_interface;
pub mod regions;
pub(crate) mod route;
pub(crate) mod route_table;
pub(crate) mod route_table_association;
pub(crate) mod security_group;
pub(crate) mod stack_search;
pub(crate) mod subnet;
pub(crate) mod subnet_tags;
pub mod tagging;
pub(crate) mod volume;
pub(crate) mod vpc;
pub(crate) mod vpc_endpoint;
pub mod wait;

use std::future::Future;

use aws_sdk_ec2::error::{ProvideErrorMetadata, SdkError};
use serde_json::json;

use super::contract::{self, Constraint};
use super::{Applied, Context, Descriptor, Desired, ProviderError, Result, WithoutState};
use crate::graph::Attrs;

/// What every EC2 kind kbp creates sends of its own: tags within EC2's limits ([`contract`]).
const TAGS_ONLY: &[Constraint] = &[contract::EC2_TAGS];

/// The descriptor every EC2 kind kbp creates with its tags starts from: found by the stack's tag, adoptable by
/// its kbp tags, its tags within EC2's limits.
pub(crate) const fn tagged_kind(kind: &'static str) -> Descriptor {
    Descriptor::new(kind, WithoutState::Tags, TAGS_ONLY).adoptable_by_tags()
}

/// Per-call settings for a create AWS would carry out twice if it arrived twice: no SDK retry (see
/// [`crate::providers::send::send_unretried`]).
pub(crate) fn once() -> aws_sdk_ec2::config::Builder {
    aws_sdk_ec2::config::Builder::default().retry_config(aws_config::retry::RetryConfig::disabled())
}

pub(crate) use crate::providers::attrs::{nullable, object, ok_if_gone, optional_str};
pub(crate) use crate::providers::send::{describe_one, remove, send};

/// [`remove`] for a delete or detach that AWS refuses with `DependencyViolation` (or an `also_busy` code) while
/// something it held is still being released; see [`wait::while_in_use`]. `what` names the resource.
pub(crate) async fn remove_when_unused<O, E, F, Fut>(
    cx: &Context,
    op: &str,
    what: &str,
    also_busy: &[&str],
    budget: wait::Budget,
    request: F,
) -> Result<()>
where
    F: Fn() -> Fut + Copy,
    Fut: Future<Output = Result<O, SdkError<E>>>,
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    ok_if_gone(wait::while_in_use(op, what, also_busy, budget, || send(cx, op, &[], request)).await)
}

/// The update of a kind whose only in-place change is its tags, and whose only output is its ID.
pub(crate) async fn retag(cx: &Context, id: &str, desired: &Desired<'_>) -> Result<Applied> {
    tagging::reconcile(cx, id, desired).await?;
    Ok(Applied { id: id.to_string(), outputs: id_output(id) })
}

/// `{"id": id}`: the outputs of a kind that has nothing else others reference.
pub(crate) fn id_output(id: &str) -> Attrs {
    object(json!({ "id": id }))
}

/// The most values EC2 takes in one filter.
const MAX_FILTER_VALUES: usize = 200;

/// `values` without repeats, in chunks of at most [`MAX_FILTER_VALUES`].
fn chunks(values: &[String]) -> Vec<Vec<String>> {
    let unique: std::collections::BTreeSet<&String> = values.iter().collect();
    let unique: Vec<String> = unique.into_iter().cloned().collect();
    unique.chunks(MAX_FILTER_VALUES).map(<[String]>::to_vec).collect()
}

/// For each ID of `items` (a kind's `read_many`), the one of `found` with that ID (`id_of`), if any.
pub(crate) fn matched<'a, T>(
    items: &[(String, Attrs)],
    found: &'a [T],
    id_of: impl Fn(&T) -> Option<&str>,
) -> Vec<Option<&'a T>> {
    let by_id: std::collections::HashMap<&str, &T> = found.iter().filter_map(|t| Some((id_of(t)?, t))).collect();
    items.iter().map(|(id, _)| by_id.get(id.as_str()).copied()).collect()
}

/// The IDs of a kind's `read_many` items.
pub(crate) fn ids(items: &[(String, Attrs)]) -> Vec<String> {
    items.iter().map(|(id, _)| id.clone()).collect()
}

/// An EC2 ARN; the partition follows the region (China and GovCloud have their own).
pub(crate) fn arn(region: &str, account: &str, resource: &str) -> String {
    let partition = if region.starts_with("cn-") {
        "aws-cn"
    } else if region.starts_with("us-gov-") {
        "aws-us-gov"
    } else {
        "aws"
    };
    format!("arn:{partition}:ec2:{region}:{account}:{resource}")
}

/// An error for a response that lacks a field AWS always sends (an ID after a create).
pub(crate) fn missing(operation: &str, what: &str) -> ProviderError {
    ProviderError::new(operation, "", format!("AWS's response has no {what}"))
        .with_hint("retry; if it persists, the endpoint (AWS_ENDPOINT_URL?) may not be a real EC2 API")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_values_are_unique_and_at_most_200_a_chunk() {
        let ids: Vec<String> = (0..450).map(|i| format!("subnet-{i}")).chain(["subnet-7".to_string()]).collect();
        let split = chunks(&ids);
        assert_eq!(split.iter().map(Vec::len).collect::<Vec<_>>(), [200, 200, 50]);
        let all: std::collections::BTreeSet<&String> = split.iter().flatten().collect();
        assert_eq!(all.len(), 450, "every ID once");
        assert!(chunks(&[]).is_empty(), "no values, no call");
    }

    #[test]
    fn answers_match_back_to_their_ids_and_a_missing_one_is_none() {
        let items: Vec<(String, Attrs)> =
            ["rtb-2", "rtb-gone", "rtb-1"].iter().map(|id| (id.to_string(), Attrs::new())).collect();
        let found = ["rtb-1", "rtb-2", "rtb-other"];
        let matched = matched(&items, &found, |t| Some(*t));
        assert_eq!(matched, [Some(&"rtb-2"), None, Some(&"rtb-1")]);
    }

    #[test]
    fn arn_partition_follows_region() {
        assert_eq!(arn("us-west-2", "1", "vpc/vpc-1"), "arn:aws:ec2:us-west-2:1:vpc/vpc-1");
        assert_eq!(arn("cn-north-1", "1", "vpc/v"), "arn:aws-cn:ec2:cn-north-1:1:vpc/v");
        assert_eq!(arn("us-gov-west-1", "1", "vpc/v"), "arn:aws-us-gov:ec2:us-gov-west-1:1:vpc/v");
    }
}

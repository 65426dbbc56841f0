//! `aws_vpc_endpoint`: an endpoint in the stack's VPC that kbp did not make (added by hand, or by a controller
//! such as ACK). Delete only. An interface endpoint's network interfaces hold its subnets and security groups,
//! and AWS refuses to delete a VPC that still has endpoints, so teardown deletes it first and waits until AWS
//! has finished (`deleted`, or no longer listed).

use async_trait::async_trait;
use aws_sdk_ec2::types::{State, VpcEndpoint as AwsEndpoint};
use serde_json::json;

use super::object;
use crate::graph::{kinds, Attrs};
use crate::providers::attrs::absent_if_gone;
use crate::providers::delete_only::Leftover;
use crate::providers::send::send;
use crate::providers::wait::{until, Budget, Poll};
use crate::providers::{Context, DiscoveryScope, Found, Observed, ProviderError, Result};

pub(crate) struct VpcEndpoint;

/// Interface endpoints take a minute or two to delete their network interfaces.
const DELETE_BUDGET: Budget = Budget::minutes(10);

#[async_trait]
impl Leftover for VpcEndpoint {
    const KIND: &'static str = kinds::VPC_ENDPOINT;
    const MADE_BY: &'static str = "someone other than kbp (by hand, or a controller)";

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let Some(e) = super::describe::one::<AwsEndpoint>(cx, id, &[]).await?.filter(|e| !is_gone(e)) else {
            return Ok(None);
        };
        Ok(Some(Observed { attrs: attrs(&e), outputs: super::id_output(id) }))
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        let Some(e) = super::describe::one::<AwsEndpoint>(cx, id, &[]).await? else { return Ok(()) };
        if is_gone(&e) {
            return Ok(());
        }
        if !in_state(&e, State::Deleting) {
            let op = "ec2:DeleteVpcEndpoints";
            let out = send(cx, op, &[], || cx.ec2().delete_vpc_endpoints().vpc_endpoint_ids(id).send()).await;
            let Some(out) = absent_if_gone(out)? else { return Ok(()) };
            // The call succeeds as a whole and reports each endpoint it could not delete.
            if let Some(failure) = out.unsuccessful().iter().filter_map(|u| u.error()).next() {
                let e = ProviderError::new(op, failure.code().unwrap_or(""), failure.message().unwrap_or(""));
                if e.is_not_found() {
                    return Ok(());
                }
                return Err(e);
            }
        }
        until("ec2:DescribeVpcEndpoints", &format!("VPC endpoint {id} to be deleted"), DELETE_BUDGET, || async {
            Ok(match super::describe::one::<AwsEndpoint>(cx, id, &[]).await? {
                None => Poll::Done(()),
                Some(e) if is_gone(&e) => Poll::Done(()),
                Some(e) => Poll::Pending(e.state().map_or("no state", |s| s.as_str()).to_string()),
            })
        })
        .await
    }

    async fn discover(&self, cx: &Context, scope: &DiscoveryScope<'_>) -> Result<Vec<Found>> {
        let all = super::describe::by_filter::<AwsEndpoint>(cx, "vpc-id", scope.vpc_ids, &[]).await?;
        let mut found = Vec::new();
        for e in all {
            let Some(id) = e.vpc_endpoint_id() else { continue };
            // Checked again: a filter an implementation ignores must not widen the match.
            let in_scope = e.vpc_id().is_some_and(|v| scope.vpc_ids.iter().any(|s| s == v));
            if !in_scope || is_gone(&e) || scope.keep.contains(id) {
                continue;
            }
            let tags =
                e.tags().iter().filter_map(|t| Some((t.key()?.to_string(), t.value().unwrap_or_default().to_string())));
            let tags = tags.collect();
            found.push(Found {
                kind: Self::KIND,
                id: id.to_string(),
                name: Found::tag_name(&tags),
                detail: format!(
                    "{} endpoint for {}, {}, in {}",
                    e.vpc_endpoint_type().map_or("?", |t| t.as_str()),
                    e.service_name().unwrap_or("?"),
                    e.state().map_or("?", |s| s.as_str()),
                    e.vpc_id().unwrap_or("?")
                ),
                uses: uses(&e),
                after: Vec::new(),
                attrs: attrs(&e),
            });
        }
        Ok(found)
    }
}

/// What the endpoint holds and must go before: its VPC, subnets, security groups and route tables.
fn uses(e: &AwsEndpoint) -> Vec<String> {
    let mut out: Vec<String> = e.vpc_id().map(str::to_string).into_iter().collect();
    out.extend(e.subnet_ids().iter().cloned());
    out.extend(e.groups().iter().filter_map(|g| g.group_id().map(str::to_string)));
    out.extend(e.route_table_ids().iter().cloned());
    out
}

/// Deleted endpoints stay listed for a while; for kbp they are gone.
fn is_gone(e: &AwsEndpoint) -> bool {
    in_state(e, State::Deleted)
}

/// Whether the endpoint is in `state`. The API's enum is capitalised (`Deleted`) but AWS answers in lower case
/// (`deleted`), which the SDK reads as an unknown variant, so the names are compared without regard to case.
fn in_state(e: &AwsEndpoint, state: State) -> bool {
    e.state().is_some_and(|s| s.as_str().eq_ignore_ascii_case(state.as_str()))
}

fn attrs(e: &AwsEndpoint) -> Attrs {
    object(json!({
        "vpc_id": e.vpc_id(),
        "service_name": e.service_name(),
        "vpc_endpoint_type": e.vpc_endpoint_type().map(|t| t.as_str()),
        "subnet_ids": e.subnet_ids(),
        "route_table_ids": e.route_table_ids(),
        "security_group_ids": e.groups().iter().filter_map(|g| g.group_id()).collect::<Vec<_>>(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_ec2::types::SecurityGroupIdentifier;

    #[test]
    fn an_endpoint_goes_before_its_network() {
        let e = AwsEndpoint::builder()
            .vpc_id("vpc-1")
            .subnet_ids("subnet-a")
            .groups(SecurityGroupIdentifier::builder().group_id("sg-1").build())
            .route_table_ids("rtb-1")
            .build();
        assert_eq!(uses(&e), ["vpc-1", "subnet-a", "sg-1", "rtb-1"]);
    }

    #[test]
    fn only_deleted_endpoints_are_gone() {
        assert!(is_gone(&AwsEndpoint::builder().state(State::Deleted).build()));
        assert!(!is_gone(&AwsEndpoint::builder().state(State::Deleting).build()));
        assert!(!is_gone(&AwsEndpoint::builder().state(State::Failed).build()));
        assert!(is_gone(&AwsEndpoint::builder().state(State::from("deleted")).build()), "AWS's spelling");
        assert!(in_state(&AwsEndpoint::builder().state(State::from("deleting")).build(), State::Deleting));
    }
}

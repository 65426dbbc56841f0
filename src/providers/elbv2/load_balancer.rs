//! `aws_lb`: an application or network load balancer a controller made for a Service or Ingress. Delete only:
//! its network interfaces hold the subnets and security groups it was given, so it goes before them, and its
//! deletion is waited for so that its target groups (which AWS keeps "in use" until then) can go next.

use async_trait::async_trait;
use serde_json::json;

use super::{all_target_groups, detail, display_name, owned_balancers, MADE_BY};
use crate::graph::{kinds, Attrs};
use crate::providers::delete_only::Leftover;
use crate::providers::ec2::object;
use crate::providers::send::describe_one;
use crate::providers::send::remove;
use crate::providers::wait::{until, Budget, Poll};
use crate::providers::{Context, DiscoveryScope, Found, Observed, Result};

pub(crate) struct LoadBalancer;

/// AWS takes a load balancer out of DescribeLoadBalancers within a minute or two of the call.
const DELETE_BUDGET: Budget = Budget::minutes(5);

#[async_trait]
impl Leftover for LoadBalancer {
    const KIND: &'static str = kinds::LOAD_BALANCER;
    const MADE_BY: &'static str = MADE_BY;

    async fn read(&self, cx: &Context, arn: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let Some(b) = describe(cx, arn).await? else { return Ok(None) };
        let outputs = json!({ "id": arn, "arn": arn, "dns_name": b.dns_name() });
        Ok(Some(Observed { attrs: attrs(&b), outputs: object(outputs) }))
    }

    async fn delete(&self, cx: &Context, arn: &str, _prior: &Attrs) -> Result<()> {
        let op = "elasticloadbalancing:DeleteLoadBalancer";
        // AWS answers success for a load balancer that is already gone; some implementations say not found.
        let r = remove(cx, op, &[], || cx.elbv2().delete_load_balancer().load_balancer_arn(arn).send()).await;
        match r {
            Err(e) if e.is("OperationNotPermitted") => {
                return Err(e.with_hint(format!(
                    "deletion protection is on (the Service or Ingress asked for it); turn it off with `aws elbv2 \
                     modify-load-balancer-attributes --load-balancer-arn {arn} --attributes \
                     Key=deletion_protection.enabled,Value=false`, then run kbp again"
                )))
            }
            r => r?,
        };
        let what = format!("load balancer {} to be deleted", name_of(arn));
        until("elasticloadbalancing:DescribeLoadBalancers", &what, DELETE_BUDGET, || async {
            Ok(match describe(cx, arn).await? {
                None => Poll::Done(()),
                Some(b) => {
                    Poll::Pending(b.state().and_then(|s| s.code()).map_or("still listed", |c| c.as_str()).to_string())
                }
            })
        })
        .await
    }

    async fn discover(&self, cx: &Context, scope: &DiscoveryScope<'_>) -> Result<Vec<Found>> {
        let owned = owned_balancers(cx, scope).await?;
        if owned.is_empty() {
            return Ok(Vec::new());
        }
        // Target groups stay "in use" while a listener of the balancer forwards to them, so they go after it.
        let groups = all_target_groups(cx).await?;
        Ok(owned
            .into_iter()
            .map(|o| {
                let b = &o.balancer;
                let mut uses: Vec<String> =
                    b.availability_zones().iter().filter_map(|z| z.subnet_id().map(str::to_string)).collect();
                uses.extend(b.security_groups().iter().cloned());
                uses.extend(b.vpc_id().map(str::to_string));
                let forwarded_to = groups.iter().filter(|g| g.load_balancer_arns().contains(&o.arn));
                uses.extend(forwarded_to.filter_map(|g| g.target_group_arn().map(str::to_string)));
                let what = format!(
                    "{} load balancer, {}",
                    b.r#type().map_or("?", |t| t.as_str()),
                    b.scheme().map_or("?", |s| s.as_str())
                );
                Found {
                    kind: Self::KIND,
                    id: o.arn.clone(),
                    name: display_name(&o.tags, b.load_balancer_name()),
                    detail: detail(what, o.why, &o.tags),
                    uses,
                    after: Vec::new(),
                    attrs: attrs(b),
                }
            })
            .collect())
    }
}

async fn describe(cx: &Context, arn: &str) -> Result<Option<aws_sdk_elasticloadbalancingv2::types::LoadBalancer>> {
    let request = || cx.elbv2().describe_load_balancers().load_balancer_arns(arn).send();
    let op = "elasticloadbalancing:DescribeLoadBalancers";
    describe_one(cx, op, &[], arn, request, |out| out.load_balancers(), |b| b.load_balancer_arn()).await
}

fn attrs(b: &aws_sdk_elasticloadbalancingv2::types::LoadBalancer) -> Attrs {
    let subnets: Vec<&str> = b.availability_zones().iter().filter_map(|z| z.subnet_id()).collect();
    object(json!({
        "name": b.load_balancer_name(),
        "load_balancer_type": b.r#type().map(|t| t.as_str()),
        "scheme": b.scheme().map(|s| s.as_str()),
        "vpc_id": b.vpc_id(),
        "subnets": subnets,
        "security_groups": b.security_groups(),
    }))
}

/// The name inside a load balancer ARN (`…:loadbalancer/app/<name>/<id>`), for messages.
fn name_of(arn: &str) -> &str {
    arn.rsplit('/').nth(1).unwrap_or(arn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_is_read_from_the_arn() {
        let arn = "arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/net/k8s-web/50dc6c495c0c9188";
        assert_eq!(name_of(arn), "k8s-web");
        assert_eq!(name_of("odd"), "odd");
    }
}

//! `aws_lb_target_group`: a target group a controller made for a Service or Ingress. Delete only. Found by the
//! controllers' tags (or by their stack tags in the stack's VPC); target groups a TargetGroupBinding merely
//! points at carry none of these and are someone else's. It goes after the load balancers and listeners that
//! forward to it, and before its VPC.

use async_trait::async_trait;
use serde_json::json;

use super::{all_target_groups, detail, display_name, ownership, tags_of, MADE_BY};
use crate::graph::{kinds, Attrs};
use crate::providers::attrs::absent_if_gone;
use crate::providers::delete_only::Leftover;
use crate::providers::ec2::object;
use crate::providers::send::describe_one;
use crate::providers::send::send;
use crate::providers::wait::{Budget, Wait};
use crate::providers::{Context, DiscoveryScope, Found, Observed, Result};

pub(crate) struct TargetGroup;

/// Right after its load balancer or listener is deleted, AWS may still call a target group in use for a while.
const IN_USE_BUDGET: Budget = Budget::minutes(3);

#[async_trait]
impl Leftover for TargetGroup {
    const KIND: &'static str = kinds::LB_TARGET_GROUP;
    const MADE_BY: &'static str = MADE_BY;

    async fn read(&self, cx: &Context, arn: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let request = || cx.elbv2().describe_target_groups().target_group_arns(arn).send();
        let op = "elasticloadbalancing:DescribeTargetGroups";
        let g = describe_one(cx, op, &[], arn, request, |out| out.target_groups(), |g| g.target_group_arn()).await?;
        Ok(g.map(|g| Observed { attrs: attrs(&g), outputs: object(json!({ "id": arn, "arn": arn })) }))
    }

    async fn delete(&self, cx: &Context, arn: &str, _prior: &Attrs) -> Result<()> {
        let op = "elasticloadbalancing:DeleteTargetGroup";
        let what = format!("target group {arn}");
        let hint = "a listener or rule of a load balancer still forwards to it; delete that load balancer (or the \
                    Service or Ingress behind it) first, then run kbp again";
        let r = Wait::new(op, &what, IN_USE_BUDGET)
            .while_refused(
                |e| e.is("ResourceInUse"),
                hint,
                || send(cx, op, &[], || cx.elbv2().delete_target_group().target_group_arn(arn).send()),
            )
            .await;
        absent_if_gone(r).map(drop)
    }

    async fn discover(&self, cx: &Context, scope: &DiscoveryScope<'_>) -> Result<Vec<Found>> {
        let groups = all_target_groups(cx).await?;
        let arns: Vec<String> = groups
            .iter()
            .filter_map(|g| g.target_group_arn())
            .filter(|a| !scope.keep.contains(*a))
            .map(str::to_string)
            .collect();
        let mut tags = tags_of(cx, &arns).await?;
        let mut found = Vec::new();
        for g in &groups {
            let Some(arn) = g.target_group_arn() else { continue };
            if g.target_group_name().is_some_and(|n| scope.keep.contains(n)) {
                continue;
            }
            let Some(tags) = tags.remove(arn) else { continue };
            let in_vpc = g.vpc_id().is_some_and(|v| scope.vpc_ids.iter().any(|s| s == v));
            let Some(why) = ownership(&tags, scope.cluster, in_vpc) else { continue };
            let what = format!(
                "{} targets, {}:{}",
                g.target_type().map_or("?", |t| t.as_str()),
                g.protocol().map_or("?", |p| p.as_str()),
                g.port().map_or("?".to_string(), |p| p.to_string())
            );
            found.push(Found {
                kind: Self::KIND,
                id: arn.to_string(),
                name: display_name(&tags, g.target_group_name()),
                detail: detail(what, why, &tags),
                uses: g.vpc_id().map(str::to_string).into_iter().collect(),
                after: Vec::new(),
                attrs: attrs(g),
            });
        }
        Ok(found)
    }
}

fn attrs(g: &aws_sdk_elasticloadbalancingv2::types::TargetGroup) -> Attrs {
    object(json!({
        "name": g.target_group_name(),
        "vpc_id": g.vpc_id(),
        "target_type": g.target_type().map(|t| t.as_str()),
        "protocol": g.protocol().map(|p| p.as_str()),
        "port": g.port(),
    }))
}

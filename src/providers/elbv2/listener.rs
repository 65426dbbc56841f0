//! `aws_lb_listener`: a listener of a load balancer a controller made. Delete only. Listeners carry no tags of
//! their own worth trusting, so discovery lists the listeners of the load balancers found by theirs. A listener
//! goes before its load balancer and before the target groups it forwards to (AWS refuses to delete a target
//! group a listener still uses).

use async_trait::async_trait;
use aws_sdk_elasticloadbalancingv2::types::{Action, Listener as AwsListener};
use serde_json::json;

use super::{owned_balancers, MADE_BY};
use crate::graph::{kinds, Attrs};
use crate::providers::attrs::absent_if_gone;
use crate::providers::delete_only::Leftover;
use crate::providers::ec2::object;
use crate::providers::send::describe_one;
use crate::providers::send::{remove, send_pages};
use crate::providers::{Context, DiscoveryScope, Found, Observed, Result};

pub(crate) struct Listener;

#[async_trait]
impl Leftover for Listener {
    const KIND: &'static str = kinds::LB_LISTENER;
    const MADE_BY: &'static str = MADE_BY;

    async fn read(&self, cx: &Context, arn: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let request = || cx.elbv2().describe_listeners().listener_arns(arn).send();
        let op = "elasticloadbalancing:DescribeListeners";
        let Some(l) = describe_one(cx, op, &[], arn, request, |out| out.listeners(), |l| l.listener_arn()).await?
        else {
            return Ok(None);
        };
        Ok(Some(Observed { attrs: attrs(&l), outputs: object(json!({ "id": arn, "arn": arn })) }))
    }

    /// Synchronous in AWS: the listener and its rules are gone when the call returns.
    async fn delete(&self, cx: &Context, arn: &str, _prior: &Attrs) -> Result<()> {
        remove(cx, "elasticloadbalancing:DeleteListener", &[], || cx.elbv2().delete_listener().listener_arn(arn).send())
            .await
    }

    async fn discover(&self, cx: &Context, scope: &DiscoveryScope<'_>) -> Result<Vec<Found>> {
        let mut found = Vec::new();
        for o in owned_balancers(cx, scope).await? {
            let lb_name = o.balancer.load_balancer_name().unwrap_or("?");
            for l in listeners_of(cx, &o.arn).await? {
                let Some(arn) = l.listener_arn().filter(|a| !scope.keep.contains(*a)) else { continue };
                let mut uses = vec![o.arn.clone()];
                uses.extend(forwarded_to(l.default_actions()));
                found.push(Found {
                    kind: Self::KIND,
                    id: arn.to_string(),
                    name: None,
                    detail: format!(
                        "{}:{} of load balancer {lb_name} ({})",
                        l.protocol().map_or("?", |p| p.as_str()),
                        l.port().map_or("?".to_string(), |p| p.to_string()),
                        o.why
                    ),
                    uses,
                    after: Vec::new(),
                    attrs: attrs(&l),
                });
            }
        }
        Ok(found)
    }
}

/// The listeners of load balancer `lb`; none when it has gone since it was listed.
async fn listeners_of(cx: &Context, lb: &str) -> Result<Vec<AwsListener>> {
    let r = send_pages(
        cx,
        "elasticloadbalancing:DescribeListeners",
        |marker| cx.elbv2().describe_listeners().load_balancer_arn(lb).set_marker(marker).send(),
        |page| (page.listeners.unwrap_or_default(), page.next_marker),
    )
    .await;
    Ok(absent_if_gone(r)?.unwrap_or_default())
}

/// The target groups `actions` forward to, in either of AWS's two spellings of a forward.
fn forwarded_to(actions: &[Action]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for a in actions {
        let weighted = a.forward_config().map(|f| f.target_groups()).unwrap_or_default();
        for arn in a.target_group_arn().into_iter().chain(weighted.iter().filter_map(|t| t.target_group_arn())) {
            if !out.iter().any(|o| o == arn) {
                out.push(arn.to_string());
            }
        }
    }
    out
}

fn attrs(l: &AwsListener) -> Attrs {
    object(json!({
        "load_balancer_arn": l.load_balancer_arn(),
        "port": l.port(),
        "protocol": l.protocol().map(|p| p.as_str()),
        "target_group_arns": forwarded_to(l.default_actions()),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_elasticloadbalancingv2::types::{ActionTypeEnum, ForwardActionConfig, TargetGroupTuple};

    #[test]
    fn both_spellings_of_a_forward_name_their_target_groups_once() {
        let plain = Action::builder().r#type(ActionTypeEnum::Forward).target_group_arn("tg-a").build();
        let weighted = Action::builder()
            .r#type(ActionTypeEnum::Forward)
            .forward_config(
                ForwardActionConfig::builder()
                    .target_groups(TargetGroupTuple::builder().target_group_arn("tg-a").build())
                    .target_groups(TargetGroupTuple::builder().target_group_arn("tg-b").build())
                    .build(),
            )
            .build();
        let fixed = Action::builder().r#type(ActionTypeEnum::FixedResponse).build();
        assert_eq!(forwarded_to(&[plain, weighted, fixed]), ["tg-a", "tg-b"]);
    }
}

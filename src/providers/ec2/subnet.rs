//! `aws_subnet`: one subnet in one availability zone. Where it lives (VPC, CIDR, zone) cannot change in place;
//! whether instances launched in it get a public IP can.

use async_trait::async_trait;
use aws_sdk_ec2::types::{AttributeBooleanValue, ResourceType};
use serde_json::json;

use super::wait::{self, Budget};
use super::{bool_attr, gone_as_none, missing, object, ok_if_gone, required_str, tagging};
use crate::graph::Attrs;
use crate::providers::{Applied, Context, Desired, Observed, Provider, ProviderError};

pub struct Subnet;

const NOT_FOUND: &str = "InvalidSubnetID.NotFound";

#[async_trait]
impl Provider for Subnet {
    fn kind(&self) -> &'static str {
        "aws_subnet"
    }

    fn force_new(&self) -> &'static [&'static str] {
        &["vpc_id", "cidr_block", "availability_zone"]
    }

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>, ProviderError> {
        let Some(s) = describe(cx, id, &[]).await? else { return Ok(None) };
        let attrs = json!({
            "vpc_id": s.vpc_id(),
            "cidr_block": s.cidr_block(),
            "availability_zone": s.availability_zone(),
            "map_public_ip_on_launch": s.map_public_ip_on_launch().unwrap_or(false),
            "tags": tagging::attr(s.tags()),
        });
        Ok(Some(Observed { attrs: object(attrs), outputs: outputs(&s) }))
    }

    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>, ProviderError> {
        let resp = cx
            .retry
            .run(&[], || async {
                cx.ec2()
                    .describe_subnets()
                    .set_filters(Some(tagging::kbp_filters(desired)))
                    .send()
                    .await
                    .map_err(|e| ProviderError::from_sdk("ec2:DescribeSubnets", e))
            })
            .await?;
        let ids = resp
            .subnets()
            .iter()
            .filter(|s| tagging::carries_kbp_tags(s.tags(), desired))
            .filter_map(|s| s.subnet_id().map(str::to_string))
            .collect();
        tagging::single_match("ec2:DescribeSubnets", desired, ids)
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied, ProviderError> {
        let op = "ec2:CreateSubnet";
        let vpc_id = required_str(desired.attrs, "vpc_id", op)?;
        let cidr = required_str(desired.attrs, "cidr_block", op)?;
        let zone = required_str(desired.attrs, "availability_zone", op)?;
        let created = cx
            .retry
            .run(&["InvalidVpcID.NotFound"], || async {
                cx.ec2()
                    .create_subnet()
                    .vpc_id(vpc_id)
                    .cidr_block(cidr)
                    .availability_zone(zone)
                    .tag_specifications(tagging::spec(ResourceType::Subnet, desired))
                    .send()
                    .await
                    .map_err(|e| ProviderError::from_sdk(op, e))
            })
            .await?;
        let id = created.subnet().and_then(|s| s.subnet_id()).ok_or_else(|| missing(op, "subnet ID"))?;
        // New subnets never map public IPs on launch.
        if bool_attr(desired.attrs, "map_public_ip_on_launch", false) {
            set_map_public_ip(cx, id, true).await?;
        }
        applied(cx, id).await
    }

    async fn update(
        &self,
        cx: &Context,
        id: &str,
        _prior: &Attrs,
        desired: &Desired<'_>,
    ) -> Result<Applied, ProviderError> {
        tagging::reconcile(cx, id, desired).await?;
        let want = bool_attr(desired.attrs, "map_public_ip_on_launch", false);
        let current = describe(cx, id, &[]).await?.and_then(|s| s.map_public_ip_on_launch());
        if current != Some(want) {
            set_map_public_ip(cx, id, want).await?;
        }
        applied(cx, id).await
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<(), ProviderError> {
        // ENIs of a deleted NAT gateway, load balancer or EKS control plane linger in the subnet for minutes.
        let r = wait::while_in_use("ec2:DeleteSubnet", &format!("subnet {id}"), &[], Budget::minutes(10), || async {
            cx.ec2().delete_subnet().subnet_id(id).send().await.map_err(|e| ProviderError::from_sdk("ec2:DeleteSubnet", e))
        })
        .await;
        ok_if_gone(r)
    }
}

async fn describe(cx: &Context, id: &str, transient: &[&str]) -> Result<Option<aws_sdk_ec2::types::Subnet>, ProviderError> {
    let r = cx
        .retry
        .run(transient, || async {
            cx.ec2().describe_subnets().subnet_ids(id).send().await.map_err(|e| ProviderError::from_sdk("ec2:DescribeSubnets", e))
        })
        .await;
    Ok(gone_as_none(r)?.and_then(|resp| resp.subnets().iter().find(|s| s.subnet_id() == Some(id)).cloned()))
}

async fn set_map_public_ip(cx: &Context, id: &str, on: bool) -> Result<(), ProviderError> {
    cx.retry
        .run(&[NOT_FOUND], || async {
            cx.ec2()
                .modify_subnet_attribute()
                .subnet_id(id)
                .map_public_ip_on_launch(AttributeBooleanValue::builder().value(on).build())
                .send()
                .await
                .map_err(|e| ProviderError::from_sdk("ec2:ModifySubnetAttribute", e))
        })
        .await?;
    Ok(())
}

async fn applied(cx: &Context, id: &str) -> Result<Applied, ProviderError> {
    let s = describe(cx, id, &[NOT_FOUND]).await?.ok_or_else(|| {
        ProviderError::new("ec2:DescribeSubnets", NOT_FOUND, format!("subnet {id} is not visible after it was changed"))
            .with_hint("AWS may be slow to show it, or someone deleted it; run kbp again")
    })?;
    Ok(Applied { id: id.to_string(), outputs: outputs(&s) })
}

fn outputs(s: &aws_sdk_ec2::types::Subnet) -> Attrs {
    object(json!({ "id": s.subnet_id(), "arn": s.subnet_arn() }))
}

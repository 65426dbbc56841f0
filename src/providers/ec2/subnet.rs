//! `aws_subnet`: one subnet in one availability zone. Where it lives (VPC, CIDR, zone) cannot change in place;
//! whether instances launched in it get a public IP can.

use async_trait::async_trait;
use aws_sdk_ec2::types::{AttributeBooleanValue, ResourceType, Subnet as AwsSubnet};
use serde_json::json;

use super::describe;
use super::wait::Budget;
use super::{missing, object, remove_when_unused, send, stack_search, tagged_kind, tagging};
use crate::graph::{kinds, Attrs};
use crate::providers::send::send_unretried;
use crate::providers::tagged::Search;
use crate::providers::Found;
use crate::providers::{spec, Applied, Context, Descriptor, Desired, Observed, Provider, ProviderError, Result};

pub(crate) struct Subnet;

/// The attributes the compiler emits, references resolved ([`crate::graph::kinds`]).
type Spec = crate::graph::kinds::subnet::Subnet<String>;

const NOT_FOUND: &str = "InvalidSubnetID.NotFound";

#[async_trait]
impl Provider for Subnet {
    fn descriptor(&self) -> Descriptor {
        tagged_kind(kinds::SUBNET)
            .force_new(&["vpc_id", "cidr_block", "availability_zone"])
            .imported_by("its ID, `subnet-…`")
    }

    async fn tagged(&self, cx: &Context, search: &Search<'_>) -> Result<Vec<Found>> {
        let ours = describe::ours::<AwsSubnet>(cx, search).await?;
        Ok(ours.iter().map(|s| stack_search::in_vpc(kinds::SUBNET, s.subnet_id(), s.tags(), s.vpc_id())).collect())
    }

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        Ok(describe::one::<AwsSubnet>(cx, id, &[]).await?.as_ref().map(observe))
    }

    async fn read_many(&self, cx: &Context, items: &[(String, Attrs)]) -> Result<Vec<Option<Observed>>> {
        describe::observed(cx, items, observe).await
    }

    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        describe::find::<AwsSubnet>(cx, desired).await
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        let op = "ec2:CreateSubnet";
        let s: Spec = spec::parse(kinds::SUBNET, desired.attrs)?;
        let tags = tagging::spec(ResourceType::Subnet, desired);
        let created = send_unretried(cx, op, &["InvalidVpcID.NotFound"], || {
            let call = cx.ec2().create_subnet().vpc_id(&s.vpc_id).cidr_block(&s.cidr_block);
            let call = call.availability_zone(&s.availability_zone);
            call.tag_specifications(tags.clone()).customize().config_override(super::once()).send()
        })
        .await?;
        let id = created.subnet().and_then(|s| s.subnet_id()).ok_or_else(|| missing(op, "subnet ID"))?;
        // New subnets never map public IPs on launch.
        if s.map_public_ip_on_launch {
            set_map_public_ip(cx, id, true).await?;
        }
        applied(cx, id).await
    }

    async fn update(&self, cx: &Context, id: &str, _prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        let want = spec::parse::<Spec>(kinds::SUBNET, desired.attrs)?.map_public_ip_on_launch;
        tagging::reconcile(cx, id, desired).await?;
        let current = describe::one::<AwsSubnet>(cx, id, &[]).await?.and_then(|s| s.map_public_ip_on_launch());
        if current != Some(want) {
            set_map_public_ip(cx, id, want).await?;
        }
        applied(cx, id).await
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        // ENIs of a deleted NAT gateway, load balancer or EKS control plane linger in the subnet for minutes.
        let (op, what) = ("ec2:DeleteSubnet", format!("subnet {id}"));
        remove_when_unused(cx, op, &what, &[], Budget::minutes(10), || cx.ec2().delete_subnet().subnet_id(id).send())
            .await
    }
}

fn observe(s: &AwsSubnet) -> Observed {
    let attrs = json!({
        "vpc_id": s.vpc_id(),
        "cidr_block": s.cidr_block(),
        "availability_zone": s.availability_zone(),
        "map_public_ip_on_launch": s.map_public_ip_on_launch().unwrap_or(false),
        "tags": tagging::attr(s.tags()),
    });
    Observed { attrs: object(attrs), outputs: outputs(s) }
}

async fn set_map_public_ip(cx: &Context, id: &str, on: bool) -> Result<()> {
    let value = AttributeBooleanValue::builder().value(on).build();
    send(cx, "ec2:ModifySubnetAttribute", &[NOT_FOUND], || {
        cx.ec2().modify_subnet_attribute().subnet_id(id).map_public_ip_on_launch(value.clone()).send()
    })
    .await?;
    Ok(())
}

async fn applied(cx: &Context, id: &str) -> Result<Applied> {
    let s = describe::one::<AwsSubnet>(cx, id, &[NOT_FOUND]).await?.ok_or_else(|| {
        ProviderError::new("ec2:DescribeSubnets", NOT_FOUND, format!("subnet {id} is not visible after it was changed"))
            .with_hint("AWS may be slow to show it, or someone deleted it; run kbp again")
    })?;
    Ok(Applied { id: id.to_string(), outputs: outputs(&s) })
}

fn outputs(s: &AwsSubnet) -> Attrs {
    object(json!({ "id": s.subnet_id(), "arn": s.subnet_arn() }))
}

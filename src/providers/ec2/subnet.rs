//! `aws_subnet`: one subnet in one availability zone. Where it lives (VPC, CIDR, zone) cannot change in place;
//! whether instances launched in it get a public IP can.

use async_trait::async_trait;
use aws_sdk_ec2::types::{AttributeBooleanValue, ResourceType};
use serde_json::json;

use super::stack_search;
use super::wait::Budget;
use super::{
    bool_attr, describe_one, filtered, ids, matched, missing, object, remove_when_unused, required_str, send, tagging,
};
use crate::graph::{kinds, Attrs};
use crate::providers::send::send_unretried;
use crate::providers::tagged::Search;
use crate::providers::Found;
use crate::providers::{contract, contract::Constraint};
use crate::providers::{Applied, Context, Descriptor, Desired, Observed, Provider, ProviderError, Result};

pub(crate) struct Subnet;

const NOT_FOUND: &str = "InvalidSubnetID.NotFound";

/// What AWS accepts of what this kind sends ([`contract`]).
const SENDS: &[Constraint] = &[contract::EC2_TAGS];

#[async_trait]
impl Provider for Subnet {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(kinds::SUBNET)
            .found_by_tags()
            .sends(SENDS)
            .force_new(&["vpc_id", "cidr_block", "availability_zone"])
            .adoptable_by_tags()
            .imported_by("its ID, `subnet-…`")
    }

    async fn tagged(&self, cx: &Context, search: &Search<'_>) -> Result<Vec<Found>> {
        let filters = || stack_search::filters(search);
        let out =
            send(cx, "ec2:DescribeSubnets", &[], || cx.ec2().describe_subnets().set_filters(filters()).send()).await?;
        let ours = out.subnets().iter().filter(|s| stack_search::ours(search, s.tags()));
        Ok(ours.map(|s| stack_search::in_vpc(kinds::SUBNET, s.subnet_id(), s.tags(), s.vpc_id())).collect())
    }

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        Ok(describe(cx, id, &[]).await?.as_ref().map(observe))
    }

    async fn read_many(&self, cx: &Context, items: &[(String, Attrs)]) -> Result<Vec<Option<Observed>>> {
        let found = filtered(
            cx,
            "ec2:DescribeSubnets",
            "subnet-id",
            &ids(items),
            |f, token| cx.ec2().describe_subnets().filters(f).set_next_token(token).send(),
            |page| (page.subnets.unwrap_or_default(), page.next_token),
        )
        .await?;
        Ok(matched(items, &found, |s| s.subnet_id()).into_iter().map(|s| s.map(observe)).collect())
    }

    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        let describe = |filters| cx.ec2().describe_subnets().set_filters(filters).send();
        tagging::find(cx, "ec2:DescribeSubnets", desired, describe, |found| found.subnets()).await
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        let op = "ec2:CreateSubnet";
        let vpc_id = required_str(op, desired.attrs, "vpc_id")?;
        let cidr = required_str(op, desired.attrs, "cidr_block")?;
        let zone = required_str(op, desired.attrs, "availability_zone")?;
        let tags = tagging::spec(ResourceType::Subnet, desired);
        let created = send_unretried(cx, op, &["InvalidVpcID.NotFound"], || {
            let call = cx.ec2().create_subnet().vpc_id(vpc_id).cidr_block(cidr).availability_zone(zone);
            call.tag_specifications(tags.clone()).customize().config_override(super::once()).send()
        })
        .await?;
        let id = created.subnet().and_then(|s| s.subnet_id()).ok_or_else(|| missing(op, "subnet ID"))?;
        // New subnets never map public IPs on launch.
        if bool_attr(desired.attrs, "map_public_ip_on_launch", false) {
            set_map_public_ip(cx, id, true).await?;
        }
        applied(cx, id).await
    }

    async fn update(&self, cx: &Context, id: &str, _prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        tagging::reconcile(cx, id, desired).await?;
        let want = bool_attr(desired.attrs, "map_public_ip_on_launch", false);
        let current = describe(cx, id, &[]).await?.and_then(|s| s.map_public_ip_on_launch());
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

pub(crate) async fn describe(cx: &Context, id: &str, transient: &[&str]) -> Result<Option<aws_sdk_ec2::types::Subnet>> {
    let request = || cx.ec2().describe_subnets().subnet_ids(id).send();
    describe_one(cx, "ec2:DescribeSubnets", transient, id, request, |out| out.subnets(), |s| s.subnet_id()).await
}

fn observe(s: &aws_sdk_ec2::types::Subnet) -> Observed {
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
    let s = describe(cx, id, &[NOT_FOUND]).await?.ok_or_else(|| {
        ProviderError::new("ec2:DescribeSubnets", NOT_FOUND, format!("subnet {id} is not visible after it was changed"))
            .with_hint("AWS may be slow to show it, or someone deleted it; run kbp again")
    })?;
    Ok(Applied { id: id.to_string(), outputs: outputs(&s) })
}

fn outputs(s: &aws_sdk_ec2::types::Subnet) -> Attrs {
    object(json!({ "id": s.subnet_id(), "arn": s.subnet_arn() }))
}

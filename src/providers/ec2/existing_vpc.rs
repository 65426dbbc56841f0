//! `aws_existing_vpc`: a VPC the stack uses but does not own (`[vpc] id` in the blueprint). kbp only looks it
//! up: create and update check that it exists and report its ID and CIDR for the resources built in it; delete
//! leaves it alone, and destroy forgets it (the descriptor retains it). Its subnets are
//! [`super::existing_subnet`], the tags kbp adds to them [`super::subnet_tags`].

use async_trait::async_trait;
use aws_sdk_ec2::types::Vpc;
use serde_json::json;

use super::object;
use crate::graph::{kinds, Attrs};
use crate::providers::lookup::Lookup;
use crate::providers::preflight::quick;
use crate::providers::ProviderError;
use crate::providers::{Context, Result};
use aws_sdk_ec2::types::Filter;

pub(crate) struct ExistingVpc;

/// Why destroy leaves the network `vpc.id` names (the VPC and its subnets) in place.
pub(crate) const NETWORK_NOT_OURS: &str = "the network `vpc.id` names is not the stack's; kbp never deletes it";

#[async_trait]
impl Lookup for ExistingVpc {
    const KIND: &'static str = kinds::EXISTING_VPC;
    const KEPT_BECAUSE: &'static str = NETWORK_NOT_OURS;
    const NAMED_BY: &'static str = "vpc_id";
    const NOUN: &'static str = "VPC";
    const DESCRIBE: &'static str = "ec2:DescribeVpcs";
    const NOT_FOUND: &'static str = "InvalidVpcID.NotFound";
    const HINT: &'static str = "check `vpc.id` in the blueprint and the region";
    type Found = Vpc;
    type Spec = crate::graph::kinds::existing_vpc::ExistingVpc;

    fn named(spec: &Self::Spec) -> &str {
        &spec.vpc_id
    }

    async fn describe(cx: &Context, id: &str) -> Result<Option<Vpc>> {
        super::describe::one::<aws_sdk_ec2::types::Vpc>(cx, id, &[]).await
    }

    fn attrs(found: &Vpc) -> Attrs {
        object(json!({ "vpc_id": found.vpc_id() }))
    }

    fn outputs(found: &Vpc) -> Attrs {
        object(json!({ "id": found.vpc_id(), "cidr_block": found.cidr_block() }))
    }
}

/// What preflight reads of a network someone else owns: the subnets and security groups the blueprint lists,
/// and the VPC's route tables.
pub(crate) struct Survey {
    pub subnets: Vec<aws_sdk_ec2::types::Subnet>,
    pub route_tables: Vec<aws_sdk_ec2::types::RouteTable>,
    pub security_groups: Vec<aws_sdk_ec2::types::SecurityGroup>,
}

/// VPC `vpc_id`'s listed subnets and security groups and its route tables, under the preflight timeout; `None`
/// when the VPC does not exist (nothing else is asked then).
pub(crate) async fn survey(
    cx: &Context,
    vpc_id: &str,
    subnet_ids: Vec<String>,
    group_ids: &[String],
) -> Result<Option<Survey>> {
    let by = |name: &str, values: Vec<String>| Filter::builder().name(name).set_values(Some(values)).build();
    // Each call under the preflight timeout.
    macro_rules! quickly {
        ($op:literal, $call:expr) => {
            $call
                .customize()
                .config_override(quick!(aws_sdk_ec2))
                .send()
                .await
                .map_err(|e| ProviderError::from_sdk($op, e))
        };
    }
    let ec2 = cx.ec2();
    let vpcs = quickly!("ec2:DescribeVpcs", ec2.describe_vpcs().filters(by("vpc-id", vec![vpc_id.to_string()])))?;
    if vpcs.vpcs().is_empty() {
        return Ok(None);
    }
    let subnets = quickly!("ec2:DescribeSubnets", ec2.describe_subnets().filters(by("subnet-id", subnet_ids)))?;
    let tables = quickly!(
        "ec2:DescribeRouteTables",
        ec2.describe_route_tables().filters(by("vpc-id", vec![vpc_id.to_string()]))
    )?;
    let security_groups = if group_ids.is_empty() {
        Vec::new()
    } else {
        let r = ec2.describe_security_groups().filters(by("group-id", group_ids.to_vec()));
        quickly!("ec2:DescribeSecurityGroups", r)?.security_groups().to_vec()
    };
    Ok(Some(Survey {
        subnets: subnets.subnets().to_vec(),
        route_tables: tables.route_tables().to_vec(),
        security_groups,
    }))
}

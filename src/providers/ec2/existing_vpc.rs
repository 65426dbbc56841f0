//! `aws_existing_vpc`: a VPC the stack uses but does not own (`[vpc] id` in the blueprint). kbp only looks it
//! up: create and update check that it exists and report its ID and CIDR for the resources built in it; delete
//! leaves it alone, and destroy forgets it (the descriptor retains it). Its subnets are
//! [`super::existing_subnet`], the tags kbp adds to them [`super::subnet_tags`].

use async_trait::async_trait;
use aws_sdk_ec2::types::Vpc;
use serde_json::json;

use super::{object, vpc};
use crate::graph::{kinds, Attrs};
use crate::providers::lookup::Lookup;
use crate::providers::{Context, Result};

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

    async fn describe(cx: &Context, id: &str) -> Result<Option<Vpc>> {
        vpc::describe(cx, id, &[]).await
    }

    fn attrs(found: &Vpc) -> Attrs {
        object(json!({ "vpc_id": found.vpc_id() }))
    }

    fn outputs(found: &Vpc) -> Attrs {
        object(json!({ "id": found.vpc_id(), "cidr_block": found.cidr_block() }))
    }
}

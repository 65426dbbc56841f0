//! `aws_existing_vpc`: a VPC the stack uses but does not own (`[vpc] id` in the blueprint). kbp only looks it
//! up: create and update check that it exists and report its ID and CIDR for the resources built in it; delete
//! leaves it alone, and destroy forgets it (the descriptor retains it). Its subnets are
//! [`super::existing_subnet`], the tags kbp adds to them [`super::subnet_tags`].

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use super::{object, vpc};
use crate::graph::{kinds, Attrs};
use crate::providers::lookup::Lookup;
use crate::providers::{spec, Applied, Context, Desired, Observed, ProviderError, Result};

pub struct ExistingVpc;

/// The attributes the compiler emits.
#[derive(Deserialize)]
struct Spec {
    vpc_id: String,
}

#[async_trait]
impl Lookup for ExistingVpc {
    const KIND: &'static str = kinds::EXISTING_VPC;
    const FORCE_NEW: &'static [&'static str] = &["vpc_id"];

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let Some(found) = vpc::describe(cx, id, &[]).await? else { return Ok(None) };
        Ok(Some(Observed { attrs: object(json!({ "vpc_id": found.vpc_id() })), outputs: outputs(&found) }))
    }

    /// The desired VPC, which must exist.
    async fn verify(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        let Spec { vpc_id } = spec::parse(kinds::EXISTING_VPC, desired.attrs)?;
        let hint = "check `vpc.id` in the blueprint and the region";
        let found = vpc::describe(cx, &vpc_id, &[]).await.map_err(|e| malformed(e, hint))?.ok_or_else(|| {
            let message = format!("VPC {vpc_id} does not exist in {}", cx.region);
            ProviderError::new("ec2:DescribeVpcs", "InvalidVpcID.NotFound", message).with_hint(hint)
        })?;
        Ok(Applied { id: vpc_id, outputs: outputs(&found) })
    }
}

/// `e` with `hint` when AWS refused the ID as malformed (not `vpc-` and hex digits): a typo in the blueprint.
pub(crate) fn malformed(e: ProviderError, hint: &str) -> ProviderError {
    if e.code.ends_with(".Malformed") {
        e.with_hint(hint)
    } else {
        e
    }
}

fn outputs(v: &aws_sdk_ec2::types::Vpc) -> Attrs {
    object(json!({ "id": v.vpc_id(), "cidr_block": v.cidr_block() }))
}

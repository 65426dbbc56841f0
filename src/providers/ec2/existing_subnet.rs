//! `aws_existing_subnet`: a subnet of a VPC the stack uses but does not own (`vpc.private_subnet_ids` and
//! `vpc.public_subnet_ids` in the blueprint). Like [`super::existing_vpc`], a lookup: create and update check
//! that the subnet exists and lies in the stack's VPC, and report where it is (zone, CIDR) for the cluster and
//! node groups; delete leaves it alone, and destroy forgets it.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use super::existing_vpc::malformed;
use super::{object, subnet};
use crate::graph::{kinds, Attrs};
use crate::providers::lookup::Lookup;
use crate::providers::{spec, Applied, Context, Desired, Observed, ProviderError, Result};

pub struct ExistingSubnet;

/// The attributes the compiler emits; `vpc_id` is the existing VPC's `id` output.
#[derive(Deserialize)]
struct Spec {
    subnet_id: String,
    vpc_id: String,
}

pub(crate) const HINT: &str =
    "check `vpc.private_subnet_ids` and `vpc.public_subnet_ids` in the blueprint and the region";

#[async_trait]
impl Lookup for ExistingSubnet {
    const KIND: &'static str = kinds::EXISTING_SUBNET;
    const FORCE_NEW: &'static [&'static str] = &["subnet_id"];

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let Some(s) = subnet::describe(cx, id, &[]).await? else { return Ok(None) };
        let attrs = object(json!({ "subnet_id": s.subnet_id(), "vpc_id": s.vpc_id() }));
        Ok(Some(Observed { attrs, outputs: outputs(&s) }))
    }

    /// The desired subnet, which must exist in the desired VPC.
    async fn verify(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        let Spec { subnet_id, vpc_id } = spec::parse(kinds::EXISTING_SUBNET, desired.attrs)?;
        let op = "ec2:DescribeSubnets";
        let s = subnet::describe(cx, &subnet_id, &[]).await.map_err(|e| malformed(e, HINT))?.ok_or_else(|| {
            let message = format!("subnet {subnet_id} does not exist in {}", cx.region);
            ProviderError::new(op, "InvalidSubnetID.NotFound", message).with_hint(HINT)
        })?;
        let actual = s.vpc_id().unwrap_or_default();
        if actual != vpc_id {
            return Err(ProviderError::new(op, "", format!("{subnet_id} is in {actual}, not {vpc_id}")).with_hint(
                "every subnet of `vpc.private_subnet_ids` and `vpc.public_subnet_ids` must be in the VPC of `vpc.id`",
            ));
        }
        Ok(Applied { id: subnet_id, outputs: outputs(&s) })
    }
}

fn outputs(s: &aws_sdk_ec2::types::Subnet) -> Attrs {
    object(json!({
        "id": s.subnet_id(),
        "availability_zone": s.availability_zone(),
        "vpc_id": s.vpc_id(),
        "cidr_block": s.cidr_block(),
    }))
}

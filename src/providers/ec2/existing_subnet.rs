//! `aws_existing_subnet`: a subnet of a VPC the stack uses but does not own (`vpc.private_subnet_ids` and
//! `vpc.public_subnet_ids` in the blueprint). Like [`super::existing_vpc`], a lookup: create and update check
//! that the subnet exists and lies in the stack's VPC, and report where it is (zone, CIDR) for the cluster and
//! node groups; delete leaves it alone, and destroy forgets it.

use async_trait::async_trait;
use aws_sdk_ec2::types::Subnet;
use serde_json::json;

use super::object;
use crate::graph::{kinds, Attrs};
use crate::providers::lookup::Lookup;
use crate::providers::{Context, ProviderError, Result};

pub(crate) struct ExistingSubnet;

#[async_trait]
impl Lookup for ExistingSubnet {
    const KIND: &'static str = kinds::EXISTING_SUBNET;
    const KEPT_BECAUSE: &'static str = super::existing_vpc::NETWORK_NOT_OURS;
    const NAMED_BY: &'static str = "subnet_id";
    const NOUN: &'static str = "subnet";
    const DESCRIBE: &'static str = "ec2:DescribeSubnets";
    const NOT_FOUND: &'static str = "InvalidSubnetID.NotFound";
    const HINT: &'static str =
        "check `vpc.private_subnet_ids` and `vpc.public_subnet_ids` in the blueprint and the region";
    type Found = Subnet;
    type Spec = crate::graph::kinds::existing_subnet::ExistingSubnet<String>;

    fn named(spec: &Self::Spec) -> &str {
        &spec.subnet_id
    }

    async fn describe(cx: &Context, id: &str) -> Result<Option<Subnet>> {
        super::describe::one::<aws_sdk_ec2::types::Subnet>(cx, id, &[]).await
    }

    /// `vpc_id` is the VPC it is in: the compiler emits the existing VPC's `id` output there.
    fn attrs(s: &Subnet) -> Attrs {
        object(json!({ "subnet_id": s.subnet_id(), "vpc_id": s.vpc_id() }))
    }

    fn outputs(s: &Subnet) -> Attrs {
        object(json!({
            "id": s.subnet_id(),
            "availability_zone": s.availability_zone(),
            "vpc_id": s.vpc_id(),
            "cidr_block": s.cidr_block(),
        }))
    }

    /// In the blueprint's VPC.
    fn check(s: &Subnet, desired: &Self::Spec) -> Result<()> {
        let (id, actual) = (s.subnet_id().unwrap_or_default(), s.vpc_id().unwrap_or_default());
        let wanted = desired.vpc_id.as_str();
        if actual == wanted {
            return Ok(());
        }
        Err(ProviderError::new(Self::DESCRIBE, "", format!("{id} is in {actual}, not {wanted}")).with_hint(
            "every subnet of `vpc.private_subnet_ids` and `vpc.public_subnet_ids` must be in the VPC of `vpc.id`",
        ))
    }
}

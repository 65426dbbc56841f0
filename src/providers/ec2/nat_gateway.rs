//! `aws_nat_gateway`: outbound internet for private subnets. The slowest EC2 resource here: it takes minutes
//! to become `available` and minutes more to be `deleted`, and both are waited for so that what depends on it
//! (routes; the Elastic IP and subnet when destroying) is never touched too early.

use async_trait::async_trait;
use aws_sdk_ec2::types::{ConnectivityType, Filter, NatGateway as Nat, NatGatewayState, ResourceType};
use serde_json::json;

use super::describe::{self, Described};
use super::wait::{self, Budget, Poll};
use super::{id_output, missing, nullable, object, remove, retag, send, stack_search, tagged_kind, tagging};
use crate::graph::{kinds, Attrs};
use crate::providers::tagged::{found, Search};
use crate::providers::Found;
use crate::providers::{
    spec, Applied, Context, Descriptor, Desired, Observed, Provider, ProviderError, Result, Typical,
};

pub(crate) struct NatGateway;

/// The attributes the compiler emits, references resolved ([`crate::graph::kinds`]).
type Spec = crate::graph::kinds::nat_gateway::NatGateway<String>;

/// AWS answers `NatGatewayNotFound`; the EC2 naming scheme (and some emulators) says `InvalidNatGatewayID.NotFound`.
const NOT_FOUND: &[&str] = &["NatGatewayNotFound", "InvalidNatGatewayID.NotFound"];
/// Its typical times, which its waits expect too ([`Budget::expecting`]).
const TYPICAL: Typical = Typical { create: 90, update: 1, delete: 60 };
/// AWS documents creation as taking up to several minutes; ten leaves a margin. Each wait expects the
/// operation's typical time ([`TYPICAL`]).
const CREATE_BUDGET: Budget = Budget::minutes(10).expecting(TYPICAL.create);
const DELETE_BUDGET: Budget = Budget::minutes(10).expecting(TYPICAL.delete);

#[async_trait]
impl Provider for NatGateway {
    fn descriptor(&self) -> Descriptor {
        tagged_kind(kinds::NAT_GATEWAY)
            .force_new(&["subnet_id", "allocation_id", "connectivity_type"])
            .imported_by("its ID, `nat-…`")
            .takes(TYPICAL)
    }

    async fn tagged(&self, cx: &Context, search: &Search<'_>) -> Result<Vec<Found>> {
        let (nats, gateways) =
            futures::try_join!(describe::ours::<Nat>(cx, search), super::internet_gateway::stack_gateways(cx, search))?;
        let live = |n: &&Nat| !matches!(n.state(), Some(NatGatewayState::Deleted | NatGatewayState::Failed));
        Ok(nats
            .iter()
            .filter(live)
            .map(|n| {
                let mut uses: Vec<String> = n.subnet_id().map(str::to_string).into_iter().collect();
                uses.extend(n.nat_gateway_addresses().iter().filter_map(|a| a.allocation_id().map(str::to_string)));
                // Its public address keeps the internet gateway of its VPC from detaching: it goes first.
                let attached = |g: &&aws_sdk_ec2::types::InternetGateway| {
                    n.vpc_id().is_some() && g.attachments().iter().any(|a| a.vpc_id() == n.vpc_id())
                };
                uses.extend(
                    gateways.iter().filter(attached).filter_map(|g| g.internet_gateway_id().map(str::to_string)),
                );
                let detail = format!("in {}", n.subnet_id().unwrap_or("?"));
                found(
                    kinds::NAT_GATEWAY,
                    n.nat_gateway_id().unwrap_or_default(),
                    stack_search::name(n.tags()),
                    detail,
                    uses,
                )
            })
            .collect())
    }

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        Ok(describe::one::<Nat>(cx, id, &[]).await?.as_ref().and_then(observe))
    }

    async fn read_many(&self, cx: &Context, items: &[(String, Attrs)]) -> Result<Vec<Option<Observed>>> {
        Ok(describe::each::<Nat>(cx, items).await?.iter().map(|n| n.as_ref().and_then(observe)).collect())
    }

    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        let mut filters = tagging::kbp_filters(desired);
        filters.push(Filter::builder().name("state").values("pending").values("available").build());
        let live: Vec<Nat> = describe::all::<Nat>(cx, filters).await?.into_iter().filter(|n| !is_gone(n)).collect();
        tagging::adopt(Nat::OP, desired, &live)
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        let op = "ec2:CreateNatGateway";
        let s: Spec = spec::parse(kinds::NAT_GATEWAY, desired.attrs)?;
        let connectivity = ConnectivityType::from(s.connectivity_type.as_str());
        // The client token makes a create retried after a crash return the gateway the first attempt made.
        let token = desired.token();
        let tags = tagging::spec(ResourceType::Natgateway, desired);
        let created = send(cx, op, &["InvalidSubnetID.NotFound", "InvalidAllocationID.NotFound"], || {
            cx.ec2()
                .create_nat_gateway()
                .subnet_id(&s.subnet_id)
                .set_allocation_id(s.allocation_id.clone())
                .connectivity_type(connectivity.clone())
                .set_client_token(token.clone())
                .tag_specifications(tags.clone())
                .send()
        })
        .await?;
        let id = created.nat_gateway().and_then(|n| n.nat_gateway_id()).ok_or_else(|| missing(op, "NAT gateway ID"))?;
        wait::until(
            "ec2:DescribeNatGateways",
            &format!("NAT gateway {id} to become available"),
            CREATE_BUDGET,
            || async {
                let Some(nat) = describe::one::<Nat>(cx, id, NOT_FOUND).await? else {
                    return Ok(Poll::Pending("not visible yet".to_string()));
                };
                match nat.state() {
                    Some(NatGatewayState::Available) => Ok(Poll::Done(())),
                    Some(NatGatewayState::Failed) => Err(failed(id, &nat)),
                    Some(s @ (NatGatewayState::Deleting | NatGatewayState::Deleted)) => Err(ProviderError::new(
                        op,
                        "",
                        format!(
                            "NAT gateway {id} went to `{}` while kbp waited for it to become available",
                            s.as_str()
                        ),
                    )
                    .with_hint("someone deleted it outside kbp; run kbp again to create a new one")),
                    other => Ok(Poll::Pending(other.map_or("no state", |s| s.as_str()).to_string())),
                }
            },
        )
        .await?;
        Ok(Applied { id: id.to_string(), outputs: id_output(id) })
    }

    async fn update(&self, cx: &Context, id: &str, _prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        retag(cx, id, desired).await
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        let Some(nat) = describe::one::<Nat>(cx, id, &[]).await? else { return Ok(()) };
        // Failed gateways are removed by AWS itself; `deleting` ones only need the wait below.
        if matches!(nat.state(), Some(NatGatewayState::Deleted | NatGatewayState::Failed)) {
            return Ok(());
        }
        if nat.state() != Some(&NatGatewayState::Deleting) {
            remove(cx, "ec2:DeleteNatGateway", &[], || cx.ec2().delete_nat_gateway().nat_gateway_id(id).send()).await?;
        }
        // Its Elastic IP and its ENI in the subnet are released only when it reaches `deleted`.
        wait::until("ec2:DescribeNatGateways", &format!("NAT gateway {id} to be deleted"), DELETE_BUDGET, || async {
            Ok(match describe::one::<Nat>(cx, id, &[]).await? {
                None => Poll::Done(()),
                Some(n) if matches!(n.state(), Some(NatGatewayState::Deleted | NatGatewayState::Failed)) => {
                    Poll::Done(())
                }
                Some(n) => Poll::Pending(n.state().map_or("no state", |s| s.as_str()).to_string()),
            })
        })
        .await
    }
}

/// What `read` reports of `nat`; `None` once it is (being) deleted.
fn observe(nat: &Nat) -> Option<Observed> {
    if is_gone(nat) {
        return None;
    }
    let addresses = nat.nat_gateway_addresses();
    let primary = addresses.iter().find(|a| a.is_primary() == Some(true)).or(addresses.first());
    let attrs = json!({
        "subnet_id": nat.subnet_id(),
        "allocation_id": nullable(primary.and_then(|a| a.allocation_id())),
        "connectivity_type": nat.connectivity_type().map_or("public", |c| c.as_str()),
        "tags": tagging::attr(nat.tags()),
    });
    Some(Observed { attrs: object(attrs), outputs: id_output(nat.nat_gateway_id().unwrap_or_default()) })
}

/// Deleted gateways stay visible for about an hour; for kbp they are gone, as are failed ones (AWS deletes
/// those itself) and ones being deleted (nothing can stop that).
fn is_gone(nat: &Nat) -> bool {
    matches!(nat.state(), Some(NatGatewayState::Deleted | NatGatewayState::Deleting | NatGatewayState::Failed))
}

fn failed(id: &str, nat: &Nat) -> ProviderError {
    ProviderError::new(
        "ec2:CreateNatGateway",
        nat.failure_code().unwrap_or("NatGatewayFailed"),
        format!("NAT gateway {id} failed: {}", nat.failure_message().unwrap_or("AWS gave no reason")),
    )
    .with_hint(
        "fix what AWS names above (often the Elastic IP is already associated elsewhere, or the subnet is out of \
         free addresses), then run kbp again; AWS removes the failed gateway by itself",
    )
}

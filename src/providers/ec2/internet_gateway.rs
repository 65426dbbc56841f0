//! `aws_internet_gateway`: the gateway and its attachment to the VPC, managed as one resource (an unattached
//! internet gateway is of no use, and AWS has no call that creates one attached).

use async_trait::async_trait;
use aws_sdk_ec2::types::{AttachmentStatus, InternetGateway as Gateway, InternetGatewayAttachment, ResourceType};
use serde_json::json;

use super::describe::{self, Described};
use super::wait::Budget;
use super::{
    id_output, missing, nullable, object, optional_str, remove_when_unused, retag, send, stack_search, tagged_kind,
    tagging,
};
use crate::graph::{kinds, Attrs};
use crate::providers::send::send_unretried;
use crate::providers::tagged::{found, Search};
use crate::providers::Found;
use crate::providers::{spec, Applied, Context, Descriptor, Desired, Observed, Provider, Result};

pub(crate) struct InternetGateway;

/// The attributes the compiler emits, references resolved ([`crate::graph::kinds`]).
type Spec = crate::graph::kinds::internet_gateway::InternetGateway<String>;

const NOT_FOUND: &str = "InvalidInternetGatewayID.NotFound";

#[async_trait]
impl Provider for InternetGateway {
    fn descriptor(&self) -> Descriptor {
        tagged_kind(kinds::INTERNET_GATEWAY).force_new(&["vpc_id"]).imported_by("its ID, `igw-…`")
    }

    async fn tagged(&self, cx: &Context, search: &Search<'_>) -> Result<Vec<Found>> {
        let gateways = stack_gateways(cx, search).await?;
        Ok(gateways
            .iter()
            .map(|g| {
                let vpcs: Vec<String> = g.attachments().iter().filter_map(|a| a.vpc_id().map(str::to_string)).collect();
                let detail = if vpcs.is_empty() { String::new() } else { format!("attached to {}", vpcs.join(", ")) };
                let id = g.internet_gateway_id().unwrap_or_default();
                found(kinds::INTERNET_GATEWAY, id, stack_search::name(g.tags()), detail, vpcs)
            })
            .collect())
    }

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        Ok(describe::one::<Gateway>(cx, id, &[]).await?.as_ref().map(observe))
    }

    async fn read_many(&self, cx: &Context, items: &[(String, Attrs)]) -> Result<Vec<Option<Observed>>> {
        describe::observed(cx, items, observe).await
    }

    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        describe::find::<Gateway>(cx, desired).await
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        let s: Spec = spec::parse(kinds::INTERNET_GATEWAY, desired.attrs)?;
        let tags = tagging::spec(ResourceType::InternetGateway, desired);
        let created = send_unretried(cx, "ec2:CreateInternetGateway", &[], || {
            cx.ec2()
                .create_internet_gateway()
                .tag_specifications(tags.clone())
                .customize()
                .config_override(super::once())
                .send()
        })
        .await?;
        let id = created
            .internet_gateway()
            .and_then(|g| g.internet_gateway_id())
            .ok_or_else(|| missing("ec2:CreateInternetGateway", "internet gateway ID"))?;
        if let Err(e) = attach(cx, id, &s.vpc_id).await {
            // The gateway is useless unattached and its ID would be lost with this error: take it back.
            if let Err(cleanup) = delete_gateway(cx, id).await {
                tracing::warn!(id, error = %cleanup, "could not delete the internet gateway whose attach failed");
            }
            return Err(e);
        }
        Ok(Applied { id: id.to_string(), outputs: id_output(id) })
    }

    /// Tags; and the attachment, for a gateway adopted before its create got that far (an answer lost, a run
    /// killed between CreateInternetGateway and AttachInternetGateway).
    async fn update(&self, cx: &Context, id: &str, prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        let s: Spec = spec::parse(kinds::INTERNET_GATEWAY, desired.attrs)?;
        // `prior` is what was read: a detached gateway's `vpc_id` is null.
        if optional_str(prior, "vpc_id").is_none() {
            match attach(cx, id, &s.vpc_id).await {
                // A retry of an attach whose answer was lost.
                Err(e) if e.is("Resource.AlreadyAssociated") => {}
                r => r?,
            }
        }
        retag(cx, id, desired).await
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        let Some(igw) = describe::one::<Gateway>(cx, id, &[]).await? else { return Ok(()) };
        for vpc_id in igw.attachments().iter().filter(|a| is_attached(a)).filter_map(|a| a.vpc_id()) {
            // Detaching fails with DependencyViolation while a NAT gateway or instance in the VPC still has a
            // public address mapped; those are released minutes after their own delete returns.
            let what = format!("internet gateway {id} (public addresses still mapped in {vpc_id})");
            let r = remove_when_unused(cx, "ec2:DetachInternetGateway", &what, &[], Budget::minutes(5), || {
                cx.ec2().detach_internet_gateway().internet_gateway_id(id).vpc_id(vpc_id).send()
            })
            .await;
            match r {
                Err(e) if e.is("Gateway.NotAttached") => {}
                r => r?,
            }
        }
        delete_gateway(cx, id).await
    }
}

fn observe(igw: &Gateway) -> Observed {
    // Detached reads as a null vpc_id, so the plan reattaches it (by replacement) instead of trusting state.
    let vpc_id = igw.attachments().iter().find(|a| is_attached(a)).and_then(|a| a.vpc_id());
    let attrs = json!({ "vpc_id": nullable(vpc_id), "tags": tagging::attr(igw.tags()) });
    Observed { attrs: object(attrs), outputs: id_output(igw.internet_gateway_id().unwrap_or_default()) }
}

/// Attachment states are `attaching`, `detaching`, `detached` and, once attached, `available` (not the
/// `attached` the SDK's enum suggests): anything but the two detach states counts as attached.
fn is_attached(a: &InternetGatewayAttachment) -> bool {
    !matches!(a.state(), Some(AttachmentStatus::Detached | AttachmentStatus::Detaching))
}

/// Attaches the gateway to the VPC; right after their creates, either may not be visible yet.
async fn attach(cx: &Context, id: &str, vpc_id: &str) -> Result<()> {
    send(cx, "ec2:AttachInternetGateway", &[NOT_FOUND, "InvalidVpcID.NotFound"], || {
        cx.ec2().attach_internet_gateway().internet_gateway_id(id).vpc_id(vpc_id).send()
    })
    .await
    .map(drop)
}

async fn delete_gateway(cx: &Context, id: &str) -> Result<()> {
    let (op, what) = ("ec2:DeleteInternetGateway", format!("internet gateway {id}"));
    remove_when_unused(cx, op, &what, &[], Budget::minutes(2), || {
        cx.ec2().delete_internet_gateway().internet_gateway_id(id).send()
    })
    .await
}

/// The stack's internet gateways, asked for once per search: their own kind lists them, and a NAT gateway goes
/// before the gateway of its VPC (its public address keeps the gateway from detaching).
pub(crate) async fn stack_gateways(cx: &Context, search: &Search<'_>) -> Result<std::sync::Arc<Vec<Gateway>>> {
    search.shared(Gateway::OP, || describe::ours::<Gateway>(cx, search)).await
}

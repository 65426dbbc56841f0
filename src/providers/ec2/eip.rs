//! `aws_eip`: an Elastic IP address for a NAT gateway. Its provider ID is the allocation ID; the address itself
//! is an output.

use async_trait::async_trait;
use aws_sdk_ec2::types::{Address, DomainType, ResourceType};
use serde_json::json;

use super::describe::{self, Described};
use super::wait::Budget;
use super::{missing, object, remove, remove_when_unused, stack_search, tagged_kind, tagging};
use crate::graph::{kinds, Attrs};
use crate::providers::send::send_unretried;
use crate::providers::tagged::{found, Search};
use crate::providers::Found;
use crate::providers::{spec, Applied, Context, Descriptor, Desired, Observed, Provider, Result};

pub(crate) struct Eip;

/// The attributes the compiler emits ([`crate::graph::kinds`]).
type Spec = crate::graph::kinds::eip::Eip;

#[async_trait]
impl Provider for Eip {
    fn descriptor(&self) -> Descriptor {
        tagged_kind(kinds::EIP).force_new(&["domain"]).imported_by("its ID, `eipalloc-…`")
    }

    async fn tagged(&self, cx: &Context, search: &Search<'_>) -> Result<Vec<Found>> {
        let ours = describe::ours::<Address>(cx, search).await?;
        Ok(ours
            .iter()
            .filter_map(|a| {
                let detail = a.public_ip().unwrap_or_default().to_string();
                Some(found(kinds::EIP, a.allocation_id()?, stack_search::name(a.tags()), detail, Vec::new()))
            })
            .collect())
    }

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        Ok(Address::by_id(cx, id, &[]).await?.as_ref().map(observe))
    }

    async fn read_many(&self, cx: &Context, items: &[(String, Attrs)]) -> Result<Vec<Option<Observed>>> {
        describe::observed(cx, items, observe).await
    }

    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        describe::find::<Address>(cx, desired).await
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        let domain = DomainType::from(spec::parse::<Spec>(kinds::EIP, desired.attrs)?.domain.as_str());
        let tags = tagging::spec(ResourceType::ElasticIp, desired);
        let resp = send_unretried(cx, "ec2:AllocateAddress", &[], || {
            let call = cx.ec2().allocate_address().domain(domain.clone()).tag_specifications(tags.clone());
            call.customize().config_override(super::once()).send()
        })
        .await?;
        let id = resp.allocation_id().ok_or_else(|| missing("ec2:AllocateAddress", "allocation ID"))?;
        Ok(Applied { id: id.to_string(), outputs: outputs(id, resp.public_ip()) })
    }

    async fn update(&self, cx: &Context, id: &str, _prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        tagging::reconcile(cx, id, desired).await?;
        let public_ip = Address::by_id(cx, id, &[]).await?.and_then(|a| a.public_ip().map(str::to_string));
        Ok(Applied { id: id.to_string(), outputs: outputs(id, public_ip.as_deref()) })
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        // Held by something not deleted with the stack (an instance or interface associated by hand): let go.
        if let Some(association) =
            Address::by_id(cx, id, &[]).await?.and_then(|a| a.association_id().map(str::to_string))
        {
            remove(cx, "ec2:DisassociateAddress", &[], || {
                cx.ec2().disassociate_address().association_id(&association).send()
            })
            .await?;
        }
        // A deleted NAT gateway lets go of its address only once it reaches `deleted`, and AWS may still report
        // the address in use for a while after that.
        let (op, what) = ("ec2:ReleaseAddress", format!("Elastic IP {id}"));
        remove_when_unused(cx, op, &what, &["InvalidIPAddress.InUse"], Budget::minutes(5), || {
            cx.ec2().release_address().allocation_id(id).send()
        })
        .await
    }
}

fn observe(a: &Address) -> Observed {
    let attrs = json!({ "domain": a.domain().map(|d| d.as_str()), "tags": tagging::attr(a.tags()) });
    Observed { attrs: object(attrs), outputs: outputs(a.allocation_id().unwrap_or_default(), a.public_ip()) }
}

fn outputs(id: &str, public_ip: Option<&str>) -> Attrs {
    object(json!({ "id": id, "public_ip": public_ip }))
}

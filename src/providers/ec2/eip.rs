//! `aws_eip`: an Elastic IP address for a NAT gateway. Its provider ID is the allocation ID; the address itself
//! is an output.

use async_trait::async_trait;
use aws_sdk_ec2::types::{DomainType, ResourceType};
use serde_json::json;

use super::stack_search;
use super::wait::Budget;
use super::{describe_one, filtered, ids, matched, missing, object, optional_str, remove, remove_when_unused, tagging};
use crate::graph::{kinds, Attrs};
use crate::providers::send::send_unretried;
use crate::providers::tagged::{found, Search};
use crate::providers::Found;
use crate::providers::{contract, contract::Constraint};
use crate::providers::{Applied, Context, Descriptor, Desired, Observed, Provider, Result};

pub(crate) struct Eip;

/// What AWS accepts of what this kind sends ([`contract`]).
const SENDS: &[Constraint] = &[contract::EC2_TAGS];

#[async_trait]
impl Provider for Eip {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(kinds::EIP)
            .found_by_tags()
            .sends(SENDS)
            .force_new(&["domain"])
            .adoptable_by_tags()
            .imported_by("its ID, `eipalloc-…`")
    }

    async fn tagged(&self, cx: &Context, search: &Search<'_>) -> Result<Vec<Found>> {
        let filters = || stack_search::filters(search);
        let out = crate::providers::send::send(cx, "ec2:DescribeAddresses", &[], || {
            cx.ec2().describe_addresses().set_filters(filters()).send()
        })
        .await?;
        let ours = out.addresses().iter().filter(|a| stack_search::ours(search, a.tags()));
        Ok(ours
            .filter_map(|a| {
                let detail = a.public_ip().unwrap_or_default().to_string();
                Some(found(kinds::EIP, a.allocation_id()?, stack_search::name(a.tags()), detail, Vec::new()))
            })
            .collect())
    }

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        Ok(describe(cx, id).await?.as_ref().map(observe))
    }

    async fn read_many(&self, cx: &Context, items: &[(String, Attrs)]) -> Result<Vec<Option<Observed>>> {
        // DescribeAddresses answers in one page.
        let found = filtered(
            cx,
            "ec2:DescribeAddresses",
            "allocation-id",
            &ids(items),
            |f, _| cx.ec2().describe_addresses().filters(f).send(),
            |page| (page.addresses.unwrap_or_default(), None),
        )
        .await?;
        Ok(matched(items, &found, |a| a.allocation_id()).into_iter().map(|a| a.map(observe)).collect())
    }

    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        let describe = |filters| cx.ec2().describe_addresses().set_filters(filters).send();
        tagging::find(cx, "ec2:DescribeAddresses", desired, describe, |found| found.addresses()).await
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        let domain = DomainType::from(optional_str(desired.attrs, "domain").unwrap_or("vpc"));
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
        let public_ip = describe(cx, id).await?.and_then(|a| a.public_ip().map(str::to_string));
        Ok(Applied { id: id.to_string(), outputs: outputs(id, public_ip.as_deref()) })
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        // Held by something not deleted with the stack (an instance or interface associated by hand): let go.
        if let Some(association) = describe(cx, id).await?.and_then(|a| a.association_id().map(str::to_string)) {
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

async fn describe(cx: &Context, id: &str) -> Result<Option<aws_sdk_ec2::types::Address>> {
    let request = || cx.ec2().describe_addresses().allocation_ids(id).send();
    describe_one(cx, "ec2:DescribeAddresses", &[], id, request, |out| out.addresses(), |a| a.allocation_id()).await
}

fn observe(a: &aws_sdk_ec2::types::Address) -> Observed {
    let attrs = json!({ "domain": a.domain().map(|d| d.as_str()), "tags": tagging::attr(a.tags()) });
    Observed { attrs: object(attrs), outputs: outputs(a.allocation_id().unwrap_or_default(), a.public_ip()) }
}

fn outputs(id: &str, public_ip: Option<&str>) -> Attrs {
    object(json!({ "id": id, "public_ip": public_ip }))
}

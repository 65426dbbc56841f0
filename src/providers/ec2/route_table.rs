//! `aws_route_table`: an empty route table in the VPC. Its routes and subnet associations are resources of
//! their own (`aws_route`, `aws_route_table_association`), so each can change without touching the table.

use std::sync::Arc;

use async_trait::async_trait;
use aws_sdk_ec2::types::{ResourceType, RouteTable as Table};
use serde_json::json;

use super::describe;
use super::wait::Budget;
use super::{
    id_output, ids, matched, missing, object, remove, remove_when_unused, retag, send, stack_search, tagged_kind,
    tagging,
};
use crate::graph::{kinds, Attrs};
use crate::providers::tagged::Search;
use crate::providers::Found;
use crate::providers::{spec, Applied, Context, Descriptor, Desired, Observed, Provider, Result};

pub(crate) struct RouteTable;

/// The attributes the compiler emits, references resolved ([`crate::graph::kinds`]).
type Spec = crate::graph::kinds::route_table::RouteTable<String>;

#[async_trait]
impl Provider for RouteTable {
    fn descriptor(&self) -> Descriptor {
        tagged_kind(kinds::ROUTE_TABLE).force_new(&["vpc_id"]).imported_by("its ID, `rtb-…`")
    }

    async fn tagged(&self, cx: &Context, search: &Search<'_>) -> Result<Vec<Found>> {
        let ours = describe::ours::<Table>(cx, search).await?;
        Ok(ours
            .iter()
            .map(|t| stack_search::in_vpc(kinds::ROUTE_TABLE, t.route_table_id(), t.tags(), t.vpc_id()))
            .collect())
    }

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        Ok(describe::one::<Table>(cx, id, &[]).await?.as_ref().map(observe))
    }

    async fn read_many(&self, cx: &Context, items: &[(String, Attrs)]) -> Result<Vec<Option<Observed>>> {
        let tables = shared(cx, ids(items)).await?;
        Ok(matched(items, &tables, |t| t.route_table_id()).into_iter().map(|t| t.map(observe)).collect())
    }

    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        describe::find::<Table>(cx, desired).await
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        let op = "ec2:CreateRouteTable";
        let s: Spec = spec::parse(kinds::ROUTE_TABLE, desired.attrs)?;
        let tags = tagging::spec(ResourceType::RouteTable, desired);
        let created = send(cx, op, &["InvalidVpcID.NotFound"], || {
            let call = cx.ec2().create_route_table().vpc_id(&s.vpc_id).set_client_token(desired.token());
            call.tag_specifications(tags.clone()).send()
        })
        .await?;
        let id = created.route_table().and_then(|t| t.route_table_id()).ok_or_else(|| missing(op, "route table ID"))?;
        Ok(Applied { id: id.to_string(), outputs: id_output(id) })
    }

    async fn update(&self, cx: &Context, id: &str, _prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        retag(cx, id, desired).await
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        let Some(table) = describe::one::<Table>(cx, id, &[]).await? else { return Ok(()) };
        // The VPC's main table goes with the VPC, and AWS refuses to delete it before.
        if table.associations().iter().any(|a| a.main() == Some(true)) {
            return Ok(());
        }
        // Associations state does not hold (a stack found by its tags) are removed here; those it holds are
        // deleted first, but AWS may still count them for a moment.
        for association in table.associations().iter().filter_map(|a| a.route_table_association_id()) {
            remove(cx, "ec2:DisassociateRouteTable", &[], || {
                cx.ec2().disassociate_route_table().association_id(association).send()
            })
            .await?;
        }
        let (op, what) = ("ec2:DeleteRouteTable", format!("route table {id}"));
        remove_when_unused(cx, op, &what, &[], Budget::minutes(2), || {
            cx.ec2().delete_route_table().route_table_id(id).send()
        })
        .await
    }
}

fn observe(t: &Table) -> Observed {
    let attrs = json!({ "vpc_id": t.vpc_id(), "tags": tagging::attr(t.tags()) });
    Observed { attrs: object(attrs), outputs: id_output(t.route_table_id().unwrap_or_default()) }
}

/// The route tables `ids` that still exist, for the batched reads of the table, route and association kinds,
/// which ask for the same tables in a stack kbp made (each table has its routes and subnets): one
/// DescribeRouteTables answer serves all three ([`crate::providers::answers`]).
pub(super) async fn shared(cx: &Context, mut ids: Vec<String>) -> Result<Arc<Vec<Table>>> {
    ids.sort();
    ids.dedup();
    let key = format!("ec2:DescribeRouteTables route-table-id={}", ids.join(","));
    cx.answers.get(&key, || describe::with_ids::<Table>(cx, &ids)).await
}

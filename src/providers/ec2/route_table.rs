//! `aws_route_table`: an empty route table in the VPC. Its routes and subnet associations are resources of
//! their own (`aws_route`, `aws_route_table_association`), so each can change without touching the table.

use std::sync::Arc;

use async_trait::async_trait;
use aws_sdk_ec2::types::ResourceType;
use serde_json::json;

use super::stack_search;
use super::wait::Budget;
use super::{
    describe_one, filtered, id_output, ids, matched, missing, object, remove, remove_when_unused, required_str, retag,
    send, tagging,
};
use crate::graph::{kinds, Attrs};
use crate::providers::tagged::Search;
use crate::providers::Found;
use crate::providers::{contract, contract::Constraint};
use crate::providers::{Applied, Context, Descriptor, Desired, Observed, Provider, Result};

pub(crate) struct RouteTable;

/// What AWS accepts of what this kind sends ([`contract`]).
const SENDS: &[Constraint] = &[contract::EC2_TAGS];

#[async_trait]
impl Provider for RouteTable {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(kinds::ROUTE_TABLE)
            .found_by_tags()
            .sends(SENDS)
            .force_new(&["vpc_id"])
            .adoptable_by_tags()
            .imported_by("its ID, `rtb-…`")
    }

    async fn tagged(&self, cx: &Context, search: &Search<'_>) -> Result<Vec<Found>> {
        let filters = || stack_search::filters(search);
        let out = crate::providers::send::send(cx, "ec2:DescribeRouteTables", &[], || {
            cx.ec2().describe_route_tables().set_filters(filters()).send()
        })
        .await?;
        let ours = out.route_tables().iter().filter(|t| stack_search::ours(search, t.tags()));
        Ok(ours.map(|t| stack_search::in_vpc(kinds::ROUTE_TABLE, t.route_table_id(), t.tags(), t.vpc_id())).collect())
    }

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        Ok(describe(cx, id, &[]).await?.as_ref().map(observe))
    }

    async fn read_many(&self, cx: &Context, items: &[(String, Attrs)]) -> Result<Vec<Option<Observed>>> {
        let tables = shared(cx, ids(items)).await?;
        Ok(matched(items, &tables, |t| t.route_table_id()).into_iter().map(|t| t.map(observe)).collect())
    }

    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        let describe = |filters| cx.ec2().describe_route_tables().set_filters(filters).send();
        tagging::find(cx, "ec2:DescribeRouteTables", desired, describe, |found| found.route_tables()).await
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        let op = "ec2:CreateRouteTable";
        let vpc_id = required_str(op, desired.attrs, "vpc_id")?;
        let tags = tagging::spec(ResourceType::RouteTable, desired);
        let created = send(cx, op, &["InvalidVpcID.NotFound"], || {
            let call = cx.ec2().create_route_table().vpc_id(vpc_id).set_client_token(desired.token());
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
        let Some(table) = describe(cx, id, &[]).await? else { return Ok(()) };
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

fn observe(t: &aws_sdk_ec2::types::RouteTable) -> Observed {
    let attrs = json!({ "vpc_id": t.vpc_id(), "tags": tagging::attr(t.tags()) });
    Observed { attrs: object(attrs), outputs: id_output(t.route_table_id().unwrap_or_default()) }
}

/// The route tables `ids` that still exist, for the batched reads of the table, route and association kinds,
/// which ask for the same tables in a stack kbp made (each table has its routes and subnets): one
/// DescribeRouteTables answer serves all three ([`crate::providers::answers`]).
pub(super) async fn shared(cx: &Context, mut ids: Vec<String>) -> Result<Arc<Vec<aws_sdk_ec2::types::RouteTable>>> {
    ids.sort();
    ids.dedup();
    let key = format!("ec2:DescribeRouteTables route-table-id={}", ids.join(","));
    cx.answers
        .get(&key, || {
            filtered(
                cx,
                "ec2:DescribeRouteTables",
                "route-table-id",
                &ids,
                |f, token| cx.ec2().describe_route_tables().filters(f).set_next_token(token).send(),
                |page| (page.route_tables.unwrap_or_default(), page.next_token),
            )
        })
        .await
}

/// The route table `id`, or `None` when AWS does not know it; shared with the route and association kinds,
/// which live inside a table.
pub(super) async fn describe(
    cx: &Context,
    id: &str,
    transient: &[&str],
) -> Result<Option<aws_sdk_ec2::types::RouteTable>> {
    let request = || cx.ec2().describe_route_tables().route_table_ids(id).send();
    let op = "ec2:DescribeRouteTables";
    describe_one(cx, op, transient, id, request, |out| out.route_tables(), |t| t.route_table_id()).await
}

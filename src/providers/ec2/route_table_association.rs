//! `aws_route_table_association`: which route table a subnet uses. Moving the subnet to another table is one
//! ReplaceRouteTableAssociation call, which gives the association a new ID.

use async_trait::async_trait;
use aws_sdk_ec2::types::{Filter, RouteTableAssociation as Association, RouteTableAssociationStateCode};
use serde_json::json;

use super::route_table::shared as shared_tables;
use super::{id_output, matched, missing, object, optional_str, remove, send};
use crate::graph::{kinds, Attrs};
use crate::providers::{spec, Applied, Context, Descriptor, Desired, Observed, Provider, Result, WithoutState};

pub(crate) struct RouteTableAssociation;

/// The attributes the compiler emits, references resolved ([`crate::graph::kinds`]).
type Spec = crate::graph::kinds::route_table_association::RouteTableAssociation<String>;

const KIND: &str = kinds::ROUTE_TABLE_ASSOCIATION;

#[async_trait]
impl Provider for RouteTableAssociation {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(KIND, WithoutState::GoesWith(kinds::ROUTE_TABLE), &[])
            .force_new(&["subnet_id"])
            .imported_by("its ID, `rtbassoc-…`")
    }

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let found = associations(cx, "association.route-table-association-id", id).await?;
        Ok(found.iter().find(|a| a.route_table_association_id() == Some(id)).map(observe))
    }

    /// From the answer for the tables state names, shared with the table and route kinds. An association stays
    /// in its table for life (moving the subnet makes a new one), so its table in state is where it is, if
    /// anywhere; one without a table in state (an edited state) is read alone.
    async fn read_many(&self, cx: &Context, items: &[(String, Attrs)]) -> Result<Vec<Option<Observed>>> {
        let tables: Vec<String> =
            items.iter().filter_map(|(_, prior)| optional_str(prior, "route_table_id")).map(str::to_string).collect();
        let tables = shared_tables(cx, tables).await?;
        let live: Vec<Association> =
            tables.iter().flat_map(|t| t.associations()).filter(|a| is_live(a)).cloned().collect();
        let mut out = Vec::new();
        for ((id, prior), found) in items.iter().zip(matched(items, &live, |a| a.route_table_association_id())) {
            out.push(match (found, optional_str(prior, "route_table_id")) {
                (Some(a), _) => Some(observe(a)),
                (None, Some(_)) => None,
                (None, None) => self.read(cx, id, prior).await?,
            });
        }
        Ok(out)
    }

    /// The subnet's association with the desired table; an association with another table is not kbp's.
    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let found = associations(cx, "association.subnet-id", &s.subnet_id).await?;
        Ok(found
            .iter()
            .find(|a| {
                a.subnet_id() == Some(s.subnet_id.as_str()) && a.route_table_id() == Some(s.route_table_id.as_str())
            })
            .and_then(|a| a.route_table_association_id().map(str::to_string)))
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        let op = "ec2:AssociateRouteTable";
        let Spec { subnet_id, route_table_id: table_id } = spec::parse(KIND, desired.attrs)?;
        let resp = send(cx, op, &["InvalidRouteTableID.NotFound", "InvalidSubnetID.NotFound"], || {
            cx.ec2().associate_route_table().route_table_id(&table_id).subnet_id(&subnet_id).send()
        })
        .await
        .map_err(|e| {
            if e.is("Resource.AlreadyAssociated") {
                e.with_hint(format!(
                    "subnet {subnet_id} already has a route table association that kbp did not make; remove it \
                         (aws ec2 disassociate-route-table) and run kbp again"
                ))
            } else {
                e
            }
        })?;
        let id = resp.association_id().ok_or_else(|| missing(op, "association ID"))?;
        Ok(Applied { id: id.to_string(), outputs: id_output(id) })
    }

    async fn update(&self, cx: &Context, id: &str, _prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        let op = "ec2:ReplaceRouteTableAssociation";
        let table_id = spec::parse::<Spec>(KIND, desired.attrs)?.route_table_id;
        let resp = send(cx, op, &["InvalidRouteTableID.NotFound"], || {
            cx.ec2().replace_route_table_association().association_id(id).route_table_id(&table_id).send()
        })
        .await?;
        let new_id = resp.new_association_id().ok_or_else(|| missing(op, "new association ID"))?;
        Ok(Applied { id: new_id.to_string(), outputs: id_output(new_id) })
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        remove(cx, "ec2:DisassociateRouteTable", &[], || cx.ec2().disassociate_route_table().association_id(id).send())
            .await
    }
}

fn observe(a: &Association) -> Observed {
    let attrs = json!({ "subnet_id": a.subnet_id(), "route_table_id": a.route_table_id() });
    Observed { attrs: object(attrs), outputs: id_output(a.route_table_association_id().unwrap_or_default()) }
}

/// The live associations of every route table matching `filter = value`.
async fn associations(cx: &Context, filter: &str, value: &str) -> Result<Vec<Association>> {
    let by = Filter::builder().name(filter).values(value).build();
    let resp = send(cx, "ec2:DescribeRouteTables", &[], || cx.ec2().describe_route_tables().filters(by.clone()).send())
        .await?;
    Ok(resp.route_tables().iter().flat_map(|t| t.associations()).filter(|a| is_live(a)).cloned().collect())
}

/// Disassociated and failed associations linger in the table's description for a while.
fn is_live(a: &Association) -> bool {
    !matches!(
        a.association_state().and_then(|s| s.state()),
        Some(RouteTableAssociationStateCode::Disassociated | RouteTableAssociationStateCode::Failed)
    )
}

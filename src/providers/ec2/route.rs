//! `aws_route`: one route in a route table, to an internet gateway or a NAT gateway. A route has no ID or tags
//! of its own in AWS: kbp names it `<route_table_id>_<destination>`, and finds it by reading the table.

use async_trait::async_trait;
use aws_sdk_ec2::types::RouteState;
use serde_json::json;

use super::describe;
use super::route_table::shared as shared_tables;
use super::{id_output, nullable, object, remove, send};
use crate::graph::{kinds, Attrs};
use crate::providers::{
    spec, Applied, Context, Descriptor, Desired, Observed, Provider, ProviderError, Result, WithoutState,
};

pub(crate) struct Route;

/// The attributes the compiler emits, references resolved ([`crate::graph::kinds`]).
type Spec = crate::graph::kinds::route::Route<String>;

/// Right after the table or the target is created, AWS may not know it yet.
const TRANSIENT: &[&str] = &[
    "InvalidRouteTableID.NotFound",
    "InvalidGatewayID.NotFound",
    "InvalidInternetGatewayID.NotFound",
    "InvalidNatGatewayID.NotFound",
    "NatGatewayNotFound",
];

#[async_trait]
impl Provider for Route {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(kinds::ROUTE, WithoutState::GoesWith(kinds::ROUTE_TABLE), &[])
            .force_new(&["route_table_id", "destination_cidr_block"])
            .imported_by("`<route table ID>_<destination CIDR>`, such as `rtb-…_0.0.0.0/0`")
    }

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let (table_id, destination) = parse_id(id)?;
        Ok(current(cx, table_id, destination).await?.map(|route| observe(id, (table_id, destination), &route)))
    }

    /// From the tables' one answer, shared with the table and association kinds.
    async fn read_many(&self, cx: &Context, items: &[(String, Attrs)]) -> Result<Vec<Option<Observed>>> {
        let parsed = items.iter().map(|(id, _)| parse_id(id)).collect::<Result<Vec<_>>>()?;
        let tables = shared_tables(cx, parsed.iter().map(|(table, _)| table.to_string()).collect()).await?;
        let table_of = |id: &str| tables.iter().find(|t| t.route_table_id() == Some(id));
        Ok(items
            .iter()
            .zip(&parsed)
            .map(|((id, _), (table_id, destination))| {
                let route = table_of(table_id).and_then(|t| in_table(t, destination));
                route.map(|r| observe(id, (table_id, destination), r))
            })
            .collect())
    }

    /// A route for this destination in this table is the one kbp made: a table holds one route per destination.
    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        let s: Spec = spec::parse(kinds::ROUTE, desired.attrs)?;
        let id = route_id(&s.route_table_id, &s.destination_cidr_block);
        let (table_id, destination) = parse_id(&id)?;
        Ok(current(cx, table_id, destination).await?.map(|_| id))
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        let op = "ec2:CreateRoute";
        let s: Spec = spec::parse(kinds::ROUTE, desired.attrs)?;
        let (table_id, destination) = (s.route_table_id.as_str(), s.destination_cidr_block.as_str());
        let target = Target::desired(&s, op)?;
        let id = route_id(table_id, destination);
        let created = send(cx, op, TRANSIENT, || {
            let call = cx.ec2().create_route().route_table_id(table_id).destination_cidr_block(destination);
            call.set_gateway_id(target.gateway()).set_nat_gateway_id(target.nat_gateway()).send()
        })
        .await;
        match created {
            Ok(_) => {}
            // A create retried after a lost response finds its own route: that is success.
            Err(e) if e.is("RouteAlreadyExists") => {
                let existing = current(cx, table_id, destination).await?;
                if existing.as_ref().map(Target::of) != Some(target) {
                    return Err(e.with_hint(format!(
                        "table {table_id} already routes {destination} elsewhere; delete that route (or the table) \
                         outside kbp, then run kbp again"
                    )));
                }
            }
            Err(e) => return Err(e),
        }
        Ok(Applied { id: id.clone(), outputs: id_output(&id) })
    }

    async fn update(&self, cx: &Context, id: &str, _prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        let op = "ec2:ReplaceRoute";
        let (table_id, destination) = parse_id(id)?;
        let s: Spec = spec::parse(kinds::ROUTE, desired.attrs)?;
        let target = Target::desired(&s, op)?;
        send(cx, op, TRANSIENT, || {
            let call = cx.ec2().replace_route().route_table_id(table_id).destination_cidr_block(destination);
            call.set_gateway_id(target.gateway()).set_nat_gateway_id(target.nat_gateway()).send()
        })
        .await?;
        Ok(Applied { id: id.to_string(), outputs: id_output(id) })
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        let (table_id, destination) = parse_id(id)?;
        // InvalidRoute.NotFound and InvalidRouteTableID.NotFound both mean there is nothing left to delete.
        remove(cx, "ec2:DeleteRoute", &[], || {
            cx.ec2().delete_route().route_table_id(table_id).destination_cidr_block(destination).send()
        })
        .await
    }
}

/// Where a route sends traffic: exactly one of the two is set.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Target<'a> {
    gateway_id: Option<&'a str>,
    nat_gateway_id: Option<&'a str>,
}

impl<'a> Target<'a> {
    /// The target `s` names; an empty ID counts as none.
    fn desired(s: &'a Spec, operation: &str) -> Result<Target<'a>> {
        let set = |id: &'a Option<String>| id.as_deref().filter(|id| !id.is_empty());
        let t = Target { gateway_id: set(&s.gateway_id), nat_gateway_id: set(&s.nat_gateway_id) };
        if t.gateway_id.is_some() == t.nat_gateway_id.is_some() {
            return Err(ProviderError::new(
                operation,
                "",
                "a route needs exactly one of `gateway_id` and `nat_gateway_id`",
            )
            .with_hint("this is a bug in kbp's compiler; please report it with the blueprint"));
        }
        Ok(t)
    }

    fn gateway(&self) -> Option<String> {
        self.gateway_id.map(str::to_string)
    }

    fn nat_gateway(&self) -> Option<String> {
        self.nat_gateway_id.map(str::to_string)
    }

    fn of(route: &'a aws_sdk_ec2::types::Route) -> Target<'a> {
        Target { gateway_id: route.gateway_id(), nat_gateway_id: route.nat_gateway_id() }
    }
}

/// What `read` reports of the route `id`, which is `destination` in `table_id`.
fn observe(id: &str, (table_id, destination): (&str, &str), route: &aws_sdk_ec2::types::Route) -> Observed {
    if route.state() == Some(&RouteState::Blackhole) {
        // Its target is gone; reported as it is, the plan sees the target differ from the one now desired.
        tracing::warn!(id, "route is a blackhole: its target no longer exists");
    }
    let attrs = json!({
        "route_table_id": table_id,
        "destination_cidr_block": destination,
        "gateway_id": nullable(route.gateway_id()),
        "nat_gateway_id": nullable(route.nat_gateway_id()),
    });
    Observed { attrs: object(attrs), outputs: id_output(id) }
}

/// The route for `destination` in the table, or `None` when the table or the route is gone.
async fn current(cx: &Context, table_id: &str, destination: &str) -> Result<Option<aws_sdk_ec2::types::Route>> {
    let table = describe::one::<aws_sdk_ec2::types::RouteTable>(cx, table_id, &[]).await?;
    Ok(table.as_ref().and_then(|t| in_table(t, destination)).cloned())
}

fn in_table<'a>(table: &'a aws_sdk_ec2::types::RouteTable, destination: &str) -> Option<&'a aws_sdk_ec2::types::Route> {
    table.routes().iter().find(|r| r.destination_cidr_block() == Some(destination))
}

fn route_id(table_id: &str, destination: &str) -> String {
    format!("{table_id}_{destination}")
}

/// Route table IDs (`rtb-…`) and CIDR blocks have no `_`, so the first one splits the ID.
fn parse_id(id: &str) -> Result<(&str, &str)> {
    id.split_once('_').filter(|(t, d)| !t.is_empty() && !d.is_empty()).ok_or_else(|| {
        ProviderError::new(
            "ec2:DescribeRouteTables",
            "",
            format!("`{id}` is not a route ID (<route_table_id>_<destination>)"),
        )
        .with_hint("the state file was edited or is corrupt; restore it or remove this resource from state")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn route_ids_round_trip() {
        let id = route_id("rtb-0abc", "0.0.0.0/0");
        assert_eq!(id, "rtb-0abc_0.0.0.0/0");
        assert_eq!(parse_id(&id).unwrap(), ("rtb-0abc", "0.0.0.0/0"));
        assert!(parse_id("rtb-0abc").is_err());
        assert!(parse_id("_0.0.0.0/0").is_err());
    }

    /// A route to anywhere in `rtb-1`, to these targets.
    fn to(gateway_id: Option<&str>, nat_gateway_id: Option<&str>) -> Spec {
        Spec {
            route_table_id: "rtb-1".to_string(),
            destination_cidr_block: "0.0.0.0/0".to_string(),
            gateway_id: gateway_id.map(str::to_string),
            nat_gateway_id: nat_gateway_id.map(str::to_string),
        }
    }

    #[test]
    fn target_needs_exactly_one() {
        let spec = to(Some("igw-1"), None);
        assert_eq!(Target::desired(&spec, "op").unwrap().gateway_id, Some("igw-1"));
        assert!(Target::desired(&to(None, None), "op").is_err());
        assert!(Target::desired(&to(Some("igw-1"), Some("nat-1")), "op").is_err());
    }
}

//! One EC2 type's Describe call, named once: the operation, the filter that selects by ID, the call by ID list,
//! where the answer keeps its items. Through it, a kind that makes that type reads one ([`one`]), reads many
//! ([`each`]), finds what it made before ([`find`]) and lists the stack's ([`ours`]) without writing the call
//! again.

use std::future::Future;

use aws_sdk_ec2::types::{Filter, Tag};

use super::tagging::{self, Tagged};
use super::{chunks, describe_one, ids, matched, send, stack_search};
use crate::graph::Attrs;
use crate::providers::attrs::absent_if_gone;
use crate::providers::send::all_pages;
use crate::providers::tagged::Search;
use crate::providers::{Context, Desired, Observed, Result};

/// An EC2 type with a Describe call that takes filters and a list of IDs.
pub(crate) trait Described: Tagged + Clone + Send + Sync + Sized + 'static {
    /// The Describe operation, as errors and the emulator's call log name it.
    const OP: &'static str;
    /// The filter that selects by ID (`vpc-id`, `allocation-id`, …).
    const ID_FILTER: &'static str;

    /// One page of the call under `filters`, after `token`; its items and the next token.
    fn page<'a>(
        cx: &'a Context,
        filters: Vec<Filter>,
        token: Option<String>,
    ) -> impl Future<Output = Result<(Vec<Self>, Option<String>)>> + Send + 'a;

    /// The one with this ID, or `None` when AWS does not know it; `transient` lists the codes to retry (right
    /// after a create, a "not found" is eventual consistency rather than absence).
    fn by_id<'a>(
        cx: &'a Context,
        id: &'a str,
        transient: &'a [&'a str],
    ) -> impl Future<Output = Result<Option<Self>>> + Send + 'a;
}

/// The one `T` with this ID, if AWS knows it (see [`Described::by_id`]).
pub(crate) async fn one<T: Described>(cx: &Context, id: &str, transient: &[&str]) -> Result<Option<T>> {
    T::by_id(cx, id, transient).await
}

/// Every `T` under `filters`, every page.
pub(crate) async fn all<T: Described>(cx: &Context, filters: Vec<Filter>) -> Result<Vec<T>> {
    all_pages(|token| T::page(cx, filters.clone(), token)).await
}

/// Every `T` under the filter `name` (`vpc-id`, …) with any of `values`, and under the filters `also`; the
/// values in chunks of the most a filter takes. None when there are no values: with nothing to filter on, the
/// call would list the whole region.
pub(crate) async fn by_filter<T: Described>(
    cx: &Context,
    name: &str,
    values: &[String],
    also: &[Filter],
) -> Result<Vec<T>> {
    let mut found = Vec::new();
    for chunk in chunks(values) {
        let filters = std::iter::once(Filter::builder().name(name).set_values(Some(chunk)).build());
        found.extend(all::<T>(cx, filters.chain(also.iter().cloned()).collect()).await?);
    }
    Ok(found)
}

/// Every `T` whose ID is among `ids` and that AWS still knows. By the ID filter rather than the call's list
/// of IDs, which fails the whole call when one of them is gone.
pub(crate) async fn with_ids<T: Described>(cx: &Context, ids: &[String]) -> Result<Vec<T>> {
    by_filter::<T>(cx, T::ID_FILTER, ids, &[]).await
}

/// For each of a `read_many`'s items, its `T` if AWS still knows it ([`with_ids`]).
pub(crate) async fn each<T: Described>(cx: &Context, items: &[(String, Attrs)]) -> Result<Vec<Option<T>>> {
    let found = with_ids::<T>(cx, &ids(items)).await?;
    Ok(matched(items, &found, T::resource_id).into_iter().map(|t| t.cloned()).collect())
}

/// [`each`], each turned into what a kind observes.
pub(crate) async fn observed<T: Described>(
    cx: &Context,
    items: &[(String, Attrs)],
    observe: impl Fn(&T) -> Observed,
) -> Result<Vec<Option<Observed>>> {
    Ok(each::<T>(cx, items).await?.iter().map(|t| t.as_ref().map(&observe)).collect())
}

/// The ID of what this stack made before for `desired`'s address, if any (see [`tagging::adopt`]).
pub(crate) async fn find<T: Described>(cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
    tagging::adopt(T::OP, desired, &all::<T>(cx, tagging::kbp_filters(desired)).await?)
}

/// The stack's `T`s: those tagged with its name, checked again against its tags ([`stack_search::ours`]).
pub(crate) async fn ours<T: Described>(cx: &Context, search: &Search<'_>) -> Result<Vec<T>> {
    let found = all::<T>(cx, stack_search::filters(search)).await?;
    Ok(found.into_iter().filter(|t| stack_search::ours(search, t.tag_list())).collect())
}

/// [`Tagged`] for an EC2 type: `Type: ID getter, tags getter`.
macro_rules! tagged {
    ($ty:ident: $id:ident, $tags:ident) => {
        impl Tagged for aws_sdk_ec2::types::$ty {
            fn tag_list(&self) -> &[Tag] {
                self.$tags()
            }
            fn resource_id(&self) -> Option<&str> {
                self.$id()
            }
        }
    };
}

/// [`Tagged`] and [`Described`] for EC2 types whose Describe call pages with `next_token`: `Type: "ec2:Op" by
/// "id-filter", call, filters setter, IDs setter => items field, ID getter, tags getter[, max page size];`.
macro_rules! described {
    ($($ty:ident: $op:literal by $filter:literal, $call:ident, $filters:ident, $ids:ident => $items:ident, $id:ident,
        $tags:ident $(, max $max:literal)?;)*) => {$(
        tagged!($ty: $id, $tags);

        impl Described for aws_sdk_ec2::types::$ty {
            const OP: &'static str = $op;
            const ID_FILTER: &'static str = $filter;

            async fn page(cx: &Context, filters: Vec<Filter>, token: Option<String>) -> Result<(Vec<Self>, Option<String>)> {
                    let out = send(cx, $op, &[], || {
                        let call = cx.ec2().$call().$filters(Some(filters.clone()));
                        call$(.max_results($max))?.set_next_token(token.clone()).send()
                    })
                    .await?;
                    Ok((out.$items.unwrap_or_default(), out.next_token))
            }

            fn by_id<'a>(
                cx: &'a Context,
                id: &'a str,
                transient: &'a [&'a str],
            ) -> impl Future<Output = Result<Option<Self>>> + Send + 'a {
                let request = move || cx.ec2().$call().$ids(id).send();
                describe_one(cx, $op, transient, id, request, |out| out.$items(), |t| t.$id())
            }
        }
    )*};
}

described! {
    Vpc: "ec2:DescribeVpcs" by "vpc-id", describe_vpcs, set_filters, vpc_ids => vpcs, vpc_id, tags;
    Subnet: "ec2:DescribeSubnets" by "subnet-id", describe_subnets, set_filters, subnet_ids => subnets, subnet_id,
        tags;
    InternetGateway: "ec2:DescribeInternetGateways" by "internet-gateway-id", describe_internet_gateways,
        set_filters, internet_gateway_ids => internet_gateways, internet_gateway_id, tags;
    NatGateway: "ec2:DescribeNatGateways" by "nat-gateway-id", describe_nat_gateways, set_filter,
        nat_gateway_ids => nat_gateways, nat_gateway_id, tags;
    RouteTable: "ec2:DescribeRouteTables" by "route-table-id", describe_route_tables, set_filters,
        route_table_ids => route_tables, route_table_id, tags;
    SecurityGroup: "ec2:DescribeSecurityGroups" by "group-id", describe_security_groups, set_filters,
        group_ids => security_groups, group_id, tags;
    NetworkInterface: "ec2:DescribeNetworkInterfaces" by "network-interface-id", describe_network_interfaces,
        set_filters, network_interface_ids => network_interfaces, network_interface_id, tag_set;
    LaunchTemplate: "ec2:DescribeLaunchTemplates" by "launch-template-id", describe_launch_templates, set_filters,
        launch_template_ids => launch_templates, launch_template_id, tags;
    VpcEndpoint: "ec2:DescribeVpcEndpoints" by "vpc-endpoint-id", describe_vpc_endpoints, set_filters,
        vpc_endpoint_ids => vpc_endpoints, vpc_endpoint_id, tags;
    // Without MaxResults DescribeVolumes does not page, and a large account's answer may be cut short.
    Volume: "ec2:DescribeVolumes" by "volume-id", describe_volumes, set_filters, volume_ids => volumes, volume_id,
        tags, max 500;
}

tagged!(Address: allocation_id, tags);

/// DescribeAddresses answers in one page: it takes no token.
impl Described for aws_sdk_ec2::types::Address {
    const OP: &'static str = "ec2:DescribeAddresses";
    const ID_FILTER: &'static str = "allocation-id";

    async fn page(cx: &Context, filters: Vec<Filter>, _token: Option<String>) -> Result<(Vec<Self>, Option<String>)> {
        let out =
            send(cx, Self::OP, &[], || cx.ec2().describe_addresses().set_filters(Some(filters.clone())).send()).await?;
        Ok((out.addresses.unwrap_or_default(), None))
    }

    fn by_id<'a>(
        cx: &'a Context,
        id: &'a str,
        transient: &'a [&'a str],
    ) -> impl Future<Output = Result<Option<Self>>> + Send + 'a {
        let request = move || cx.ec2().describe_addresses().allocation_ids(id).send();
        describe_one(cx, Self::OP, transient, id, request, |out| out.addresses(), |a| a.allocation_id())
    }
}

tagged!(Instance: instance_id, tags);

/// DescribeInstances answers reservations, each with its instances.
impl Described for aws_sdk_ec2::types::Instance {
    const OP: &'static str = "ec2:DescribeInstances";
    const ID_FILTER: &'static str = "instance-id";

    async fn page(cx: &Context, filters: Vec<Filter>, token: Option<String>) -> Result<(Vec<Self>, Option<String>)> {
        let out = send(cx, Self::OP, &[], || {
            cx.ec2().describe_instances().set_filters(Some(filters.clone())).set_next_token(token.clone()).send()
        })
        .await?;
        let instances = out.reservations.unwrap_or_default().into_iter().flat_map(|r| r.instances.unwrap_or_default());
        Ok((instances.collect(), out.next_token))
    }

    async fn by_id(cx: &Context, id: &str, transient: &[&str]) -> Result<Option<Self>> {
        let r = send(cx, Self::OP, transient, || cx.ec2().describe_instances().instance_ids(id).send()).await;
        Ok(absent_if_gone(r)?.and_then(|out| {
            out.reservations().iter().flat_map(|r| r.instances()).find(|i| i.instance_id() == Some(id)).cloned()
        }))
    }
}

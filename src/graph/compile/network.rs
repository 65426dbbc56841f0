//! The VPC layer, and where the other layers find the VPC and its subnets ([`Builder::vpc`],
//! [`Builder::private_subnet_ids`]), whoever owns them.
//!
//! A VPC kbp creates: the VPC, one private and one public subnet per AZ, the internet gateway, NAT gateways with
//! their Elastic IPs (none, one, or one per AZ), and route tables. Every private subnet gets its own route table so
//! that switching the NAT mode only re-points routes instead of re-associating subnets.
//!
//! An existing VPC (`vpc.id`): the VPC and each listed subnet as a resource kbp only reads (so plan fails early
//! when one is missing, and their outputs feed the cluster), and the tags Karpenter and load balancers need on the
//! subnets, as resources of their own that destroy removes. Routes, NAT and DNS settings are the owner's.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{kinds, Builder};
use crate::blueprint::{ExistingNetwork, ManagedNetwork, NatGatewayMode, Network};
use crate::graph::kinds::{
    eip::Eip, existing_subnet::ExistingSubnet, existing_vpc::ExistingVpc, internet_gateway::InternetGateway,
    nat_gateway::NatGateway, route::Route, route_table::RouteTable, route_table_association::RouteTableAssociation,
    subnet::Subnet, subnet_tags::SubnetTags, vpc::Vpc, Input,
};
use crate::graph::value::reference;
use crate::graph::{Address, Resource};

pub(super) const ANYWHERE: &str = "0.0.0.0/0";

pub(super) fn compile(b: &mut Builder) {
    let bp = b.bp;
    match &bp.vpc.network {
        Network::Existing(v) => existing(b, v),
        Network::Managed(v) => managed(b, v),
    }
}

impl Builder<'_> {
    /// The VPC everything lives in: the one kbp creates, or the existing one. Its `id` output is the VPC ID.
    pub(crate) fn vpc(&self) -> Address {
        match self.bp.vpc.network {
            Network::Existing(_) => Address::new("existing_vpc", "main"),
            Network::Managed(_) => Address::new("vpc", "main"),
        }
    }

    /// The private subnets' IDs (references to their `id` outputs), where the cluster and its nodes run.
    pub(crate) fn private_subnet_ids(&self) -> Vec<Value> {
        let (kind, keys) = match &self.bp.vpc.network {
            Network::Existing(v) => ("existing_subnet", &v.private_subnet_ids),
            Network::Managed(v) => ("subnet", &v.azs),
        };
        keys.iter().map(|k| reference(&Address::keyed(kind, "private", k), "id")).collect()
    }

    /// What nodes in the private subnets wait for to reach the internet: the NAT routes of a VPC kbp creates. An
    /// existing VPC's routes are its owner's, so there is nothing to wait for.
    pub(crate) fn private_egress(&self) -> Vec<Address> {
        match self.bp.vpc.managed() {
            Some(v) if v.nat_gateway != NatGatewayMode::None => {
                v.azs.iter().map(|az| Address::keyed("route", "private_nat", az)).collect()
            }
            _ => Vec::new(),
        }
    }

    /// The resources that give private subnets Karpenter's discovery tag and that the cluster does not already
    /// wait for: the tags of an existing VPC's subnets (a subnet kbp creates carries the tag from the start, and the
    /// cluster references it).
    pub(crate) fn subnet_discovery(&self) -> Vec<Address> {
        match self.bp.vpc.existing() {
            Some(v) => v.private_subnet_ids.iter().map(|id| Address::keyed("subnet_tags", "private", id)).collect(),
            None => Vec::new(),
        }
    }
}

/// The tags the subnets of cluster `name` need in either kind of VPC: on the private ones, Karpenter's discovery
/// tag and internal load balancers'; on the public ones, internet-facing load balancers'.
fn tier_tags(name: &str) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let private = BTreeMap::from([
        ("karpenter.sh/discovery".to_string(), name.to_string()),
        ("kubernetes.io/role/internal-elb".to_string(), "1".to_string()),
    ]);
    let public = BTreeMap::from([("kubernetes.io/role/elb".to_string(), "1".to_string())]);
    (private, public)
}

/// An existing VPC and its subnets, read but never changed, and the tags kbp puts on the subnets.
fn existing(b: &mut Builder, v: &ExistingNetwork) {
    let bp = b.bp;
    let tier_extra = (&bp.vpc.private_subnet_tags, &bp.vpc.public_subnet_tags);
    let name = b.cluster_name().to_string();
    let vpc = b.add(Resource::new(b.vpc(), kinds::EXISTING_VPC, kinds::attrs(&ExistingVpc { vpc_id: v.id.clone() })));
    // Not cluster.tags nor a Name: the subnets are someone else's, and these tags are all kbp removes on destroy.
    let shared = (format!("kubernetes.io/cluster/{name}"), "shared".to_string());
    let (mut private, mut public) = tier_tags(&name);
    private.insert(shared.0.clone(), shared.1.clone());
    public.insert(shared.0, shared.1);
    for (tier, ids, implied, extra) in [
        ("private", &v.private_subnet_ids, private, tier_extra.0),
        ("public", &v.public_subnet_ids, public, tier_extra.1),
    ] {
        for id in ids {
            let subnet = b.add(Resource::new(
                Address::keyed("existing_subnet", tier, id),
                kinds::EXISTING_SUBNET,
                kinds::attrs(&ExistingSubnet { subnet_id: id.clone(), vpc_id: reference(&vpc, "id") }),
            ));
            let mut tags = implied.clone();
            tags.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
            b.add(Resource::new(
                Address::keyed("subnet_tags", tier, id),
                kinds::SUBNET_TAGS,
                kinds::attrs(&SubnetTags { subnet_id: reference(&subnet, "id"), tags }),
            ));
        }
    }
}

/// A VPC kbp creates, with everything it needs to route.
fn managed(b: &mut Builder, v: &ManagedNetwork) {
    let bp = b.bp;
    let tier_extra = (&bp.vpc.private_subnet_tags, &bp.vpc.public_subnet_tags);
    let name = b.cluster_name().to_string();
    let vpc_tags = &v.tags;
    let vpc = b.add(Resource::new(
        b.vpc(),
        kinds::VPC,
        kinds::attrs(&Vpc {
            cidr_block: v.cidr.to_string(),
            enable_dns_support: true,
            enable_dns_hostnames: v.enable_dns_hostnames,
            tags: b.tags(&[vpc_tags], Some(&name)),
        }),
    ));
    let vpc_id = reference(&vpc, "id");

    let (discovery, elb) = tier_tags(&name);

    let igw = b.add(Resource::new(
        Address::new("internet_gateway", "main"),
        kinds::INTERNET_GATEWAY,
        kinds::attrs(&InternetGateway { vpc_id: vpc_id.clone(), tags: b.tags(&[vpc_tags], Some(&name)) }),
    ));
    let public_rt = b.add(Resource::new(
        Address::new("route_table", "public"),
        kinds::ROUTE_TABLE,
        kinds::attrs(&RouteTable {
            vpc_id: vpc_id.clone(),
            tags: b.tags(&[vpc_tags], Some(&format!("{name}-public"))),
        }),
    ));
    b.add(route(Address::new("route", "public_internet"), &public_rt, Via::InternetGateway(reference(&igw, "id"))));

    let nat_azs: Vec<&String> = match v.nat_gateway {
        NatGatewayMode::None => vec![],
        NatGatewayMode::Single => v.azs.iter().take(1).collect(),
        NatGatewayMode::PerAz => v.azs.iter().collect(),
    };

    for (i, az) in v.azs.iter().enumerate() {
        let public =
            b.add(subnet(b, &vpc_id, ("public", az), v.public_subnets[i].to_string(), &[vpc_tags, &elb, tier_extra.1]));
        b.add(association(Address::keyed("route_table_association", "public", az), &public, &public_rt));

        let private = b.add(subnet(
            b,
            &vpc_id,
            ("private", az),
            v.private_subnets[i].to_string(),
            &[vpc_tags, &discovery, tier_extra.0],
        ));
        let private_rt = b.add(Resource::new(
            Address::keyed("route_table", "private", az),
            kinds::ROUTE_TABLE,
            kinds::attrs(&RouteTable {
                vpc_id: vpc_id.clone(),
                tags: b.tags(&[vpc_tags], Some(&format!("{name}-private-{az}"))),
            }),
        ));
        b.add(association(Address::keyed("route_table_association", "private", az), &private, &private_rt));

        if nat_azs.contains(&az) {
            let eip = b.add(
                Resource::new(
                    Address::keyed("eip", "nat", az),
                    kinds::EIP,
                    kinds::attrs(&Eip {
                        domain: "vpc".to_string(),
                        tags: b.tags(&[vpc_tags], Some(&format!("{name}-nat-{az}"))),
                    }),
                )
                // An EIP in a VPC needs the VPC's internet gateway attached before it can be used.
                .after(&igw),
            );
            b.add(Resource::new(
                Address::keyed("nat_gateway", "main", az),
                kinds::NAT_GATEWAY,
                kinds::attrs(&NatGateway {
                    subnet_id: reference(&public, "id"),
                    allocation_id: Some(reference(&eip, "id")),
                    connectivity_type: "public".to_string(),
                    tags: b.tags(&[vpc_tags], Some(&format!("{name}-{az}"))),
                }),
            ));
        }
        // Which NAT gateway this AZ's private traffic leaves through: its own, or the single one.
        if let Some(nat_az) = nat_azs.iter().find(|n| **n == az).or(nat_azs.first()) {
            let nat = Address::keyed("nat_gateway", "main", nat_az);
            b.add(route(
                Address::keyed("route", "private_nat", az),
                &private_rt,
                Via::NatGateway(reference(&nat, "id")),
            ));
        }
    }
}

/// The subnet of `tier` (`public`, whose instances get public IPs, or `private`) in `az`.
fn subnet(
    b: &Builder,
    vpc_id: &Input,
    (tier, az): (&str, &str),
    cidr: String,
    tags: &[&BTreeMap<String, String>],
) -> Resource {
    let name = format!("{}-{tier}-{az}", b.cluster_name());
    Resource::new(
        Address::keyed("subnet", tier, az),
        kinds::SUBNET,
        kinds::attrs(&Subnet {
            vpc_id: vpc_id.clone(),
            cidr_block: cidr,
            availability_zone: az.to_string(),
            map_public_ip_on_launch: tier == "public",
            tags: b.tags(tags, Some(&name)),
        }),
    )
}

/// Where a route to anywhere sends traffic: the ID of a gateway.
enum Via {
    InternetGateway(Input),
    NatGateway(Input),
}

fn route(address: Address, table: &Address, via: Via) -> Resource {
    let (gateway_id, nat_gateway_id) = match via {
        Via::InternetGateway(id) => (Some(id), None),
        Via::NatGateway(id) => (None, Some(id)),
    };
    let route = Route {
        route_table_id: reference(table, "id"),
        destination_cidr_block: ANYWHERE.to_string(),
        gateway_id,
        nat_gateway_id,
    };
    Resource::new(address, kinds::ROUTE, kinds::attrs(&route))
}

fn association(address: Address, subnet: &Address, table: &Address) -> Resource {
    let association =
        RouteTableAssociation { subnet_id: reference(subnet, "id"), route_table_id: reference(table, "id") };
    Resource::new(address, kinds::ROUTE_TABLE_ASSOCIATION, kinds::attrs(&association))
}

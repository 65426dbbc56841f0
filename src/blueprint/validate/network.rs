//! The `[vpc]` rules. A VPC kbp creates ("managed network"): zones in the region, one subnet per zone inside the
//! VPC CIDR, no overlaps. An existing VPC (`vpc.id`): none of the fields that describe a VPC kbp creates, at
//! least two private subnets, no subnet both private and public. The subnets' zones and VPC are checked against
//! AWS at plan time, not here.

use ipnet::Ipv4Net;

use super::Checker;
use crate::blueprint::model::{
    Blueprint, ExistingNetwork, ManagedNetwork, NatGatewayMode, Network, EXISTING_NETWORK_ONLY, MANAGED_NETWORK_ONLY,
};
use crate::blueprint::tree::item;

/// EKS places the control plane's network interfaces in subnets of at least two zones.
const MIN_PRIVATE_SUBNETS: usize = 2;

pub(super) fn vpc(c: &mut Checker, bp: &Blueprint) {
    match &bp.vpc.network {
        Network::Existing(v) => existing(c, v),
        Network::Managed(v) => managed(c, v, &bp.cluster.region),
    }
}

fn existing(c: &mut Checker, v: &ExistingNetwork) {
    let (source, span) = c.place("vpc.id");
    for field in MANAGED_NETWORK_ONLY {
        let path = format!("vpc.{field}");
        if !c.written(&path) {
            continue;
        }
        let msg = format!("`{field}` describes a VPC kbp creates; it cannot be set with an existing VPC (`vpc.id`)");
        c.error(&path, &["vpc.id"], msg)
            .map(|b| b.hint(managed_only_hint(field)).related(source, span.clone(), "the existing VPC is named here"));
    }
    let n = v.private_subnet_ids.len();
    if n < MIN_PRIVATE_SUBNETS {
        let msg = format!("an existing VPC needs at least {MIN_PRIVATE_SUBNETS} `private_subnet_ids`, found {n}");
        c.error("vpc.private_subnet_ids", &["vpc.id"], msg).map(|b| {
            b.expected(format!("at least {MIN_PRIVATE_SUBNETS} subnet IDs, in different availability zones"))
                .hint("list the VPC's private subnets of at least two zones: EKS needs subnets in two zones")
        });
    }
    for (i, id) in v.public_subnet_ids.iter().enumerate() {
        let Some(j) = v.private_subnet_ids.iter().position(|p| p == id) else { continue };
        let (other_source, other_span) = c.place(&item("vpc.private_subnet_ids", j));
        let msg = format!("subnet `{id}` is listed both as private and as public");
        c.error(&item("vpc.public_subnet_ids", i), &["vpc.private_subnet_ids"], msg).map(|b| {
            b.hint("a subnet is private (nodes) or public (internet-facing load balancers): list it once").related(
                other_source,
                other_span,
                "listed as private here",
            )
        });
    }
}

fn managed_only_hint(field: &str) -> &'static str {
    match field {
        "nat_gateway" => "remove it: the existing VPC's routes (NAT gateways, VPC endpoints) are its owner's",
        "enable_dns_hostnames" => "remove it: turn on DNS host names in the existing VPC itself (EKS needs them)",
        "tags" => "remove it: kbp tags only the subnets of an existing VPC (`private_subnet_tags`, `public_subnet_tags`)",
        _ => "remove it: the existing VPC's ranges and zones are its own; list its subnets in `private_subnet_ids` and `public_subnet_ids`",
    }
}

fn managed(c: &mut Checker, v: &ManagedNetwork, region: &str) {
    for (field, what) in EXISTING_NETWORK_ONLY {
        let path = format!("vpc.{field}");
        // An empty list names nothing: only one with a first item is refused.
        if !c.written(&item(&path, 0)) {
            continue;
        }
        let msg = format!("`{field}` names {what} of an existing VPC, but `vpc.id` is not set");
        c.error(&path, &["vpc.id"], msg).map(|b| {
            b.hint(format!(
                "set `vpc.id` to the VPC the {what} belong to, or remove `{field}`: the VPC kbp creates has none of yours"
            ))
        });
    }
    for (i, az) in v.azs.iter().enumerate() {
        let p = item("vpc.azs", i);
        if c.written(&p) && (!az.starts_with(region) || az.len() == region.len()) {
            c.error(&p, &["cluster.region"], format!("zone `{az}` is not in region `{region}`"))
                .map(|b| b.expected(format!("a zone of {region}, like `{region}a`")));
        }
    }
    for (field, subnets) in [("private_subnets", &v.private_subnets), ("public_subnets", &v.public_subnets)] {
        let path = format!("vpc.{field}");
        if subnets.len() != v.azs.len() {
            let msg = format!("{} zones need {} {field}, found {}", v.azs.len(), v.azs.len(), subnets.len());
            c.error(&path, &["vpc.azs"], msg).map(|b| b.hint("give one subnet per zone, in the order of `vpc.azs`"));
        }
        for (i, s) in subnets.iter().enumerate() {
            if !v.cidr.contains(s) {
                c.error(&item(&path, i), &["vpc.cidr"], format!("subnet `{s}` is outside the VPC CIDR `{}`", v.cidr))
                    .map(|b| b.expected(format!("a block inside `{}`", v.cidr)));
            }
        }
    }
    overlaps(
        c,
        v.private_subnets
            .iter()
            .map(|s| ("vpc.private_subnets", s))
            .chain(v.public_subnets.iter().map(|s| ("vpc.public_subnets", s))),
    );
    if v.nat_gateway == NatGatewayMode::None {
        let msg = "without a NAT gateway, nodes in the private subnets cannot reach the internet".to_string();
        c.warning("vpc.nat_gateway", &[], msg)
            .map(|b| b.hint("nodes must pull images and reach AWS APIs: add VPC endpoints, or use \"single\""));
    }
}

/// Reports each subnet that overlaps an earlier one, pointing at both.
fn overlaps<'a>(c: &mut Checker, subnets: impl Iterator<Item = (&'static str, &'a Ipv4Net)>) {
    let mut seen: Vec<(String, &Ipv4Net)> = Vec::new();
    let mut counters = std::collections::HashMap::new();
    for (field, s) in subnets {
        let n = counters.entry(field).or_insert(0usize);
        let path = item(field, *n);
        *n += 1;
        if let Some((other_path, other)) =
            seen.iter().find(|(_, o)| o.contains(&s.network()) || s.contains(&o.network()))
        {
            let (source, span) = c.place(other_path);
            let msg = format!("subnet `{s}` overlaps `{other}` ({other_path})");
            c.error(&path, &[field, other_path.split('[').next().unwrap_or(field)], msg).map(|b| {
                b.hint("give every subnet its own address range").related(source, span, format!("`{other}` is here"))
            });
        }
        seen.push((path, s));
    }
}

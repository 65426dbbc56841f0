//! Preflight of a network someone else owns (`[vpc] id`): kbp creates none of it, so before anything is made it
//! checks, with reads only, what EKS and Karpenter will need of it. The VPC exists; every listed subnet and
//! security group exists and is in that VPC; the private subnets span at least two availability zones (EKS
//! refuses a cluster otherwise); and each private subnet has a default route out (a NAT gateway, a transit
//! gateway, or a NAT instance's interface), without which nodes cannot pull images or join, unless the
//! cluster's endpoint is private only (then VPC endpoints are the user's to provide, and kbp cannot see them all).
//!
//! Every problem is reported at once, each naming the ID and what to change.

use std::collections::{BTreeMap, BTreeSet};

use aws_sdk_ec2::types::{RouteTable, SecurityGroup, Subnet};

use super::Problem;
use crate::blueprint::{Blueprint, ExistingNetwork};
use crate::providers::ec2::existing_vpc::survey;
use crate::providers::{Context, ProviderError};

const ANYWHERE: &str = "0.0.0.0/0";

pub(super) async fn check(cx: &Context, bp: &Blueprint) -> Vec<Problem> {
    let Some(v) = bp.vpc.existing() else { return Vec::new() };
    let vpc_id = v.id.as_str();
    match existing(cx, v, !bp.cluster.endpoint_public_access).await {
        Ok(problems) => problems,
        Err(e) => vec![Problem::call(
            &format!("cannot read VPC {vpc_id} and its subnets"),
            e,
            "check the permissions kbp runs with (ec2:DescribeVpcs, ec2:DescribeSubnets, \
             ec2:DescribeRouteTables, ec2:DescribeSecurityGroups)",
        )],
    }
}

/// The problems of existing network `v`; `private_only` when the cluster's endpoint is private only.
async fn existing(cx: &Context, v: &ExistingNetwork, private_only: bool) -> Result<Vec<Problem>, ProviderError> {
    let (region, vpc_id) = (&cx.region, v.id.as_str());
    let (private, public) = (&v.private_subnet_ids, &v.public_subnet_ids);
    let listed: Vec<String> = private.iter().chain(public).cloned().collect();
    let Some(found) = survey(cx, vpc_id, listed, &v.security_group_ids).await? else {
        return Ok(vec![Problem::new(
            format!("vpc.id: VPC {vpc_id} does not exist in {region}"),
            "check the ID (`aws ec2 describe-vpcs`) and `cluster.region`; kbp makes a VPC of its own when `vpc.id` \
             is left out",
        )]);
    };
    let (subnets, groups) = (&found.subnets, &found.security_groups);

    let mut problems = subnet_problems(vpc_id, region, "vpc.private_subnet_ids", private, subnets);
    problems.extend(subnet_problems(vpc_id, region, "vpc.public_subnet_ids", public, subnets));
    problems.extend(zone_problem(private, subnets));
    problems.extend(group_problems(vpc_id, region, &v.security_group_ids, groups));
    if !private_only {
        problems.extend(route_problems(private, &found.route_tables));
    }
    Ok(problems)
}

/// A listed subnet missing from `found` or in another VPC.
fn subnet_problems(vpc_id: &str, region: &str, field: &str, ids: &[String], found: &[Subnet]) -> Vec<Problem> {
    let found: Vec<(&str, Option<&str>)> = found.iter().filter_map(|s| Some((s.subnet_id()?, s.vpc_id()))).collect();
    let wrong_vpc = "every subnet must be in the VPC `vpc.id` names; use that VPC's subnets, or name the other VPC";
    let listed = Listed { field, noun: "subnet", list: "describe-subnets", wrong_vpc };
    listed.problems(vpc_id, region, ids, &found)
}

/// EKS needs the cluster's subnets in at least two availability zones.
fn zone_problem(private: &[String], found: &[Subnet]) -> Option<Problem> {
    let zones: BTreeSet<&str> = found
        .iter()
        .filter(|s| s.subnet_id().is_some_and(|id| private.iter().any(|p| p == id)))
        .filter_map(|s| s.availability_zone())
        .collect();
    // Subnets that were not found are reported on their own; zones are judged only once all are there.
    let all_found = private.iter().all(|p| found.iter().any(|s| s.subnet_id() == Some(p.as_str())));
    (all_found && zones.len() < 2).then(|| {
        let zones = zones.into_iter().collect::<Vec<_>>().join(", ");
        Problem::new(
            format!("vpc.private_subnet_ids: the private subnets are all in one availability zone ({zones})"),
            "EKS needs subnets in at least two zones; add a private subnet of another zone",
        )
    })
}

/// A listed security group missing or in another VPC.
fn group_problems(vpc_id: &str, region: &str, ids: &[String], found: &[SecurityGroup]) -> Vec<Problem> {
    let found: Vec<(&str, Option<&str>)> = found.iter().filter_map(|g| Some((g.group_id()?, g.vpc_id()))).collect();
    let wrong_vpc = "a security group can only be used in its own VPC";
    let field = "vpc.security_group_ids";
    let listed = Listed { field, noun: "security group", list: "describe-security-groups", wrong_vpc };
    listed.problems(vpc_id, region, ids, &found)
}

/// IDs the blueprint lists under `field`, of things (`noun`) that must exist in the VPC `vpc.id` names.
struct Listed<'a> {
    field: &'a str,
    noun: &'a str,
    /// The `aws ec2` command that lists them.
    list: &'a str,
    /// The hint for one in another VPC.
    wrong_vpc: &'a str,
}

impl Listed<'_> {
    /// One problem for each of `ids` that `found` (ID and VPC) lacks or has in another VPC.
    fn problems(&self, vpc_id: &str, region: &str, ids: &[String], found: &[(&str, Option<&str>)]) -> Vec<Problem> {
        let Listed { field, noun, list, wrong_vpc } = self;
        ids.iter()
            .filter_map(|id| match found.iter().find(|(f, _)| f == id) {
                None => Some(Problem::new(
                    format!("{field}: {noun} {id} does not exist in {region}"),
                    format!("list the VPC's {noun}s with `aws ec2 {list} --filters Name=vpc-id,Values={vpc_id}`"),
                )),
                Some((_, vpc)) if *vpc != Some(vpc_id) => Some(Problem::new(
                    format!("{field}: {noun} {id} is in {}, not in vpc.id {vpc_id}", vpc.unwrap_or("no VPC")),
                    *wrong_vpc,
                )),
                Some(_) => None,
            })
            .collect()
    }
}

/// A private subnet whose route table (its own, else the VPC's main one) has no default route out.
fn route_problems(private: &[String], tables: &[RouteTable]) -> Vec<Problem> {
    let mut of_subnet: BTreeMap<&str, &RouteTable> = BTreeMap::new();
    let mut main = None;
    for t in tables {
        for a in t.associations() {
            match a.subnet_id() {
                Some(s) => {
                    of_subnet.insert(s, t);
                }
                None if a.main() == Some(true) => main = Some(t),
                None => {}
            }
        }
    }
    private
        .iter()
        .filter(|id| !of_subnet.get(id.as_str()).copied().or(main).is_some_and(routes_out))
        .map(|id| {
            Problem::new(
                format!("vpc.private_subnet_ids: subnet {id} has no route to {ANYWHERE} through a NAT gateway"),
                "nodes in it could not pull images or reach EKS; add a default route to a NAT gateway (or a transit \
                 gateway) to its route table, or make the cluster private only (`cluster.endpoint_public_access = \
                 false`) with the VPC endpoints it needs",
            )
        })
        .collect()
}

/// Whether `t` sends everything else somewhere that leads out: a NAT gateway, a transit gateway, or a NAT
/// instance (its interface or the instance).
fn routes_out(t: &RouteTable) -> bool {
    t.routes().iter().any(|r| {
        r.destination_cidr_block() == Some(ANYWHERE)
            && (r.nat_gateway_id().is_some()
                || r.transit_gateway_id().is_some()
                || r.network_interface_id().is_some()
                || r.instance_id().is_some())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_ec2::types::{Route, RouteTableAssociation};

    fn subnet(id: &str, vpc: &str, zone: &str) -> Subnet {
        Subnet::builder().subnet_id(id).vpc_id(vpc).availability_zone(zone).build()
    }

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_missing_subnet_and_one_of_another_vpc_are_named() {
        let found = [subnet("subnet-a", "vpc-1", "us-west-2a"), subnet("subnet-b", "vpc-2", "us-west-2b")];
        let p = subnet_problems(
            "vpc-1",
            "us-west-2",
            "vpc.private_subnet_ids",
            &ids(&["subnet-a", "subnet-b", "subnet-c"]),
            &found,
        );
        let messages: Vec<&str> = p.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "vpc.private_subnet_ids: subnet subnet-b is in vpc-2, not in vpc.id vpc-1",
                "vpc.private_subnet_ids: subnet subnet-c does not exist in us-west-2",
            ]
        );
    }

    #[test]
    fn private_subnets_need_two_zones() {
        let one = [subnet("subnet-a", "vpc-1", "us-west-2a"), subnet("subnet-b", "vpc-1", "us-west-2a")];
        let p = zone_problem(&ids(&["subnet-a", "subnet-b"]), &one).expect("one zone is refused");
        assert!(p.message.contains("(us-west-2a)"), "{}", p.message);
        let two = [subnet("subnet-a", "vpc-1", "us-west-2a"), subnet("subnet-b", "vpc-1", "us-west-2b")];
        assert!(zone_problem(&ids(&["subnet-a", "subnet-b"]), &two).is_none());
        // A subnet not found is its own problem, not a zone problem.
        assert!(zone_problem(&ids(&["subnet-a", "subnet-x"]), &one[..1]).is_none());
    }

    #[test]
    fn a_private_subnet_needs_a_default_route_out_through_its_own_or_the_main_table() {
        let table = |assoc: RouteTableAssociation, route: Option<Route>| {
            RouteTable::builder().associations(assoc).set_routes(route.map(|r| vec![r])).build()
        };
        let to_nat = Route::builder().destination_cidr_block(ANYWHERE).nat_gateway_id("nat-1").build();
        let to_igw = Route::builder().destination_cidr_block(ANYWHERE).gateway_id("igw-1").build();
        let tables = [
            table(RouteTableAssociation::builder().subnet_id("subnet-nat").build(), Some(to_nat.clone())),
            table(RouteTableAssociation::builder().subnet_id("subnet-igw").build(), Some(to_igw)),
            table(RouteTableAssociation::builder().main(true).build(), None),
        ];
        let p = route_problems(&ids(&["subnet-nat", "subnet-igw", "subnet-main"]), &tables);
        let named: Vec<bool> = ["subnet-nat", "subnet-igw", "subnet-main"]
            .iter()
            .map(|s| p.iter().any(|p| p.message.contains(&format!("subnet {s} "))))
            .collect();
        assert_eq!(named, [false, true, true], "{p:?}");
        // A main table with a NAT route serves every subnet without a table of its own.
        let tables = [table(RouteTableAssociation::builder().main(true).build(), Some(to_nat))];
        assert!(route_problems(&ids(&["subnet-main"]), &tables).is_empty());
    }

    #[test]
    fn a_security_group_of_another_vpc_is_named() {
        let g = SecurityGroup::builder().group_id("sg-1").vpc_id("vpc-2").build();
        let p = group_problems("vpc-1", "us-west-2", &ids(&["sg-1", "sg-2"]), &[g]);
        assert_eq!(p.len(), 2);
        assert!(p[0].message.contains("sg-1 is in vpc-2"), "{}", p[0].message);
        assert!(p[1].message.contains("sg-2 does not exist"), "{}", p[1].message);
    }
}

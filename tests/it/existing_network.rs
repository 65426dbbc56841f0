//! A network someone else owns (`[vpc] id`), end to end against the emulator. A VPC with subnets, a NAT gateway
//! and routes is made with the raw SDK, as a network team would have made it, with a neighbour workload in it
//! (an instance and its security group). kbp applies the cluster and Karpenter into it, adding only the subnet
//! tags Karpenter and load balancers need; a second plan is empty; destroy removes everything kbp made and those
//! tags, and leaves the VPC, its subnets, routes and the neighbour exactly as they were. Bad network input fails
//! in preflight, before anything is made.

use std::collections::{BTreeMap, BTreeSet};

use crate::support::inventory::Inventory;
use crate::support::provider::tag_map;
use crate::support::*;
use aws_sdk_ec2::types::{IpPermission, IpRange, ResourceType};

const AMI: &str = "ami-12c6146b";
const STACK: &str = "sbx";

/// The network a team made before kbp came: IDs of what the blueprint names and of the neighbour.
#[derive(Clone)]
pub(crate) struct Network {
    pub vpc: String,
    pub private: Vec<String>,
    pub public: Vec<String>,
    pub neighbour_group: String,
    pub neighbour: String,
}

pub(crate) async fn existing_network(em: &Emulator) -> Network {
    let ec2 = em.ec2().await;
    let team = [("team", "network"), ("Name", "shared")];
    let vpc = ec2.create_vpc().cidr_block("10.20.0.0/16").tag_specifications(tag_spec(ResourceType::Vpc, &team));
    let vpc = vpc.send().await.unwrap().vpc.unwrap().vpc_id.unwrap();
    let subnet = |cidr: &'static str, zone: &'static str, tags: Vec<(&'static str, &'static str)>| {
        let (ec2, vpc) = (ec2.clone(), vpc.clone());
        async move {
            let out = ec2.create_subnet().vpc_id(vpc).cidr_block(cidr).availability_zone(zone);
            let out = out.tag_specifications(tag_spec(ResourceType::Subnet, &tags)).send().await.unwrap();
            out.subnet.unwrap().subnet_id.unwrap()
        }
    };
    // One private subnet already carries a tag kbp manages, with another value: it must get it back.
    let private = vec![
        subnet("10.20.1.0/24", "us-west-2a", vec![("tier", "private")]).await,
        subnet("10.20.2.0/24", "us-west-2b", vec![("tier", "private"), ("kubernetes.io/role/internal-elb", "0")]).await,
    ];
    let public = vec![subnet("10.20.101.0/24", "us-west-2a", vec![("tier", "public")]).await];

    let igw = ec2.create_internet_gateway().send().await.unwrap().internet_gateway.unwrap();
    let igw = igw.internet_gateway_id.unwrap();
    ec2.attach_internet_gateway().internet_gateway_id(&igw).vpc_id(&vpc).send().await.unwrap();
    let eip = ec2.allocate_address().domain(aws_sdk_ec2::types::DomainType::Vpc).send().await.unwrap();
    let nat = ec2.create_nat_gateway().subnet_id(&public[0]).allocation_id(eip.allocation_id.unwrap()).send();
    let nat = nat.await.unwrap().nat_gateway.unwrap().nat_gateway_id.unwrap();
    let public_rt = ec2.create_route_table().vpc_id(&vpc).send().await.unwrap().route_table.unwrap();
    let public_rt = public_rt.route_table_id.unwrap();
    let route = ec2.create_route().route_table_id(&public_rt).destination_cidr_block("0.0.0.0/0").gateway_id(&igw);
    route.send().await.unwrap();
    ec2.associate_route_table().route_table_id(&public_rt).subnet_id(&public[0]).send().await.unwrap();
    let private_rt = ec2.create_route_table().vpc_id(&vpc).send().await.unwrap().route_table.unwrap();
    let private_rt = private_rt.route_table_id.unwrap();
    let route = ec2.create_route().route_table_id(&private_rt).destination_cidr_block("0.0.0.0/0");
    route.nat_gateway_id(&nat).send().await.unwrap();
    for s in &private {
        ec2.associate_route_table().route_table_id(&private_rt).subnet_id(s).send().await.unwrap();
    }

    // The neighbour: a database-like instance and its group, which allows the whole VPC in.
    let group = ec2.create_security_group().group_name("neighbour-db").description("another team database");
    let group = group.vpc_id(&vpc).tag_specifications(tag_spec(ResourceType::SecurityGroup, &[("team", "data")]));
    let neighbour_group = group.send().await.unwrap().group_id.unwrap();
    let from_vpc = IpPermission::builder()
        .ip_protocol("tcp")
        .from_port(5432)
        .to_port(5432)
        .ip_ranges(IpRange::builder().cidr_ip("10.20.0.0/16").build())
        .build();
    let allow = ec2.authorize_security_group_ingress().group_id(&neighbour_group).ip_permissions(from_vpc);
    allow.send().await.unwrap();
    let run = ec2.run_instances().image_id(AMI).min_count(1).max_count(1).subnet_id(&private[0]);
    let run = run.security_group_ids(&neighbour_group).tag_specifications(tag_spec(ResourceType::Instance, &team));
    let neighbour = run.send().await.unwrap().instances()[0].instance_id().unwrap().to_string();
    Network { vpc, private, public, neighbour_group, neighbour }
}

/// Every attribute and tag of the network and the neighbour that kbp must leave as it found it, and the IDs
/// of every security group and network interface in the VPC, as text to compare before and after.
async fn snapshot(em: &Emulator, net: &Network) -> BTreeMap<String, String> {
    let ec2 = em.ec2().await;
    let in_vpc = || aws_sdk_ec2::types::Filter::builder().name("vpc-id").values(&net.vpc).build();
    let sorted_tags = |tags: &[aws_sdk_ec2::types::Tag]| -> BTreeMap<String, String> {
        tags.iter()
            .map(|t| (t.key().unwrap_or_default().to_string(), t.value().unwrap_or_default().to_string()))
            .collect()
    };
    let mut s = BTreeMap::new();
    let vpc = ec2.describe_vpcs().vpc_ids(&net.vpc).send().await.unwrap().vpcs()[0].clone();
    s.insert(format!("vpc {}", net.vpc), format!("{:?} {:?}", vpc.cidr_block(), sorted_tags(vpc.tags())));
    for subnet in ec2.describe_subnets().filters(in_vpc()).send().await.unwrap().subnets() {
        let what = (subnet.cidr_block(), subnet.availability_zone(), subnet.map_public_ip_on_launch());
        s.insert(
            format!("subnet {}", subnet.subnet_id().unwrap()),
            format!("{what:?} {:?}", sorted_tags(subnet.tags())),
        );
    }
    for t in ec2.describe_route_tables().filters(in_vpc()).send().await.unwrap().route_tables() {
        let routes: BTreeSet<String> = t
            .routes()
            .iter()
            .map(|r| format!("{:?}->{:?}{:?}", r.destination_cidr_block(), r.gateway_id(), r.nat_gateway_id()))
            .collect();
        let subnets: BTreeSet<&str> = t.associations().iter().filter_map(|a| a.subnet_id()).collect();
        s.insert(format!("route table {}", t.route_table_id().unwrap()), format!("{routes:?} {subnets:?}"));
    }
    let groups = ec2.describe_security_groups().filters(in_vpc()).send().await.unwrap();
    let ids: BTreeSet<&str> = groups.security_groups().iter().filter_map(|g| g.group_id()).collect();
    s.insert("security groups in the VPC".to_string(), format!("{ids:?}"));
    for g in groups.security_groups().iter().filter(|g| g.group_id() == Some(net.neighbour_group.as_str())) {
        let rules = (g.ip_permissions(), g.ip_permissions_egress());
        s.insert(format!("group {}", net.neighbour_group), format!("{rules:?} {:?}", sorted_tags(g.tags())));
    }
    let enis = ec2.describe_network_interfaces().filters(in_vpc()).send().await.unwrap();
    let ids: BTreeSet<&str> = enis.network_interfaces().iter().filter_map(|n| n.network_interface_id()).collect();
    s.insert("network interfaces in the VPC".to_string(), format!("{ids:?}"));
    let i = ec2.describe_instances().instance_ids(&net.neighbour).send().await.unwrap();
    let i = &i.reservations()[0].instances()[0];
    let groups: Vec<&str> = i.security_groups().iter().filter_map(|g| g.group_id()).collect();
    let state = i.state().and_then(|s| s.name()).map(|n| n.as_str().to_string());
    s.insert(format!("instance {}", net.neighbour), format!("{state:?} {groups:?} {:?}", sorted_tags(i.tags())));
    s
}

/// The blueprint `base` (without a `[vpc]` table), in the network `net`.
pub(crate) fn blueprint_in(base: &str, net: &Network) -> String {
    let list = |ids: &[String]| ids.iter().map(|i| format!("{i:?}")).collect::<Vec<_>>().join(", ");
    format!(
        "{}\n[vpc]\nid = {:?}\nprivate_subnet_ids = [{}]\npublic_subnet_ids = [{}]\n",
        base,
        net.vpc,
        list(&net.private),
        list(&net.public)
    )
}

async fn subnet_tags(em: &Emulator, id: &str) -> BTreeMap<String, String> {
    let out = em.ec2().await.describe_subnets().subnet_ids(id).send().await.unwrap();
    tag_map(out.subnets()[0].tags())
}

#[tokio::test(flavor = "multi_thread")]
async fn apply_and_destroy_in_an_existing_vpc_leave_the_network_and_its_neighbours_as_they_were() {
    let em = Emulator::start();
    let net = existing_network(&em).await;
    let before = snapshot(&em, &net).await;
    let ws = Workspace::with_blueprint("minimal");
    ws.write_blueprint(&blueprint_in(&ws.read_blueprint(), &net));

    kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());

    let eks = em.eks().await;
    let cluster = eks.describe_cluster().name(STACK).send().await.unwrap();
    let config = cluster.cluster().unwrap().resources_vpc_config().unwrap();
    assert_eq!(config.vpc_id(), Some(net.vpc.as_str()), "the cluster is in the existing VPC");
    for s in config.subnet_ids() {
        assert!(net.private.contains(s) || net.public.contains(s), "{s} is one of the blueprint's subnets");
    }
    let ng = eks.describe_nodegroup().cluster_name(STACK).nodegroup_name("karpenter").send().await.unwrap();
    assert_eq!(sorted(ng.nodegroup().unwrap().subnets().to_vec()), sorted(net.private.clone()));
    assert!(stack_vpcs(&em, STACK).await.is_empty(), "kbp made no VPC of its own");
    for s in &net.private {
        let tags = subnet_tags(&em, s).await;
        assert_eq!(tags.get("karpenter.sh/discovery").map(String::as_str), Some(STACK), "{s}: {tags:?}");
        assert_eq!(tags.get("kubernetes.io/role/internal-elb").map(String::as_str), Some("1"), "{s}: {tags:?}");
        assert_eq!(tags.get(&format!("kubernetes.io/cluster/{STACK}")).map(String::as_str), Some("shared"));
        assert!(!tags.keys().any(|k| k.starts_with("kbp:")), "kbp's own tags never go on a subnet it does not own");
        assert_eq!(tags.get("tier").map(String::as_str), Some("private"), "the team's tags stay");
    }
    let public = subnet_tags(&em, &net.public[0]).await;
    assert_eq!(public.get("kubernetes.io/role/elb").map(String::as_str), Some("1"), "{public:?}");
    assert!(!public.contains_key("karpenter.sh/discovery"), "Karpenter launches nodes in private subnets only");

    let again = kbp(&em, &["plan", ws.blueprint_arg(), "--detailed-exitcode"], ws.path());
    assert_exit_code(&again, 0, "a second plan has nothing to do");

    kbp_ok(&em, &["destroy", ws.blueprint_arg(), "--auto-approve"], ws.path());
    assert!(eks.list_clusters().send().await.unwrap().clusters().is_empty(), "the cluster is gone");
    let after = snapshot(&em, &net).await;
    for (what, was) in &before {
        assert_eq!(after.get(what), Some(was), "{what} is as it was before kbp");
    }
    assert_eq!(after.len(), before.len(), "nothing new in the VPC: {after:#?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_network_that_cannot_hold_the_cluster_fails_in_preflight_and_nothing_is_made() {
    let em = Emulator::start();
    let net = existing_network(&em).await;
    let other = existing_network(&em).await;
    let ws = Workspace::with_blueprint("minimal");
    let base = ws.read_blueprint();
    let unknown = Network { vpc: "vpc-0123456789abcdef0".into(), ..net.clone() };
    let foreign = Network { private: vec![net.private[0].clone(), other.private[1].clone()], ..net.clone() };
    let one_zone =
        Network { private: vec![net.private[0].clone(), net.public[0].clone()], public: vec![], ..net.clone() };
    let cases = [
        ("an unknown VPC", &unknown, "VPC vpc-0123456789abcdef0 does not exist".to_string()),
        (
            "a subnet of another VPC",
            &foreign,
            format!("subnet {} is in {}, not in vpc.id {}", other.private[1], other.vpc, net.vpc),
        ),
        ("private subnets in one zone", &one_zone, "all in one availability zone (us-west-2a)".to_string()),
    ];
    let inventory = Inventory::take(&em).await;
    for (case, network, expected) in cases {
        ws.write_blueprint(&blueprint_in(&base, network));
        for command in [vec!["plan", ws.blueprint_arg()], vec!["apply", ws.blueprint_arg(), "--auto-approve"]] {
            let out = kbp(&em, &command, ws.path());
            let command = command[0];
            assert_exit_code(&out, 1, &format!("{command} with {case}"));
            let err = stderr(&out);
            assert!(err.contains(&expected), "{command} with {case} says what is wrong\n{err}");
            assert!(err.contains("hint:"), "{command} with {case}: every problem says what to do\n{err}");
        }
        assert_eq!(Inventory::take(&em).await, inventory, "{case}: nothing was made");
        assert!(!ws.path().join(".kbp").join(format!("{STACK}.state.json")).exists(), "{case}: no state was written");
    }
}

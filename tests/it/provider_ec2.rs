//! The EC2 network providers (VPC, subnet, gateways, routes, security group) against a private emulator, one
//! lifecycle per kind: create, read back with the raw SDK (attributes and kbp tags), provider read equals
//! desired, update, delete (twice), and find by kbp tags.

use aws_sdk_ec2::types::Filter;
use kbp::graph::{Address, Attrs};
use kbp::providers::Applied;
use serde_json::{json, Value};

use crate::support::provider::*;
use crate::support::*;

/// Prerequisites of the other kinds, made through the providers under test.
impl Harness {
    async fn vpc(&self) -> String {
        self.create("aws_vpc", "vpc.main", vpc_attrs(true, json!({}))).await.id
    }

    async fn subnet(&self, vpc_id: &str, cidr: &str, az: &str) -> String {
        let attrs = json!({"vpc_id": vpc_id, "cidr_block": cidr, "availability_zone": az, "map_public_ip_on_launch": false, "tags": {}});
        self.create("aws_subnet", &format!("subnet.private[\"{az}\"]"), attrs).await.id
    }
}

fn vpc_attrs(hostnames: bool, tags: Value) -> Value {
    json!({"cidr_block": "10.0.0.0/16", "enable_dns_support": true, "enable_dns_hostnames": hostnames, "tags": tags})
}

async fn vpc_attribute(ec2: &aws_sdk_ec2::Client, id: &str, name: aws_sdk_ec2::types::VpcAttributeName) -> bool {
    let r = ec2.describe_vpc_attribute().vpc_id(id).attribute(name.clone()).send().await.unwrap();
    let v = if name == aws_sdk_ec2::types::VpcAttributeName::EnableDnsHostnames {
        r.enable_dns_hostnames()
    } else {
        r.enable_dns_support()
    };
    v.unwrap().value().unwrap()
}

#[tokio::test]
async fn vpc_lifecycle() {
    use aws_sdk_ec2::types::VpcAttributeName::{EnableDnsHostnames, EnableDnsSupport};
    let h = Harness::start().await;
    let Applied { id, outputs } =
        h.create("aws_vpc", "vpc.main", vpc_attrs(true, json!({"Name": "demo", "team": "a"}))).await;

    let vpc = h.ec2.describe_vpcs().vpc_ids(&id).send().await.unwrap().vpcs()[0].clone();
    assert_eq!(vpc.cidr_block(), Some("10.0.0.0/16"));
    assert_eq!(tag_map(vpc.tags()), expected_tags(&[("Name", "demo"), ("team", "a")], "vpc.main"));
    assert!(vpc_attribute(&h.ec2, &id, EnableDnsSupport).await);
    assert!(vpc_attribute(&h.ec2, &id, EnableDnsHostnames).await);
    assert_eq!(outputs["arn"], format!("arn:aws:ec2:{REGION}:{ACCOUNT_ID}:vpc/{id}"));
    assert_eq!(outputs["owner_id"], ACCOUNT_ID);
    let sg = outputs["default_security_group_id"].as_str().unwrap();
    let groups = h.ec2.describe_security_groups().group_ids(sg).send().await.unwrap();
    assert_eq!(
        (groups.security_groups()[0].vpc_id(), groups.security_groups()[0].group_name()),
        (Some(id.as_str()), Some("default"))
    );
    let main = outputs["main_route_table_id"].as_str().unwrap();
    let tables = h.ec2.describe_route_tables().route_table_ids(main).send().await.unwrap();
    assert_eq!(tables.route_tables()[0].vpc_id(), Some(id.as_str()));

    // Change a tag, drop one, add one, and turn DNS hostnames off.
    h.update("aws_vpc", "vpc.main", &id, vpc_attrs(false, json!({"Name": "demo2", "env": "test"}))).await;
    let vpc = h.ec2.describe_vpcs().vpc_ids(&id).send().await.unwrap().vpcs()[0].clone();
    assert_eq!(tag_map(vpc.tags()), expected_tags(&[("Name", "demo2"), ("env", "test")], "vpc.main"));
    assert!(!vpc_attribute(&h.ec2, &id, EnableDnsHostnames).await);
    assert!(vpc_attribute(&h.ec2, &id, EnableDnsSupport).await);

    // Both DNS flags off, then both back on: the order of the one-attribute-per-call changes matters in AWS.
    let both_off =
        json!({"cidr_block": "10.0.0.0/16", "enable_dns_support": false, "enable_dns_hostnames": false, "tags": {}});
    h.update("aws_vpc", "vpc.main", &id, both_off).await;
    assert!(!vpc_attribute(&h.ec2, &id, EnableDnsSupport).await);
    h.update("aws_vpc", "vpc.main", &id, vpc_attrs(true, json!({}))).await;
    assert!(vpc_attribute(&h.ec2, &id, EnableDnsSupport).await && vpc_attribute(&h.ec2, &id, EnableDnsHostnames).await);

    assert_eq!(h.find("aws_vpc", "vpc.main", vpc_attrs(true, json!({}))).await, Some(id.clone()));
    assert_eq!(h.find("aws_vpc", "vpc.other", vpc_attrs(true, json!({}))).await, None);

    h.delete("aws_vpc", &id).await;
    let err = h.ec2.describe_vpcs().vpc_ids(&id).send().await.unwrap_err();
    assert_eq!(aws_sdk_ec2::error::ProvideErrorMetadata::code(&err), Some("InvalidVpcID.NotFound"));
    assert_eq!(h.find("aws_vpc", "vpc.main", vpc_attrs(true, json!({}))).await, None);
}

#[tokio::test]
async fn subnet_lifecycle() {
    let h = Harness::start().await;
    let vpc_id = h.vpc().await;
    let address = "subnet.public[\"us-west-2a\"]";
    let attrs = |public: bool, tags: Value| json!({"vpc_id": vpc_id, "cidr_block": "10.0.1.0/24", "availability_zone": "us-west-2a", "map_public_ip_on_launch": public, "tags": tags});
    let Applied { id, outputs } =
        h.create("aws_subnet", address, attrs(true, json!({"kubernetes.io/role/elb": "1"}))).await;

    let s = h.ec2.describe_subnets().subnet_ids(&id).send().await.unwrap().subnets()[0].clone();
    assert_eq!(
        (s.vpc_id(), s.cidr_block(), s.availability_zone()),
        (Some(vpc_id.as_str()), Some("10.0.1.0/24"), Some("us-west-2a"))
    );
    assert_eq!(s.map_public_ip_on_launch(), Some(true));
    assert_eq!(tag_map(s.tags()), expected_tags(&[("kubernetes.io/role/elb", "1")], address));
    assert_eq!(outputs["arn"], s.subnet_arn().unwrap());

    h.update("aws_subnet", address, &id, attrs(false, json!({}))).await;
    let s = h.ec2.describe_subnets().subnet_ids(&id).send().await.unwrap().subnets()[0].clone();
    assert_eq!(s.map_public_ip_on_launch(), Some(false));
    assert_eq!(tag_map(s.tags()), expected_tags(&[], address));

    assert_eq!(h.find("aws_subnet", address, attrs(false, json!({}))).await, Some(id.clone()));
    h.delete("aws_subnet", &id).await;
    assert!(h.ec2.describe_subnets().subnet_ids(&id).send().await.is_err(), "subnet is gone from the emulator");
    h.delete("aws_vpc", &vpc_id).await;
}

#[tokio::test]
async fn internet_gateway_lifecycle() {
    let h = Harness::start().await;
    let vpc_id = h.vpc().await;
    let Applied { id, .. } = h
        .create("aws_internet_gateway", "internet_gateway.main", json!({"vpc_id": vpc_id, "tags": {"Name": "igw"}}))
        .await;

    let g = h.ec2.describe_internet_gateways().internet_gateway_ids(&id).send().await.unwrap().internet_gateways()[0]
        .clone();
    assert_eq!(g.attachments().iter().filter_map(|a| a.vpc_id()).collect::<Vec<_>>(), [vpc_id.as_str()]);
    assert_eq!(tag_map(g.tags()), expected_tags(&[("Name", "igw")], "internet_gateway.main"));

    h.update("aws_internet_gateway", "internet_gateway.main", &id, json!({"vpc_id": vpc_id, "tags": {"Name": "igw2"}}))
        .await;
    assert_eq!(h.find("aws_internet_gateway", "internet_gateway.main", json!({})).await, Some(id.clone()));

    // Deleting detaches first; the VPC can then go too.
    h.delete("aws_internet_gateway", &id).await;
    let left = h
        .ec2
        .describe_internet_gateways()
        .filters(Filter::builder().name("internet-gateway-id").values(&id).build())
        .send()
        .await
        .unwrap();
    assert!(left.internet_gateways().is_empty(), "internet gateway is gone from the emulator");
    h.delete("aws_vpc", &vpc_id).await;
}

#[tokio::test]
async fn eip_and_nat_gateway_lifecycle() {
    let h = Harness::start().await;
    let vpc_id = h.vpc().await;
    h.create("aws_internet_gateway", "internet_gateway.main", json!({"vpc_id": vpc_id, "tags": {}})).await;
    let subnet_id = h.subnet(&vpc_id, "10.0.0.0/24", "us-west-2a").await;

    let eip_address = "eip.nat[\"us-west-2a\"]";
    let Applied { id: eip_id, outputs: eip_outputs } =
        h.create("aws_eip", eip_address, json!({"domain": "vpc", "tags": {"Name": "nat"}})).await;
    let a = h.ec2.describe_addresses().allocation_ids(&eip_id).send().await.unwrap().addresses()[0].clone();
    assert_eq!(eip_outputs["public_ip"], a.public_ip().unwrap());
    assert_eq!(tag_map(a.tags()), expected_tags(&[("Name", "nat")], eip_address));
    h.update("aws_eip", eip_address, &eip_id, json!({"domain": "vpc", "tags": {"Name": "nat2"}})).await;
    assert_eq!(h.find("aws_eip", eip_address, json!({})).await, Some(eip_id.clone()));

    let nat_address = "nat_gateway.main[\"us-west-2a\"]";
    let nat_attrs = |tags: Value| json!({"subnet_id": subnet_id, "allocation_id": eip_id, "connectivity_type": "public", "tags": tags});
    let Applied { id: nat_id, .. } = h.create("aws_nat_gateway", nat_address, nat_attrs(json!({"Name": "nat"}))).await;
    let n = h.ec2.describe_nat_gateways().nat_gateway_ids(&nat_id).send().await.unwrap().nat_gateways()[0].clone();
    assert_eq!(n.state().map(|s| s.as_str()), Some("available"));
    assert_eq!(n.subnet_id(), Some(subnet_id.as_str()));
    assert_eq!(n.nat_gateway_addresses()[0].allocation_id(), Some(eip_id.as_str()));
    assert_eq!(tag_map(n.tags()), expected_tags(&[("Name", "nat")], nat_address));

    h.update("aws_nat_gateway", nat_address, &nat_id, nat_attrs(json!({"Name": "nat", "cost": "shared"}))).await;
    let n = h.ec2.describe_nat_gateways().nat_gateway_ids(&nat_id).send().await.unwrap().nat_gateways()[0].clone();
    assert_eq!(tag_map(n.tags()), expected_tags(&[("Name", "nat"), ("cost", "shared")], nat_address));
    assert_eq!(h.find("aws_nat_gateway", nat_address, json!({})).await, Some(nat_id.clone()));
    assert_eq!(h.find("aws_nat_gateway", "nat_gateway.main[\"us-west-2b\"]", json!({})).await, None);

    h.delete("aws_nat_gateway", &nat_id).await;
    let n = h.ec2.describe_nat_gateways().nat_gateway_ids(&nat_id).send().await.unwrap();
    assert!(
        n.nat_gateways().iter().all(|n| n.state().map(|s| s.as_str()) == Some("deleted")),
        "NAT gateway is deleted"
    );
    assert_eq!(h.find("aws_nat_gateway", nat_address, json!({})).await, None, "a deleted NAT gateway is not adopted");

    h.delete("aws_eip", &eip_id).await;
    let left = h
        .ec2
        .describe_addresses()
        .filters(Filter::builder().name("allocation-id").values(&eip_id).build())
        .send()
        .await
        .unwrap();
    assert!(left.addresses().is_empty(), "Elastic IP is released");
}

#[tokio::test]
async fn route_table_route_and_association_lifecycle() {
    let h = Harness::start().await;
    let vpc_id = h.vpc().await;
    let Applied { id: igw_id, .. } =
        h.create("aws_internet_gateway", "internet_gateway.main", json!({"vpc_id": vpc_id, "tags": {}})).await;
    let subnet_id = h.subnet(&vpc_id, "10.0.0.0/24", "us-west-2a").await;
    let Applied { id: eip_id, .. } =
        h.create("aws_eip", "eip.nat[\"us-west-2a\"]", json!({"domain": "vpc", "tags": {}})).await;
    let nat = json!({"subnet_id": subnet_id, "allocation_id": eip_id, "connectivity_type": "public", "tags": {}});
    let Applied { id: nat_id, .. } = h.create("aws_nat_gateway", "nat_gateway.main[\"us-west-2a\"]", nat).await;

    let rt_attrs = |tags: Value| json!({"vpc_id": vpc_id, "tags": tags});
    let Applied { id: rt_id, .. } =
        h.create("aws_route_table", "route_table.public", rt_attrs(json!({"Name": "public"}))).await;
    let Applied { id: rt2_id, .. } =
        h.create("aws_route_table", "route_table.private[\"us-west-2a\"]", rt_attrs(json!({}))).await;
    let t = h.ec2.describe_route_tables().route_table_ids(&rt_id).send().await.unwrap().route_tables()[0].clone();
    assert_eq!(t.vpc_id(), Some(vpc_id.as_str()));
    assert_eq!(tag_map(t.tags()), expected_tags(&[("Name", "public")], "route_table.public"));
    h.update("aws_route_table", "route_table.public", &rt_id, rt_attrs(json!({"Name": "pub"}))).await;
    assert_eq!(h.find("aws_route_table", "route_table.public", json!({})).await, Some(rt_id.clone()));

    // Route: to the internet gateway, then re-pointed at the NAT gateway in place.
    let route = |gw: Option<&str>, nat: Option<&str>| json!({"route_table_id": rt_id, "destination_cidr_block": "0.0.0.0/0", "gateway_id": gw, "nat_gateway_id": nat});
    let Applied { id: route_id, .. } = h.create("aws_route", "route.public_internet", route(Some(&igw_id), None)).await;
    assert_eq!(route_id, format!("{rt_id}_0.0.0.0/0"));
    // (gateway_id, nat_gateway_id) of the table's default route, as the emulator has it.
    let target = |t: &aws_sdk_ec2::types::RouteTable| {
        let route = t.routes().iter().find(|r| r.destination_cidr_block() == Some("0.0.0.0/0"))?;
        Some((route.gateway_id().map(str::to_string), route.nat_gateway_id().map(str::to_string)))
    };
    let t = h.ec2.describe_route_tables().route_table_ids(&rt_id).send().await.unwrap().route_tables()[0].clone();
    assert_eq!(target(&t), Some((Some(igw_id.clone()), None)));
    assert_eq!(
        h.update("aws_route", "route.public_internet", &route_id, route(None, Some(&nat_id))).await.id,
        route_id
    );
    let t = h.ec2.describe_route_tables().route_table_ids(&rt_id).send().await.unwrap().route_tables()[0].clone();
    assert_eq!(target(&t), Some((None, Some(nat_id.clone()))));
    assert_eq!(h.find("aws_route", "route.public_internet", route(None, Some(&nat_id))).await, Some(route_id.clone()));
    // Creating the same route again (a retry after a lost response) succeeds; a different target does not.
    let p = h.provider("aws_route");
    let address: Address = "route.public_internet".parse().unwrap();
    let same = obj(route(None, Some(&nat_id)));
    assert_eq!(p.create(&h.cx, &desired(&address, &same)).await.unwrap().id, route_id);
    let other = obj(route(Some(&igw_id), None));
    assert_eq!(p.create(&h.cx, &desired(&address, &other)).await.unwrap_err().code, "RouteAlreadyExists");

    // Association: to one table, then moved to the other (a new association ID).
    let assoc_address = "route_table_association.private[\"us-west-2a\"]";
    let assoc = |rt: &str| json!({"subnet_id": subnet_id, "route_table_id": rt});
    let Applied { id: assoc_id, .. } = h.create("aws_route_table_association", assoc_address, assoc(&rt_id)).await;
    let associated = |t: &aws_sdk_ec2::types::RouteTable| {
        t.associations().iter().filter_map(|a| a.subnet_id().map(str::to_string)).collect::<Vec<_>>()
    };
    let t = h.ec2.describe_route_tables().route_table_ids(&rt_id).send().await.unwrap().route_tables()[0].clone();
    assert_eq!(associated(&t), [subnet_id.as_str()]);
    assert_eq!(h.find("aws_route_table_association", assoc_address, assoc(&rt_id)).await, Some(assoc_id.clone()));
    assert_eq!(h.find("aws_route_table_association", assoc_address, assoc(&rt2_id)).await, None);

    let moved_id = h.update("aws_route_table_association", assoc_address, &assoc_id, assoc(&rt2_id)).await.id;
    assert_ne!(moved_id, assoc_id, "ReplaceRouteTableAssociation gives a new ID");
    let tables = h.ec2.describe_route_tables().route_table_ids(&rt_id).route_table_ids(&rt2_id).send().await.unwrap();
    let by_id = |id: &str| tables.route_tables().iter().find(|t| t.route_table_id() == Some(id)).unwrap().clone();
    assert!(associated(&by_id(&rt_id)).is_empty());
    assert_eq!(associated(&by_id(&rt2_id)), [subnet_id.as_str()]);
    assert_eq!(h.provider("aws_route_table_association").read(&h.cx, &assoc_id, &Attrs::new()).await.unwrap(), None);

    // Tear down in dependency order; each delete is checked against the emulator.
    h.delete("aws_route_table_association", &moved_id).await;
    let t = h.ec2.describe_route_tables().route_table_ids(&rt2_id).send().await.unwrap().route_tables()[0].clone();
    assert!(associated(&t).is_empty());
    h.delete("aws_route", &route_id).await;
    let t = h.ec2.describe_route_tables().route_table_ids(&rt_id).send().await.unwrap().route_tables()[0].clone();
    assert_eq!(target(&t), None);
    for id in [&rt_id, &rt2_id] {
        h.delete("aws_route_table", id).await;
        assert!(
            h.ec2.describe_route_tables().route_table_ids(id.as_str()).send().await.is_err(),
            "route table {id} is gone"
        );
    }
}

#[tokio::test]
async fn security_group_lifecycle() {
    let h = Harness::start().await;
    let vpc = h.ec2.create_vpc().cidr_block("10.0.0.0/16").send().await.unwrap();
    let vpc_id = vpc.vpc().unwrap().vpc_id().unwrap().to_string();
    let address = "security_group.node";
    let attrs = |tags: Value| json!({"name": "demo-node", "description": "EKS nodes of cluster demo", "vpc_id": vpc_id, "tags": tags});
    let applied = h.create("aws_security_group", address, attrs(json!({"karpenter.sh/discovery": "demo"}))).await;
    let id = applied.id.clone();
    assert_eq!(applied.outputs["arn"], format!("arn:aws:ec2:{REGION}:{ACCOUNT_ID}:security-group/{id}"));

    let describe =
        || async { h.ec2.describe_security_groups().group_ids(&id).send().await.unwrap().security_groups()[0].clone() };
    let g = describe().await;
    assert_eq!(
        (g.group_name(), g.description(), g.vpc_id()),
        (Some("demo-node"), Some("EKS nodes of cluster demo"), Some(vpc_id.as_str()))
    );
    assert_eq!(tag_map(g.tags()), expected_tags(&[("karpenter.sh/discovery", "demo")], address));
    let within = |g: &aws_sdk_ec2::types::SecurityGroup| {
        g.ip_permissions().iter().any(|p| {
            p.ip_protocol() == Some("-1") && p.user_id_group_pairs().iter().any(|pair| pair.group_id() == Some(&id))
        })
    };
    assert!(within(&g), "members of the group may reach each other: {:?}", g.ip_permissions());
    let all_egress = |g: &aws_sdk_ec2::types::SecurityGroup| {
        g.ip_permissions_egress()
            .iter()
            .any(|p| p.ip_protocol() == Some("-1") && p.ip_ranges().iter().any(|r| r.cidr_ip() == Some("0.0.0.0/0")))
    };
    assert!(all_egress(&g), "all egress is allowed: {:?}", g.ip_permissions_egress());

    // Someone removes the rule between members: an update (here of the tags) puts it back.
    let rule =
        g.ip_permissions().iter().find(|p| p.user_id_group_pairs().iter().any(|pair| pair.group_id() == Some(&id)));
    h.ec2.revoke_security_group_ingress().group_id(&id).ip_permissions(rule.unwrap().clone()).send().await.unwrap();
    assert!(!within(&describe().await));
    h.update_in_place(
        "aws_security_group",
        address,
        &id,
        attrs(json!({"karpenter.sh/discovery": "demo", "team": "a"})),
    )
    .await;
    let g = describe().await;
    assert!(within(&g));
    assert_eq!(tag_map(g.tags()), expected_tags(&[("karpenter.sh/discovery", "demo"), ("team", "a")], address));

    assert_eq!(h.find("aws_security_group", address, &attrs(json!({}))).await, Some(id.clone()));
    assert_eq!(h.find("aws_security_group", "security_group.other", &attrs(json!({}))).await, None);

    h.delete("aws_security_group", &id).await;
    let err = h.ec2.describe_security_groups().group_ids(&id).send().await.unwrap_err();
    assert_eq!(aws_sdk_ec2::error::ProvideErrorMetadata::code(&err), Some("InvalidGroup.NotFound"));
    assert_eq!(h.find("aws_security_group", address, &attrs(json!({}))).await, None);
}

#[tokio::test]
async fn reading_unknown_ids_says_gone_and_deleting_them_succeeds() {
    let h = Harness::start().await;
    let unknown = [
        ("aws_vpc", "vpc-0123456789abcdef0"),
        ("aws_subnet", "subnet-0123456789abcdef0"),
        ("aws_internet_gateway", "igw-0123456789abcdef0"),
        ("aws_eip", "eipalloc-0123456789abcdef0"),
        ("aws_nat_gateway", "nat-0123456789abcdef0"),
        ("aws_route_table", "rtb-0123456789abcdef0"),
        ("aws_route", "rtb-0123456789abcdef0_0.0.0.0/0"),
        ("aws_route_table_association", "rtbassoc-0123456789abcdef0"),
        ("aws_security_group", "sg-0123456789abcdef0"),
    ];
    for (kind, id) in unknown {
        let p = h.provider(kind);
        assert_eq!(
            p.read(&h.cx, id, &Attrs::new()).await.unwrap_or_else(|e| panic!("read {kind}: {e}")),
            None,
            "{kind}"
        );
        p.delete(&h.cx, id, &Attrs::new()).await.unwrap_or_else(|e| panic!("delete {kind} {id}: {e}"));
    }
}

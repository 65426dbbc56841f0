//! Teardown's discovery against a private emulator: what Karpenter left in a stack's VPC is found and deleted
//! through the engine's walk, a stack is found and deleted from its tags alone (and only that stack), and kbp
//! stacks are listed with their owner, expiry and ID. Everything is created and read back with the raw SDK.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::support::*;
use aws_sdk_ec2::types::{
    InstanceStateName, IpPermission, NatGatewayState, RequestLaunchTemplateData, ResourceType, UserIdGroupPair,
};
use kbp::exec::{self, Outcome};
use kbp::graph::ResourceGraph;
use kbp::providers::tagged::Owner as Identity;
use kbp::providers::{Context, Found, Registry};
use kbp::state::{State, StateHandle};
use kbp::teardown;
use kbp::teardown::discover::{self, Look};

const AMI: &str = "ami-12c6146b";
const TRUST: &str = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}"#;
const POLICY: &str = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"sqs:*","Resource":"*"}]}"#;

fn kinds_and_ids(found: &[Found]) -> BTreeSet<(&'static str, String)> {
    found.iter().map(|f| (f.kind, f.id.clone())).collect()
}

fn ids<'a>(found: &'a [Found], kind: &str) -> Vec<&'a str> {
    found.iter().filter(|f| f.kind == kind).map(|f| f.id.as_str()).collect()
}

/// Deletes `found` as destroy does: added to (a copy of) `state` as entries, ordered by their edges, deleted
/// by the engine's walk. Only the finds are deleted.
async fn delete_found(cx: &Arc<Context>, state: &State, found: &[Found]) -> Outcome {
    let mut all = state.clone();
    let added = discover::merge(&mut all, found);
    let registry = Registry::builtin();
    let mut p = kbp::plan::diff::diff_destroy(&ResourceGraph::default(), &all, &registry);
    p.changes.retain(|c| added.contains(&c.address));
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let handle = Arc::new(StateHandle::in_memory(all));
    let w = exec::Walk {
        cx: cx.clone(),
        registry: &registry,
        state: handle,
        parallelism: 8,
        events: tx,
        interrupt: Default::default(),
        sweep: None,
    };
    exec::walk(&p, w).await
}

async fn vpc(ec2: &aws_sdk_ec2::Client, tags: &[(&str, &str)]) -> String {
    let out = ec2.create_vpc().cidr_block("10.0.0.0/16").tag_specifications(tag_spec(ResourceType::Vpc, tags)).send();
    out.await.unwrap().vpc.unwrap().vpc_id.unwrap()
}

/// A subnet in us-west-2a for 10.0.1.0/24, else in us-west-2b (EKS wants two zones).
async fn subnet(ec2: &aws_sdk_ec2::Client, vpc: &str, cidr: &str, tags: &[(&str, &str)]) -> String {
    let zone = if cidr == "10.0.1.0/24" { "us-west-2a" } else { "us-west-2b" };
    let out = ec2.create_subnet().vpc_id(vpc).cidr_block(cidr).availability_zone(zone);
    let out = out.tag_specifications(tag_spec(ResourceType::Subnet, tags));
    out.send().await.unwrap().subnet.unwrap().subnet_id.unwrap()
}

async fn security_group(ec2: &aws_sdk_ec2::Client, vpc: &str, name: &str, tags: &[(&str, &str)]) -> String {
    let out = ec2
        .create_security_group()
        .group_name(name)
        .description(name)
        .vpc_id(vpc)
        .tag_specifications(tag_spec(ResourceType::SecurityGroup, tags))
        .send();
    out.await.unwrap().group_id.unwrap()
}

/// Lets `to` receive HTTPS from members of `from`.
async fn allow_from(ec2: &aws_sdk_ec2::Client, to: &str, from: &str) {
    let perm = IpPermission::builder()
        .ip_protocol("tcp")
        .from_port(443)
        .to_port(443)
        .user_id_group_pairs(UserIdGroupPair::builder().group_id(from).build())
        .build();
    ec2.authorize_security_group_ingress().group_id(to).ip_permissions(perm).send().await.unwrap();
}

fn references(sg: &aws_sdk_ec2::types::SecurityGroup, other: &str) -> bool {
    sg.ip_permissions().iter().flat_map(|p| p.user_id_group_pairs()).any(|g| g.group_id() == Some(other))
}

#[tokio::test]
async fn leftovers_finds_what_karpenter_left_in_the_vpc_and_delete_removes_it() {
    init_tracing();
    let em = Emulator::start();
    let cx = Arc::new(Context::from_sdk(em.sdk_config().await, "s1", REGION));
    let (ec2, iam) = (em.ec2().await, em.iam().await);
    let ours = [("kbp:stack", "s1")];

    let vpc_id = vpc(&ec2, &ours).await;
    let subnets =
        [subnet(&ec2, &vpc_id, "10.0.1.0/24", &ours).await, subnet(&ec2, &vpc_id, "10.0.2.0/24", &ours).await];
    let kept_sg = security_group(&ec2, &vpc_id, "nodes", &[("kbp:stack", "s1"), ("kbp:address", "sg.nodes")]).await;
    let lb_sg = security_group(&ec2, &vpc_id, "k8s-lb", &[("elbv2.k8s.aws/cluster", "s1")]).await;
    allow_from(&ec2, &lb_sg, &kept_sg).await;
    allow_from(&ec2, &kept_sg, &lb_sg).await;
    let lt = ec2
        .create_launch_template()
        .launch_template_name("karpenter.k8s.aws/s1/default")
        .launch_template_data(RequestLaunchTemplateData::builder().image_id(AMI).build())
        .tag_specifications(tag_spec(ResourceType::LaunchTemplate, &[("karpenter.k8s.aws/cluster", "s1")]))
        .send()
        .await
        .unwrap()
        .launch_template
        .unwrap()
        .launch_template_id
        .unwrap();
    let node_tags =
        [("karpenter.sh/nodepool", "default"), ("kubernetes.io/cluster/s1", "owned"), ("eks:eks-cluster-name", "s1")];
    let mut nodes = Vec::new();
    for subnet in &subnets {
        let out = ec2
            .run_instances()
            .image_id(AMI)
            .min_count(1)
            .max_count(1)
            .subnet_id(subnet)
            .tag_specifications(tag_spec(ResourceType::Instance, &node_tags))
            .send()
            .await
            .unwrap();
        nodes.push(out.instances()[0].instance_id().unwrap().to_string());
    }
    // An instance outside the stack's VPC and untagged: not the stack's.
    let stranger = ec2.run_instances().image_id(AMI).min_count(1).max_count(1).send().await.unwrap().instances()[0]
        .instance_id()
        .unwrap()
        .to_string();
    iam.create_role().role_name("s1-node").assume_role_policy_document(TRUST).send().await.unwrap();
    iam.create_instance_profile().instance_profile_name("s1_1234").send().await.unwrap();
    iam.add_role_to_instance_profile().instance_profile_name("s1_1234").role_name("s1-node").send().await.unwrap();
    let eni = ec2.create_network_interface().subnet_id(&subnets[0]).send().await.unwrap();
    let eni = eni.network_interface.unwrap().network_interface_id.unwrap();

    // The stack's state is lost: its own resources are known by their tags, and never taken for leftovers.
    let state = State::new("s1", REGION);
    let registry = Registry::builtin();
    let who = Identity { name: "s1", id: None };
    let roles = ["s1-node".to_string()];
    let found = discover::discover(&cx, &registry, &state, who, Look::OutsideState, &roles).await.unwrap();
    let want: BTreeSet<(&str, String)> = [
        ("aws_instance", nodes[0].clone()),
        ("aws_instance", nodes[1].clone()),
        ("aws_launch_template", lt.clone()),
        ("aws_iam_instance_profile", "s1_1234".to_string()),
        ("aws_network_interface", eni.clone()),
        ("aws_security_group", lb_sg.clone()),
    ]
    .into();
    assert_eq!(kinds_and_ids(&found), want, "found:\n{}", discover::describe(&found));
    let node = found.iter().find(|f| f.id == nodes[0]).unwrap();
    assert!(node.detail.contains("nodepool default"), "{node:?}");
    assert!(node.uses.contains(&subnets[0]), "a node holds its subnet: {node:?}");
    let profile = found.iter().find(|f| f.kind == "aws_iam_instance_profile").unwrap();
    assert_eq!(profile.uses, ["s1-node"], "a profile holds its role");

    let outcome = delete_found(&cx, &state, &found).await;
    assert!(outcome.ok(), "{outcome:?}\n{}", em.log());
    assert_eq!(outcome.done, want.len());

    let described = ec2.describe_instances().instance_ids(&nodes[0]).instance_ids(&nodes[1]).send().await.unwrap();
    for i in described.reservations().iter().flat_map(|r| r.instances()) {
        assert_eq!(i.state().and_then(|s| s.name()), Some(&InstanceStateName::Terminated), "{:?}", i.instance_id());
    }
    let stranger = ec2.describe_instances().instance_ids(&stranger).send().await.unwrap();
    let stranger_state = stranger.reservations()[0].instances()[0].state().and_then(|s| s.name()).cloned();
    assert_eq!(stranger_state, Some(InstanceStateName::Running));
    let lts = ec2.describe_launch_templates().filters(filter("tag:karpenter.k8s.aws/cluster", "s1")).send();
    assert!(lts.await.unwrap().launch_templates().is_empty());
    let profile = iam.get_instance_profile().instance_profile_name("s1_1234").send().await;
    assert!(profile.is_err(), "the instance profile is gone");
    let enis = ec2.describe_network_interfaces().filters(filter("vpc-id", &vpc_id)).send().await.unwrap();
    assert!(enis.network_interfaces().iter().all(|n| n.network_interface_id() != Some(eni.as_str())));
    let groups = ec2.describe_security_groups().filters(filter("vpc-id", &vpc_id)).send().await.unwrap();
    let names: BTreeSet<&str> = groups.security_groups().iter().filter_map(|g| g.group_name()).collect();
    assert_eq!(names, BTreeSet::from(["default", "nodes"]));
    let kept = groups.security_groups().iter().find(|g| g.group_id() == Some(kept_sg.as_str())).unwrap();
    assert!(!references(kept, &lb_sg), "the kept group's rule naming the deleted one was revoked");
    // The node role is the stack's (in state): only its instance profile went.
    assert!(iam.get_role().role_name("s1-node").send().await.is_ok());

    let again = discover::discover(&cx, &registry, &state, who, Look::OutsideState, &roles).await.unwrap();
    assert!(again.is_empty(), "nothing left:\n{}", discover::describe(&again));
    let outcome = delete_found(&cx, &state, &found).await;
    assert!(outcome.ok(), "deleting again succeeds: {outcome:?}");
}

/// What a kbp stack named `name` would have made, created by hand and tagged `kbp:stack=<name>`: returns the
/// kinds and IDs teardown should find.
async fn make_stack(em: &Emulator, name: &str) -> BTreeSet<(&'static str, String)> {
    let (ec2, iam, sqs, events, eks) =
        (em.ec2().await, em.iam().await, em.sqs().await, em.eventbridge().await, em.eks().await);
    let kms = aws_sdk_kms::Client::new(&em.sdk_config().await);
    let tags = [("kbp:stack", name)];
    let mut made = BTreeSet::new();

    let vpc_id = vpc(&ec2, &tags).await;
    made.insert(("aws_vpc", vpc_id.clone()));
    let public = subnet(&ec2, &vpc_id, "10.0.1.0/24", &tags).await;
    let private = subnet(&ec2, &vpc_id, "10.0.2.0/24", &tags).await;
    made.insert(("aws_subnet", public.clone()));
    made.insert(("aws_subnet", private.clone()));
    let igw = ec2.create_internet_gateway().tag_specifications(tag_spec(ResourceType::InternetGateway, &tags)).send();
    let igw = igw.await.unwrap().internet_gateway.unwrap().internet_gateway_id.unwrap();
    ec2.attach_internet_gateway().internet_gateway_id(&igw).vpc_id(&vpc_id).send().await.unwrap();
    made.insert(("aws_internet_gateway", igw.clone()));
    let rt = ec2.create_route_table().vpc_id(&vpc_id).tag_specifications(tag_spec(ResourceType::RouteTable, &tags));
    let rt = rt.send().await.unwrap().route_table.unwrap().route_table_id.unwrap();
    ec2.create_route().route_table_id(&rt).destination_cidr_block("0.0.0.0/0").gateway_id(&igw).send().await.unwrap();
    ec2.associate_route_table().route_table_id(&rt).subnet_id(&public).send().await.unwrap();
    made.insert(("aws_route_table", rt));
    let eip = ec2
        .allocate_address()
        .domain(aws_sdk_ec2::types::DomainType::Vpc)
        .tag_specifications(tag_spec(ResourceType::ElasticIp, &tags))
        .send()
        .await
        .unwrap()
        .allocation_id
        .unwrap();
    made.insert(("aws_eip", eip.clone()));
    let nat = ec2
        .create_nat_gateway()
        .subnet_id(&public)
        .allocation_id(&eip)
        .tag_specifications(tag_spec(ResourceType::Natgateway, &tags))
        .send()
        .await
        .unwrap();
    made.insert(("aws_nat_gateway", nat.nat_gateway.unwrap().nat_gateway_id.unwrap()));
    let sg = security_group(&ec2, &vpc_id, &format!("{name}-nodes"), &tags).await;
    allow_from(&ec2, &sg, &sg).await;
    made.insert(("aws_security_group", sg));

    let iam_tag = aws_sdk_iam::types::Tag::builder().key("kbp:stack").value(name).build().unwrap();
    let role = format!("{name}-karpenter");
    iam.create_role().role_name(&role).assume_role_policy_document(TRUST).tags(iam_tag.clone()).send().await.unwrap();
    made.insert(("aws_iam_role", role.clone()));
    let managed = "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore";
    iam.attach_role_policy().role_name(&role).policy_arn(managed).send().await.unwrap();
    iam.put_role_policy().role_name(&role).policy_name("inline").policy_document(POLICY).send().await.unwrap();
    let policy = iam.create_policy().policy_name(format!("{name}-controller")).policy_document(POLICY);
    let policy = policy.tags(iam_tag.clone()).send().await.unwrap().policy.unwrap().arn.unwrap();
    iam.attach_role_policy().role_name(&role).policy_arn(&policy).send().await.unwrap();
    made.insert(("aws_iam_policy", policy));

    let cluster_role = format!("arn:aws:iam::{ACCOUNT_ID}:role/{role}");
    eks.create_cluster()
        .name(name)
        .role_arn(&cluster_role)
        .resources_vpc_config(
            aws_sdk_eks::types::VpcConfigRequest::builder().subnet_ids(&public).subnet_ids(&private).build(),
        )
        .tags("kbp:stack", name)
        .send()
        .await
        .unwrap();
    made.insert(("aws_eks_cluster", name.to_string()));
    eks.create_nodegroup()
        .cluster_name(name)
        .nodegroup_name("controller")
        .node_role(&cluster_role)
        .subnets(&private)
        .tags("kbp:stack", name)
        .send()
        .await
        .unwrap();
    made.insert(("aws_eks_node_group", format!("{name}:controller")));

    let queue = sqs.create_queue().queue_name(format!("{name}-interruption")).tags("kbp:stack", name).send();
    let queue = queue.await.unwrap().queue_url.unwrap();
    made.insert(("aws_sqs_queue", queue));
    let rule_tag = aws_sdk_eventbridge::types::Tag::builder().key("kbp:stack").value(name).build().unwrap();
    let rule = format!("{name}-spot-interruption");
    events.put_rule().name(&rule).event_pattern(r#"{"source":["aws.ec2"]}"#).tags(rule_tag).send().await.unwrap();
    let target = aws_sdk_eventbridge::types::Target::builder()
        .id("queue")
        .arn(format!("arn:aws:sqs:{REGION}:{ACCOUNT_ID}:{name}-interruption"))
        .build()
        .unwrap();
    events.put_targets().rule(&rule).targets(target).send().await.unwrap();
    made.insert(("aws_eventbridge_rule", rule));
    let kms_tag = aws_sdk_kms::types::Tag::builder().tag_key("kbp:stack").tag_value(name).build().unwrap();
    let key = kms.create_key().tags(kms_tag).send().await.unwrap().key_metadata.unwrap().key_id;
    kms.create_alias().alias_name(format!("alias/{name}-secrets")).target_key_id(&key).send().await.unwrap();
    made.insert(("aws_kms_key", key));
    made
}

#[tokio::test]
async fn a_stack_is_found_and_deleted_from_its_tags_alone() {
    init_tracing();
    let em = Emulator::start();
    let cx = Arc::new(Context::from_sdk(em.sdk_config().await, "s2", REGION));
    let s2 = make_stack(&em, "s2").await;
    let other = make_stack(&em, "other").await;
    // An unrelated, untagged KMS key and the account-wide Spot role are never part of a stack.
    let kms = aws_sdk_kms::Client::new(&em.sdk_config().await);
    kms.create_key().send().await.unwrap();
    let iam = em.iam().await;
    iam.create_service_linked_role().aws_service_name("spot.amazonaws.com").send().await.unwrap();

    let s2_only = Identity { name: "s2", id: None };
    let found = teardown::stack(&cx, &Registry::builtin(), s2_only).await.unwrap();
    assert_eq!(kinds_and_ids(&found), s2, "found:\n{}", discover::describe(&found));
    let cluster = found.iter().find(|f| f.kind == "aws_eks_cluster").unwrap();
    assert!(cluster.uses.contains(&"s2-karpenter".to_string()), "the cluster holds its role: {cluster:?}");

    let outcome = delete_found(&cx, &State::new("s2", REGION), &found).await;
    assert!(outcome.ok(), "{outcome:?}\n{}", em.log());
    let key = ids(&found, "aws_kms_key")[0].to_string();

    // Read back, service by service.
    let ec2 = em.ec2().await;
    let tagged = || filter("tag:kbp:stack", "s2");
    assert!(ec2.describe_vpcs().filters(tagged()).send().await.unwrap().vpcs().is_empty());
    assert!(ec2.describe_subnets().filters(tagged()).send().await.unwrap().subnets().is_empty());
    let igws = ec2.describe_internet_gateways().filters(tagged()).send().await.unwrap();
    assert!(igws.internet_gateways().is_empty());
    assert!(ec2.describe_route_tables().filters(tagged()).send().await.unwrap().route_tables().is_empty());
    assert!(ec2.describe_addresses().filters(tagged()).send().await.unwrap().addresses().is_empty());
    assert!(ec2.describe_security_groups().filters(tagged()).send().await.unwrap().security_groups().is_empty());
    // moto ignores tag filters on DescribeNatGateways: the tag is checked here too.
    let nats = ec2.describe_nat_gateways().filter(tagged()).send().await.unwrap();
    let s2_nats = nats.nat_gateways().iter().filter(|n| n.tags().iter().any(|t| t.value() == Some("s2")));
    assert!(s2_nats.clone().count() == 1 && s2_nats.clone().all(|n| n.state() == Some(&NatGatewayState::Deleted)));
    assert!(iam.get_role().role_name("s2-karpenter").send().await.is_err());
    let policy = ids(&found, "aws_iam_policy")[0].to_string();
    assert!(iam.get_policy().policy_arn(&policy).send().await.is_err());
    let eks = em.eks().await;
    assert!(eks.describe_cluster().name("s2").send().await.is_err());
    let sqs = em.sqs().await;
    assert!(sqs.get_queue_url().queue_name("s2-interruption").send().await.is_err());
    let events = em.eventbridge().await;
    assert!(events.describe_rule().name("s2-spot-interruption").send().await.is_err());
    let meta = kms.describe_key().key_id(&key).send().await.unwrap().key_metadata.unwrap();
    assert_eq!(meta.key_state(), Some(&aws_sdk_kms::types::KeyState::PendingDeletion));
    let aliases = kms.list_aliases().send().await.unwrap();
    assert!(aliases.aliases().iter().all(|a| a.alias_name() != Some("alias/s2-secrets")));
    let spot = iam.get_role().role_name("AWSServiceRoleForEC2Spot").send().await;
    assert!(spot.is_ok(), "the Spot service-linked role stays");

    assert!(
        teardown::stack(&cx, &Registry::builtin(), s2_only).await.unwrap().is_empty(),
        "nothing tagged kbp:stack=s2 is left"
    );
    let still = teardown::stack(&cx, &Registry::builtin(), Identity { name: "other", id: None }).await.unwrap();
    assert_eq!(kinds_and_ids(&still), other, "the other stack is intact");

    let outcome = delete_found(&cx, &State::new("s2", REGION), &found).await;
    assert!(outcome.ok(), "deleting again succeeds: {outcome:?}");
}

#[tokio::test]
async fn stacks_lists_each_stack_with_its_owner_and_expiry() {
    init_tracing();
    let em = Emulator::start();
    let cx = Context::from_sdk(em.sdk_config().await, "", REGION);
    let (ec2, eks) = (em.ec2().await, em.eks().await);
    let owner = format!("arn:aws:iam::{ACCOUNT_ID}:user/alice");
    vpc(&ec2, &[("kbp:stack", "old"), ("kbp:owner", &owner), ("kbp:expires", "2020-01-01T00:00:00Z")]).await;
    let young_tags = [("kbp:stack", "young"), ("kbp:owner", owner.as_str()), ("kbp:expires", "2099-01-01T00:00:00Z")];
    let young = vpc(&ec2, &young_tags).await;
    let subnets = [
        subnet(&ec2, &young, "10.0.1.0/24", &[("Name", "a")]).await,
        subnet(&ec2, &young, "10.0.2.0/24", &[("Name", "b")]).await,
    ];
    eks.create_cluster()
        .name("young")
        .role_arn(format!("arn:aws:iam::{ACCOUNT_ID}:role/cluster"))
        .resources_vpc_config(
            aws_sdk_eks::types::VpcConfigRequest::builder().set_subnet_ids(Some(subnets.to_vec())).build(),
        )
        .tags("kbp:stack", "young")
        .send()
        .await
        .unwrap();
    vpc(&ec2, &[("kbp:stack", "kept")]).await;
    vpc(&ec2, &[("Name", "not-kbp")]).await;
    // Two stacks of one name (a state lost and applied anew): told apart by their IDs.
    vpc(&ec2, &[("kbp:stack", "twin"), ("kbp:stack-id", "L1"), ("kbp:expires", "2020-01-01T00:00:00Z")]).await;
    vpc(&ec2, &[("kbp:stack", "twin"), ("kbp:stack-id", "L2")]).await;

    let stacks = teardown::stacks(&cx, true).await.unwrap();
    let names: Vec<&str> = stacks.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["kept", "old", "twin", "twin", "young"]);
    let now = time::OffsetDateTime::now_utc();
    let twins: Vec<(Option<&str>, bool)> = stacks[2..4].iter().map(|s| (s.id.as_deref(), s.expired_at(now))).collect();
    assert_eq!(twins, [(Some("L1"), true), (Some("L2"), false)]);
    let (kept, old, young) = (&stacks[0], &stacks[1], &stacks[4]);
    assert_eq!((kept.owner.as_deref(), kept.expires, kept.created), (None, None, None));
    assert_eq!(old.owner.as_deref(), Some(owner.as_str()));
    assert_eq!(old.expires.map(|t| t.year()), Some(2020));
    assert!(old.expired_at(now) && !young.expired_at(now));
    assert_eq!(young.expires.map(|t| t.year()), Some(2099));
    let created = young.created.expect("the cluster's creation time");
    assert!((now - created).whole_minutes().abs() < 60, "{created}");
    // Without asking for creation times, the same stacks without them.
    let untimed = teardown::stacks(&cx, false).await.unwrap();
    let untimed: Vec<_> = untimed.iter().map(|s| (s.name.as_str(), s.id.as_deref(), s.expires, s.created)).collect();
    let timed: Vec<_> = stacks.iter().map(|s| (s.name.as_str(), s.id.as_deref(), s.expires, None)).collect();
    assert_eq!(untimed, timed);
}

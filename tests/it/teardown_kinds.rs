//! The delete-only kinds teardown finds outside state, against a private emulator: what a workload's controllers
//! leave in a stack's VPC (load balancers with their listeners and target groups, claims' EBS volumes, the EKS
//! control-plane log group, a VPC endpoint) is found by each provider's `discover` with the edges that order its
//! deletion, deleted in that order by the providers' `delete`, and read back with the raw SDK: gone, while the
//! neighbours without the tags are untouched, and the network they held can be deleted at last.

use std::collections::{BTreeMap, BTreeSet};

use crate::support::*;
use aws_sdk_ec2::types::{ResourceType, VolumeState};
use aws_sdk_elasticloadbalancingv2::types::{
    Action, ActionTypeEnum, LoadBalancerSchemeEnum, LoadBalancerTypeEnum, ProtocolEnum, TargetTypeEnum,
};
use kbp::graph::Attrs;
use kbp::providers::{Context, Desired, DiscoveryScope, Found, Registry};

const CLUSTER: &str = "sbx";
const AMI: &str = "ami-12c6146b";
const KINDS: [&str; 6] = [
    "aws_lb",
    "aws_lb_listener",
    "aws_lb_target_group",
    "aws_ebs_volume",
    "aws_vpc_endpoint",
    "aws_cloudwatch_log_group",
];

/// A VPC with a subnet in each of two zones and a security group, as a stack's network.
struct Network {
    vpc: String,
    subnets: [String; 2],
    group: String,
}

async fn network(ec2: &aws_sdk_ec2::Client, cidr: u8, name: &str) -> Network {
    let vpc = ec2.create_vpc().cidr_block(format!("10.{cidr}.0.0/16")).send().await.unwrap();
    let vpc = vpc.vpc.unwrap().vpc_id.unwrap();
    let mut subnets = Vec::new();
    for (i, zone) in [(1, "us-west-2a"), (2, "us-west-2b")] {
        let s = ec2.create_subnet().vpc_id(&vpc).cidr_block(format!("10.{cidr}.{i}.0/24")).availability_zone(zone);
        subnets.push(s.send().await.unwrap().subnet.unwrap().subnet_id.unwrap());
    }
    let group = ec2.create_security_group().group_name(name).description(name).vpc_id(&vpc).send().await.unwrap();
    Network { vpc, subnets: subnets.try_into().unwrap(), group: group.group_id.unwrap() }
}

async fn load_balancer(
    elb: &aws_sdk_elasticloadbalancingv2::Client,
    name: &str,
    net: &Network,
    kind: LoadBalancerTypeEnum,
    scheme: LoadBalancerSchemeEnum,
    tags: &[(&str, &str)],
) -> String {
    let mut call = elb.create_load_balancer().name(name).set_subnets(Some(net.subnets.to_vec()));
    if kind == LoadBalancerTypeEnum::Application {
        call = call.security_groups(&net.group);
    }
    let out = call.r#type(kind).scheme(scheme).set_tags(lb_tags(tags)).send().await.unwrap();
    out.load_balancers()[0].load_balancer_arn().unwrap().to_string()
}

async fn target_group(
    elb: &aws_sdk_elasticloadbalancingv2::Client,
    name: &str,
    vpc: &str,
    protocol: ProtocolEnum,
    port: i32,
    tags: &[(&str, &str)],
) -> String {
    let call = elb.create_target_group().name(name).vpc_id(vpc).protocol(protocol).port(port);
    let out = call.target_type(TargetTypeEnum::Ip).set_tags(lb_tags(tags)).send().await.unwrap();
    out.target_groups()[0].target_group_arn().unwrap().to_string()
}

async fn listener(
    elb: &aws_sdk_elasticloadbalancingv2::Client,
    lb: &str,
    protocol: ProtocolEnum,
    port: i32,
    tg: &str,
) -> String {
    let forward = Action::builder().r#type(ActionTypeEnum::Forward).target_group_arn(tg).build();
    let call = elb.create_listener().load_balancer_arn(lb).protocol(protocol).port(port).default_actions(forward);
    call.send().await.unwrap().listeners()[0].listener_arn().unwrap().to_string()
}

async fn volume(ec2: &aws_sdk_ec2::Client, tags: &[(&str, &str)]) -> String {
    let call = ec2.create_volume().availability_zone("us-west-2a").size(8);
    let call = if tags.is_empty() { call } else { call.tag_specifications(tag_spec(ResourceType::Volume, tags)) };
    call.send().await.unwrap().volume_id.unwrap()
}

/// The found items in an order where each comes before every found item it uses (the reverse of a creation
/// order); panics on a cycle.
fn deletion_order(found: &[Found]) -> Vec<&Found> {
    let ids: BTreeSet<&str> = found.iter().map(|f| f.id.as_str()).collect();
    let mut left: Vec<&Found> = found.iter().collect();
    let mut order = Vec::new();
    while !left.is_empty() {
        // Not yet: what another find uses, or what must go after another find (a volume after its node).
        let waits =
            |f: &Found| left.iter().any(|o| o.id != f.id && (o.uses.contains(&f.id) || f.after.contains(&o.id)));
        let next = left.iter().position(|f| !waits(f)).expect("the uses edges form no cycle");
        order.push(left.remove(next));
    }
    assert!(order.iter().all(|f| ids.contains(f.id.as_str())));
    order
}

fn ids(found: &[Found], kind: &str) -> BTreeSet<String> {
    found.iter().filter(|f| f.kind == kind).map(|f| f.id.clone()).collect()
}

fn by_id<'a>(found: &'a [Found], id: &str) -> &'a Found {
    found.iter().find(|f| f.id == id).unwrap_or_else(|| panic!("{id} not found in {found:#?}"))
}

#[tokio::test]
async fn controllers_leftovers_are_found_ordered_and_deleted_and_neighbours_stay() {
    init_tracing();
    let em = Emulator::start();
    let sdk = em.sdk_config().await;
    let cx = Context::from_sdk(sdk.clone(), CLUSTER, REGION);
    let ec2 = em.ec2().await;
    let elb = aws_sdk_elasticloadbalancingv2::Client::new(&sdk);
    let logs = aws_sdk_cloudwatchlogs::Client::new(&sdk);
    let registry = Registry::builtin();

    let stack = network(&ec2, 0, "stack-nodes").await;
    let neighbour = network(&ec2, 1, "neighbour").await;

    // What the AWS Load Balancer Controller makes for an Ingress and a LoadBalancer Service.
    let alb_tags = [
        ("elbv2.k8s.aws/cluster", CLUSTER),
        ("ingress.k8s.aws/stack", "shop"),
        ("ingress.k8s.aws/resource", "LoadBalancer"),
    ];
    let alb = load_balancer(
        &elb,
        "k8s-shop-web",
        &stack,
        LoadBalancerTypeEnum::Application,
        LoadBalancerSchemeEnum::InternetFacing,
        &alb_tags,
    )
    .await;
    let alb_tg = target_group(&elb, "k8s-shop-web-8080", &stack.vpc, ProtocolEnum::Http, 8080, &alb_tags).await;
    let alb_listener = listener(&elb, &alb, ProtocolEnum::Http, 80, &alb_tg).await;
    let nlb_tags = [
        ("elbv2.k8s.aws/cluster", CLUSTER),
        ("service.k8s.aws/stack", "db/postgres"),
        ("service.k8s.aws/resource", "LoadBalancer"),
    ];
    let nlb = load_balancer(
        &elb,
        "k8s-db-postgres",
        &stack,
        LoadBalancerTypeEnum::Network,
        LoadBalancerSchemeEnum::Internal,
        &nlb_tags,
    )
    .await;
    let nlb_tg = target_group(&elb, "k8s-db-postgres-5432", &stack.vpc, ProtocolEnum::Tcp, 5432, &nlb_tags).await;
    let nlb_listener = listener(&elb, &nlb, ProtocolEnum::Tcp, 5432, &nlb_tg).await;
    // An older controller's target group: stack tags only, found because it is in the stack's VPC.
    let old_tg =
        target_group(&elb, "k8s-old", &stack.vpc, ProtocolEnum::Http, 80, &[("service.k8s.aws/stack", "default/old")])
            .await;

    // Claims' volumes: one free, one attached to a Karpenter node.
    let free = volume(
        &ec2,
        &[
            ("ebs.csi.aws.com/cluster", "true"),
            ("kubernetes.io/cluster/sbx", "owned"),
            ("kubernetes.io/created-for/pvc/name", "data"),
            ("kubernetes.io/created-for/pvc/namespace", "db"),
        ],
    )
    .await;
    let attached = volume(&ec2, &[("ebs.csi.aws.com/cluster", "true"), ("KubernetesCluster", CLUSTER)]).await;
    let node_tags = [("karpenter.sh/nodepool", "default"), ("kubernetes.io/cluster/sbx", "owned")];
    let node = ec2.run_instances().image_id(AMI).min_count(1).max_count(1).subnet_id(&stack.subnets[0]);
    let node = node.tag_specifications(tag_spec(ResourceType::Instance, &node_tags)).send().await.unwrap();
    let node = node.instances()[0].instance_id().unwrap().to_string();
    ec2.attach_volume().volume_id(&attached).instance_id(&node).device("/dev/xvdba").send().await.unwrap();
    // A claim's volume kbp's state holds: never listed.
    let kept = volume(&ec2, &[("ebs.csi.aws.com/cluster", "true"), ("kubernetes.io/cluster/sbx", "owned")]).await;

    logs.create_log_group().log_group_name("/aws/eks/sbx/cluster").send().await.unwrap();
    let endpoint = ec2
        .create_vpc_endpoint()
        .vpc_id(&stack.vpc)
        .service_name("com.amazonaws.us-west-2.ecr.api")
        .vpc_endpoint_type(aws_sdk_ec2::types::VpcEndpointType::Interface)
        .subnet_ids(&stack.subnets[0])
        .security_group_ids(&stack.group)
        .send()
        .await
        .unwrap()
        .vpc_endpoint
        .unwrap()
        .vpc_endpoint_id
        .unwrap();

    // Neighbours: untagged, or tagged for another cluster, or only stack-tagged outside the stack's VPC.
    let other_alb = load_balancer(
        &elb,
        "someone-else",
        &neighbour,
        LoadBalancerTypeEnum::Application,
        LoadBalancerSchemeEnum::InternetFacing,
        &[],
    )
    .await;
    let other_cluster_nlb = load_balancer(
        &elb,
        "k8s-other",
        &neighbour,
        LoadBalancerTypeEnum::Network,
        LoadBalancerSchemeEnum::Internal,
        &[("elbv2.k8s.aws/cluster", "other")],
    )
    .await;
    let other_tg = target_group(
        &elb,
        "k8s-elsewhere",
        &neighbour.vpc,
        ProtocolEnum::Http,
        80,
        &[("service.k8s.aws/stack", "default/x")],
    )
    .await;
    let other_volume = volume(&ec2, &[]).await;
    logs.create_log_group().log_group_name("/aws/eks/sbx/cluster-old").send().await.unwrap();
    let other_endpoint = ec2
        .create_vpc_endpoint()
        .vpc_id(&neighbour.vpc)
        .service_name("com.amazonaws.us-west-2.s3")
        .send()
        .await
        .unwrap()
        .vpc_endpoint
        .unwrap()
        .vpc_endpoint_id
        .unwrap();

    // While the load balancers and the endpoint are there, the stack's network cannot go.
    let refused = ec2.delete_subnet().subnet_id(&stack.subnets[1]).send().await.unwrap_err();
    assert_eq!(aws_sdk_ec2::error::ProvideErrorMetadata::code(&refused), Some("DependencyViolation"));

    let keep = BTreeSet::from([kept.clone()]);
    let vpc_ids = vec![stack.vpc.clone()];
    let scope =
        DiscoveryScope { cluster: CLUSTER, vpc_ids: &vpc_ids, shared_vpc_ids: &[], node_roles: &[], keep: &keep };
    let mut found = Vec::new();
    for kind in KINDS {
        let p = registry.get(kind).unwrap();
        let mine = p.discover(&cx, &scope).await.unwrap_or_else(|e| panic!("discover {kind}: {e}"));
        assert!(mine.iter().all(|f| f.kind == kind), "{kind} lists only its own kind: {mine:#?}");
        found.extend(mine);
    }

    // Exactly the tagged ones.
    assert_eq!(ids(&found, "aws_lb"), BTreeSet::from([alb.clone(), nlb.clone()]));
    assert_eq!(ids(&found, "aws_lb_listener"), BTreeSet::from([alb_listener.clone(), nlb_listener.clone()]));
    assert_eq!(ids(&found, "aws_lb_target_group"), BTreeSet::from([alb_tg.clone(), nlb_tg.clone(), old_tg.clone()]));
    assert_eq!(ids(&found, "aws_ebs_volume"), BTreeSet::from([free.clone(), attached.clone()]));
    assert_eq!(ids(&found, "aws_vpc_endpoint"), BTreeSet::from([endpoint.clone()]));
    assert_eq!(ids(&found, "aws_cloudwatch_log_group"), BTreeSet::from(["/aws/eks/sbx/cluster".to_string()]));

    // The edges that order their deletion.
    let uses = |id: &str| by_id(&found, id).uses.iter().cloned().collect::<BTreeSet<_>>();
    assert!(uses(&alb_listener).contains(&alb) && uses(&alb_listener).contains(&alb_tg), "{:?}", uses(&alb_listener));
    assert!(uses(&nlb_listener).contains(&nlb), "{:?}", uses(&nlb_listener));
    let alb_uses = uses(&alb);
    for held in [&stack.subnets[0], &stack.subnets[1], &stack.group, &stack.vpc, &alb_tg] {
        assert!(alb_uses.contains(held), "the ALB uses {held}: {alb_uses:?}");
    }
    assert!(uses(&nlb).contains(&stack.subnets[0]) && uses(&nlb).contains(&nlb_tg), "{:?}", uses(&nlb));
    for tg in [&alb_tg, &nlb_tg, &old_tg] {
        assert_eq!(uses(tg), BTreeSet::from([stack.vpc.clone()]));
    }
    assert!(uses(&attached).is_empty(), "{:?}", uses(&attached));
    assert_eq!(by_id(&found, &attached).after, vec![node.clone()], "an attached volume goes after its node");
    assert!(uses(&free).is_empty());
    let endpoint_uses = uses(&endpoint);
    for held in [&stack.vpc, &stack.subnets[0], &stack.group] {
        assert!(endpoint_uses.contains(held), "the endpoint uses {held}: {endpoint_uses:?}");
    }
    let alb_found = by_id(&found, &alb);
    assert!(
        alb_found.detail.contains("tagged elbv2.k8s.aws/cluster=sbx") && alb_found.detail.contains("for shop"),
        "{}",
        alb_found.detail
    );
    assert_eq!(alb_found.name.as_deref(), Some("k8s-shop-web"));
    assert!(by_id(&found, &free).detail.contains("for claim db/data"), "{}", by_id(&found, &free).detail);

    // Delete only: kbp never makes these.
    let address = kbp::graph::Address::new("lb", "x");
    let desired = Desired {
        address: &address,
        attrs: &Attrs::new(),
        kbp_tags: BTreeMap::new(),
        client_token: "",
        replaces: None,
    };
    for kind in KINDS {
        let e = registry.get(kind).unwrap().create(&cx, &desired).await.unwrap_err();
        assert!(e.message.contains("never creates") && e.hint.is_some(), "{kind}: {e}");
    }

    // A claim's volume still on a running node is refused, saying what to do.
    let vol = registry.get("aws_ebs_volume").unwrap();
    let e = vol.delete(&cx, &attached, &by_id(&found, &attached).attrs).await.unwrap_err();
    assert_eq!(e.code, "VolumeInUse", "{e}");
    assert!(e.message.contains(&node) && e.hint.as_deref().unwrap_or("").contains("terminate"), "{e} {:?}", e.hint);
    // Its node goes (Karpenter's, or teardown's sweep), as it would before the volume is reached.
    ec2.terminate_instances().instance_ids(&node).send().await.unwrap();

    let order = deletion_order(&found);
    let position = |id: &str| order.iter().position(|f| f.id == id).unwrap();
    assert!(position(&alb_listener) < position(&alb) && position(&alb) < position(&alb_tg));
    assert!(position(&nlb_listener) < position(&nlb) && position(&nlb) < position(&nlb_tg));
    for f in &order {
        let p = registry.get(f.kind).unwrap();
        p.delete(&cx, &f.id, &f.attrs)
            .await
            .unwrap_or_else(|e| panic!("delete {} {}: {e} ({:?})", f.kind, f.id, e.hint));
    }

    // Read back: the tagged ones are gone, the neighbours are there.
    let balancers = elb.describe_load_balancers().send().await.unwrap();
    let balancers: BTreeSet<_> =
        balancers.load_balancers().iter().filter_map(|b| b.load_balancer_arn()).map(str::to_string).collect();
    assert_eq!(balancers, BTreeSet::from([other_alb.clone(), other_cluster_nlb.clone()]));
    let groups = elb.describe_target_groups().send().await.unwrap();
    let groups: BTreeSet<_> =
        groups.target_groups().iter().filter_map(|g| g.target_group_arn()).map(str::to_string).collect();
    assert_eq!(groups, BTreeSet::from([other_tg.clone()]));
    let volumes = ec2.describe_volumes().send().await.unwrap();
    let live: BTreeSet<_> = volumes
        .volumes()
        .iter()
        .filter(|v| v.state() != Some(&VolumeState::Deleted))
        .filter_map(|v| v.volume_id())
        .map(str::to_string)
        .collect();
    assert!(!live.contains(&free) && !live.contains(&attached), "{live:?}");
    assert!(live.contains(&other_volume) && live.contains(&kept), "{live:?}");
    let groups = logs.describe_log_groups().log_group_name_prefix("/aws/eks/sbx/").send().await.unwrap();
    let names: Vec<_> = groups.log_groups().iter().filter_map(|g| g.log_group_name()).collect();
    assert_eq!(names, ["/aws/eks/sbx/cluster-old"]);
    let endpoints = ec2.describe_vpc_endpoints().send().await.unwrap();
    let states: BTreeMap<_, _> = endpoints
        .vpc_endpoints()
        .iter()
        .map(|e| (e.vpc_endpoint_id().unwrap(), e.state().map(|s| s.as_str().to_string())))
        .collect();
    assert_eq!(states.get(endpoint.as_str()).cloned().flatten().as_deref().unwrap_or("deleted"), "deleted");
    assert_eq!(states.get(other_endpoint.as_str()).cloned().flatten().as_deref(), Some("available"));
    for f in &found {
        let p = registry.get(f.kind).unwrap();
        assert_eq!(p.read(&cx, &f.id, &f.attrs).await.unwrap(), None, "{} {} reads as gone", f.kind, f.id);
        // Deleting again succeeds.
        p.delete(&cx, &f.id, &f.attrs).await.unwrap_or_else(|e| panic!("second delete {} {}: {e}", f.kind, f.id));
    }
    // Discovery now finds nothing.
    for kind in KINDS {
        assert_eq!(registry.get(kind).unwrap().discover(&cx, &scope).await.unwrap(), Vec::new(), "{kind}");
    }

    // And the network they held can be deleted at last.
    for subnet in &stack.subnets {
        ec2.delete_subnet().subnet_id(subnet).send().await.unwrap();
    }
    ec2.delete_security_group().group_id(&stack.group).send().await.unwrap();
    ec2.delete_vpc().vpc_id(&stack.vpc).send().await.unwrap();
}

#[tokio::test]
async fn without_the_stacks_vpc_only_what_names_the_cluster_is_found() {
    init_tracing();
    let em = Emulator::start();
    let sdk = em.sdk_config().await;
    let cx = Context::from_sdk(sdk.clone(), CLUSTER, REGION);
    let ec2 = em.ec2().await;
    let elb = aws_sdk_elasticloadbalancingv2::Client::new(&sdk);
    let net = network(&ec2, 2, "nodes").await;
    let in_tree = load_balancer(
        &elb,
        "a1b2c3",
        &net,
        LoadBalancerTypeEnum::Network,
        LoadBalancerSchemeEnum::InternetFacing,
        &[("kubernetes.io/cluster/sbx", "owned"), ("kubernetes.io/service-name", "default/web")],
    )
    .await;
    let stack_tagged_only =
        target_group(&elb, "k8s-old", &net.vpc, ProtocolEnum::Http, 80, &[("ingress.k8s.aws/stack", "shop")]).await;
    ec2.create_vpc_endpoint().vpc_id(&net.vpc).service_name("com.amazonaws.us-west-2.s3").send().await.unwrap();

    let registry = Registry::builtin();
    let keep = BTreeSet::new();
    let vpc_ids: Vec<String> = Vec::new();
    let scope =
        DiscoveryScope { cluster: CLUSTER, vpc_ids: &vpc_ids, shared_vpc_ids: &[], node_roles: &[], keep: &keep };
    let lbs = registry.get("aws_lb").unwrap().discover(&cx, &scope).await.unwrap();
    assert_eq!(lbs.iter().map(|f| f.id.as_str()).collect::<Vec<_>>(), [in_tree.as_str()]);
    assert!(
        lbs[0].detail.contains("kubernetes.io/cluster/sbx=owned") && lbs[0].detail.contains("for default/web"),
        "{}",
        lbs[0].detail
    );
    assert!(registry.get("aws_lb_target_group").unwrap().discover(&cx, &scope).await.unwrap().is_empty());
    assert!(registry.get("aws_vpc_endpoint").unwrap().discover(&cx, &scope).await.unwrap().is_empty());

    // With the VPC, the stack-tagged target group counts; with the balancer's ARN kept, the balancer does not.
    let vpc_ids = vec![net.vpc.clone()];
    let keep = BTreeSet::from([in_tree]);
    let scope =
        DiscoveryScope { cluster: CLUSTER, vpc_ids: &vpc_ids, shared_vpc_ids: &[], node_roles: &[], keep: &keep };
    let tgs = registry.get("aws_lb_target_group").unwrap().discover(&cx, &scope).await.unwrap();
    assert_eq!(tgs.iter().map(|f| f.id.clone()).collect::<Vec<_>>(), [stack_tagged_only]);
    assert!(registry.get("aws_lb").unwrap().discover(&cx, &scope).await.unwrap().is_empty());
    assert!(registry.get("aws_lb_listener").unwrap().discover(&cx, &scope).await.unwrap().is_empty());
    assert_eq!(registry.get("aws_vpc_endpoint").unwrap().discover(&cx, &scope).await.unwrap().len(), 1);
}

//! Teardown that leaves nothing behind, against the emulator: after `kbp apply`, fixtures made with the AWS SDK
//! stand in for what Karpenter and a cluster's workloads create outside kbp's state (instances with Karpenter's
//! tags, a launch template, an instance profile for the node role, a detached network interface, a
//! load-balancer controller's security group; an internet-facing ALB and an internal NLB with a listener and
//! target groups, CSI volumes (one attached to a node, one available), the control-plane log group, a VPC
//! endpoint, a workload's security group that references the node group); `kbp destroy` must leave zero
//! resources of the stack — checked by listing the emulator, not by kbp's own report — and leave an untagged
//! neighbour in another VPC alone, also when killed partway and run again, and from tags alone when the state
//! file is lost. `kbp gc` destroys expired sandboxes and keeps the others, telling two stacks of one name apart.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use crate::support::*;
use aws_sdk_ec2::types::{IpPermission, ResourceType, UserIdGroupPair};
use aws_sdk_elasticloadbalancingv2::types::{
    Action, ActionTypeEnum, LoadBalancerSchemeEnum, LoadBalancerTypeEnum, ProtocolEnum, TargetTypeEnum,
};

const STACK: &str = "ex-karpenter-mng";

/// What Karpenter and a load-balancer controller would have made for the running stack.
async fn karpenter_and_lb_leftovers(em: &Emulator, stack: &str) {
    let ec2 = em.ec2().await;
    let subnets = ec2.describe_subnets().filters(filter("tag:karpenter.sh/discovery", stack)).send().await.unwrap();
    let subnets: Vec<_> = subnets
        .subnets()
        .iter()
        .map(|s| (s.subnet_id().unwrap().to_string(), s.vpc_id().unwrap().to_string()))
        .collect();
    assert!(subnets.len() >= 2, "the stack's private subnets: {subnets:?}");
    let vpc = subnets[0].1.clone();
    let image = ec2.describe_images().send().await.unwrap().images()[0].image_id().unwrap().to_string();
    let cluster_tag = format!("kubernetes.io/cluster/{stack}");
    let node_tags = [
        ("karpenter.sh/nodepool", "default"),
        ("karpenter.k8s.aws/ec2nodeclass", "default"),
        (cluster_tag.as_str(), "owned"),
        ("eks:eks-cluster-name", stack),
    ];
    for (subnet, _) in subnets.iter().take(2) {
        ec2.run_instances()
            .image_id(&image)
            .instance_type(aws_sdk_ec2::types::InstanceType::M5Large)
            .min_count(1)
            .max_count(1)
            .subnet_id(subnet)
            .tag_specifications(tag_spec(ResourceType::Instance, &node_tags))
            .send()
            .await
            .unwrap();
    }
    ec2.create_launch_template()
        .launch_template_name(format!("karpenter.k8s.aws/{stack}-default"))
        .launch_template_data(aws_sdk_ec2::types::RequestLaunchTemplateData::builder().image_id(&image).build())
        .tag_specifications(tag_spec(ResourceType::LaunchTemplate, &[("karpenter.k8s.aws/cluster", stack)]))
        .send()
        .await
        .unwrap();
    ec2.create_network_interface().subnet_id(&subnets[0].0).description("aws-K8S-i-leftover").send().await.unwrap();
    ec2.create_security_group()
        .group_name(format!("k8s-{stack}-ingress"))
        .description("managed by the AWS load balancer controller")
        .vpc_id(&vpc)
        .tag_specifications(tag_spec(ResourceType::SecurityGroup, &[("elbv2.k8s.aws/cluster", stack)]))
        .send()
        .await
        .unwrap();
    // Karpenter names its instance profiles after the cluster and adds the node role
    // (`KarpenterNodeRole-<cluster>` in karpenter-mng).
    let iam = em.iam().await;
    let profile = format!("{stack}_1234567890");
    iam.create_instance_profile().instance_profile_name(&profile).send().await.unwrap();
    let node_role = format!("KarpenterNodeRole-{stack}");
    iam.add_role_to_instance_profile().instance_profile_name(&profile).role_name(node_role).send().await.unwrap();
    workloads_left(em, stack, &vpc, &subnets.iter().map(|(s, _)| s.clone()).collect::<Vec<_>>()).await;
}

/// The neighbour's name: a VPC, subnets and an untagged load balancer and volume no teardown may touch.
const NEIGHBOUR: &str = "neighbour";

/// What a cluster's workloads leave: the AWS Load Balancer Controller's internet-facing ALB (an Ingress) and
/// internal NLB (a LoadBalancer Service) with a listener and target groups, the EBS CSI driver's volumes (one on
/// a Karpenter node, one available), the control-plane log group, a VPC endpoint, and a workload's security
/// group whose rule names the node group; plus an untagged neighbour in another VPC.
async fn workloads_left(em: &Emulator, stack: &str, vpc: &str, subnets: &[String]) {
    let sdk = em.sdk_config().await;
    let ec2 = em.ec2().await;
    let elb = aws_sdk_elasticloadbalancingv2::Client::new(&sdk);
    let logs = aws_sdk_cloudwatchlogs::Client::new(&sdk);
    let groups = ec2.describe_security_groups().filters(filter("vpc-id", vpc)).send().await.unwrap();
    let node_group = groups
        .security_groups()
        .iter()
        .find(|g| g.tags().iter().any(|t| t.key() == Some("kbp:stack")))
        .and_then(|g| g.group_id())
        .expect("the stack's node security group")
        .to_string();
    let web = ec2.create_security_group().group_name("web").description("a workload group").vpc_id(vpc).send().await;
    let web = web.unwrap().group_id.unwrap();
    let from_nodes = IpPermission::builder()
        .ip_protocol("tcp")
        .from_port(8080)
        .to_port(8080)
        .user_id_group_pairs(UserIdGroupPair::builder().group_id(&node_group).build())
        .build();
    ec2.authorize_security_group_ingress().group_id(&web).ip_permissions(from_nodes).send().await.unwrap();

    let ingress = [("elbv2.k8s.aws/cluster", stack), ("ingress.k8s.aws/stack", "shop")];
    let two: Vec<String> = subnets.iter().take(2).cloned().collect();
    let alb = elb.create_load_balancer().name("k8s-shop-web").set_subnets(Some(two.clone())).security_groups(&web);
    let alb = alb.r#type(LoadBalancerTypeEnum::Application).scheme(LoadBalancerSchemeEnum::InternetFacing);
    let alb = alb.set_tags(lb_tags(&ingress)).send().await.unwrap().load_balancers()[0].clone();
    let service = [("elbv2.k8s.aws/cluster", stack), ("service.k8s.aws/stack", "db/postgres")];
    let nlb = elb.create_load_balancer().name("k8s-db-postgres").set_subnets(Some(two));
    let nlb = nlb.r#type(LoadBalancerTypeEnum::Network).scheme(LoadBalancerSchemeEnum::Internal);
    nlb.set_tags(lb_tags(&service)).send().await.unwrap();
    let tg = elb.create_target_group().name("k8s-shop-web-8080").vpc_id(vpc).protocol(ProtocolEnum::Http).port(8080);
    let tg = tg.target_type(TargetTypeEnum::Ip).set_tags(lb_tags(&ingress)).send().await.unwrap();
    let tg = tg.target_groups()[0].target_group_arn().unwrap().to_string();
    let pg = elb.create_target_group().name("k8s-db-postgres-5432").vpc_id(vpc).protocol(ProtocolEnum::Tcp).port(5432);
    pg.target_type(TargetTypeEnum::Ip).set_tags(lb_tags(&service)).send().await.unwrap();
    let forward = Action::builder().r#type(ActionTypeEnum::Forward).target_group_arn(&tg).build();
    let listener = elb.create_listener().load_balancer_arn(alb.load_balancer_arn().unwrap());
    listener.protocol(ProtocolEnum::Http).port(80).default_actions(forward).send().await.unwrap();

    let cluster_tag = format!("kubernetes.io/cluster/{stack}");
    let csi = tag_spec(ResourceType::Volume, &[("ebs.csi.aws.com/cluster", "true"), (cluster_tag.as_str(), "owned")]);
    let node = ec2.describe_instances().filters(filter("tag:karpenter.sh/nodepool", "default")).send().await.unwrap();
    let node = node.reservations()[0].instances()[0].clone();
    let zone = node.placement().and_then(|p| p.availability_zone()).unwrap().to_string();
    let on_node = ec2.create_volume().availability_zone(&zone).size(8).tag_specifications(csi.clone()).send().await;
    let on_node = on_node.unwrap().volume_id.unwrap();
    let attach = ec2.attach_volume().volume_id(&on_node).instance_id(node.instance_id().unwrap()).device("/dev/xvdb");
    attach.send().await.unwrap();
    ec2.create_volume().availability_zone(&zone).size(8).tag_specifications(csi).send().await.unwrap();
    logs.create_log_group().log_group_name(format!("/aws/eks/{stack}/cluster")).send().await.unwrap();
    ec2.create_vpc_endpoint().vpc_id(vpc).service_name("com.amazonaws.us-west-2.s3").send().await.unwrap();

    // One neighbour per emulator, however many stacks a test applies.
    let existing = elb.describe_load_balancers().names(NEIGHBOUR).send().await;
    if existing.is_ok_and(|o| !o.load_balancers().is_empty()) {
        return;
    }
    let other = ec2
        .create_vpc()
        .cidr_block("10.99.0.0/16")
        .tag_specifications(tag_spec(ResourceType::Vpc, &[("Name", NEIGHBOUR)]));
    let other = other.send().await.unwrap().vpc.unwrap().vpc_id.unwrap();
    let mut other_subnets = Vec::new();
    for (i, zone) in ["us-west-2a", "us-west-2b"].iter().enumerate() {
        let call = ec2.create_subnet().vpc_id(&other).cidr_block(format!("10.99.{i}.0/24")).availability_zone(*zone);
        other_subnets.push(call.send().await.unwrap().subnet.unwrap().subnet_id.unwrap());
    }
    let neighbour = elb.create_load_balancer().name(NEIGHBOUR).set_subnets(Some(other_subnets));
    neighbour.r#type(LoadBalancerTypeEnum::Network).scheme(LoadBalancerSchemeEnum::Internal).send().await.unwrap();
    let volume = ec2.create_volume().availability_zone("us-west-2a").size(1);
    volume.tag_specifications(tag_spec(ResourceType::Volume, &[("Name", NEIGHBOUR)])).send().await.unwrap();
}

/// Fails listing whatever the emulator still holds that a destroyed stack could have left.
async fn assert_nothing_left(em: &Emulator) {
    let mut left = Vec::new();
    let ec2 = em.ec2().await;
    for r in ec2.describe_instances().send().await.unwrap().reservations() {
        for i in r.instances() {
            let state = i.state().and_then(|s| s.name()).map(|n| n.as_str().to_string()).unwrap_or_default();
            if state != "terminated" {
                left.push(format!("instance {} ({state})", i.instance_id().unwrap_or("?")));
            }
        }
    }
    for t in ec2.describe_launch_templates().send().await.unwrap().launch_templates() {
        left.push(format!("launch template {}", t.launch_template_name().unwrap_or("?")));
    }
    for n in ec2.describe_network_interfaces().send().await.unwrap().network_interfaces() {
        left.push(format!("network interface {}", n.network_interface_id().unwrap_or("?")));
    }
    for g in ec2.describe_security_groups().send().await.unwrap().security_groups() {
        if g.group_name() != Some("default") {
            left.push(format!("security group {} {}", g.group_id().unwrap_or("?"), g.group_name().unwrap_or("")));
        }
    }
    let neighbour_vpcs: Vec<String> = ec2
        .describe_vpcs()
        .filters(filter("tag:Name", NEIGHBOUR))
        .send()
        .await
        .unwrap()
        .vpcs()
        .iter()
        .filter_map(|v| v.vpc_id().map(str::to_string))
        .collect();
    for v in ec2.describe_vpcs().send().await.unwrap().vpcs() {
        if v.is_default() != Some(true) && !neighbour_vpcs.iter().any(|n| Some(n.as_str()) == v.vpc_id()) {
            left.push(format!("vpc {}", v.vpc_id().unwrap_or("?")));
        }
    }
    let default_vpcs: Vec<String> = ec2
        .describe_vpcs()
        .filters(filter("is-default", "true"))
        .send()
        .await
        .unwrap()
        .vpcs()
        .iter()
        .filter_map(|v| v.vpc_id().map(str::to_string))
        .collect();
    for s in ec2.describe_subnets().send().await.unwrap().subnets() {
        let kept = default_vpcs.iter().chain(&neighbour_vpcs).any(|v| Some(v.as_str()) == s.vpc_id());
        if !kept {
            left.push(format!("subnet {}", s.subnet_id().unwrap_or("?")));
        }
    }
    for n in ec2.describe_nat_gateways().send().await.unwrap().nat_gateways() {
        let state = n.state().map(|s| s.as_str().to_string()).unwrap_or_default();
        if state != "deleted" {
            left.push(format!("nat gateway {} ({state})", n.nat_gateway_id().unwrap_or("?")));
        }
    }
    for v in ec2.describe_volumes().send().await.unwrap().volumes() {
        let named = |n: &str| v.tags().iter().any(|t| t.key() == Some("Name") && t.value() == Some(n));
        let state = v.state().map(|s| s.as_str().to_string()).unwrap_or_default();
        // Root volumes go with their instance; the neighbour's stays.
        if state != "deleted" && !named(NEIGHBOUR) && v.attachments().is_empty() {
            left.push(format!("volume {} ({state})", v.volume_id().unwrap_or("?")));
        }
    }
    let neighbour_left = ec2.describe_volumes().filters(filter("tag:Name", NEIGHBOUR)).send().await.unwrap();
    let neighbour_volume = neighbour_left.volumes().len();
    for e in ec2.describe_vpc_endpoints().send().await.unwrap().vpc_endpoints() {
        let state = e.state().map(|s| s.as_str().to_lowercase()).unwrap_or_default();
        if state != "deleted" {
            left.push(format!("vpc endpoint {} ({state})", e.vpc_endpoint_id().unwrap_or("?")));
        }
    }
    let sdk = em.sdk_config().await;
    let elb = aws_sdk_elasticloadbalancingv2::Client::new(&sdk);
    let mut neighbour_lb = 0;
    for b in elb.describe_load_balancers().send().await.unwrap().load_balancers() {
        match b.load_balancer_name() {
            Some(NEIGHBOUR) => neighbour_lb += 1,
            name => left.push(format!("load balancer {}", name.unwrap_or("?"))),
        }
    }
    for g in elb.describe_target_groups().send().await.unwrap().target_groups() {
        left.push(format!("target group {}", g.target_group_name().unwrap_or("?")));
    }
    let logs = aws_sdk_cloudwatchlogs::Client::new(&sdk);
    for g in logs.describe_log_groups().send().await.unwrap().log_groups() {
        left.push(format!("log group {}", g.log_group_name().unwrap_or("?")));
    }
    for a in ec2.describe_addresses().send().await.unwrap().addresses() {
        left.push(format!("address {}", a.allocation_id().unwrap_or("?")));
    }
    let iam = em.iam().await;
    for r in iam.list_roles().send().await.unwrap().roles() {
        if r.role_name() != "AWSServiceRoleForEC2Spot" {
            left.push(format!("role {}", r.role_name()));
        }
    }
    for p in iam.list_instance_profiles().send().await.unwrap().instance_profiles() {
        left.push(format!("instance profile {}", p.instance_profile_name()));
    }
    for p in iam.list_open_id_connect_providers().send().await.unwrap().open_id_connect_provider_list() {
        left.push(format!("oidc provider {}", p.arn().unwrap_or("?")));
    }
    for p in iam.list_policies().scope(aws_sdk_iam::types::PolicyScopeType::Local).send().await.unwrap().policies() {
        left.push(format!("policy {}", p.policy_name().unwrap_or("?")));
    }
    for c in em.eks().await.list_clusters().send().await.unwrap().clusters() {
        left.push(format!("eks cluster {c}"));
    }
    for q in em.sqs().await.list_queues().send().await.unwrap().queue_urls() {
        left.push(format!("queue {q}"));
    }
    for r in em.eventbridge().await.list_rules().send().await.unwrap().rules() {
        left.push(format!("rule {}", r.name().unwrap_or("?")));
    }
    assert!(left.is_empty(), "left behind:\n  {}\n{}", left.join("\n  "), em.log());
    let neighbour = (neighbour_vpcs.len(), neighbour_lb, neighbour_volume);
    assert!(neighbour == (0, 0, 0) || neighbour == (1, 1, 1), "the neighbour is untouched: {neighbour:?}");
}

fn applied(em: &Emulator) -> Workspace {
    let ws = Workspace::with_blueprint("karpenter-mng");
    kbp_ok(em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());
    ws
}

#[tokio::test(flavor = "multi_thread")]
async fn destroy_removes_karpenters_leftovers_and_leaves_nothing() {
    let em = Emulator::start();
    let ws = applied(&em);
    karpenter_and_lb_leftovers(&em, STACK).await;

    let dry = kbp_ok(&em, &["destroy", ws.blueprint_arg(), "--dry-run"], ws.path());
    let listed = stdout(&dry);
    for what in [
        "aws_instance",
        "aws_launch_template",
        "aws_network_interface",
        "aws_security_group",
        "aws_iam_instance_profile",
        "aws_lb ",
        "aws_lb_listener",
        "aws_lb_target_group",
        "aws_ebs_volume",
        "aws_cloudwatch_log_group",
        "aws_vpc_endpoint",
    ] {
        assert!(listed.contains(what), "--dry-run lists the find {what}:\n{listed}");
    }
    assert!(!listed.contains(NEIGHBOUR), "the neighbour is not the stack's:\n{listed}");
    assert!(listed.contains("eks_cluster.main"), "and the state's resources:\n{listed}");
    assert_eq!(em.eks().await.list_clusters().send().await.unwrap().clusters().len(), 1, "--dry-run deletes nothing");

    let out = kbp_ok(&em, &["destroy", ws.blueprint_arg(), "--auto-approve"], ws.path());
    assert!(stdout(&out).contains("Final scan: nothing of stack"), "{}", describe_output(&out));
    assert_nothing_left(&em).await;
    assert_neighbour_stays(&em).await;
}

async fn assert_neighbour_stays(em: &Emulator) {
    let elb = aws_sdk_elasticloadbalancingv2::Client::new(&em.sdk_config().await);
    let lbs = elb.describe_load_balancers().send().await.unwrap();
    let names: Vec<&str> = lbs.load_balancers().iter().filter_map(|l| l.load_balancer_name()).collect();
    assert_eq!(names, [NEIGHBOUR]);
    let vpcs = em.ec2().await.describe_vpcs().filters(filter("tag:Name", NEIGHBOUR)).send().await.unwrap();
    assert_eq!(vpcs.vpcs().len(), 1, "the neighbour's VPC stays");
}

/// Which lines of `kbp destroy --json` count toward a kill point.
type KillWhen = Box<dyn Fn(&str) -> bool>;

/// Runs `kbp destroy --json` and SIGKILLs it once `when` has been true of `count` output lines.
fn destroy_killed(em: &Emulator, ws: &Workspace, when: &dyn Fn(&str) -> bool, count: usize) -> bool {
    let mut child = kbp_command(em, &["destroy", ws.blueprint_arg(), "--auto-approve", "--json"], ws.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut seen = 0;
    for line in BufReader::new(stdout).lines().map_while(Result::ok) {
        if when(&line) {
            seen += 1;
            if seen >= count {
                child.kill().unwrap();
                let _ = child.wait();
                return true;
            }
        }
    }
    let _ = child.wait();
    false
}

/// Applies, leaves what Karpenter and workloads leave, SIGKILLs `kbp destroy --json` at the `count`th line
/// `when` holds for, runs destroy again and reads back that nothing is left. One test per kill point, so they
/// run in parallel.
async fn killed_then_rerun(name: &str, when: KillWhen, count: usize) {
    let em = Emulator::start();
    let ws = applied(&em);
    karpenter_and_lb_leftovers(&em, STACK).await;
    assert!(destroy_killed(&em, &ws, &*when, count), "destroy reached the kill point `{name}`");
    let again = kbp(&em, &["destroy", ws.blueprint_arg(), "--auto-approve"], ws.path());
    assert_exit_code(&again, 0, &format!("destroy after a kill at `{name}`"));
    assert_nothing_left(&em).await;
    assert_neighbour_stays(&em).await;
}

fn finished_delete(l: &str) -> bool {
    l.contains("\"finished\"") && l.contains("\"delete\"")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_destroy_killed_during_the_in_cluster_deletes_finishes_when_run_again() {
    let when = |l: &str| l.contains("\"finished\"") && l.contains("node_pool.");
    killed_then_rerun("first NodePool delete", Box::new(when), 1).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_destroy_killed_as_the_first_find_is_deleted_finishes_when_run_again() {
    let when = |l: &str| l.contains("\"started\"") && l.contains(".found[");
    killed_then_rerun("first find started", Box::new(when), 1).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_destroy_killed_among_the_finds_finishes_when_run_again() {
    let when = |l: &str| l.contains("\"finished\"") && l.contains(".found[");
    killed_then_rerun("finds deleted", Box::new(when), 4).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_destroy_killed_early_in_the_aws_deletes_finishes_when_run_again() {
    killed_then_rerun("early AWS deletes", Box::new(finished_delete), 14).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_destroy_killed_late_in_the_aws_deletes_finishes_when_run_again() {
    killed_then_rerun("late AWS deletes", Box::new(finished_delete), 55).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn from_tags_cleans_a_stack_whose_state_is_lost() {
    let em = Emulator::start();
    let ws = applied(&em);
    karpenter_and_lb_leftovers(&em, STACK).await;
    std::fs::remove_file(ws.path().join(format!(".kbp/{STACK}.state.json"))).unwrap();

    let out = kbp_ok(&em, &["destroy", "--from-tags", STACK, "--region", "us-west-2", "--auto-approve"], ws.path());
    assert!(stdout(&out).contains("Final scan: nothing of stack"), "{}", describe_output(&out));
    assert_nothing_left(&em).await;
    assert_neighbour_stays(&em).await;
}

/// The stack's queues, rules and keys are found by one tag query; a caller without `tag:GetResources` (the proxy
/// refuses it) gets them by listing each service instead, and nothing is left either.
#[tokio::test(flavor = "multi_thread")]
async fn from_tags_without_the_tag_query_lists_each_service_and_leaves_nothing() {
    let em = Emulator::start();
    let ws = applied(&em);
    std::fs::remove_file(ws.path().join(format!(".kbp/{STACK}.state.json"))).unwrap();
    let denied = serde_json::json!({"rules": [
        {"operation": "GetResources", "action": "fail", "status": 400, "code": "AccessDeniedException"}
    ]});
    let proxy = crate::support::fault_proxy::FaultProxy::start(&em, denied);
    let args = ["destroy", "--from-tags", STACK, "--region", "us-west-2", "--auto-approve"];
    let out = kbp_command(&em, &args, ws.path()).envs(proxy.env()).output().expect("run kbp destroy");
    assert_success(&out, "destroy --from-tags without the tag query");
    let stats = proxy.stats();
    let refused = stats["faults_by_operation"].as_object().expect("faults by operation");
    assert!(refused.keys().any(|op| op.ends_with("GetResources")), "the tag query was sent and refused: {stats:#}");
    assert!(stdout(&out).contains("Final scan: nothing of stack"), "{}", describe_output(&out));
    assert_nothing_left(&em).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn gc_destroys_expired_sandboxes_and_keeps_the_rest() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    let apply = |name: &str, ttl: Option<&str>| {
        let set = format!("cluster.name={name}");
        let mut args = vec!["apply", ws.blueprint_arg(), "--auto-approve", "--set", set.as_str()];
        if let Some(t) = ttl {
            args.extend(["--ttl", t]);
        }
        kbp_ok(&em, &args, ws.path());
    };
    std::thread::scope(|s| {
        s.spawn(|| apply("gc-old-1", Some("1s")));
        s.spawn(|| apply("gc-old-2", Some("1s")));
        s.spawn(|| apply("gc-fresh", Some("8h")));
        s.spawn(|| apply("gc-no-ttl", None));
    });
    std::thread::sleep(Duration::from_secs(2));
    // Another stack named gc-old-1 (another state, so another lineage) that has not expired: only the expired
    // one goes.
    let ec2 = em.ec2().await;
    let twin =
        [("kbp:stack", "gc-old-1"), ("kbp:stack-id", "another-lineage"), ("kbp:expires", "2099-01-01T00:00:00Z")];
    let twin = ec2.create_vpc().cidr_block("10.98.0.0/16").tag_specifications(tag_spec(ResourceType::Vpc, &twin));
    let twin = twin.send().await.unwrap().vpc.unwrap().vpc_id.unwrap();
    let twin_subnet = ec2.create_subnet().vpc_id(&twin).cidr_block("10.98.1.0/24").availability_zone("us-west-2a");
    let twin_subnet = twin_subnet.tag_specifications(tag_spec(
        ResourceType::Subnet,
        &[("kbp:stack", "gc-old-1"), ("kbp:stack-id", "another-lineage")],
    ));
    let twin_subnet = twin_subnet.send().await.unwrap().subnet.unwrap().subnet_id.unwrap();

    let listed = stdout(&kbp_ok(&em, &["gc", "--region", "us-west-2", "--dry-run"], ws.path()));
    for name in ["gc-old-1", "gc-old-2", "gc-fresh", "gc-no-ttl"] {
        assert!(listed.contains(name), "{name} listed:\n{listed}");
    }
    assert!(listed.contains("moto"), "the owner is the caller's ARN:\n{listed}");

    kbp_ok(&em, &["gc", "--region", "us-west-2", "--auto-approve"], ws.path());
    let mut clusters: Vec<String> = em.eks().await.list_clusters().send().await.unwrap().clusters().to_vec();
    clusters.sort();
    assert_eq!(clusters, ["gc-fresh", "gc-no-ttl"], "the expired stacks are gone, the others kept");
    for gone in ["gc-old-1", "gc-old-2"] {
        let vpcs = ec2.describe_vpcs().filters(filter("tag:kbp:stack", gone)).send().await.unwrap();
        let left: Vec<&str> = vpcs.vpcs().iter().filter_map(|v| v.vpc_id()).collect();
        let expected: Vec<&str> = if gone == "gc-old-1" { vec![twin.as_str()] } else { vec![] };
        assert_eq!(left, expected, "{gone}'s expired VPC is gone; a same-name stack of another lineage stays");
    }
    let subnets = ec2.describe_subnets().subnet_ids(&twin_subnet).send().await.unwrap();
    assert_eq!(subnets.subnets().len(), 1, "the unexpired twin's subnet stays");
    for kept in ["gc-fresh", "gc-no-ttl"] {
        let vpcs = ec2.describe_vpcs().filters(filter("tag:kbp:stack", kept)).send().await.unwrap();
        assert_eq!(vpcs.vpcs().len(), 1, "{kept}'s VPC is kept");
    }
    // The collected stacks' states here are emptied, so their next plan starts afresh; the kept ones stay whole.
    let resources = |name: &str| {
        let text = std::fs::read_to_string(ws.path().join(format!(".kbp/{name}.state.json"))).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap()["resources"].as_array().unwrap().len()
    };
    assert_eq!((resources("gc-old-1"), resources("gc-old-2")), (0, 0), "the collected stacks' states are empty");
    assert!(resources("gc-fresh") > 50, "a kept stack's state is untouched");
    let set = "cluster.name=gc-old-1";
    let plan = kbp(&em, &["plan", ws.blueprint_arg(), "--set", set, "--detailed-exitcode"], ws.path());
    assert_exit_code(&plan, 2, "the next plan of a collected stack creates it afresh");
}

fn api(
    client: &kube::Client,
    api_version: &str,
    kind: &str,
    plural: &str,
    ns: Option<&str>,
) -> kube::Api<kube::api::DynamicObject> {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let gvk = kube::api::GroupVersionKind::gvk(group, version, kind);
    let resource = kube::api::ApiResource::from_gvk_with_plural(&gvk, plural);
    match ns {
        Some(ns) => kube::Api::namespaced_with(client.clone(), ns, &resource),
        None => kube::Api::all_with(client.clone(), &resource),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn destroy_goes_on_when_karpenter_is_gone_and_its_finalizers_stay() {
    let em = Emulator::start();
    let ws = applied(&em);
    karpenter_and_lb_leftovers(&em, STACK).await;
    // A node Karpenter launched (its NodeClaim, owned by the NodePool), then the controller uninstalled by hand:
    // nothing will remove the NodeClaim's and the EC2NodeClass's finalizers any more.
    let client = cluster_client(&em, STACK).await;
    let pools = api(&client, "karpenter.sh/v1", "NodePool", "nodepools", None);
    let pool = pools.get("default").await.unwrap();
    let claim: kube::api::DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": { "name": "default-x1y2z", "labels": { "karpenter.sh/nodepool": "default" },
            "ownerReferences": [{ "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "name": "default",
                "uid": pool.metadata.uid.clone().unwrap(), "blockOwnerDeletion": true }] },
        "spec": { "nodeClassRef": { "group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default" },
            "requirements": [{ "key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"] }] },
    }))
    .unwrap();
    let claims = api(&client, "karpenter.sh/v1", "NodeClaim", "nodeclaims", None);
    claims.create(&Default::default(), &claim).await.unwrap();
    // The simulated controller puts its finalizer on the claim while it runs.
    for _ in 0..100 {
        let c = claims.get("default-x1y2z").await.unwrap();
        if c.metadata.finalizers.as_ref().is_some_and(|f| f.iter().any(|f| f == "karpenter.sh/termination")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    api(&client, "apps/v1", "Deployment", "deployments", Some("karpenter"))
        .delete("karpenter", &Default::default())
        .await
        .unwrap();

    let out = kbp_command(&em, &["destroy", ws.blueprint_arg(), "--auto-approve"], ws.path())
        .env("KBP_FINALIZER_WAIT", "2s")
        .output()
        .unwrap();
    assert_exit_code(&out, 0, "destroy with Karpenter gone");
    assert!(stderr(&out).contains("dropping its finalizers"), "the user is told: {}", stderr(&out));
    assert_nothing_left(&em).await;
}

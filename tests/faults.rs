//! What real AWS does to a run, through the fault proxy (tests/support/fault_proxy.rs): answers lost after AWS
//! carried a create out, requests still on their way when kbp was killed, throttling storms and server errors.
//! Whatever happens, a rerun converges with one resource per address, no orphan, a no-op plan and a destroy that
//! leaves nothing — all checked by listing the emulator, never from kbp's report.

mod support;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use aws_sdk_ec2::types::Filter;
use serde_json::{json, Value};
use support::fault_proxy::FaultProxy;
use support::*;

const STACK: &str = "sbx";

/// Every create call an apply of the minimal blueprint makes, by wave: each wave's calls need the previous
/// wave's resources.
const WAVES: &[&[&str]] = &[
    &["CreateVpc", "CreateRole", "CreatePolicy", "CreateKey", "CreateQueue", "PutRule", "CreateServiceLinkedRole"],
    &[
        "CreateSubnet",
        "CreateInternetGateway",
        "AllocateAddress",
        "CreateSecurityGroup",
        "CreateRouteTable",
        "AttachRolePolicy",
        "CreateAlias",
        "SetQueueAttributes",
        "PutTargets",
    ],
    &["CreateNatGateway", "AssociateRouteTable", "CreateRoute"],
    &["CreateCluster"],
    &["CreateNodegroup", "CreateAddon", "CreateAccessEntry", "CreatePodIdentityAssociation"],
];

fn creates() -> impl Iterator<Item = &'static str> {
    WAVES.iter().flat_map(|w| w.iter().copied())
}

/// KMS keys that are enabled (a destroyed stack's key waits out its deletion window).
async fn live_kms_keys(em: &Emulator) -> usize {
    let kms = aws_sdk_kms::Client::new(&em.sdk_config().await);
    let mut live = 0;
    for k in kms.list_keys().send().await.unwrap().keys() {
        let d = kms.describe_key().key_id(k.key_id().unwrap()).send().await.unwrap();
        if d.key_metadata().and_then(|m| m.key_state()).map(|s| s.as_str()) == Some("Enabled") {
            live += 1;
        }
    }
    live
}

/// How many of each kind the emulator holds for the stack: one per address, whatever went wrong.
async fn assert_one_per_address(em: &Emulator) {
    let ec2 = em.ec2().await;
    let tagged = || Filter::builder().name("tag:kbp:stack").values(STACK).build();
    let vpcs = ec2.describe_vpcs().filters(tagged()).send().await.unwrap().vpcs().len();
    let subnets = ec2.describe_subnets().filters(tagged()).send().await.unwrap().subnets().len();
    let igws = ec2.describe_internet_gateways().filters(tagged()).send().await.unwrap().internet_gateways().len();
    let eips = ec2.describe_addresses().filters(tagged()).send().await.unwrap().addresses().len();
    let tables = ec2.describe_route_tables().filters(tagged()).send().await.unwrap().route_tables().len();
    let groups = ec2.describe_security_groups().filters(tagged()).send().await.unwrap().security_groups().len();
    let nats = ec2.describe_nat_gateways().filter(tagged()).send().await.unwrap();
    let nats = nats.nat_gateways().iter().filter(|n| n.state().map(|s| s.as_str()) == Some("available")).count();
    assert_eq!(
        (vpcs, subnets, igws, eips, tables, groups, nats),
        (1, 6, 1, 1, 4, 1, 1),
        "(vpcs, subnets, internet gateways, addresses, route tables, security groups, NAT gateways) of {STACK}"
    );
    let live_keys = live_kms_keys(em).await;
    assert_eq!(live_keys, 1, "one KMS key");
    let eks = em.eks().await;
    assert_eq!(eks.list_clusters().send().await.unwrap().clusters(), [STACK.to_string()]);
    assert_eq!(eks.list_nodegroups().cluster_name(STACK).send().await.unwrap().nodegroups().len(), 1);
    let queues = em.sqs().await.list_queues().send().await.unwrap();
    assert_eq!(queues.queue_urls().len(), 1, "one queue");
}

/// Nothing of the stack is left after destroy (listed from the emulator).
async fn assert_nothing_left(em: &Emulator) {
    let ec2 = em.ec2().await;
    let non_default =
        ec2.describe_vpcs().send().await.unwrap().vpcs().iter().filter(|v| v.is_default() != Some(true)).count();
    let eips = ec2.describe_addresses().send().await.unwrap().addresses().len();
    let nats = ec2.describe_nat_gateways().send().await.unwrap();
    let nats = nats.nat_gateways().iter().filter(|n| n.state().map(|s| s.as_str()) != Some("deleted")).count();
    let clusters = em.eks().await.list_clusters().send().await.unwrap().clusters().len();
    let queues = em.sqs().await.list_queues().send().await.unwrap().queue_urls().len();
    let roles = em.iam().await.list_roles().send().await.unwrap();
    let roles = roles.roles().iter().filter(|r| !r.path().starts_with("/aws-service-role/")).count();
    let live_keys = live_kms_keys(em).await;
    assert_eq!(
        (non_default, eips, nats, clusters, queues, roles, live_keys),
        (0, 0, 0, 0, 0, 0, 0),
        "(vpcs, addresses, NAT gateways, clusters, queues, roles, KMS keys) left after destroy"
    );
}

fn through(proxy: &FaultProxy, em: &Emulator, ws: &Workspace, args: &[&str]) -> std::process::Output {
    kbp_command(em, args, ws.path()).envs(proxy.env()).env("KBP_SETTLE_DELAY", "2s").output().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_create_whose_answer_is_lost_is_adopted_not_made_twice() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    let rules: Vec<Value> =
        creates().map(|op| json!({"operation": op, "action": "drop_response", "count": 1})).collect();
    let proxy = FaultProxy::start(&em, json!({"seed": 1, "rules": rules}));
    let out = through(&proxy, &em, &ws, &["apply", ws.blueprint_arg(), "--auto-approve"]);
    assert_success(&out, "apply with every create's first answer lost");
    let stats = proxy.stats();
    for op in creates() {
        let dropped = stats["faults_by_operation"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| k.ends_with(&format!(":{op}")) || k.as_str() == op)
            .map(|(_, v)| v["drop_response"].as_u64().unwrap_or(0))
            .sum::<u64>();
        assert_eq!(dropped, 1, "{op}'s answer was lost once: {}", stats["faults_by_operation"]);
    }
    assert_one_per_address(&em).await;
    assert_exit_code(&through(&proxy, &em, &ws, &["plan", ws.blueprint_arg(), "--detailed-exitcode"]), 0, "converged");
    assert_success(&through(&proxy, &em, &ws, &["destroy", ws.blueprint_arg(), "--auto-approve"]), "destroy");
    assert_nothing_left(&em).await;
}

/// Starts `kbp apply --json` through the proxy and kills it (SIGKILL) once the proxy holds a delayed request.
fn apply_killed_with_requests_in_flight(proxy: &FaultProxy, em: &Emulator, ws: &Workspace) -> bool {
    let mut child = kbp_command(em, &["apply", ws.blueprint_arg(), "--auto-approve", "--json"], ws.path())
        .envs(proxy.env())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || BufReader::new(stdout).lines().map_while(Result::ok).for_each(drop));
    let started = Instant::now();
    let held = loop {
        let delayed = proxy.stats()["faults"]["delay_forward"].as_u64().unwrap_or(0);
        if delayed > 0 || started.elapsed() > Duration::from_secs(60) {
            break delayed > 0;
        }
        if let Ok(Some(_)) = child.try_wait() {
            break false;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // Let the other creates of the same wave reach the proxy too, then kill.
    std::thread::sleep(Duration::from_millis(400));
    let _ = child.kill();
    let _ = child.wait();
    held
}

#[tokio::test(flavor = "multi_thread")]
async fn creates_in_flight_when_apply_is_killed_land_later_and_are_adopted() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    let proxy = FaultProxy::start(&em, json!({"seed": 2}));
    for wave in WAVES {
        let rules: Vec<Value> = wave
            .iter()
            .map(|op| json!({"operation": op, "action": "delay_forward", "seconds": 3, "count": 1}))
            .collect();
        proxy.set_config(json!({"seed": 2, "rules": rules}));
        assert!(apply_killed_with_requests_in_flight(&proxy, &em, &ws), "a create of {wave:?} was held in flight");
        // The held requests reach the emulator after kbp is gone; the next run must find them, not repeat them.
    }
    proxy.set_config(json!({"seed": 2}));
    let out = kbp_command(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path())
        .envs(proxy.env())
        .env("KBP_SETTLE_DELAY", "5s")
        .output()
        .unwrap();
    assert_success(&out, "apply after five kills with creates in flight");
    assert_one_per_address(&em).await;
    assert_exit_code(&through(&proxy, &em, &ws, &["plan", ws.blueprint_arg(), "--detailed-exitcode"]), 0, "converged");
    assert_success(&through(&proxy, &em, &ws, &["destroy", ws.blueprint_arg(), "--auto-approve"]), "destroy");
    assert_nothing_left(&em).await;
}

/// A storm: 25 % of calls throttled and 5 % answered with a server error, the same faults for the same seed.
/// apply, a no-op plan and destroy each succeed on their first run. (scripts/chaos.sh runs 20 seeds.)
#[tokio::test(flavor = "multi_thread")]
async fn apply_plan_and_destroy_succeed_first_time_in_a_throttling_storm() {
    for seed in [11, 12] {
        let em = Emulator::start();
        let ws = Workspace::with_blueprint("minimal");
        let proxy = FaultProxy::start(&em, json!({"seed": seed, "throttle_rate": 0.25, "server_error_rate": 0.05}));
        let out = through(&proxy, &em, &ws, &["apply", ws.blueprint_arg(), "--auto-approve", "--json"]);
        assert_success(&out, &format!("apply in a storm (seed {seed})"));
        let summary: Value = serde_json::from_str(stdout(&out).lines().last().unwrap()).unwrap();
        assert!(summary["aws"]["retries"].as_u64().unwrap() > 0, "retries are reported: {summary}");
        assert_one_per_address(&em).await;
        let plan = through(&proxy, &em, &ws, &["plan", ws.blueprint_arg(), "--detailed-exitcode"]);
        assert_exit_code(&plan, 0, &format!("no-op plan in a storm (seed {seed})"));
        let out = through(&proxy, &em, &ws, &["destroy", ws.blueprint_arg(), "--auto-approve"]);
        assert_success(&out, &format!("destroy in a storm (seed {seed})"));
        assert_nothing_left(&em).await;
        assert!(proxy.stats()["faults"]["throttle"].as_u64().unwrap() > 50, "{}", proxy.stats());
    }
}

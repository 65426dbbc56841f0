//! State guarding and recovery: the lock, saved plans, resources deleted behind kbp's back, and a failure that
//! stops only its own branch.

use std::time::{Duration, Instant};

use crate::support::*;
use serde_json::Value;

#[tokio::test]
async fn a_held_lock_fails_at_once_naming_the_holder() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    let state = ws.path().join(".kbp/lock-test.state.json");
    let backend = kbp::state::LocalBackend::new(&state);
    let _held = kbp::state::Backend::lock(&backend, "apply", Duration::ZERO).await.unwrap();

    let started = Instant::now();
    let out = kbp(&em, &args("plan", &ws, "cluster.name=lock-test", &[]), ws.path());
    assert_exit_code(&out, 1, "plan while locked");
    assert!(started.elapsed() < Duration::from_secs(5), "fails at once");
    let err = stderr(&out);
    assert!(err.contains("locked by `kbp apply`") && err.contains(&format!("pid {}", std::process::id())), "{err}");

    let started = Instant::now();
    let out = kbp(&em, &args("plan", &ws, "cluster.name=lock-test", &["--lock-timeout", "1s"]), ws.path());
    assert_exit_code(&out, 1, "plan with a lock timeout");
    assert!(started.elapsed() >= Duration::from_secs(1), "waited for the lock");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_saved_plan_applies_exactly_and_refuses_a_state_that_moved_on() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    let name = "cluster.name=saved";
    kbp_ok(&em, &args("plan", &ws, name, &["--out", "first.plan"]), ws.path());
    kbp_ok(&em, &args("plan", &ws, name, &["--out", "second.plan"]), ws.path());
    let out = kbp_ok(&em, &["apply", "first.plan"], ws.path());
    assert!(stdout(&out).contains("Apply complete!"), "{}", describe_output(&out));
    assert_eq!(stack_vpcs(&em, "saved").await.len(), 1);

    let stale = kbp(&em, &["apply", "second.plan"], ws.path());
    assert_exit_code(&stale, 1, "applying a plan made before the state changed");
    assert!(stderr(&stale).contains("state changed since the plan was saved"), "{}", describe_output(&stale));
    // Nothing was created twice.
    assert_eq!(stack_vpcs(&em, "saved").await.len(), 1);
    kbp_ok(&em, &args("destroy", &ws, name, &["--auto-approve"]), ws.path());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_resource_deleted_outside_kbp_is_planned_and_created_again() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    let name = "cluster.name=drift";
    kbp_ok(&em, &args("apply", &ws, name, &["--auto-approve"]), ws.path());
    let state: Value =
        serde_json::from_slice(&std::fs::read(ws.path().join(".kbp/drift.state.json")).unwrap()).unwrap();
    let rt = state["resources"].as_array().unwrap().iter().find(|r| r["address"] == "route_table.public").unwrap();
    let rt_id = rt["id"].as_str().unwrap().to_string();
    let ec2 = em.ec2().await;
    // The public table must be emptied of its associations and routes before EC2 lets it go.
    let table = ec2.describe_route_tables().route_table_ids(&rt_id).send().await.unwrap();
    for a in table.route_tables()[0].associations() {
        ec2.disassociate_route_table().association_id(a.route_table_association_id().unwrap()).send().await.unwrap();
    }
    ec2.delete_route().route_table_id(&rt_id).destination_cidr_block("0.0.0.0/0").send().await.unwrap();
    ec2.delete_route_table().route_table_id(&rt_id).send().await.unwrap();

    let out = kbp(&em, &args("plan", &ws, name, &["--json"]), ws.path());
    assert_success(&out, "plan --json");
    let plan = events::plan(&out);
    let c = plan["changes"].as_array().unwrap();
    let table = c.iter().find(|c| c["address"] == "route_table.public").expect("the deleted table is planned");
    assert_eq!(table["action"], "create");
    assert_eq!(table["reason"], "deleted outside kbp");
    kbp_ok(&em, &args("apply", &ws, name, &["--auto-approve"]), ws.path());
    assert_exit_code(&kbp(&em, &args("plan", &ws, name, &["--detailed-exitcode"]), ws.path()), 0, "converged");
    kbp_ok(&em, &args("destroy", &ws, name, &["--auto-approve"]), ws.path());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failure_stops_only_its_branch_and_a_rerun_finishes() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    let name = "cluster.name=branchy";
    // A role of the same name made outside kbp after the plan was saved (preflight refuses a plan while it is
    // there): creating the Karpenter node role fails.
    kbp_ok(&em, &args("plan", &ws, name, &["--out", "branchy.plan"]), ws.path());
    let iam = em.iam().await;
    let trust = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}"#;
    iam.create_role().role_name("KarpenterNodeRole-branchy").assume_role_policy_document(trust).send().await.unwrap();

    let out = kbp(&em, &["apply", "branchy.plan"], ws.path());
    assert_exit_code(&out, 1, "apply with a conflicting role");
    let err = stderr(&out);
    assert!(err.contains("iam_role.karpenter_node") && err.contains("FAILED"), "{err}");
    assert!(
        err.contains("iam_role_policy_attachment.karpenter_node")
            && err.contains("because iam_role.karpenter_node failed"),
        "{err}"
    );
    // Everything else was made and recorded.
    let state: Value =
        serde_json::from_slice(&std::fs::read(ws.path().join(".kbp/branchy.state.json")).unwrap()).unwrap();
    let ready = |a: &str| {
        state["resources"].as_array().unwrap().iter().any(|r| r["address"] == a && r["status"]["phase"] == "ready")
    };
    assert!(ready("vpc.main") && ready("iam_role.karpenter_controller") && ready("nat_gateway.main[\"us-west-2a\"]"));
    assert!(!ready("iam_role.karpenter_node"));

    iam.delete_role().role_name("KarpenterNodeRole-branchy").send().await.unwrap();
    let out = kbp_ok(&em, &args("apply", &ws, name, &["--auto-approve"]), ws.path());
    assert!(stdout(&out).contains("Apply complete!"));
    assert_exit_code(&kbp(&em, &args("plan", &ws, name, &["--detailed-exitcode"]), ws.path()), 0, "converged");
    kbp_ok(&em, &args("destroy", &ws, name, &["--auto-approve"]), ws.path());
    assert!(iam.get_role().role_name("KarpenterNodeRole-branchy").send().await.is_err());
}

/// A stack lives in one region: a blueprint that names another one than its state is refused before any AWS
/// call, for plan, apply and destroy alike, and nothing is made anywhere.
#[tokio::test(flavor = "multi_thread")]
async fn a_blueprint_in_another_region_than_its_state_is_refused() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());
    let vpcs = em.ec2().await.describe_vpcs().send().await.unwrap().vpcs().len();
    for verb in [&["plan"][..], &["apply", "--auto-approve"], &["destroy", "--auto-approve"]] {
        let mut args = vec![verb[0], ws.blueprint_arg(), "--set", "cluster.region=us-east-1"];
        args.extend_from_slice(&verb[1..]);
        let out = kbp(&em, &args, ws.path());
        assert_exit_code(&out, 1, &format!("kbp {}", verb[0]));
        let err = stderr(&out);
        assert!(err.contains("in region us-west-2, but the blueprint says us-east-1"), "{err}");
        assert!(err.contains("hint: set cluster.region back to us-west-2"), "{err}");
    }
    assert_eq!(em.ec2().await.describe_vpcs().send().await.unwrap().vpcs().len(), vpcs, "nothing made");
    assert_exit_code(&kbp(&em, &["plan", ws.blueprint_arg(), "--detailed-exitcode"], ws.path()), 0, "the stack stands");
}

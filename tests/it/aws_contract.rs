//! kbp sends only what AWS accepts: every shipped blueprint applied, planned again and destroyed against an
//! emulator whose front door refuses what AWS refuses (emulator/README.md, "AWS's input contract"), with the
//! refusal log read back empty; a blueprint whose derived values AWS would refuse stops at validation, before
//! any call; and the front door is really on.

use crate::existing_network::{blueprint_in, existing_network};
use crate::support::*;

fn assert_no_refusals(em: &Emulator, what: &str) {
    let refused = em.refusals();
    assert!(refused.is_empty(), "{what}: the emulator refused what AWS would refuse:\n{refused:#?}");
}

/// apply, a plan that must find nothing to do (`--detailed-exitcode` 0), destroy.
fn round_trip(em: &Emulator, ws: &Workspace, name: &str) {
    kbp_ok(em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());
    assert_no_refusals(em, &format!("apply of {name}"));
    let plan = kbp(em, &["plan", ws.blueprint_arg(), "--detailed-exitcode"], ws.path());
    assert_eq!(plan.status.code(), Some(0), "{name}: the plan after apply has changes:\n{}", describe_output(&plan));
    kbp_ok(em, &["destroy", ws.blueprint_arg(), "--auto-approve"], ws.path());
    assert_no_refusals(em, &format!("destroy of {name}"));
}

#[tokio::test(flavor = "multi_thread")]
async fn every_shipped_blueprint_applies_plans_clean_and_destroys_with_no_request_refused() {
    for name in ["minimal", "karpenter-mng", "spot-fallback", "gpu"] {
        let em = Emulator::start();
        let ws = Workspace::with_blueprint(name);
        round_trip(&em, &ws, name);
    }
    let em = Emulator::start();
    let net = existing_network(&em).await;
    let ws = Workspace::with_blueprint("existing-vpc");
    // The shipped `[vpc]` table names IDs of the example's account: this emulator's network takes its place.
    let mut in_vpc = false;
    let mut base = String::new();
    for line in ws.read_blueprint().lines() {
        if line.starts_with('[') {
            in_vpc = line.trim() == "[vpc]";
        }
        if !in_vpc {
            base.push_str(line);
            base.push('\n');
        }
    }
    ws.write_blueprint(&blueprint_in(&base, &net));
    round_trip(&em, &ws, "existing-vpc");
}

#[tokio::test(flavor = "multi_thread")]
async fn derived_values_aws_would_refuse_stop_kbp_before_any_call() {
    let em = Emulator::start_without_kubernetes();
    let ws = Workspace::with_blueprint("minimal");
    let name = "c".repeat(100);
    ws.write_blueprint(&format!(
        "[cluster]\nname = \"{name}\"\nregion = \"us-west-2\"\n[karpenter]\nnode_role_name = \"KN\"\ncontroller_role_name = \"KC\"\n[[node_group.taints]]\nkey = \"{}\"\neffect = \"NoSchedule\"\n",
        "t".repeat(64)
    ));
    let out = kbp(&em, &["validate", ws.blueprint_arg()], ws.path());
    assert_eq!(out.status.code(), Some(1), "{}", describe_output(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("IAM role name `{name}-eks-cluster` would be 112 characters; AWS allows 1 to 64")),
        "{err}"
    );
    assert!(err.contains("SQS queue name"), "{err}");
    assert!(err.contains("taint key"), "{err}");
    assert!(err.contains(":2:8"), "the name's diagnostics point at cluster.name (line 2, column 8): {err}");

    // apply loads the blueprint the same way: it stops there, and AWS never hears of the stack.
    let out = kbp(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());
    assert_eq!(out.status.code(), Some(1), "{}", describe_output(&out));
    let roles = em.iam().await.list_roles().send().await.unwrap();
    assert!(roles.roles().iter().all(|r| !r.role_name().starts_with("ccc")), "no role was made");
    let vpcs = em.ec2().await.describe_vpcs().send().await.unwrap();
    assert!(vpcs.vpcs().iter().all(|v| v.is_default() == Some(true)), "no VPC was made");
    assert_no_refusals(&em, "a refused blueprint");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_emulator_refuses_what_aws_refuses_and_logs_it() {
    let em = Emulator::start_without_kubernetes();
    em.expect_refusals();
    let iam = em.iam().await;
    let tag = aws_sdk_iam::types::Tag::builder()
        .key("kbp:address")
        .value("iam_policy.karpenter_controller[\"eks-integration\"]")
        .build()
        .unwrap();
    let doc = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:DescribeVpcs","Resource":"*"}]}"#;
    let refused = iam.create_policy().policy_name("p").policy_document(doc).tags(tag).send().await;
    let e = refused.expect_err("IAM refuses `[` and `\"` in a tag value");
    assert_eq!(aws_sdk_iam::error::ProvideErrorMetadata::code(&e), Some("ValidationError"), "{e:?}");
    let listed = iam.list_policies().scope(aws_sdk_iam::types::PolicyScopeType::Local).send().await.unwrap();
    assert!(listed.policies().is_empty(), "a refused request changes nothing");
    let log = em.refusals();
    assert_eq!(log.len(), 1, "{log:#?}");
    assert_eq!(log[0]["operation"], "CreatePolicy");
    // The same policy tagged as kbp tags it now is accepted.
    let tag = aws_sdk_iam::types::Tag::builder()
        .key("kbp:address")
        .value("iam_policy.karpenter_controller/eks-integration")
        .build()
        .unwrap();
    iam.create_policy().policy_name("p").policy_document(doc).tags(tag).send().await.unwrap();
}

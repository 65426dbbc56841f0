//! Drift end to end (issue 12): karpenter-mng applied against the emulator, then changed outside kbp as a person
//! with the console or kubectl would — the node group scaled, an interruption rule disabled, the NodePool's CPU
//! limit edited in the cluster (and, later, the controller scaled to 0). `plan --refresh-only --detailed-exitcode` and `kbp drift` exit 2 naming the three
//! attributes; `apply --refresh-only` takes them into state without touching AWS; a normal `apply` repairs them,
//! read back with the SDK and over the cluster's API; plans afterwards exit 0.

use crate::support::*;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use serde_json::{json, Value};

const STACK: &str = "ex-karpenter-mng";
const GROUP: &str = "eks_node_group.controller";
const RULE: &str = "event_rule.spot_interruption";
const RULE_NAME: &str = "ex-karpenter-mng-SpotInterruption";
const POOL: &str = "node_pool.main[\"default\"]";

async fn node_pools(em: &Emulator) -> Api<DynamicObject> {
    let client = cluster_client(em, STACK).await;
    let gvk = GroupVersionKind::gvk("karpenter.sh", "v1", "NodePool");
    Api::all_with(client, &ApiResource::from_gvk_with_plural(&gvk, "nodepools"))
}

/// What a person changes by hand: the node group's scaling, the rule's state, the NodePool's CPU limit (a merge
/// patch, as `kubectl edit` sends).
async fn change_outside_kbp(em: &Emulator, (min, desired): (i32, i32), cpu: &str) {
    let scaling = aws_sdk_eks::types::NodegroupScalingConfig::builder().min_size(min).max_size(3).desired_size(desired);
    em.eks()
        .await
        .update_nodegroup_config()
        .cluster_name(STACK)
        .nodegroup_name("karpenter")
        .scaling_config(scaling.build())
        .send()
        .await
        .expect("UpdateNodegroupConfig");
    em.eventbridge().await.disable_rule().name(RULE_NAME).send().await.expect("DisableRule");
    let patch = json!({"spec": {"limits": {"cpu": cpu}}});
    node_pools(em).await.patch("default", &PatchParams::default(), &Patch::Merge(&patch)).await.expect("patch");
}

async fn scale_controller(em: &Emulator, replicas: i64) {
    let client = cluster_client(em, STACK).await;
    let deployments: Api<k8s_openapi::api::apps::v1::Deployment> = Api::namespaced(client, "karpenter");
    let patch = json!({"spec": {"replicas": replicas}});
    deployments.patch("karpenter", &PatchParams::default(), &Patch::Merge(&patch)).await.expect("scale the controller");
}

async fn controller_replicas(em: &Emulator) -> Option<i32> {
    let client = cluster_client(em, STACK).await;
    let deployments: Api<k8s_openapi::api::apps::v1::Deployment> = Api::namespaced(client, "karpenter");
    deployments.get("karpenter").await.unwrap().spec.and_then(|s| s.replicas)
}

/// What AWS and the cluster hold: (min, desired) of the node group, the rule's state, the NodePool's CPU limit.
async fn read_back(em: &Emulator) -> ((i32, i32), String, Value) {
    let ng = em.eks().await.describe_nodegroup().cluster_name(STACK).nodegroup_name("karpenter").send().await;
    let ng = ng.unwrap().nodegroup.unwrap();
    let s = ng.scaling_config().unwrap();
    let rule = em.eventbridge().await.describe_rule().name(RULE_NAME).send().await.unwrap();
    let pool = serde_json::to_value(node_pools(em).await.get("default").await.unwrap()).unwrap();
    (
        (s.min_size().unwrap(), s.desired_size().unwrap()),
        rule.state().unwrap().as_str().to_string(),
        pool["spec"]["limits"]["cpu"].clone(),
    )
}

/// `(address, path, recorded, now)` of every drifted attribute of a JSON plan.
fn drifted(plan: &Value) -> Vec<(String, String, Value, Value)> {
    let mut out = Vec::new();
    for d in plan["drift"].as_array().unwrap_or_else(|| panic!("the plan has a drift report: {plan}")) {
        assert_eq!(d["drifted"], "changed", "{d}");
        for a in d["attributes"].as_array().unwrap() {
            out.push((
                d["address"].as_str().unwrap().to_string(),
                a["path"].as_str().unwrap().to_string(),
                a["recorded"].clone(),
                a["now"].clone(),
            ));
        }
    }
    out.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    out
}

fn state_file(ws: &Workspace) -> Value {
    let text = std::fs::read_to_string(ws.path().join(format!(".kbp/{STACK}.state.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn recorded<'s>(state: &'s Value, address: &str) -> &'s Value {
    let resources = state["resources"].as_array().unwrap();
    &resources.iter().find(|r| r["address"] == address).unwrap_or_else(|| panic!("{address} in state"))["attributes"]
}

#[tokio::test(flavor = "multi_thread")]
async fn drift_is_reported_accepted_into_state_and_repaired() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("karpenter-mng");
    let bp = ws.blueprint_arg();
    kbp_ok(&em, &["apply", bp, "--auto-approve"], ws.path());
    let clean = kbp(&em, &["drift", bp], ws.path());
    assert_exit_code(&clean, 0, "drift right after apply");
    assert!(stdout(&clean).starts_with("No drift."), "{}", stdout(&clean));

    change_outside_kbp(&em, (2, 3), "5").await;
    let want = vec![
        (GROUP.to_string(), "scaling.desired_size".to_string(), json!(2), json!(3)),
        (RULE.to_string(), "state".to_string(), json!("ENABLED"), json!("DISABLED")),
        (POOL.to_string(), "manifest.spec.limits.cpu".to_string(), json!("1000"), json!("5")),
    ];

    // Text: each attribute, as recorded → now.
    let text = kbp(&em, &["plan", bp, "--refresh-only", "--detailed-exitcode"], ws.path());
    assert_exit_code(&text, 2, "plan --refresh-only with drift");
    let shown = stdout(&text);
    for line in [
        "~ eks_node_group.controller (aws_eks_node_group, ex-karpenter-mng:karpenter)",
        "scaling.desired_size : 2 → 3",
        "state : \"ENABLED\" → \"DISABLED\"",
        "manifest.spec.limits.cpu : \"1000\" → \"5\"",
        "Drift: 3 changed, 0 deleted outside kbp.",
    ] {
        assert!(shown.contains(line), "`{line}` in\n{shown}");
    }
    assert!(!shown.contains("to add"), "nothing is planned: {shown}");

    // JSON, from plan and from `kbp drift`: the same report, schema-valid (events:: checks every line).
    let json_plan = kbp(&em, &["plan", bp, "--refresh-only", "--detailed-exitcode", "--json"], ws.path());
    assert_exit_code(&json_plan, 2, "plan --refresh-only --json");
    let plan = events::plan(&json_plan);
    assert_eq!(drifted(&plan), want);
    assert_eq!((plan["refresh_only"].clone(), plan["changes"].clone()), (json!(true), json!([])));
    let report = kbp(&em, &["drift", bp, "--json"], ws.path());
    assert_exit_code(&report, 2, "kbp drift --json");
    assert_eq!(drifted(&events::plan(&report)), want);
    let summary = events::summary(&report);
    assert_eq!((&summary["command"], &summary["ok"], &summary["drift"]), (&json!("drift"), &json!(true), &json!(3)));

    // A normal plan repairs the drift: three updates, nothing else.
    let repair = events::plan(&kbp(&em, &["plan", bp, "--json"], ws.path()));
    let mut updates: Vec<(&str, &str)> = repair["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["address"].as_str().unwrap(), c["action"].as_str().unwrap()))
        .collect();
    updates.sort();
    assert_eq!(updates, [(GROUP, "update"), (RULE, "update"), (POOL, "update")], "{}", repair["changes"]);

    // Bad input changes nothing: state stays as it was.
    let before = state_file(&ws);
    let bad = kbp(&em, &["apply", bp, "--refresh-only", "--auto-approve", "--set", "node_group.min_size=x"], ws.path());
    assert_exit_code(&bad, 1, "apply --refresh-only with a bad --set");
    let conflict = kbp(&em, &["plan", bp, "--refresh-only", "--destroy"], ws.path());
    assert_exit_code(&conflict, 1, "plan --refresh-only --destroy");
    kbp_ok(&em, &["plan", bp, "--out", "saved.plan"], ws.path());
    let saved = kbp(&em, &["apply", "saved.plan", "--refresh-only", "--auto-approve"], ws.path());
    assert_exit_code(&saved, 1, "apply --refresh-only of a saved plan");
    assert!(stderr(&saved).contains("--refresh-only takes a blueprint"), "{}", stderr(&saved));
    assert_eq!(state_file(&ws), before, "state unchanged by refused runs");
    assert_eq!(read_back(&em).await, ((2, 3), "DISABLED".to_string(), json!("5")), "and AWS too");

    // Accepted: state holds what AWS and the cluster hold, AWS is untouched, and there is no drift left.
    let accepted = kbp_ok(&em, &["apply", bp, "--refresh-only", "--auto-approve", "--json"], ws.path());
    let lines = events::events(&accepted);
    assert_eq!(drifted(&events::of_type(&lines, "plan")[0]["plan"]), want, "the drift it accepts is shown first");
    let summary = lines.last().unwrap();
    assert_eq!((&summary["command"], &summary["ok"], &summary["drift"]), (&json!("apply"), &json!(true), &json!(3)));
    assert!(events::of_type(&lines, "started").is_empty(), "no resource operation runs: {lines:?}");
    let state = state_file(&ws);
    assert_eq!(state["serial"], before["serial"].as_u64().unwrap() + 1, "accepted in one write");
    assert_eq!(recorded(&state, GROUP)["scaling"]["desired_size"], 3);
    assert_eq!(recorded(&state, RULE)["state"], "DISABLED");
    assert_eq!(recorded(&state, POOL)["manifest"]["spec"]["limits"]["cpu"], "5");
    assert_eq!(read_back(&em).await, ((2, 3), "DISABLED".to_string(), json!("5")), "AWS is not changed");
    let none = kbp(&em, &["plan", bp, "--refresh-only", "--detailed-exitcode"], ws.path());
    assert_exit_code(&none, 0, "plan --refresh-only after accepting the drift");

    // Changed again, the controller scaled to 0 too, then repaired by apply.
    change_outside_kbp(&em, (3, 3), "7").await;
    scale_controller(&em, 0).await;
    let again = kbp(&em, &["drift", bp], ws.path());
    assert_exit_code(&again, 2, "drift after a second change");
    assert!(stdout(&again).contains("replicas : 2 → 0"), "{}", stdout(&again));
    assert!(stdout(&again).contains("scaling.min_size : 2 → 3"), "{}", stdout(&again));
    assert!(stdout(&again).contains("manifest.spec.limits.cpu : \"5\" → \"7\""), "{}", stdout(&again));
    kbp_ok(&em, &["apply", bp, "--auto-approve"], ws.path());
    assert_eq!(read_back(&em).await, ((2, 2), "ENABLED".to_string(), json!("1000")), "apply repaired the drift");
    assert_eq!(controller_replicas(&em).await, Some(2), "the controller is scaled back");
    let after = kbp(&em, &["plan", bp, "--detailed-exitcode"], ws.path());
    assert_exit_code(&after, 0, "plan after the repair");
    assert_exit_code(&kbp(&em, &["drift", bp], ws.path()), 0, "drift after the repair");
}

//! `kbp import` and `[[import]]` blocks against the emulator. A team made the cluster by hand (the raw SDK):
//! its IAM roles, the EKS cluster and the controller node group, in a VPC of its own. kbp imports each into the
//! address of a blueprint for that VPC; the next plan updates them (kbp's tags, what differs from the
//! blueprint) and creates only what was not imported, never replaces them; apply converges, a second plan is
//! empty, and the cluster AWS holds is still the one made by hand, now tagged as kbp's. Bad input is refused
//! with state byte for byte as it was.

use std::path::PathBuf;

use serde_json::Value;

use crate::existing_network::{blueprint_in, existing_network, Network};
use crate::support::events;
use crate::support::*;

const STACK: &str = "sbx";
const TRUST_EC2: &str = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}"#;
const TRUST_EKS: &str = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"eks.amazonaws.com"},"Action":["sts:AssumeRole","sts:TagSession"]}]}"#;

/// What a team made by hand: the roles, the cluster and its node group, as the blueprint names them.
struct HandMade {
    cluster_arn: String,
    created_at: String,
}

async fn made_by_hand(em: &Emulator, net: &Network) -> HandMade {
    let iam = em.iam().await;
    let mut arns = Vec::new();
    for (name, trust) in [(format!("{STACK}-eks-cluster"), TRUST_EKS), (format!("{STACK}-eks-nodes"), TRUST_EC2)] {
        let role = iam.create_role().role_name(&name).assume_role_policy_document(trust).description("made by hand");
        arns.push(role.send().await.unwrap().role.unwrap().arn);
    }
    let eks = em.eks().await;
    let vpc = aws_sdk_eks::types::VpcConfigRequest::builder()
        .set_subnet_ids(Some(net.private.clone()))
        .security_group_ids(&net.neighbour_group)
        .build();
    let c = eks.create_cluster().name(STACK).version("1.36").role_arn(&arns[0]).resources_vpc_config(vpc);
    let c = c.tags("team", "platform").send().await.unwrap().cluster.unwrap();
    let ng = eks
        .create_nodegroup()
        .cluster_name(STACK)
        .nodegroup_name("karpenter")
        .node_role(&arns[1])
        .set_subnets(Some(net.private.clone()))
        .ami_type(aws_sdk_eks::types::AmiTypes::BottlerocketX8664)
        .instance_types("m5.large")
        .capacity_type(aws_sdk_eks::types::CapacityTypes::OnDemand)
        .disk_size(20)
        .scaling_config(
            aws_sdk_eks::types::NodegroupScalingConfig::builder().min_size(1).max_size(3).desired_size(1).build(),
        );
    ng.send().await.unwrap();
    HandMade { cluster_arn: c.arn.unwrap(), created_at: format!("{:?}", c.created_at) }
}

/// The emulator holding a network and a cluster made by hand in it, and a workspace whose blueprint names that
/// network.
async fn made_by_hand_in_a_workspace() -> (Emulator, Network, HandMade, Workspace) {
    let em = Emulator::start();
    let net = existing_network(&em).await;
    let hand = made_by_hand(&em, &net).await;
    let ws = Workspace::with_blueprint("minimal");
    ws.write_blueprint(&blueprint_in(&ws.read_blueprint(), &net));
    (em, net, hand, ws)
}

fn state_file(ws: &Workspace) -> PathBuf {
    ws.path().join(".kbp").join(format!("{STACK}.state.json"))
}

fn read_state(ws: &Workspace) -> Option<Vec<u8>> {
    std::fs::read(state_file(ws)).ok()
}

/// The plan's action for each address, from `plan --json`.
fn actions(plan: &Value) -> Vec<(String, String)> {
    let changes = plan["changes"].as_array().expect("a plan has changes");
    changes
        .iter()
        .map(|c| (c["address"].as_str().unwrap().to_string(), c["action"].as_str().unwrap().to_string()))
        .collect()
}

fn action_of<'a>(actions: &'a [(String, String)], address: &str) -> Option<&'a str> {
    actions.iter().find(|(a, _)| a == address).map(|(_, x)| x.as_str())
}

const IMPORTS: [(&str, &str); 4] = [
    ("iam_role.cluster", "sbx-eks-cluster"),
    ("iam_role.node_group", "sbx-eks-nodes"),
    ("eks_cluster.main", "sbx"),
    ("eks_node_group.controller", "sbx:karpenter"),
];

#[tokio::test(flavor = "multi_thread")]
async fn a_cluster_made_by_hand_is_imported_updated_in_place_and_converges() {
    let (em, _, hand, ws) = made_by_hand_in_a_workspace().await;
    let bp = ws.blueprint_arg();

    // A dry run reads and shows, and writes nothing.
    let dry = kbp_ok(&em, &["import", bp, "iam_role.cluster", "sbx-eks-cluster", "--dry-run"], ws.path());
    assert!(stdout(&dry).contains("kbp:stack"), "the plan shows kbp's tags to add:\n{}", stdout(&dry));
    assert!(read_state(&ws).is_none(), "a dry run writes no state");

    for (address, id) in IMPORTS {
        let out = kbp_ok(&em, &["import", bp, address, id], ws.path());
        assert!(stdout(&out).contains(&format!("Imported {address}")), "{}", stdout(&out));
    }
    let state: Value = serde_json::from_slice(&read_state(&ws).unwrap()).unwrap();
    let entries = state["resources"].as_array().unwrap();
    for (address, id) in IMPORTS {
        let e = entries.iter().find(|r| r["address"] == address).unwrap_or_else(|| panic!("{address} in state"));
        assert_eq!((e["id"].as_str(), e["imported"].as_bool()), (Some(id), Some(true)), "{address}: {e}");
    }

    let plan = kbp(&em, &["plan", bp, "--detailed-exitcode", "--json"], ws.path());
    assert_exit_code(&plan, 2, "the plan after the imports has changes");
    let actions = actions(&events::plan(&plan));
    for (address, _) in IMPORTS {
        assert_eq!(action_of(&actions, address), Some("update"), "{address} is updated, never replaced: {actions:?}");
    }
    for (address, action) in &actions {
        let imported = IMPORTS.iter().any(|(a, _)| a == address);
        assert!(imported || action == "create", "{address} was not imported: created, not {action}");
    }

    kbp_ok(&em, &["apply", bp, "--auto-approve"], ws.path());
    let again = kbp(&em, &["plan", bp, "--detailed-exitcode"], ws.path());
    assert_exit_code(&again, 0, "a second plan has nothing to do");

    let eks = em.eks().await;
    let c = eks.describe_cluster().name(STACK).send().await.unwrap().cluster.unwrap();
    assert_eq!(c.arn(), Some(hand.cluster_arn.as_str()), "the same cluster");
    assert_eq!(format!("{:?}", c.created_at), hand.created_at, "created once, by hand");
    let tags = c.tags().cloned().unwrap_or_default();
    assert_eq!(tags.get("kbp:stack").map(String::as_str), Some(STACK), "{tags:?}");
    assert_eq!(tags.get("kbp:address").map(String::as_str), Some("eks_cluster.main"), "{tags:?}");
    let ng = eks.describe_nodegroup().cluster_name(STACK).nodegroup_name("karpenter").send().await.unwrap();
    let ng_tags = ng.nodegroup.unwrap().tags.unwrap_or_default();
    assert_eq!(ng_tags.get("kbp:address").map(String::as_str), Some("eks_node_group.controller"));
    let role = em.iam().await.get_role().role_name("sbx-eks-cluster").send().await.unwrap().role.unwrap();
    assert!(role.tags().iter().any(|t| t.key() == "kbp:stack" && t.value() == STACK), "{:?}", role.tags());
    let state: Value = serde_json::from_slice(&read_state(&ws).unwrap()).unwrap();
    assert!(
        state["resources"].as_array().unwrap().iter().all(|r| r.get("imported").is_none()),
        "once applied, nothing is marked imported"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_imports_are_refused_with_state_unchanged() {
    let (em, net, _, ws) = made_by_hand_in_a_workspace().await;
    let bp = ws.blueprint_arg();
    kbp_ok(&em, &["import", bp, "iam_role.cluster", "sbx-eks-cluster"], ws.path());
    let before = read_state(&ws).expect("the first import wrote state");

    let cases: [(&str, &str, &str, &str); 6] = [
        ("a role name into the cluster's address", "eks_cluster.main", "sbx-eks-nodes", "its cluster name"),
        (
            "a node group that does not exist",
            "eks_node_group.controller",
            "sbx:nope",
            "`<cluster name>:<node group name>`",
        ),
        ("a malformed node group ID", "eks_node_group.controller", "karpenter", "`<cluster name>:<node group name>`"),
        ("an address already in state", "iam_role.cluster", "sbx-eks-cluster", "already in state"),
        ("an unknown address", "eks_cluster.mian", "sbx", "did you mean eks_cluster.main"),
        ("a lookup", "existing_vpc.main", &net.vpc, "cannot be imported"),
    ];
    for (case, address, id, says) in cases {
        let out = kbp(&em, &["import", bp, address, id], ws.path());
        assert_exit_code(&out, 1, case);
        let err = stderr(&out);
        assert!(err.contains(says) && err.contains("hint:"), "{case}: says what is wrong and what to do\n{err}");
        assert!(!err.contains("panicked"), "{case}: {err}");
        assert_eq!(read_state(&ws).as_ref(), Some(&before), "{case}: state is byte for byte as it was");
    }
    // The blueprint names a private subnet of another VPC: the cluster's import checks the lookups it uses.
    let other = existing_network(&em).await;
    let foreign = Network { private: vec![net.private[0].clone(), other.private[1].clone()], ..net.clone() };
    ws.write_blueprint(&blueprint_in(&Workspace::with_blueprint("minimal").read_blueprint(), &foreign));
    let out = kbp(&em, &["import", bp, "eks_cluster.main", "sbx"], ws.path());
    assert_exit_code(&out, 1, "a subnet of another VPC");
    let err = stderr(&out);
    assert!(err.contains("not as the blueprint says") && err.contains(&other.private[1]), "{err}");
    assert_eq!(read_state(&ws).as_ref(), Some(&before));
    ws.write_blueprint(&blueprint_in(&Workspace::with_blueprint("minimal").read_blueprint(), &net));

    // The cluster role again, at the node role's address: one resource is managed at one address.
    let out = kbp(&em, &["import", bp, "iam_role.node_group", "sbx-eks-cluster"], ws.path());
    assert_exit_code(&out, 1, "a role of another name");
    assert!(stderr(&out).contains("already in state at iam_role.cluster"), "{}", stderr(&out));
    assert_eq!(read_state(&ws).as_ref(), Some(&before));
}

#[tokio::test(flavor = "multi_thread")]
async fn import_blocks_are_planned_applied_and_then_do_nothing() {
    let (em, _, hand, ws) = made_by_hand_in_a_workspace().await;
    let blocks: String = IMPORTS.iter().map(|(to, id)| format!("\n[[import]]\nto = {to:?}\nid = {id:?}\n")).collect();
    let base = ws.read_blueprint();

    // A `to` the blueprint does not compile to: refused at its place, before AWS is asked anything.
    ws.write_blueprint(&format!("{base}\n[[import]]\nto = \"eks_cluster.mian\"\nid = \"sbx\"\n"));
    let invalid = kbp_offline(&["validate", ws.blueprint_arg()], ws.path());
    assert_exit_code(&invalid, 1, "validate checks import addresses too");
    assert!(
        stderr(&invalid).contains("`eks_cluster.mian` is not an address of this blueprint"),
        "{}",
        stderr(&invalid)
    );
    let bad = kbp(&em, &["plan", ws.blueprint_arg()], ws.path());
    assert_exit_code(&bad, 1, "an import to an unknown address");
    let err = stderr(&bad);
    assert!(err.contains("`eks_cluster.mian` is not an address of this blueprint"), "{err}");
    assert!(err.contains("minimal.toml:") && err.contains("did you mean `eks_cluster.main`"), "{err}");

    ws.write_blueprint(&format!("{base}{blocks}"));
    let bp = ws.blueprint_arg();
    let plan = kbp(&em, &["plan", bp, "--detailed-exitcode", "--json"], ws.path());
    assert_exit_code(&plan, 2, "a plan with imports has changes");
    let doc = events::plan(&plan);
    let imported: Vec<&str> =
        doc["imported"].as_array().unwrap().iter().map(|r| r["address"].as_str().unwrap()).collect();
    for (address, _) in IMPORTS {
        assert!(imported.contains(&address), "{address} is imported: {imported:?}");
    }
    assert_eq!(doc["summary"]["import"].as_u64(), Some(imported.len() as u64));
    let actions = actions(&doc);
    for (address, _) in IMPORTS {
        assert_eq!(action_of(&actions, address), Some("update"), "{address}: {actions:?}");
    }
    assert!(read_state(&ws).is_none(), "a plan writes no state");
    let text = kbp(&em, &["plan", bp], ws.path());
    assert!(stdout(&text).contains("Imported by the blueprint's [[import]] blocks"), "{}", stdout(&text));

    kbp_ok(&em, &["apply", bp, "--auto-approve"], ws.path());
    let again = kbp(&em, &["plan", bp, "--detailed-exitcode"], ws.path());
    assert_exit_code(&again, 0, "once in state, the import blocks do nothing");
    let c = em.eks().await.describe_cluster().name(STACK).send().await.unwrap().cluster.unwrap();
    assert_eq!(c.arn(), Some(hand.cluster_arn.as_str()), "the same cluster");
    assert_eq!(c.tags().and_then(|t| t.get("kbp:stack")).map(String::as_str), Some(STACK));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_imported_resource_not_yet_tagged_is_the_stacks_for_destroy() {
    let (em, _, _, ws) = made_by_hand_in_a_workspace().await;
    let bp = ws.blueprint_arg();
    kbp_ok(&em, &["import", bp, "iam_role.node_group", "sbx-eks-nodes"], ws.path());

    // Untagged, it is still the stack's: destroy deletes what state holds, whatever its tags.
    kbp_ok(&em, &["destroy", bp, "--auto-approve"], ws.path());
    let iam = em.iam().await;
    assert!(iam.get_role().role_name("sbx-eks-nodes").send().await.is_err(), "the imported role is destroyed");
    assert!(iam.get_role().role_name("sbx-eks-cluster").send().await.is_ok(), "what was not imported is left");
    let clusters = em.eks().await.list_clusters().send().await.unwrap();
    assert_eq!(clusters.clusters(), [STACK.to_string()], "the cluster made by hand, not imported, is left");
}

//! The whole AWS side of the stack, end to end against the emulator with realistic (scaled) life cycles:
//! `kbp apply` creates the cluster, node group, add-ons, access entries, Pod Identity, Karpenter's IAM, the
//! Spot service-linked role and the interruption queue with its rules; a second plan is empty; destroy leaves
//! nothing but the account-wide Spot role. Everything is checked by reading the emulator back with the SDK,
//! including that the controller role and the queue trust only this stack's cluster and rules.

use crate::support::*;
use serde_json::Value;

/// Realistic delays at 1/100: the cluster takes 6 s, the node group 1.8 s, an add-on 0.6 s.
fn realistic() -> Emulator {
    Emulator::start_with("realistic", 0.01)
}

/// A policy document as IAM or SQS returns it (IAM URL-encodes it).
fn document(raw: &str) -> Value {
    let text = urlencoding::decode(raw).map(|d| d.into_owned()).unwrap_or_else(|_| raw.to_string());
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("a policy document: {e}\n{text}"))
}

async fn role_policies(em: &Emulator, role: &str) -> Vec<String> {
    let out = em.iam().await.list_attached_role_policies().role_name(role).send().await.unwrap();
    out.attached_policies().iter().filter_map(|p| p.policy_name().map(str::to_string)).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn karpenter_mng_creates_the_aws_side_concurrently_and_destroys_it() {
    let em = realistic();
    let ws = Workspace::with_blueprint("karpenter-mng");
    let stack = "ex-karpenter-mng";

    let plan = events::plan(&kbp_ok(&em, &["plan", ws.blueprint_arg(), "--json"], ws.path()));
    for d in plan["deferred"].as_array().unwrap() {
        assert!(d["kind"].as_str().unwrap().starts_with("k8s_"), "only in-cluster objects wait for later: {d}");
    }
    assert!(
        plan["warnings"][0].as_str().unwrap().contains("reachable from the whole internet"),
        "{}",
        plan["warnings"]
    );

    let out = kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());
    let err = stderr(&out);
    // IAM, SQS and EventBridge work goes on while the cluster is still being created.
    let started = stamps(&err, "creating");
    let finished = stamps(&err, "created");
    let cluster_started = &started["eks_cluster.main"];
    let cluster_done = &finished["eks_cluster.main"];
    for independent in ["sqs_queue.interruption", "event_rule.spot_interruption", "iam_role.karpenter_controller"] {
        let done = &finished[independent];
        assert!(done < cluster_done, "{independent} finished ({done}) before the cluster ({cluster_done})\n{err}");
        assert!(started[independent] < *cluster_done, "{independent} ran while the cluster was CREATING");
    }
    let node_group_started = &started["eks_node_group.controller"];
    assert!(node_group_started >= cluster_done, "the node group waits for an ACTIVE cluster");
    assert!(cluster_started < cluster_done);

    let listed = stdout(&kbp_ok(&em, &["state", "list"], ws.path()));
    for address in [
        "eks_cluster.main",
        "eks_node_group.controller",
        "eks_addon.main[\"coredns\"]",
        "eks_access_entry.admin",
        "eks_pod_identity_association.karpenter",
        "kms_key.secrets",
        "sqs_queue.interruption",
        "event_rule.health",
        "iam_service_linked_role.spot",
    ] {
        assert!(listed.contains(address), "{address} in state:\n{listed}");
    }

    // Read everything back.
    let eks = em.eks().await;
    let cluster = eks.describe_cluster().name(stack).send().await.unwrap();
    let cluster = cluster.cluster().unwrap();
    assert_eq!(cluster.status().map(|s| s.as_str()), Some("ACTIVE"));
    assert_eq!(cluster.version(), Some("1.35"));
    let ng = eks.describe_nodegroup().cluster_name(stack).nodegroup_name("karpenter").send().await.unwrap();
    let ng = ng.nodegroup().unwrap();
    assert_eq!(ng.labels().unwrap().get("karpenter.sh/controller").map(String::as_str), Some("true"));
    let taint = &ng.taints()[0];
    assert_eq!(
        (taint.key(), taint.value(), taint.effect().map(|e| e.as_str())),
        (Some("karpenter.sh/controller"), Some("true"), Some("NO_SCHEDULE"))
    );
    let addons = eks.list_addons().cluster_name(stack).send().await.unwrap();
    let mut names: Vec<&str> = addons.addons().iter().map(String::as_str).collect();
    names.sort();
    assert_eq!(names, ["coredns", "eks-pod-identity-agent", "kube-proxy", "vpc-cni"]);
    let coredns = eks.describe_addon().cluster_name(stack).addon_name("coredns").send().await.unwrap();
    let cfg: Value = serde_json::from_str(coredns.addon().unwrap().configuration_values().unwrap()).unwrap();
    assert!(cfg["tolerations"].as_array().unwrap().iter().any(|t| t["key"] == "karpenter.sh/controller"), "{cfg}");
    let entries = eks.list_access_entries().cluster_name(stack).send().await.unwrap();
    assert!(
        entries.access_entries().iter().any(|a| a.ends_with(&format!(":role/KarpenterNodeRole-{stack}"))),
        "node role entry: {:?}",
        entries.access_entries()
    );
    assert!(entries.access_entries().len() >= 2, "the applying identity has an entry too");
    let assoc = eks.list_pod_identity_associations().cluster_name(stack).send().await.unwrap();
    let a = &assoc.associations()[0];
    assert_eq!((a.namespace(), a.service_account()), (Some("karpenter"), Some("karpenter")));

    let controller = format!("KarpenterController-{stack}");
    let attached = role_policies(&em, &controller).await;
    assert_eq!(attached.len(), 6, "{attached:?}");
    assert_eq!(role_policies(&em, &format!("KarpenterNodeRole-{stack}")).await.len(), 4);
    let account = em.sts().await.get_caller_identity().send().await.unwrap().account().unwrap().to_string();
    let role = em.iam().await.get_role().role_name(&controller).send().await.unwrap();
    let trust = document(role.role().unwrap().assume_role_policy_document().unwrap());
    assert_eq!(trust["Statement"][0]["Principal"]["Service"], "pods.eks.amazonaws.com", "{trust}");
    assert_eq!(
        trust["Statement"][0]["Condition"],
        serde_json::json!({
            "StringEquals": {"aws:SourceAccount": account},
            "ArnLike": {"aws:SourceArn": format!("arn:aws:eks:us-west-2:{account}:podidentityassociation/{stack}/*")},
        }),
        "{trust}"
    );

    let sqs = em.sqs().await;
    let url = sqs.get_queue_url().queue_name(stack).send().await.unwrap().queue_url().unwrap().to_string();
    let attrs = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(aws_sdk_sqs::types::QueueAttributeName::All)
        .send()
        .await
        .unwrap();
    let attrs = attrs.attributes().unwrap();
    let get = |n: &str| attrs.get(&aws_sdk_sqs::types::QueueAttributeName::from(n)).cloned().unwrap_or_default();
    assert_eq!(get("MessageRetentionPeriod"), "300");
    assert_eq!(get("SqsManagedSseEnabled"), "true");
    let queue_arn = get("QueueArn");
    let events = em.eventbridge().await;
    let rules = events.list_rules().name_prefix(stack).send().await.unwrap();
    assert_eq!(rules.rules().len(), 5);
    for r in rules.rules() {
        let targets = events.list_targets_by_rule().rule(r.name().unwrap()).send().await.unwrap();
        assert_eq!(targets.targets()[0].arn(), queue_arn, "{:?} targets the queue", r.name());
    }
    // EventBridge may deliver for these five rules only, and no other service principal may send.
    let policy = document(&get("Policy"));
    let allow = &policy["Statement"][0];
    assert_eq!(allow["Principal"], serde_json::json!({"Service": "events.amazonaws.com"}), "{policy}");
    let mut allowed: Vec<&str> = allow["Condition"]["ArnEquals"]["aws:SourceArn"]
        .as_array()
        .unwrap_or_else(|| panic!("a list of rule ARNs: {policy}"))
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    allowed.sort();
    let mut rule_arns: Vec<&str> = rules.rules().iter().map(|r| r.arn().unwrap()).collect();
    rule_arns.sort();
    assert_eq!(allowed, rule_arns);
    assert_eq!(policy["Statement"][1]["Sid"], "DenyHTTP", "{policy}");
    assert!(!policy.to_string().contains("sqs.amazonaws.com"), "{policy}");

    assert_exit_code(&kbp(&em, &["plan", ws.blueprint_arg(), "--detailed-exitcode"], ws.path()), 0, "plan after apply");
    let outputs: Value = serde_json::from_slice(&kbp_ok(&em, &["output", "--json"], ws.path()).stdout).unwrap();
    assert_eq!(outputs["cluster_name"], stack);
    assert_eq!(outputs["cluster_endpoint"].as_str(), cluster.endpoint());
    assert_eq!(outputs["interruption_queue_url"], url.as_str());
    assert!(outputs["karpenter_controller_role_arn"].as_str().unwrap().ends_with(&controller));
    assert_eq!(outputs["kubeconfig_command"], "kbp kubeconfig", "kbp's own, selecting the same state");
    let raw = kbp_ok(&em, &["output", "cluster_endpoint", "--raw"], ws.path());
    assert_eq!(stdout(&raw), format!("{}\n", cluster.endpoint().unwrap()), "the bare value");
    let json = kbp_ok(&em, &["output", "cluster_endpoint"], ws.path());
    assert_eq!(stdout(&json), format!("\"{}\"\n", cluster.endpoint().unwrap()), "one JSON value");
    let unknown = kbp(&em, &["output", "endpoint"], ws.path());
    assert_exit_code(&unknown, 1, "an unknown output");
    assert!(stderr(&unknown).contains("cluster_endpoint"), "the known names are listed: {}", stderr(&unknown));

    kbp_ok(&em, &["destroy", ws.blueprint_arg(), "--auto-approve"], ws.path());
    assert!(eks.list_clusters().send().await.unwrap().clusters().is_empty());
    assert!(sqs.list_queues().send().await.unwrap().queue_urls().is_empty());
    assert!(events.list_rules().name_prefix(stack).send().await.unwrap().rules().is_empty());
    let roles = em.iam().await.list_roles().send().await.unwrap();
    let left: Vec<&str> =
        roles.roles().iter().map(|r| r.role_name()).filter(|n| !n.starts_with("AWSServiceRole")).collect();
    assert!(left.is_empty(), "only the account-wide Spot role stays: {left:?}");
    assert!(roles.roles().iter().any(|r| r.role_name().starts_with("AWSServiceRoleForEC2Spot")), "Spot role kept");
}

#[test]
fn plan_warns_when_the_api_is_open_to_the_whole_internet() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    let out = kbp_ok(&em, &["plan", ws.blueprint_arg(), "--json"], ws.path());
    let plan = events::plan(&out);
    let warnings = plan["warnings"].as_array().unwrap_or_else(|| panic!("a warnings array: {plan}"));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let warning = warnings[0].as_str().unwrap();
    assert!(warning.contains("reachable from the whole internet") && warning.contains("public_access_cidrs"));
    assert!(stderr(&out).contains(&format!("warning: {warning}")), "{}", stderr(&out));

    let restricted =
        ["plan", ws.blueprint_arg(), "--json", "--set", "cluster.public_access_cidrs=[\"203.0.113.0/24\"]"];
    let out = kbp_ok(&em, &restricted, ws.path());
    let plan = events::plan(&out);
    assert!(plan.get("warnings").is_none(), "{}", plan["warnings"]);
    assert!(!stderr(&out).contains("warning:"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn spot_fallback_with_irsa_trusts_the_cluster_oidc_provider() {
    let em = realistic();
    let ws = Workspace::with_blueprint("spot-fallback");
    let sets = ["--set", "karpenter.identity=irsa", "--set", "cluster.region=us-west-2"];
    let with = |cmd: &'static str, extra: &[&'static str]| {
        let mut v = vec![cmd, ws.blueprint_arg()];
        v.extend_from_slice(&sets);
        v.extend_from_slice(extra);
        v
    };
    kbp_ok(&em, &with("apply", &["--auto-approve"]), ws.path());
    let iam = em.iam().await;
    let providers = iam.list_open_id_connect_providers().send().await.unwrap();
    assert_eq!(providers.open_id_connect_provider_list().len(), 1);
    let role = iam.get_role().role_name("KarpenterController-spot-fallback").send().await.unwrap();
    let doc = role.role().unwrap().assume_role_policy_document().unwrap();
    let doc = urlencoding::decode(doc).map(|d| d.into_owned()).unwrap_or_else(|_| doc.to_string());
    assert!(
        doc.contains("AssumeRoleWithWebIdentity") && doc.contains("system:serviceaccount:karpenter:karpenter"),
        "{doc}"
    );
    let eks = em.eks().await;
    let assoc = eks.list_pod_identity_associations().cluster_name("spot-fallback").send().await.unwrap();
    assert!(assoc.associations().is_empty(), "IRSA needs no Pod Identity association");
    assert_exit_code(&kbp(&em, &with("plan", &["--detailed-exitcode"]), ws.path()), 0, "plan after apply");
    kbp_ok(&em, &with("destroy", &["--auto-approve"]), ws.path());
    assert!(eks.list_clusters().send().await.unwrap().clusters().is_empty());
    assert!(iam.list_open_id_connect_providers().send().await.unwrap().open_id_connect_provider_list().is_empty());
}

/// The shipped karpenter-mng, applied twice at once under other cluster names (the README's CI recipe in two
/// parallel jobs): every name a stack owns derives from its cluster name, so both succeed side by side.
#[tokio::test(flavor = "multi_thread")]
async fn two_stacks_from_karpenter_mng_apply_side_by_side() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("karpenter-mng");
    let apply = |name: &str| {
        let set = format!("cluster.name={name}");
        kbp(&em, &["apply", ws.blueprint_arg(), "--auto-approve", "--set", set.as_str()], ws.path())
    };
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| apply("sbx-1"));
        let b = s.spawn(|| apply("sbx-2"));
        (a.join().unwrap(), b.join().unwrap())
    });
    assert_success(&a, "apply of sbx-1");
    assert_success(&b, "apply of sbx-2");
    let mut clusters = em.eks().await.list_clusters().send().await.unwrap().clusters().to_vec();
    clusters.sort();
    assert_eq!(clusters, ["sbx-1", "sbx-2"]);
    let roles = em.iam().await.list_roles().send().await.unwrap();
    for name in ["sbx-1", "sbx-2"] {
        let node_role = format!("KarpenterNodeRole-{name}");
        assert!(roles.roles().iter().any(|r| r.role_name() == node_role), "{node_role} exists");
    }
}

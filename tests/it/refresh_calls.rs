//! What refresh costs in AWS calls: each kind reads all its resources in a batch (`Provider::read_many`), so a
//! no-op plan of karpenter-mng makes about one call per kind, counted by the fault proxy (with no faults) in front
//! of the emulator. And a batch still notices what was deleted outside kbp.
//!
//! Tags the services read one resource at a time (EventBridge rules, SQS queues, KMS keys) are confirmed by the
//! stack's one tag query (GetResources), and rules' targets by one ListRuleNamesByTarget for the queue. Some
//! reads have no batched form in AWS: a managed policy's tags (GetPolicy; the account details leave them out and
//! the tag query does not cover IAM), an EKS add-on. Those stay one call per resource, and are listed in
//! [`PER_RESOURCE`] with how many resources karpenter-mng has of each.

use std::collections::BTreeMap;

use crate::support::fault_proxy::FaultProxy;
use crate::support::*;
use serde_json::{json, Value};

const STACK: &str = "ex-karpenter-mng";
/// The no-op plan's budget: about one read per kind (23 AWS kinds) plus the per-resource reads below.
const MAX_CALLS: u64 = 38;
/// Any other operation is sent at most this often: a batch, plus one for a kind whose batch needs two calls.
const MAX_PER_OPERATION: u64 = 2;
/// Reads AWS offers only per resource, and how many resources of that kind karpenter-mng has.
const PER_RESOURCE: &[(&str, u64)] = &[("iam:GetPolicy", 6), ("eks:DescribeAddon", 4)];

fn state(ws: &Workspace) -> Value {
    let text = std::fs::read_to_string(ws.path().join(format!(".kbp/{STACK}.state.json"))).expect("state file");
    serde_json::from_str(&text).expect("state is JSON")
}

fn id_of(state: &Value, address: &str) -> String {
    let resources = state["resources"].as_array().expect("resources");
    let r = resources.iter().find(|r| r["address"] == address).unwrap_or_else(|| panic!("{address} in state"));
    r["id"].as_str().unwrap_or_else(|| panic!("{address} has an ID")).to_string()
}

#[test]
fn a_no_op_plan_reads_each_kind_in_about_one_call() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("karpenter-mng");
    let bp = ws.blueprint_arg();
    kbp_ok(&em, &["apply", bp, "--auto-approve"], ws.path());

    let proxy = FaultProxy::start(&em, json!({}));
    let out = kbp_command(&em, &["plan", bp, "--detailed-exitcode"], ws.path())
        .envs(proxy.env())
        .output()
        .expect("run kbp plan");
    assert_exit_code(&out, 0, "a no-op plan through the proxy");

    let stats = proxy.stats();
    let counts: BTreeMap<String, u64> = stats["operations"]
        .as_object()
        .expect("operations in the proxy's stats")
        .iter()
        .map(|(op, n)| (op.clone(), n.as_u64().unwrap_or(0)))
        .collect();
    let total: u64 = counts.values().sum();
    let shown = counts.iter().map(|(op, n)| format!("  {n:>3} {op}")).collect::<Vec<_>>().join("\n");
    eprintln!("a no-op plan of karpenter-mng: {total} AWS calls\n{shown}");
    assert!(total <= MAX_CALLS, "{total} AWS calls, at most {MAX_CALLS} wanted:\n{shown}");
    let allowed = |op: &str| PER_RESOURCE.iter().find(|(o, _)| *o == op).map_or(MAX_PER_OPERATION, |(_, n)| *n);
    let repeated: Vec<_> = counts.iter().filter(|(op, n)| **n > allowed(op)).collect();
    assert!(repeated.is_empty(), "operations sent more often than their batch allows: {repeated:?}\n{shown}");
}

/// One resource of each kind whose batch is the least obvious (an association and a route read from one
/// DescribeRouteTables answer, a rule from a list by prefix, an attachment and an inline policy from IAM's
/// account details), deleted with the SDK: the plan creates exactly those again (and updates the queue policy,
/// which names the rule's ARN, known again only once the rule is made).
#[tokio::test(flavor = "multi_thread")]
async fn a_batch_still_notices_what_was_deleted_outside_kbp() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("karpenter-mng");
    let bp = ws.blueprint_arg();
    kbp_ok(&em, &["apply", bp, "--auto-approve"], ws.path());
    let s = state(&ws);

    let association = "route_table_association.private[\"us-west-2b\"]";
    let route = "route.private_nat[\"us-west-2c\"]";
    let rule = "event_rule.spot_interruption";
    let attachment = "iam_role_policy_attachment.node_group[\"AmazonEKS_CNI_Policy\"]";
    let ec2 = em.ec2().await;
    ec2.disassociate_route_table().association_id(id_of(&s, association)).send().await.expect("disassociate");
    let route_id = id_of(&s, route);
    let (table, destination) = route_id.split_once('_').expect("a route ID is <table>_<destination>");
    ec2.delete_route().route_table_id(table).destination_cidr_block(destination).send().await.expect("DeleteRoute");
    let events = em.eventbridge().await;
    let rule_name = id_of(&s, rule);
    let targets = events.list_targets_by_rule().rule(&rule_name).send().await.expect("ListTargetsByRule");
    let ids: Vec<String> = targets.targets().iter().map(|t| t.id().to_string()).collect();
    events.remove_targets().rule(&rule_name).set_ids(Some(ids)).send().await.expect("RemoveTargets");
    events.delete_rule().name(&rule_name).send().await.expect("DeleteRule");
    let attachment_id = id_of(&s, attachment);
    let (role, policy_arn) = attachment_id.split_once('/').expect("an attachment ID is <role>/<policy ARN>");
    em.iam().await.detach_role_policy().role_name(role).policy_arn(policy_arn).send().await.expect("detach");

    let out = kbp(&em, &["plan", bp, "--json"], ws.path());
    assert_success(&out, "plan --json");
    let plan = events::plan(&out);
    let mut planned: Vec<(String, String, String)> = plan["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| {
            let field = |k: &str| c[k].as_str().unwrap_or_default().to_string();
            (field("address"), field("action"), field("reason"))
        })
        .collect();
    planned.sort();
    let gone = |a: &str| (a.to_string(), "create".to_string(), "deleted outside kbp".to_string());
    let policy = ("sqs_queue_policy.interruption".to_string(), "update".to_string(), "policy changed".to_string());
    let mut want = vec![gone(association), gone(route), gone(rule), gone(attachment), policy];
    want.sort();
    assert_eq!(planned, want, "{}", plan["changes"]);
}

fn address_of(state: &Value, prefix: &str) -> String {
    let resources = state["resources"].as_array().expect("resources");
    let r = resources.iter().find(|r| r["address"].as_str().is_some_and(|a| a.starts_with(prefix)));
    r.unwrap_or_else(|| panic!("a {prefix}… in state"))["address"].as_str().expect("address").to_string()
}

fn output_of(state: &Value, address: &str, output: &str) -> String {
    let resources = state["resources"].as_array().expect("resources");
    let r = resources.iter().find(|r| r["address"] == address).unwrap_or_else(|| panic!("{address} in state"));
    r["outputs"][output].as_str().unwrap_or_else(|| panic!("{address} has output {output}: {r}")).to_string()
}

/// What the tag query and the targets' batch stand in for is still read when it changed: a tag added by hand
/// to a rule, a queue and a key, a tag of kbp's removed from a queue (so the query no longer finds it), and a
/// rule's target removed — each is planned as an update of exactly that resource, and the rule with no target
/// gets it back.
#[tokio::test(flavor = "multi_thread")]
async fn tags_and_targets_changed_by_hand_are_still_noticed() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("karpenter-mng");
    let bp = ws.blueprint_arg();
    kbp_ok(&em, &["apply", bp, "--auto-approve"], ws.path());
    let s = state(&ws);

    let tagged_rule = "event_rule.spot_interruption";
    let untargeted_rule = address_of(&s, "event_rule.rebalance");
    let queue = address_of(&s, "sqs_queue.");
    let key = address_of(&s, "kms_key.");
    let events = em.eventbridge().await;
    let tag = |k: &str| aws_sdk_eventbridge::types::Tag::builder().key(k).value("by-hand").build().expect("tag");
    let rule_arn = output_of(&s, tagged_rule, "arn");
    events.tag_resource().resource_arn(&rule_arn).tags(tag("team")).send().await.expect("TagResource");
    let untargeted = id_of(&s, &untargeted_rule);
    let targets = events.list_targets_by_rule().rule(&untargeted).send().await.expect("ListTargetsByRule");
    let ids: Vec<String> = targets.targets().iter().map(|t| t.id().to_string()).collect();
    events.remove_targets().rule(&untargeted).set_ids(Some(ids)).send().await.expect("RemoveTargets");
    let sqs = em.sqs().await;
    let url = id_of(&s, &queue);
    sqs.untag_queue().queue_url(&url).tag_keys("kbp:stack").send().await.expect("UntagQueue");
    sqs.tag_queue().queue_url(&url).tags("team", "by-hand").send().await.expect("TagQueue");
    let kms = aws_sdk_kms::Client::new(&em.sdk_config().await);
    let key_tag = aws_sdk_kms::types::Tag::builder().tag_key("team").tag_value("by-hand").build().expect("tag");
    kms.tag_resource().key_id(id_of(&s, &key)).tags(key_tag).send().await.expect("kms:TagResource");

    let out = kbp(&em, &["plan", bp, "--json"], ws.path());
    assert_success(&out, "plan --json");
    let plan = events::plan(&out);
    let mut planned: Vec<(String, String)> = plan["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| {
            (
                c["address"].as_str().unwrap_or_default().to_string(),
                c["action"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    planned.sort();
    let update = |a: &str| (a.to_string(), "update".to_string());
    let mut want = vec![update(tagged_rule), update(&untargeted_rule), update(&queue), update(&key)];
    want.sort();
    assert_eq!(planned, want, "{}", plan["changes"]);

    kbp_ok(&em, &["apply", bp, "--auto-approve"], ws.path());
    let targets = events.list_targets_by_rule().rule(&untargeted).send().await.expect("ListTargetsByRule");
    assert_eq!(targets.targets().len(), 1, "the rule's target is back: {targets:?}");
    let out = kbp(&em, &["plan", bp, "--detailed-exitcode"], ws.path());
    assert_exit_code(&out, 0, "a no-op plan after the apply");
}

/// A no-op plan's Kubernetes calls, as the clusters' audit logs count them ("verb resource"), made after `from`
/// entries.
fn kube_calls(em: &Emulator, from: usize) -> BTreeMap<String, u64> {
    let mut calls = BTreeMap::new();
    for e in em.kube_audit().into_iter().skip(from) {
        let what = e["objectRef"]["resource"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| e["requestURI"].as_str().unwrap_or("?").split('?').next().unwrap_or("?").to_string());
        *calls.entry(format!("{} {what}", e["verb"].as_str().unwrap_or("?"))).or_insert(0) += 1;
    }
    calls
}

#[test]
fn a_no_op_plans_kubernetes_calls_do_not_grow_with_the_number_of_nodepools() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("karpenter-mng");
    let bp = ws.blueprint_arg();
    kbp_ok(&em, &["apply", bp, "--auto-approve"], ws.path());
    let plan = || {
        let from = em.kube_audit().len();
        let out = kbp(&em, &["plan", bp, "--detailed-exitcode"], ws.path());
        assert_exit_code(&out, 0, "a no-op plan");
        kube_calls(&em, from)
    };
    let one = plan();

    let extra: String =
        (1..20).map(|i| format!("\n[node_pools.extra{i:02}]\nnode_class = \"default\"\nweight = {i}\n")).collect();
    ws.write_blueprint(&(ws.read_blueprint() + &extra));
    kbp_ok(&em, &["apply", bp, "--auto-approve"], ws.path());
    let twenty = plan();

    let total = |c: &BTreeMap<String, u64>| c.values().sum::<u64>();
    assert!(total(&one) > 0, "the audit log saw kbp's calls: {one:?}");
    assert_eq!(total(&one), total(&twenty), "1 pool: {one:?}\n20 pools: {twenty:?}");
    assert_eq!(one.get("list nodepools"), Some(&1), "the pools are read with one LIST: {one:?}");
    assert_eq!(twenty.get("get nodepools"), None, "and no GET each: {twenty:?}");
}

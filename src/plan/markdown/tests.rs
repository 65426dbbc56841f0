use serde_json::{json, Value};

use super::*;
use crate::graph::value::UNKNOWN;
use crate::graph::Address;
use crate::plan::{Action, AttrChange};

/// A change of the resource at `address`, whose kind is the address's type.
fn change(action: Action, address: &str, reason: &str, id: Option<&str>) -> Change {
    let address: Address = address.parse().unwrap();
    Change {
        kind: address.ty.clone(),
        address,
        action,
        reason: reason.to_string(),
        id: id.map(str::to_string),
        attributes: Vec::new(),
        objects: Vec::new(),
    }
}

fn attr(path: &str, before: Option<Value>, after: Option<Value>, forces: bool) -> AttrChange {
    AttrChange { path: path.to_string(), before, after, forces_replacement: forces }
}

fn plan(changes: Vec<Change>, deferred: Vec<Deferred>, unchanged: usize, destroy: bool) -> Plan {
    let mut state = crate::state::State::new("demo", "us-west-2");
    (state.lineage, state.serial) = ("lineage".to_string(), 7);
    let plan = crate::plan::diff::finish(&Default::default(), &state, changes, deferred, unchanged, destroy);
    Plan { kbp_version: "0.0.0-test".to_string(), ..plan }
}

/// The controller's policy document, as IAM holds it: JSON inside a string, longer than a terminal line.
fn policy_document(actions: &[&str]) -> String {
    json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]}).to_string()
}

const ACTIONS: [&str; 4] =
    ["ec2:CreateFleet", "ec2:CreateLaunchTemplate", "ec2:RunInstances", "ec2:TerminateInstances"];

/// A plan as the diff makes one after the VPC's CIDR changed: the VPC is replaced, so the new subnet's `vpc_id`
/// is unknown until apply.
fn mixed() -> Plan {
    let mut vpc = change(Action::Replace, "aws_vpc.main", "cidr_block forces replacement", Some("vpc-0a1b2c3d"));
    vpc.attributes = vec![
        attr("cidr_block", Some(json!("10.0.0.0/16")), Some(json!("10.1.0.0/16")), true),
        attr("tags.Name", Some(json!("demo")), Some(json!("demo-v2")), false),
    ];
    let mut subnet = change(Action::Create, r#"aws_subnet.private["us-west-2a"]"#, "not in state", None);
    subnet.attributes = vec![
        attr("availability_zone", None, Some(json!("us-west-2a")), false),
        attr("cidr_block", None, Some(json!("10.1.0.0/19")), false),
        attr("vpc_id", None, Some(json!(UNKNOWN)), false),
    ];
    let mut policy = change(Action::Create, "aws_iam_policy.karpenter_controller", "deleted outside kbp", None);
    policy.attributes = vec![attr("policy", None, Some(json!(policy_document(&ACTIONS))), false)];
    let mut nodes =
        change(Action::Update, "aws_eks_node_group.system", "labels, scaling, tags changed", Some("demo:system"));
    nodes.attributes = vec![
        attr("labels.legacy", Some(json!("true")), None, false),
        attr("scaling.max_size", Some(json!(3)), Some(json!(5)), false),
        attr("tags.cost_center", None, Some(json!("42")), false),
        attr("tags.team", Some(json!("infra")), Some(json!("platform")), false),
    ];
    let routes = change(Action::Delete, "aws_route_table.legacy", "removed from the blueprint", Some("rtb-0123"));
    let deferred = vec![Deferred {
        address: Address::new("karpenter_node_pool", "default"),
        kind: "karpenter_node_pool".to_string(),
        reason: "this kbp has no provider for karpenter_node_pool yet".to_string(),
    }];
    plan(vec![vpc, subnet, policy, nodes, routes], deferred, 9, false)
}

/// `mixed` with what a real plan carries above its changes: a cost and a warning.
fn reviewed() -> Plan {
    let text = "[cluster]\nname = \"demo\"\nregion = \"us-west-2\"\n[node_classes.default]\n\
                ami_alias = \"al2023@latest\"\n[node_pools.capped]\nnode_class = \"default\"\nlimits = { cpu = 16 }\n";
    let bp = crate::blueprint::load_str("bp.toml", text, &[]).unwrap_or_else(|d| panic!("{d:?}"));
    let mut p = mixed();
    p.cost = Some(crate::simulate::cost::stack_cost(&bp, Some(&crate::simulate::testing::catalog())));
    p.warnings = vec!["the Kubernetes API of cluster `demo` is reachable from the whole internet\n  hint: set \
         `cluster.public_access_cidrs` to your own networks"
        .to_string()];
    p
}

/// The lines of the first ```diff block.
fn diff_lines(md: &str) -> Vec<&str> {
    let body = md.split("```diff\n").nth(1).expect("a diff block");
    body.split("\n```").next().unwrap().lines().collect()
}

#[test]
fn create_update_replace_delete() {
    insta::assert_snapshot!(markdown(&reviewed()));
}

#[test]
fn the_first_line_is_the_hidden_marker_of_the_stack() {
    let md = markdown(&mixed());
    assert_eq!(md.lines().next(), Some("<!-- kbp-plan:demo -->"));
    assert_eq!(markdown(&plan(vec![], vec![], 3, false)).lines().next(), Some("<!-- kbp-plan:demo -->"));
    assert_eq!(marker("a-->b <x>"), "<!-- kbp-plan:a-__b__x_ -->", "never closes the comment early");
}

#[test]
fn summary_cost_and_warnings_come_before_the_table_and_the_diff() {
    let md = markdown(&reviewed());
    let at = |needle: &str| md.find(needle).unwrap_or_else(|| panic!("{needle:?} in:\n{md}"));
    let order = [
        at("<!-- kbp-plan:demo -->"),
        at("**Plan: 3 to add, 1 to change, 2 to destroy.**"),
        at("**Cost** (USD a month"),
        at("**Warnings:**"),
        at("| Action | Address |"),
        at("```diff"),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}:\n{md}");
    let cost = md.lines().find(|l| l.starts_with("**Cost**")).unwrap();
    assert!(cost.contains("us-west-2 catalog read 2026-12-05): $253.86 before any workload; at most $"), "{cost}");
    assert!(md.contains("| **At most** |"), "the text plan's rows, as a table: {md}");
    assert!(
        md.contains("- the Kubernetes API of cluster `demo` is reachable from the whole internet *Hint:* set `cluster.public_access_cidrs`"),
        "{md}"
    );
}

fn creates(n: usize) -> Plan {
    plan(
        (0..n).map(|i| change(Action::Create, &format!("aws_vpc.n{i}"), "not in state", None)).collect(),
        vec![],
        0,
        false,
    )
}

#[test]
fn the_table_is_folded_past_twenty_rows() {
    let twenty = markdown(&creates(TABLE_ROWS));
    assert!(twenty.contains("\n\n| Action | Address | Kind | Reason |"), "{twenty}");
    assert!(!twenty.contains("changes</summary>\n\n| Action"), "{twenty}");
    let more = markdown(&creates(TABLE_ROWS + 1));
    assert!(more.contains("<details><summary>21 changes</summary>\n\n| Action | Address | Kind | Reason |"), "{more}");
    let table = more.split("<summary>21 changes</summary>").nth(1).unwrap().split("</details>").next().unwrap();
    assert_eq!(table.lines().filter(|l| l.starts_with("| `+` create")).count(), 21, "every row, folded");
}

#[test]
fn values_are_whole_and_a_policy_document_is_pretty_printed() {
    let md = markdown(&mixed());
    assert!(!md.contains("..."), "{md}");
    let lines = diff_lines(&md);
    for action in ACTIONS {
        assert!(lines.iter().any(|l| l.starts_with('+') && l.contains(&format!("\"{action}\""))), "{action}: {md}");
    }
    assert!(lines.contains(&"+     policy = {"), "{lines:?}");
    assert!(lines.contains(&"+     vpc_id            = (known after apply)"), "{lines:?}");
}

#[test]
fn the_diff_marks_what_github_colours_and_an_update_as_old_and_new_lines() {
    let md = markdown(&mixed());
    let lines = diff_lines(&md);
    assert!(lines.iter().all(|l| !l.starts_with('!')), "no `!` lines: {lines:?}");
    let nodes = lines.iter().position(|l| l.starts_with("~ aws_eks_node_group.system ")).expect("the update");
    assert_eq!(
        &lines[nodes + 1..nodes + 7],
        [
            "-     labels.legacy    = \"true\"",
            "-     scaling.max_size = 3",
            "+     scaling.max_size = 5",
            "+     tags.cost_center = \"42\"",
            "-     tags.team        = \"infra\"",
            "+     tags.team        = \"platform\"",
        ]
    );
    assert!(lines.contains(&"+     cidr_block = \"10.1.0.0/16\"  # forces replacement"), "{lines:?}");
    assert!(lines.contains(&"- aws_route_table.legacy (aws_route_table, rtb-0123)  # removed from the blueprint"));
    assert!(md.contains("<details><summary>Diff of the 5 changes</summary>\n\n```diff\n"), "{md}");
}

#[test]
fn a_changed_document_marks_only_the_lines_that_differ() {
    let mut p = change(Action::Update, "aws_iam_policy.karpenter_controller", "policy changed", Some("arn"));
    let before = policy_document(&ACTIONS[..3]);
    p.attributes = vec![attr("policy", Some(json!(before)), Some(json!(policy_document(&ACTIONS))), false)];
    let md = markdown(&plan(vec![p], vec![], 0, false));
    let lines = diff_lines(&md);
    let marked: Vec<&&str> = lines.iter().skip(1).filter(|l| !l.starts_with(' ')).collect();
    assert_eq!(marked.len(), 3, "the last action's line before and after, and the new one: {lines:?}");
    assert!(marked.iter().any(|l| l.starts_with('+') && l.contains("ec2:TerminateInstances")), "{lines:?}");
    assert!(lines.iter().any(|l| l.starts_with(' ') && l.contains("ec2:CreateFleet")), "unchanged, as context");
}

#[test]
fn a_plan_too_big_for_one_comment_is_cut_below_the_fold_with_a_note() {
    let long = Some(json!("x".repeat(400)));
    let changes: Vec<Change> = (0..2000)
        .map(|i| {
            let mut c = change(Action::Create, &format!("aws_vpc.n{i}"), "not in state", None);
            c.attributes = vec![attr("cidr_block", None, long.clone(), false), attr("name", None, long.clone(), false)];
            c
        })
        .collect();
    let mut p = plan(changes, vec![], 0, false);
    p.warnings = vec!["a warning\n  hint: heed it".to_string()];
    let md = markdown(&p);
    assert!(md.chars().count() <= COMMENT_LIMIT, "{}", md.len());
    assert!(md.starts_with("<!-- kbp-plan:demo -->\n"), "the marker stays");
    assert!(md.contains("**Plan: 2000 to add, 0 to change, 0 to destroy.**") && md.contains("- a warning"));
    assert!(md.contains("`aws_vpc.n0`"), "the table is kept as far as it fits");
    let note = md.lines().last().unwrap();
    assert!(note.contains("cut to GitHub's limit of 65,536 characters"), "{note}");
    assert!(note.contains("changes in the diff are left out") && note.contains("kbp plan --out"), "{note}");
    // Cut between items: every fold and fence that opens closes.
    assert_eq!(md.matches("<details>").count(), md.matches("</details>").count(), "{md}");
    assert_eq!(md.matches("```").count() % 2, 0);
    // A plan that fits is not cut.
    assert!(!markdown(&mixed()).contains("cut to GitHub's limit"));
}

#[test]
fn drift_the_plan_repairs_is_named() {
    let mut p = mixed();
    p.drift = serde_json::from_value(json!([{"address": "eks_node_group.controller", "kind": "aws_eks_node_group",
        "drifted": "changed", "attributes": [{"path": "scaling.desired_size", "recorded": 2, "now": 3}]}]))
    .unwrap();
    let md = markdown(&p);
    assert!(md.contains("Changed outside kbp since it last applied: `eks_node_group.controller`."), "{md}");
    assert!(!markdown(&mixed()).contains("Changed outside kbp"), "only when there is drift");
}

#[test]
fn no_changes() {
    insta::assert_snapshot!(markdown(&plan(Vec::new(), Vec::new(), 12, false)));
}

#[test]
fn destroy() {
    let changes = vec![
        change(Action::Delete, r#"aws_subnet.private["us-west-2a"]"#, "destroy", Some("subnet-01")),
        change(Action::Delete, "aws_vpc.main", "destroy", Some("vpc-0a1b2c3d")),
        change(
            Action::Forget,
            "aws_iam_service_linked_role.spot",
            "account-wide; kbp never deletes it",
            Some("AWSServiceRoleForEC2Spot"),
        ),
    ];
    insta::assert_snapshot!(markdown(&plan(changes, Vec::new(), 0, true)));
}

#[test]
fn destroy_of_an_empty_state_is_no_change_and_says_so() {
    let md = markdown(&plan(Vec::new(), Vec::new(), 0, true));
    assert!(md.contains("This is a destroy plan"), "{md}");
    assert!(md.contains("**No changes.** The stack's state holds nothing to destroy."), "{md}");
    assert!(!md.contains("<details>"), "{md}");
}

#[test]
fn pipes_in_table_cells_are_escaped_even_inside_code() {
    let mut odd = change(Action::Update, r#"aws_subnet.odd["a|b"]"#, "tags.a | b changed", None);
    odd.kind = "x|y".to_string();
    let md = markdown(&plan(vec![odd], Vec::new(), 0, false));
    let row = md.lines().find(|l| l.starts_with("| `~`")).expect("a table row");
    assert_eq!(row, r#"| `~` update in place | `aws_subnet.odd["a\|b"]` | x\|y | tags.a \| b changed |"#);
    // Every `|` a renderer would split at is the border of one of four cells.
    assert_eq!(row.replace("\\|", "").matches('|').count(), 5);
}

#[test]
fn backticks_inside_code_get_a_longer_fence() {
    assert_eq!(code("plain"), "`plain`");
    assert_eq!(code("a`b"), "``a`b``");
    assert_eq!(code("`x``"), "``` `x`` ```");
    let mut c = change(Action::Create, "aws_vpc.main", "not in state", None);
    c.attributes = vec![attr("tags.note", None, Some(json!("```")), false)];
    let md = markdown(&plan(vec![c], vec![], 0, false));
    assert!(md.contains("````diff\n") && md.contains("\n````\n"), "a longer fence than the value's: {md}");
}

#[test]
fn markdown_in_text_is_escaped_but_identifiers_and_code_spans_read_as_written() {
    assert_eq!(text("cidr_block forces replacement"), "cidr_block forces replacement");
    assert_eq!(text("_x_ *y* <details> [z]"), r"\_x\_ \*y\* \<details\> \[z\]");
    assert_eq!(prose("set `a_b` to *x*"), r"set `a_b` to \*x\*");
    assert_eq!(prose("one ` tick"), r"one \` tick");
}

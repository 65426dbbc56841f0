//! A plan as Markdown for a pull-request comment: a heading, the summary line, a table of changes with their
//! reasons, and the attribute diffs folded into a `<details>` block. The attribute lines are the text renderer's
//! ([`super::render`]), so the comment and the terminal say the same thing. The output holds nothing but the plan
//! (no time, no paths), so a bot can compare it with its last comment and edit in place instead of posting again.

use std::fmt::Write;

use super::render::{attr_line, Style};
use super::{Change, Deferred, Plan};

pub fn markdown(p: &Plan) -> String {
    let mut blocks = vec![format!("### kbp plan: {} ({})", text(&p.stack), text(&p.region))];
    if p.destroy {
        blocks.push("> **This is a destroy plan:** it removes every resource in the stack's state.".to_string());
    }
    if !p.has_changes() {
        let why =
            if p.destroy { "The stack's state holds nothing to destroy." } else { "The stack matches the blueprint." };
        blocks.push(format!("**No changes.** {why}"));
    } else {
        blocks.push(format!("**{}**", p.summary.line()));
        if !p.drift.is_empty() {
            let names: Vec<String> = p.drift.iter().map(|d| code(&d.address.to_string())).collect();
            blocks.push(format!(
                "Changed outside kbp since it last applied: {}. The changes below bring them back to the blueprint \
                 (`kbp plan --refresh-only` lists each attribute).",
                names.join(", ")
            ));
        }
        if !p.adopted.is_empty() {
            let found: Vec<String> =
                p.adopted.iter().map(|r| format!("`{}` (`{}`)", r.address, r.id.as_deref().unwrap_or("?"))).collect();
            blocks.push(format!("Found in AWS by the stack's tags and taken into state: {}.", found.join(", ")));
        }
        if !p.changes.is_empty() {
            blocks.push(table(&p.changes));
            blocks.push(details(&p.changes));
        }
    }
    if !p.deferred.is_empty() {
        blocks.push(deferred(&p.deferred));
    }
    blocks.join("\n\n") + "\n"
}

fn table(changes: &[Change]) -> String {
    let mut t = String::from("| Action | Address | Kind | Reason |\n|---|---|---|---|");
    for c in changes {
        let action = format!("{} {}", code(c.action.symbol()), text(c.action.verb()));
        let cells = [action, code(&c.address.to_string()), text(&c.kind), text(&c.reason)];
        let _ = write!(t, "\n| {} |", cells.map(|s| cell(&s)).join(" | "));
    }
    t
}

/// What the attribute diffs may take of a comment: GitHub refuses comments over 65,536 characters, and the heading
/// and the table come first.
const DIFF_BUDGET: usize = 48_000;

fn details(changes: &[Change]) -> String {
    let n = changes.len();
    // GitHub renders Markdown inside <details> only after a blank line, hence the "\n\n" before each part.
    let mut d = format!("<details><summary>Show {n} change{}</summary>", if n == 1 { "" } else { "s" });
    for (shown, c) in changes.iter().enumerate() {
        let id = c.id.as_deref().map(|i| format!(", {}", code(i))).unwrap_or_default();
        let mut part = format!(
            "\n\n{} **{}** ({}{id}): {}",
            code(c.action.symbol()),
            code(&c.address.to_string()),
            text(&c.kind),
            text(&c.reason)
        );
        if !c.attributes.is_empty() {
            let _ = write!(part, "\n\n{}", diff_block(c));
        }
        if d.len() + part.len() > DIFF_BUDGET {
            let rest = n - shown;
            let _ = write!(
                d,
                "\n\n*The diffs of {rest} more change{} are left out to keep the comment within GitHub's size limit; `kbp plan` shows them all.*",
                if rest == 1 { "" } else { "s" }
            );
            break;
        }
        d.push_str(&part);
    }
    d.push_str("\n\n</details>");
    d
}

/// The attribute lines of the text renderer, each led by the marker a ```diff block colours: `+` an attribute that
/// appears, `-` one that goes, and `!` (the diff grammar's "changed" line; GitHub shows it apart from both) for a
/// value that changes.
fn diff_block(c: &Change) -> String {
    let plain = Style { color: false };
    let width = c.attributes.iter().map(|a| a.path.len()).max().unwrap_or(0);
    let lines: Vec<String> = c
        .attributes
        .iter()
        .map(|a| {
            let marker = match (&a.before, &a.after) {
                (None, _) => '+',
                (_, None) => '-',
                _ => '!',
            };
            format!("{marker} {}", attr_line(c.action, a, width, &plain))
        })
        .collect();
    let body = lines.join("\n");
    let fence = "`".repeat(longest_backtick_run(&body).max(2) + 1);
    format!("{fence}diff\n{body}\n{fence}")
}

fn deferred(items: &[Deferred]) -> String {
    let n = items.len();
    let (noun, verb) = if n == 1 { ("resource", "is") } else { ("resources", "are") };
    let mut d = format!("**Deferred:** {n} {noun} of the blueprint {verb} not planned yet.\n");
    for x in items {
        let _ = write!(d, "\n- {} ({}): {}", code(&x.address.to_string()), text(&x.kind), text(&x.reason));
    }
    d
}

/// Text outside code, with what Markdown or HTML would act on backslash-escaped. An `_` between letters or digits
/// is left as it is: it cannot start or end emphasis there, and `cidr_block` reads better than `cidr\_block`.
/// `|` is left to [`cell`]: it means something only inside a table.
fn text(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    for (i, &c) in chars.iter().enumerate() {
        let intraword =
            i > 0 && chars[i - 1].is_alphanumeric() && chars.get(i + 1).is_some_and(|n| n.is_alphanumeric());
        match c {
            '\n' | '\r' => out.push(' '),
            '_' if intraword => out.push('_'),
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '&' | '~' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// An inline code span whatever `s` holds: the fence is one backtick longer than any run of backticks inside, and
/// content that starts or ends with a backtick (or with a space at both ends) is padded with a space on each side,
/// since CommonMark strips one from each.
fn code(s: &str) -> String {
    let s = s.replace(['\n', '\r'], " ");
    let fence = "`".repeat(longest_backtick_run(&s) + 1);
    let pad = s.starts_with('`') || s.ends_with('`') || (s.starts_with(' ') && s.ends_with(' '));
    let pad = if pad { " " } else { "" };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// A table cell: GitHub splits a row at every unescaped `|`, even inside a code span.
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

fn longest_backtick_run(s: &str) -> usize {
    s.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::graph::value::UNKNOWN;
    use crate::graph::Address;
    use crate::plan::{summarize, Action, AttrChange, FORMAT_VERSION};

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
        }
    }

    fn attr(path: &str, before: Option<Value>, after: Option<Value>, forces: bool) -> AttrChange {
        AttrChange { path: path.to_string(), before, after, forces_replacement: forces }
    }

    fn plan(changes: Vec<Change>, deferred: Vec<Deferred>, unchanged: usize, destroy: bool) -> Plan {
        Plan {
            format_version: FORMAT_VERSION,
            kbp_version: "0.0.0-test".to_string(),
            stack: "demo".to_string(),
            region: "us-west-2".to_string(),
            account: None,
            partition: None,
            destroy,
            state_lineage: Some("lineage".to_string()),
            state_serial: 7,
            state_location: None,
            summary: summarize(&changes),
            changes,
            deferred,
            unchanged,
            resources: Vec::new(),
            warnings: Vec::new(),
            adopted: Vec::new(),
            drift: Vec::new(),
            refresh_only: false,
            cost: None,
            imported: Vec::new(),
            inputs: Default::default(),
        }
    }

    /// A plan as the diff makes one after the VPC's CIDR changed: the VPC is replaced, so the new subnet's
    /// `vpc_id` is unknown until apply.
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
        let document = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": [
            "ec2:CreateFleet", "ec2:CreateLaunchTemplate", "ec2:RunInstances", "ec2:TerminateInstances"
        ], "Resource": "*"}]});
        policy.attributes = vec![attr("policy", None, Some(json!(document.to_string())), false)];
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

    #[test]
    fn create_update_replace_delete() {
        insta::assert_snapshot!(markdown(&mixed()));
    }

    #[test]
    fn a_plan_too_big_for_one_comment_keeps_every_row_and_folds_the_remaining_diffs() {
        let long = Some(json!("x".repeat(110)));
        let changes: Vec<Change> = (0..2000)
            .map(|i| {
                let mut c = change(Action::Create, &format!("aws_vpc.n{i}"), "not in state", None);
                c.attributes =
                    vec![attr("cidr_block", None, long.clone(), false), attr("name", None, long.clone(), false)];
                c
            })
            .collect();
        let text = markdown(&plan(changes, vec![], 0, false));
        let diffs = &text[text.find("<details>").unwrap()..];
        assert!(diffs.len() <= DIFF_BUDGET + 300, "the diffs fit their budget: {}", diffs.len());
        assert!(text.contains("`aws_vpc.n1999`"), "every change stays in the table");
        assert!(text.contains("more changes are left out"), "the diffs are cut with a note");
        assert!(text.trim_end().ends_with("</details>"));
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
    fn summary_counts_a_replace_as_one_add_and_one_destroy() {
        let md = markdown(&mixed());
        let summary = md.lines().find(|l| l.starts_with("**Plan:")).expect("a summary line");
        assert_eq!(summary, "**Plan: 3 to add, 1 to change, 2 to destroy.**");
        assert!(md.contains("<details><summary>Show 5 changes</summary>"), "{md}");
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
    }

    #[test]
    fn markdown_in_text_is_escaped_but_identifiers_read_as_written() {
        assert_eq!(text("cidr_block forces replacement"), "cidr_block forces replacement");
        assert_eq!(text("_x_ *y* <details> [z]"), r"\_x\_ \*y\* \<details\> \[z\]");
    }

    #[test]
    fn unknown_values_show_bare_and_long_values_shortened() {
        let md = markdown(&mixed());
        assert!(md.contains("+ vpc_id            = (known after apply)\n"), "{md}");
        let policy = md.lines().find(|l| l.starts_with("+ policy")).expect("the policy line");
        assert!(policy.ends_with("...") && policy.chars().count() < 140, "{policy}");
    }
}

//! A plan as text for people, in the shape Terraform users know: `+` create, `~` update with old → new, `-/+`
//! replace naming what forces it, `-` destroy, then `Plan: N to add, N to change, N to destroy.` A
//! `--refresh-only` plan is its drift instead: `~ path : recorded → now` per resource changed outside kbp.
//! After the counts, what the stack costs a month ([`cost`]), when the plan carries it.

pub(super) mod cost;

use std::fmt::Write;

use serde_json::Value;

use super::drift::{Drift, Drifted};
use super::{Action, AttrChange, Change, Plan};
use crate::graph::value::UNKNOWN;
use crate::state::ResourceState;

/// How to print a plan for a person.
pub struct Style {
    /// Whether to colour the signs and addresses (ANSI).
    pub color: bool,
}

impl Style {
    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }

    fn action(&self, a: Action) -> String {
        let code = match a {
            Action::Create => "32",
            Action::Update => "33",
            Action::Replace | Action::ReplaceCreateFirst => "35",
            Action::Delete | Action::Forget => "31",
        };
        self.paint(code, a.symbol())
    }
}

/// The plan as text for a terminal or a CI log, as `kbp plan` prints it: drift, adoptions, imports and moves,
/// then each change with its attributes, then the summary.
pub fn human(plan: &Plan, style: &Style) -> String {
    if plan.refresh_only {
        return drift(plan, style);
    }
    let mut out = String::new();
    if !plan.drift.is_empty() {
        let _ = writeln!(
            out,
            "{} resources changed outside kbp since it last applied (`kbp plan --refresh-only` lists each \
             attribute); the changes below bring them back to the blueprint.\n",
            plan.drift.len()
        );
    }
    let adopted = "Found in AWS by the stack's tags, not in state; applying takes them into state:";
    taken_in(&mut out, adopted, ("=", &plan.adopted), style);
    let imported = "Imported by the blueprint's [[import]] blocks; applying takes them into state:";
    taken_in(&mut out, imported, ("<=", &plan.imported), style);
    if !plan.moved.is_empty() {
        let _ =
            writeln!(out, "Moved by the blueprint's [[moved]] blocks; applying renames them in state, not in AWS:\n");
        for m in &plan.moved {
            let _ = writeln!(
                out,
                "  {} {} has moved to {}",
                style.paint("36", "→"),
                m.from,
                style.paint("1", &m.to.to_string())
            );
        }
        let _ = writeln!(out);
    }
    if plan.changes.is_empty() {
        let account = account(plan).map(|a| format!(" ({}, {a})", plan.region)).unwrap_or_default();
        let _ = writeln!(
            out,
            "No changes. The stack {}{account} matches the blueprint ({} resources).",
            plan.stack, plan.unchanged
        );
    } else {
        let account = account(plan).map(|a| format!(", {a}")).unwrap_or_default();
        let _ = writeln!(
            out,
            "kbp will perform the following actions on stack {} ({}{account}):\n",
            plan.stack, plan.region
        );
        for c in &plan.changes {
            out.push_str(&change(c, style));
        }
    }
    if !plan.deferred.is_empty() {
        let _ = writeln!(
            out,
            "{} resources of the blueprint are deferred: this kbp has no provider for them yet.",
            plan.deferred.len()
        );
        for d in &plan.deferred {
            let _ = writeln!(
                out,
                "  {} {} ({})  {}",
                style.paint("2", "…"),
                d.address,
                d.kind,
                style.paint("2", &format!("# {}", d.reason))
            );
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "{}", style.paint("1", &plan.summary.line()));
    if let Some(c) = &plan.cost {
        out.push_str(&cost::block(c, style));
    }
    out
}

/// A `--refresh-only` plan: each resource changed or deleted outside kbp, with its attributes as state recorded
/// them and as they are now, then what accepting or repairing them means.
fn drift(plan: &Plan, style: &Style) -> String {
    let mut out = String::new();
    let account = account(plan).map(|a| format!(", {a}")).unwrap_or_default();
    if plan.drift.is_empty() {
        let _ = writeln!(out, "No drift. The stack {} ({}{account}) is as kbp last left it.", plan.stack, plan.region);
        return out;
    }
    let _ = writeln!(
        out,
        "Changed outside kbp since it last wrote state (stack {}, {}{account}):\n",
        plan.stack, plan.region
    );
    for d in &plan.drift {
        let _ = writeln!(out, "{}", drift_header(d, style));
        let width = d.attributes.iter().map(|a| a.path.len()).max().unwrap_or(0);
        for a in &d.attributes {
            let shown = |v: &Option<Value>| v.as_ref().map(show).unwrap_or_else(|| "(none)".to_string());
            let _ = writeln!(out, "      {:width$} : {} → {}", a.path, shown(&a.recorded), shown(&a.now));
        }
        let _ = writeln!(out);
    }
    let count = |kind: Drifted| plan.drift.iter().filter(|d| d.drifted == kind).count();
    let (deleted, unmanaged) = (count(Drifted::Deleted), count(Drifted::Unmanaged));
    let also = if unmanaged > 0 { format!(", {unmanaged} made outside kbp") } else { String::new() };
    let line = format!("Drift: {} changed, {deleted} deleted outside kbp{also}.", count(Drifted::Changed));
    let _ = writeln!(out, "{}", style.paint("1", &line));
    let _ = writeln!(
        out,
        "`kbp apply --refresh-only` accepts it into state (changing nothing in AWS); `kbp apply` repairs it."
    );
    out
}

fn drift_header(d: &Drift, style: &Style) -> String {
    let id = d.id.as_deref().map(|i| format!(", {i}")).unwrap_or_default();
    let (symbol, code, note) = match d.drifted {
        Drifted::Changed => ("~", "33", String::new()),
        Drifted::Deleted => ("-", "31", format!("  {}", style.paint("2", "# deleted outside kbp"))),
        Drifted::Unmanaged => (
            "?",
            "35",
            format!(
                "  {}",
                style.paint("2", "# made outside kbp: declare it in the blueprint (and [[import]] it), or delete it")
            ),
        ),
    };
    format!("  {} {} ({}{id}){note}", style.paint(code, symbol), style.paint("1", &d.address.to_string()), d.kind)
}

/// Resources a plan writes into state before its walk (adopted or imported), under `heading`, each marked with
/// `symbol`; nothing when there are none.
fn taken_in(out: &mut String, heading: &str, (symbol, entries): (&str, &[ResourceState]), style: &Style) {
    if entries.is_empty() {
        return;
    }
    let _ = writeln!(out, "{heading}\n");
    for r in entries {
        let id = r.id.as_deref().unwrap_or("?");
        let _ = writeln!(
            out,
            "  {} {} ({}, {id})",
            style.paint("36", symbol),
            style.paint("1", &r.address.to_string()),
            r.kind
        );
    }
    let _ = writeln!(out);
}

/// One change: its action, address, kind, ID and reason, then each attribute that differs, and a blank line.
pub fn change(c: &Change, style: &Style) -> String {
    let mut out = String::new();
    let id = c.id.as_deref().map(|i| format!(", {i}")).unwrap_or_default();
    let _ = writeln!(
        out,
        "  {} {} ({}{})  {}",
        style.action(c.action),
        style.paint("1", &c.address.to_string()),
        c.kind,
        id,
        style.paint("2", &format!("# {}", c.reason))
    );
    let width = c.attributes.iter().map(|a| a.path.len()).max().unwrap_or(0);
    for a in &c.attributes {
        let _ = writeln!(out, "      {}", attr_line(c.action, a, width, style));
    }
    if !c.objects.is_empty() {
        let _ = writeln!(out, "      {}", style.paint("2", "# in the cluster:"));
    }
    for o in &c.objects {
        let _ = writeln!(out, "      {} {}", style.action(o.action), o.object);
        let width = o.fields.iter().map(|a| a.path.len()).max().unwrap_or(0);
        for a in &o.fields {
            let _ = writeln!(out, "          {}", attr_line(o.action, a, width, style));
        }
    }
    let _ = writeln!(out);
    out
}

/// `account 123456789012, partition aws`: whom the plan was made as, when it says (plans of older kbp do not).
fn account(plan: &Plan) -> Option<String> {
    let account = plan.account.as_deref()?;
    Some(match plan.partition.as_deref() {
        Some(partition) => format!("account {account}, partition {partition}"),
        None => format!("account {account}"),
    })
}

pub(super) fn attr_line(action: Action, a: &AttrChange, width: usize, style: &Style) -> String {
    let forces = if a.forces_replacement { style.paint("35", "  # forces replacement") } else { String::new() };
    match (action, &a.before, &a.after) {
        (Action::Create, _, Some(after)) => format!("{:width$} = {}", a.path, show(after)),
        (_, before, after) => format!(
            "{:width$} : {} → {}{forces}",
            a.path,
            before.as_ref().map(show).unwrap_or_else(|| "(none)".to_string()),
            after.as_ref().map(show).unwrap_or_else(|| "(none)".to_string()),
        ),
    }
}

/// A value on one line; long documents are shortened (the JSON plan has them whole).
fn show(v: &Value) -> String {
    let s = match v {
        Value::String(s) if s == UNKNOWN => return UNKNOWN.to_string(),
        other => other.to_string(),
    };
    if s.chars().count() > 120 {
        let cut: String = s.chars().take(117).collect();
        format!("{cut}...")
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A plan as a saved plan file holds it, with `account` and `partition` as `extra` says.
    fn saved(changes: Value, extra: Value) -> Plan {
        let mut plan = json!({
            "format_version": crate::plan::FORMAT_VERSION, "kbp_version": "0.0.0-test", "stack": "demo",
            "region": "us-west-2", "destroy": false, "state_lineage": null, "state_serial": 0,
            "changes": changes, "deferred": [], "unchanged": 3, "resources": [],
            "summary": {"add": 1, "change": 0, "destroy": 0},
        });
        plan.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        serde_json::from_value(plan).unwrap()
    }

    fn one_create() -> Value {
        json!([{"address": "sqs_queue.interruption", "kind": "aws_sqs_queue", "action": "create",
                "reason": "not in state", "attributes": [{"path": "name", "before": null, "after": "demo", "forces_replacement": false}]}])
    }

    #[test]
    fn the_header_names_the_account_and_partition_the_plan_was_made_as() {
        let style = Style { color: false };
        let with = json!({"account": "123456789012", "partition": "aws-us-gov"});
        insta::assert_snapshot!(human(&saved(one_create(), with.clone()), &style));
        let no_changes = human(&saved(json!([]), with), &style);
        assert!(
            no_changes.starts_with(
                "No changes. The stack demo (us-west-2, account 123456789012, partition aws-us-gov) matches"
            ),
            "{no_changes}"
        );
    }

    #[test]
    fn a_plan_of_an_older_kbp_without_an_account_still_renders() {
        let text = human(&saved(one_create(), json!({})), &Style { color: false });
        assert!(text.starts_with("kbp will perform the following actions on stack demo (us-west-2):\n"), "{text}");
    }

    fn with_drift(refresh_only: bool) -> Plan {
        let drift = json!([
            {"address": "eks_node_group.system", "kind": "aws_eks_node_group", "id": "demo:system", "drifted": "changed",
             "attributes": [{"path": "scaling.desired_size", "recorded": 2, "now": 3}]},
            {"address": "event_rule.health", "kind": "aws_eventbridge_rule", "drifted": "changed",
             "attributes": [{"path": "state", "recorded": "ENABLED", "now": "DISABLED"},
                            {"path": "tags.owner", "recorded": null, "now": "x"}]},
            {"address": "vpc.main", "kind": "aws_vpc", "id": "vpc-1", "drifted": "deleted", "attributes": []},
        ]);
        let changes = if refresh_only { json!([]) } else { one_create() };
        saved(changes, json!({"drift": drift, "refresh_only": refresh_only, "account": "123456789012"}))
    }

    #[test]
    fn a_refresh_only_plan_shows_each_drifted_attribute_as_recorded_and_now() {
        let text = human(&with_drift(true), &Style { color: false });
        assert!(text.starts_with("Changed outside kbp since it last wrote state (stack demo, us-west-2, account"));
        assert!(text.contains("  ~ eks_node_group.system (aws_eks_node_group, demo:system)\n"), "{text}");
        assert!(text.contains("      scaling.desired_size : 2 → 3\n"), "{text}");
        assert!(text.contains("      state      : \"ENABLED\" → \"DISABLED\"\n"), "{text}");
        assert!(text.contains("      tags.owner : (none) → \"x\"\n"), "{text}");
        assert!(text.contains("  - vpc.main (aws_vpc, vpc-1)  # deleted outside kbp\n"), "{text}");
        assert!(text.contains("Drift: 2 changed, 1 deleted outside kbp."), "{text}");
        assert!(!text.contains("to add"), "a refresh-only plan changes nothing: {text}");
        let mut clean = with_drift(true);
        clean.drift.clear();
        let none = human(&clean, &Style { color: false });
        assert!(none.starts_with("No drift. The stack demo (us-west-2, account 123456789012)"), "{none}");
    }

    #[test]
    fn a_normal_plan_notes_the_drift_its_changes_repair() {
        let text = human(&with_drift(false), &Style { color: false });
        assert!(text.starts_with("3 resources changed outside kbp since it last applied"), "{text}");
        assert!(text.contains("+ sqs_queue.interruption"), "then the plan as usual: {text}");
        assert!(!text.contains("scaling.desired_size"), "attributes are the refresh-only plan's: {text}");
    }
}

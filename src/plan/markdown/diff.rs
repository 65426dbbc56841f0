//! The plan's changes as the lines of a ```diff block, with markers chosen for what GitHub's diff highlighting
//! colours: a line that starts with `+` is green, one that starts with `-` red, anything else plain (`~` and
//! `!` included). So a create is `+` lines, a destroy a `-` line, and an update (a plain `~` heading) or a
//! replace (a red `-/+` heading) shows each attribute's old value as a `-` line and its new value as a `+` line.
//!
//! Values are whole, unlike the terminal's, which shortens long ones: the comment folds the diff away instead. A
//! policy document (JSON, even inside a string) is pretty-printed over as many lines as it takes, and when both
//! its old and new value are, only the lines that differ are marked, the others kept as plain context.

use serde_json::Value;

use crate::graph::value::UNKNOWN;
use crate::plan::{Action, AttrChange, Change};

/// Objects and arrays longer than this are pretty-printed over several lines.
const INLINE: usize = 100;

/// The diff lines of one change: its heading, then its attributes. No trailing newline.
pub(super) fn change(c: &Change) -> String {
    let id = c.id.as_deref().map(|i| format!(", {i}")).unwrap_or_default();
    let (marker, reason) = match c.action {
        // Plain: a forgotten resource stays in AWS, so it is no red deletion.
        Action::Forget => (" ", format!("forget (kept in AWS): {}", c.reason)),
        a => (a.symbol(), c.reason.clone()),
    };
    let mut lines = vec![format!("{marker} {} ({}{id})  # {}", c.address, c.kind, one_line(&reason))];
    let width = c.attributes.iter().map(|a| a.path.chars().count()).max().unwrap_or(0);
    for a in &c.attributes {
        attribute(&mut lines, a, width);
    }
    lines.join("\n")
}

/// An attribute's old value as `-` lines and its new one as `+` lines (either may be absent).
fn attribute(lines: &mut Vec<String>, a: &AttrChange, width: usize) {
    let forces = if a.forces_replacement { "  # forces replacement" } else { "" };
    let name = format!("{:width$} = ", a.path);
    let before = a.before.as_ref().map(shown);
    let after = a.after.as_ref().map(shown);
    match (before, after) {
        (Some(old), Some(new)) if old.len() > 1 && new.len() > 1 => {
            // Two documents: line by line, so a one-statement change in a policy is one pair of lines.
            let (old, new) = (old.join("\n") + "\n", new.join("\n") + "\n");
            let diff = similar::TextDiff::from_lines(&old, &new);
            let mut first = true;
            for op in diff.iter_all_changes() {
                let marker = match op.tag() {
                    similar::ChangeTag::Delete => '-',
                    similar::ChangeTag::Insert => '+',
                    similar::ChangeTag::Equal => ' ',
                };
                let text = op.value().trim_end_matches('\n');
                let lead = if first { name.clone() } else { " ".repeat(name.chars().count()) };
                let note = if first { forces } else { "" };
                lines.push(format!("{marker}     {lead}{text}{note}"));
                first = false;
            }
        }
        (before, after) => {
            let has_after = after.is_some();
            if let Some(old) = before {
                value(lines, '-', &name, &old, if has_after { "" } else { forces });
            }
            if let Some(new) = after {
                value(lines, '+', &name, &new, forces);
            }
        }
    }
}

/// `name = value` after `marker`, a value of several lines continued under its first, each line marked.
fn value(lines: &mut Vec<String>, marker: char, name: &str, value: &[String], note: &str) {
    let pad = " ".repeat(name.chars().count());
    for (i, text) in value.iter().enumerate() {
        let lead = if i == 0 { name } else { &pad };
        let note = if i == 0 { note } else { "" };
        lines.push(format!("{marker}     {lead}{text}{note}"));
    }
}

/// A value as the lines it takes: one for a scalar or a short object, a pretty-printed document for a long one
/// or for a string holding a JSON object or array (an IAM policy); never shortened.
fn shown(v: &Value) -> Vec<String> {
    let document = match v {
        Value::String(s) if s == UNKNOWN => return vec![UNKNOWN.to_string()],
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(inner @ (Value::Object(_) | Value::Array(_))) => Some(inner),
            _ => None,
        },
        Value::Object(_) | Value::Array(_) if v.to_string().len() > INLINE => Some(v.clone()),
        _ => None,
    };
    match document {
        Some(d) => {
            serde_json::to_string_pretty(&d).unwrap_or_else(|_| d.to_string()).lines().map(String::from).collect()
        }
        None => vec![one_line(&v.to_string())],
    }
}

/// Text that must stay on its line: a reason with a line break would start a line without a marker.
fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

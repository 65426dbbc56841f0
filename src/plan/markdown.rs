//! A plan as Markdown for a pull-request comment, laid out for a reviewer who reads the top and opens the rest:
//!
//! 1. a hidden marker, `<!-- kbp-plan:<stack> -->`, by which a CI step finds its earlier comment and edits it in
//!    place;
//! 2. the heading, the summary (N to add, change, destroy), the monthly cost (the text plan's figures,
//!    [`super::render::cost`]), the warnings, and what the plan takes into state or repairs;
//! 3. the changes table, folded into `<details>` past [`TABLE_ROWS`] rows;
//! 4. the diff, folded: a ```diff block ([`diff`]) with whole values.
//!
//! GitHub refuses a comment over [`COMMENT_LIMIT`] characters: past it the folded parts are cut, with a note
//! saying so and where the whole plan is, never what is above them. The output holds nothing but the plan (no
//! time, no paths), so a bot can compare it with its last comment.

mod diff;

use std::fmt::Write;

use super::render::cost;
use super::{Change, Deferred, Plan};
use crate::simulate::cost::{usd, StackCost};

/// The most a GitHub comment holds, in characters; the output is measured in bytes, never fewer.
pub const COMMENT_LIMIT: usize = 65_536;

/// A changes table longer than this is folded.
pub const TABLE_ROWS: usize = 20;

/// Kept free for the note that says the comment was cut.
const NOTE_ROOM: usize = 600;

/// The plan as a pull-request comment, laid out as the module documentation says and never over
/// [`COMMENT_LIMIT`].
pub fn markdown(p: &Plan) -> String {
    let head = head(p);
    let mut folded = Vec::new();
    if p.has_changes() && !p.changes.is_empty() {
        folded.push(table(&p.changes));
        folded.push(diff_section(&p.changes));
    }
    fit(head, folded)
}

/// The marker `<!-- kbp-plan:<stack> -->`. A stack name is letters, digits, `-` and `_`; anything else is
/// replaced, so the marker stays one HTML comment whatever a plan file says.
pub fn marker(stack: &str) -> String {
    let name: String =
        stack.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    format!("<!-- kbp-plan:{} -->", name.replace("--", "-_"))
}

/// Everything above the fold, as blocks: never cut.
fn head(p: &Plan) -> Vec<String> {
    let mut blocks = vec![marker(&p.stack), format!("### kbp plan: {} ({})", text(&p.stack), text(&p.region))];
    if p.destroy {
        blocks.push("> **This is a destroy plan:** it removes every resource in the stack's state.".to_string());
    }
    if p.has_changes() {
        blocks.push(format!("**{}**", p.summary.line()));
    } else {
        let why =
            if p.destroy { "The stack's state holds nothing to destroy." } else { "The stack matches the blueprint." };
        blocks.push(format!("**No changes.** {why}"));
    }
    if let Some(c) = &p.cost {
        blocks.push(cost_block(c));
    }
    if !p.warnings.is_empty() {
        let items: Vec<String> = p.warnings.iter().map(|w| format!("- {}", warning(w))).collect();
        blocks.push(format!("**Warnings:**\n\n{}", items.join("\n")));
    }
    if p.has_changes() && !p.drift.is_empty() {
        let names: Vec<String> = p.drift.iter().map(|d| code(&d.address.to_string())).collect();
        blocks.push(format!(
            "Changed outside kbp since it last applied: {}. The changes below bring them back to the blueprint \
             (`kbp plan --refresh-only` lists each attribute).",
            names.join(", ")
        ));
    }
    let taken_in = [
        ("Found in AWS by the stack's tags and taken into state", &p.adopted),
        ("Imported by the blueprint's `[[import]]` tables and taken into state", &p.imported),
    ];
    for (what, resources) in taken_in.into_iter().filter(|(_, r)| !r.is_empty()) {
        let found: Vec<String> = resources
            .iter()
            .map(|r| format!("{} ({})", code(&r.address.to_string()), code(r.id.as_deref().unwrap_or("?"))))
            .collect();
        blocks.push(format!("{what}: {}.", found.join(", ")));
    }
    if !p.moved.is_empty() {
        let moved: Vec<String> =
            p.moved.iter().map(|m| format!("{} → {}", code(&m.from.to_string()), code(&m.to.to_string()))).collect();
        blocks.push(format!("Moved in state by the blueprint's `[[moved]]` tables, not in AWS: {}.", moved.join(", ")));
    }
    if !p.deferred.is_empty() {
        blocks.push(deferred(&p.deferred));
    }
    blocks
}

/// The cost in one line (what the stack costs before any workload, and at most), then the text plan's rows,
/// folded.
fn cost_block(c: &StackCost) -> String {
    let floor = if c.fixed.iter().any(|f| f.monthly_usd.is_none()) { "at least " } else { "" };
    let most = match c.worst_case_monthly_usd {
        Some(most) => format!("at most {} with every NodePool at its limits", usd(most)),
        None => format!("no upper bound known: no figure for {}", c.unpriced.join(", ")),
    };
    let mut t = format!(
        "**Cost** (USD a month, AWS list prices; {}): {floor}{} before any workload; {}.\n\n\
         <details><summary>Cost items</summary>\n\n| Item | USD a month | How |\n|---|--:|---|",
        prose(&cost::source(c)),
        usd(c.fixed_monthly_usd),
        prose(&most)
    );
    for r in cost::rows(c) {
        let bold =
            |s: &str| if r.item == cost::TOTAL || r.item == "Fixed" { format!("**{s}**") } else { s.to_string() };
        let cells = [bold(&text(&r.item)), bold(&text(&r.amount)), prose(&r.detail)];
        let _ = write!(t, "\n| {} |", cells.map(|s| cell(&s)).join(" | "));
    }
    let _ = write!(t, "\n\nNot counted: {}.\n\n</details>", prose(&c.not_counted));
    t
}

/// A warning's finding, then its hint in italics. Code spans the text marks with backticks stay code.
fn warning(w: &str) -> String {
    match w.split_once("\n  hint: ") {
        Some((finding, hint)) => format!("{} *Hint:* {}", prose(finding), prose(hint)),
        None => prose(w),
    }
}

/// A part below the fold: its opening, its items, its closing; cut between items when the comment is too long.
struct Folded {
    open: String,
    items: Vec<String>,
    close: String,
    /// What an item is, for the note: "rows of the table".
    noun: &'static str,
}

impl Folded {
    fn text(&self, items: usize) -> String {
        format!("{}{}{}", self.open, self.items[..items].concat(), self.close)
    }
}

fn table(changes: &[Change]) -> Folded {
    let n = changes.len();
    let head = "| Action | Address | Kind | Reason |\n|---|---|---|---|";
    let (open, close) = if n > TABLE_ROWS {
        (format!("<details><summary>{n} changes</summary>\n\n{head}"), "\n\n</details>".to_string())
    } else {
        (head.to_string(), String::new())
    };
    let items = changes
        .iter()
        .map(|c| {
            let action = format!("{} {}", code(c.action.symbol()), text(c.action.verb()));
            let cells = [action, code(&c.address.to_string()), text(&c.kind), text(&c.reason)];
            format!("\n| {} |", cells.map(|s| cell(&s)).join(" | "))
        })
        .collect();
    Folded { open, items, close, noun: "rows of the table" }
}

fn diff_section(changes: &[Change]) -> Folded {
    // A blank line between changes: a context line to the highlighter, a break to the reader.
    let items: Vec<String> = changes
        .iter()
        .enumerate()
        .map(|(i, c)| format!("{}{}", if i == 0 { "\n" } else { "\n\n" }, diff::change(c)))
        .collect();
    let fence = "`".repeat(items.iter().map(|i| longest_backtick_run(i)).max().unwrap_or(0).max(2) + 1);
    let n = changes.len();
    Folded {
        // GitHub renders Markdown inside <details> only after a blank line.
        open: format!("<details><summary>Diff of the {n} change{}</summary>\n\n{fence}diff", plural(n)),
        items,
        close: format!("\n{fence}\n\n</details>"),
        noun: "changes in the diff",
    }
}

/// The head, then as much of the folded parts as fits in a comment, and a note when something was left out.
fn fit(head: Vec<String>, folded: Vec<Folded>) -> String {
    let head = head.join("\n\n");
    let whole: Vec<String> = folded.iter().map(|f| f.text(f.items.len())).collect();
    let body = std::iter::once(head.clone()).chain(whole).collect::<Vec<_>>().join("\n\n") + "\n";
    if body.len() <= COMMENT_LIMIT {
        return body;
    }
    let mut room = COMMENT_LIMIT.saturating_sub(head.len() + NOTE_ROOM);
    let mut blocks = vec![head];
    let mut left_out = Vec::new();
    for f in &folded {
        let frame = f.open.len() + f.close.len() + 2;
        let mut kept = 0;
        if frame <= room {
            room -= frame;
            while kept < f.items.len() && f.items[kept].len() <= room {
                room -= f.items[kept].len();
                kept += 1;
            }
            blocks.push(f.text(kept));
        }
        if kept < f.items.len() {
            left_out.push(format!("{} {}", f.items.len() - kept, f.noun));
        }
    }
    blocks.push(format!(
        "*This comment is cut to GitHub's limit of {} characters: {} are left out. The whole plan: `kbp show` \
         on the plan file the job saved (`kbp plan --out`), or `kbp plan` run locally.*",
        grouped(COMMENT_LIMIT),
        left_out.join(" and ")
    ));
    blocks.join("\n\n") + "\n"
}

/// `65536` as `65,536`.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
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

/// kbp's own prose, where backticks mark code: the code spans are kept, the rest is [`text`]. With an odd
/// number of backticks there is no telling, and everything is text.
fn prose(s: &str) -> String {
    let parts: Vec<&str> = s.split('`').collect();
    if parts.len().is_multiple_of(2) {
        return text(s);
    }
    parts.iter().enumerate().map(|(i, p)| if i % 2 == 1 { code(p) } else { text(p) }).collect()
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
mod tests;

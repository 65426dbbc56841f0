//! Rewrites the whitespace and comments of a parsed document into the canonical layout (see `format`'s docs).
//! Only decor is touched: the stretches of whitespace and comments around keys, values, headers and inside
//! arrays and inline tables. Keys, values as written, and their order are left alone.
//!
//! Every stretch is read as a [`Gap`]: the comment that ends the line it starts on, if any, then its lines
//! (comments, blank lines), each trimmed. Gaps are then written back with the indentation and blank lines the
//! layout wants, so reading a canonical document gives the same gaps and writing them gives the same text.

use toml_edit::{Array, DocumentMut, InlineTable, Item, KeyMut, RawString, Table, Value};

/// Arrays whose one-line form would end past this column are written one item per line.
const LINE_WIDTH: usize = 100;
/// Indentation of each level of items in an array (or inline table) written one item per line.
const INDENT: usize = 2;

pub(super) fn canonicalize(doc: &mut DocumentMut) {
    table(doc.as_table_mut(), false);
    let mut lines = gap(raw(Some(doc.trailing())), false).lines;
    trim_blank_ends(&mut lines, false, true);
    doc.set_trailing(line_start(&lines));
}

/// The comments and blank lines of a stretch of decor.
struct Gap {
    /// A comment ending the line the stretch starts on, after a value or an opening bracket.
    eol: Option<String>,
    /// The whole lines that follow: comments, and "" for a blank line (runs of blank lines are one).
    lines: Vec<String>,
}

/// Reads a stretch of decor that starts mid-line (after a value, a comma or a bracket) or at the start of one.
fn gap(raw: &str, mid_line: bool) -> Gap {
    let mut lines: Vec<String> = raw.split('\n').map(|l| l.trim().to_string()).collect();
    // After the last newline comes the next token's indentation, or at the end of a file without a final
    // newline, a last comment.
    if lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    let eol = if mid_line && !lines.is_empty() { Some(lines.remove(0)).filter(|c| !c.is_empty()) } else { None };
    lines.dedup_by(|a, b| a.is_empty() && b.is_empty());
    Gap { eol, lines }
}

fn trim_blank_ends(lines: &mut Vec<String>, leading: bool, trailing: bool) {
    if trailing {
        while lines.last().is_some_and(String::is_empty) {
            lines.pop();
        }
    }
    if leading && lines.first().is_some_and(String::is_empty) {
        lines.remove(0);
    }
}

/// Whole lines at the left margin, each ended by a newline.
fn line_start(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// A gap inside a bracket: its end-of-line comment, its lines at `indent`, and a newline and `next` columns of
/// indentation for what follows.
fn mid_line(g: &Gap, indent: usize, next: usize) -> String {
    let mut s = g.eol.as_ref().map(|c| format!(" {c}")).unwrap_or_default();
    for l in &g.lines {
        s.push('\n');
        if !l.is_empty() {
            s.push_str(&" ".repeat(indent));
            s.push_str(l);
        }
    }
    s.push('\n');
    s.push_str(&" ".repeat(next));
    s
}

/// What follows a value or a header on its line: nothing, or one space and the comment.
fn end_of_line(raw: &str) -> String {
    gap(raw, true).eol.map(|c| format!(" {c}")).unwrap_or_default()
}

fn raw(r: Option<&RawString>) -> &str {
    r.and_then(RawString::as_str).unwrap_or("")
}

/// A table with its header (when it has one) at the left margin, one blank line above it unless the comments
/// above it already hold one, then its keys, then the tables nested in it (wherever they are printed).
fn table(t: &mut Table, header: bool) {
    if header {
        let mut lines = gap(raw(t.decor().prefix()), false).lines;
        if !lines.iter().any(String::is_empty) {
            lines.insert(0, String::new());
        }
        let suffix = end_of_line(raw(t.decor().suffix()));
        t.decor_mut().set_prefix(line_start(&lines));
        t.decor_mut().set_suffix(suffix);
    }
    body(t, &mut true, 0);
}

/// The keys of a table (and of the dotted keys in it, `a.b = 1`, which toml_edit holds as tables without a
/// header): `key = value` at the left margin, with the comments and blank lines above each, none right under
/// the header. `first` is whether no key of the table has been written yet; `width` is that of the dotted
/// keys before these.
fn body(t: &mut Table, first: &mut bool, width: usize) {
    for (mut key, item) in t.iter_mut() {
        let key_width = width + undotted(&mut key);
        match item {
            Item::Value(v) => {
                let mut lines = gap(raw(key.leaf_decor().prefix()), false).lines;
                trim_blank_ends(&mut lines, *first, false);
                *first = false;
                key.leaf_decor_mut().set_prefix(line_start(&lines));
                key.leaf_decor_mut().set_suffix(" ");
                let suffix = end_of_line(raw(v.decor().suffix()));
                v.decor_mut().set_prefix(" ");
                v.decor_mut().set_suffix(suffix);
                layout(v, key_width + " = ".len(), 0);
            }
            Item::Table(sub) if sub.is_dotted() => body(sub, first, key_width + 1),
            // In a header (`[a.b]`, `[[a]]`), the key is written without spaces.
            Item::Table(sub) => {
                key.leaf_decor_mut().set_prefix("");
                key.leaf_decor_mut().set_suffix("");
                table(sub, !sub.is_implicit());
            }
            Item::ArrayOfTables(tables) => {
                key.leaf_decor_mut().set_prefix("");
                key.leaf_decor_mut().set_suffix("");
                for sub in tables.iter_mut() {
                    table(sub, true);
                }
            }
            Item::None => {}
        }
    }
}

/// Lays out an array or inline table whose first bracket is at `column` on a line indented `indent`.
fn layout(v: &mut Value, column: usize, indent: usize) {
    match v {
        Value::Array(_) if !has_comment(v) && fits(v, column) => one_line(v, indent),
        Value::Array(a) => array_lines(a, indent),
        // Pairs on several lines need TOML 1.1, so only comments between them put them there; otherwise an
        // inline table stays on one line, as TOML 1.0 requires, however long.
        Value::InlineTable(t) if own_comment(t) => inline_table_lines(t, indent),
        Value::InlineTable(_) => one_line(v, indent),
        _ => {}
    }
}

/// Whether the one-line form of `v` ends within [`LINE_WIDTH`] when it starts at `column`.
fn fits(v: &Value, column: usize) -> bool {
    let mut flat = v.clone();
    one_line(&mut flat, 0);
    flat.decor_mut().set_prefix("");
    flat.decor_mut().set_suffix("");
    let text = flat.to_string();
    !text.contains('\n') && column + text.chars().count() <= LINE_WIDTH
}

/// `[a, b]`, `{ k = v, l = w }`, `[]`, `{}`. Arrays come here only without comments inside; an inline table's
/// array that holds comments is laid out one item per line.
fn one_line(v: &mut Value, indent: usize) {
    match v {
        Value::Array(a) => {
            for (i, item) in a.iter_mut().enumerate() {
                item.decor_mut().set_prefix(if i == 0 { "" } else { " " });
                item.decor_mut().set_suffix("");
                one_line(item, indent);
            }
            a.set_trailing("");
            a.set_trailing_comma(false);
        }
        Value::InlineTable(t) => {
            one_line_pairs(t, indent);
            let inside = if t.is_empty() { "" } else { " " };
            t.set_trailing(inside);
            t.set_trailing_comma(false);
        }
        _ => {}
    }
}

/// Removes the spaces around the dots of a dotted key (`a . b` → `a.b`); returns the key's width as written.
fn undotted(key: &mut KeyMut<'_>) -> usize {
    key.dotted_decor_mut().set_prefix("");
    key.dotted_decor_mut().set_suffix("");
    key.display_repr().chars().count()
}

fn one_line_pairs(t: &mut InlineTable, indent: usize) {
    for (mut key, v) in t.iter_mut() {
        undotted(&mut key);
        match v {
            Value::InlineTable(dotted) if dotted.is_dotted() => one_line_pairs(dotted, indent),
            v => {
                key.leaf_decor_mut().set_prefix(" ");
                key.leaf_decor_mut().set_suffix(" ");
                v.decor_mut().set_prefix(" ");
                v.decor_mut().set_suffix("");
                if has_comment(v) {
                    layout(v, 0, indent);
                } else {
                    one_line(v, indent);
                }
            }
        }
    }
}

/// Whether a comment is anywhere inside the brackets of `v` (its own decor, outside them, aside).
fn has_comment(v: &Value) -> bool {
    match v {
        Value::Array(a) => {
            commented(Some(a.trailing()))
                || a.iter().any(|item| {
                    commented(item.decor().prefix()) || commented(item.decor().suffix()) || has_comment(item)
                })
        }
        Value::InlineTable(t) => own_comment(t) || t.iter().any(|(_, item)| has_comment(item)),
        _ => false,
    }
}

/// Whether a comment stands between the pairs of an inline table (not inside their values).
fn own_comment(t: &InlineTable) -> bool {
    commented(Some(t.trailing()))
        || t.iter().any(|(name, item)| {
            let key = t.key(name).map(|k| [k.leaf_decor(), k.dotted_decor()]);
            let key = key.iter().flatten().any(|d| commented(d.prefix()) || commented(d.suffix()));
            let dotted = matches!(item, Value::InlineTable(d) if d.is_dotted() && own_comment(d));
            key || dotted || commented(item.decor().prefix()) || commented(item.decor().suffix())
        })
}

fn commented(r: Option<&RawString>) -> bool {
    raw(r).contains('#')
}

/// One item per line, indented one level more than the line the array starts on, each followed by a comma.
/// A comment between an item and its comma moves after the comma.
fn array_lines(a: &mut Array, indent: usize) {
    let inner = indent + INDENT;
    let mut carry = String::new();
    for (i, item) in a.iter_mut().enumerate() {
        let mut g = gap(&format!("{carry}{}", raw(item.decor().prefix())), true);
        trim_blank_ends(&mut g.lines, i == 0, false);
        carry = raw(item.decor().suffix()).to_string();
        item.decor_mut().set_prefix(mid_line(&g, inner, inner));
        item.decor_mut().set_suffix("");
        layout(item, inner, inner);
    }
    let mut g = gap(&format!("{carry}{}", raw(Some(a.trailing()))), true);
    trim_blank_ends(&mut g.lines, a.is_empty(), true);
    a.set_trailing(mid_line(&g, inner, indent));
    a.set_trailing_comma(!a.is_empty());
}

/// An inline table holding comments (TOML 1.1), laid out as [`array_lines`] lays out arrays.
fn inline_table_lines(t: &mut InlineTable, indent: usize) {
    let inner = indent + INDENT;
    let mut state = Lines { carry: String::new(), first: true, inner };
    pair_lines(t, &mut state, 0);
    let mut g = gap(&format!("{}{}", state.carry, raw(Some(t.trailing()))), true);
    trim_blank_ends(&mut g.lines, state.first, true);
    t.set_trailing(mid_line(&g, inner, indent));
    t.set_trailing_comma(!state.first);
}

/// Where [`pair_lines`] is in an inline table written one pair per line.
struct Lines {
    /// The decor between the last value and its comma.
    carry: String,
    first: bool,
    inner: usize,
}

fn pair_lines(t: &mut InlineTable, state: &mut Lines, width: usize) {
    for (mut key, v) in t.iter_mut() {
        let key_width = width + undotted(&mut key);
        match v {
            Value::InlineTable(dotted) if dotted.is_dotted() => pair_lines(dotted, state, key_width + 1),
            v => {
                let mut g = gap(&format!("{}{}", state.carry, raw(key.leaf_decor().prefix())), true);
                trim_blank_ends(&mut g.lines, state.first, false);
                state.first = false;
                key.leaf_decor_mut().set_prefix(mid_line(&g, state.inner, state.inner));
                key.leaf_decor_mut().set_suffix(" ");
                state.carry = raw(v.decor().suffix()).to_string();
                v.decor_mut().set_prefix(" ");
                v.decor_mut().set_suffix("");
                layout(v, state.inner + key_width + " = ".len(), state.inner);
            }
        }
    }
}

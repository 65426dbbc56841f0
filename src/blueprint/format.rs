//! Blueprint text in canonical form (`kbp fmt`), every comment kept. toml_edit parses the text into a document
//! that keeps comments, blank lines and how each value is written; `layout` rewrites only the whitespace and
//! comments around keys, values and headers. The canonical form:
//!
//! - tables and keys stay in the order written (nothing is sorted or moved), and values stay as written (string
//!   quoting, number spelling, multi-line strings and the whitespace inside them);
//! - `key = value` with one space around `=`; a header (`[a.b]`, `[[a]]`) and a dotted key (`a.b`) without
//!   spaces inside; everything at the left margin;
//! - exactly one blank line between tables: when the lines between a table's last key and the next header
//!   hold no blank line, one is added above them (comments there go with the header below); when they hold
//!   one, they stay as they are (comments above it stay with the table they follow); none under a header;
//! - elsewhere, the user's blank lines are kept, a run of them becoming one;
//! - comments keep their text and their place; a comment at the end of a line is one space after what it
//!   follows; no line ends in whitespace;
//! - an array whose one-line form (`[a, b]`) ends within 100 columns and holds no comment is written on one
//!   line, otherwise one item per line, indented two spaces per level, each item followed by a comma;
//! - an inline table is written on one line (`{ k = v }`), as TOML 1.0 requires, unless it holds comments
//!   (TOML 1.1), then one pair per line like an array;
//! - the file ends with exactly one newline (an empty file stays empty); line ends are `\n`, but inside a
//!   multi-line string, whose text is its own.
//!
//! Formatting only needs valid TOML, not a valid blueprint. Two checks guard the user's file: the parsed
//! document must print back byte for byte before anything is changed (toml_edit groups dotted keys that share
//! a prefix, `a.b`, `c`, `a.d` coming out as `a.b`, `a.d`, `c`, and kbp fmt never reorders: such a file is
//! refused, naming the key), and the canonical text must parse to the same values as the original.

mod layout;

use std::ops::Range;
use std::path::Path;

use toml_edit::{Document, Item, Key, Table, Value};

use super::{limits, tree};
use crate::diag::Diagnostics;

/// A blueprint file's text as read, and in canonical form.
pub struct Formatted {
    /// The file's text as read.
    pub original: String,
    /// The same blueprint in `kbp fmt`'s canonical layout, comments kept.
    pub canonical: String,
}

impl Formatted {
    /// Whether `kbp fmt` would rewrite the file (`kbp fmt --check` fails).
    pub fn changed(&self) -> bool {
        self.original != self.canonical
    }
}

/// Reads the file at `path` (within the blueprint size limit) and formats it.
pub fn format_file(path: &Path) -> Result<Formatted, Diagnostics> {
    let original = limits::read(path)?;
    let canonical = format_str(&path.display().to_string(), &original)?;
    Ok(Formatted { original, canonical })
}

/// The canonical form of `text`; `name` is what diagnostics call the file.
pub fn format_str(name: &str, text: &str) -> Result<String, Diagnostics> {
    limits::check_size(name, text)?;
    let mut diags = Diagnostics::new();
    let file = diags.add_source(name, text);
    // Syntax errors are reported as `kbp validate` reports them.
    tree::parse(file, text, &mut diags);
    if diags.has_errors() {
        for d in diags.items_mut() {
            d.hint.get_or_insert_with(|| NOT_WRITTEN.to_string());
        }
        return Err(diags);
    }
    let parsed = match Document::parse(text) {
        Ok(parsed) => parsed,
        Err(e) => {
            let span = e.span().unwrap_or(0..0);
            diags.error(file, span, format!("TOML syntax: {}", e.message().trim())).hint(NOT_WRITTEN);
            return Err(diags);
        }
    };
    if let Some(moved) = first_moved_key(parsed.as_table()) {
        let message = format!(
            "kbp fmt would move `{}` above `{}`: toml_edit, which it edits blueprints with, writes the dotted keys \
             that share a prefix together",
            moved.key, moved.above
        );
        let hint = format!(
            "put `{}` next to the keys it shares a prefix with, then run kbp fmt again (nothing was written)",
            moved.key
        );
        diags.error(file, moved.span, message).hint(hint);
        return Err(diags);
    }
    let mut doc = parsed.into_mut();
    if !prints_back(&doc.to_string(), text) {
        return Err(bug(name, "toml_edit does not print it back as written"));
    }
    layout::canonicalize(&mut doc);
    let mut canonical = doc.to_string().trim_start_matches('\n').to_string();
    if !canonical.is_empty() && !canonical.ends_with('\n') {
        canonical.push('\n');
    }
    if !same_document(text, &canonical) {
        return Err(bug(name, "its canonical form parses to different values"));
    }
    Ok(canonical)
}

/// Whether toml_edit printed the document as written, but for what it always normalizes: `\r\n` line ends
/// outside strings become `\n`, and a last line gets its newline.
fn prints_back(printed: &str, text: &str) -> bool {
    let (printed, text) = (printed.replace("\r\n", "\n"), text.replace("\r\n", "\n"));
    printed == text || printed.strip_suffix('\n') == Some(text.as_str())
}

const NOT_WRITTEN: &str = "kbp fmt formats only valid TOML; fix this, then run it again (nothing was written)";

/// A refusal that means kbp fmt is wrong, not the file.
fn bug(name: &str, why: &str) -> Diagnostics {
    Diagnostics::whole_file(
        name,
        format!("kbp fmt cannot format {name}: {why}"),
        Some("this is a kbp bug; please report it with the file (nothing was written)".to_string()),
    )
}

/// A key toml_edit would print before one written ahead of it.
struct Moved {
    key: String,
    above: String,
    span: Range<usize>,
}

/// The first key, in printed order, that toml_edit would print before a key written ahead of it.
fn first_moved_key(t: &Table) -> Option<Moved> {
    let printed = t.get_values();
    let moved = out_of_order(printed.iter().map(|(path, _)| path.as_slice()));
    moved.or_else(|| {
        t.iter().find_map(|(_, item)| match item {
            Item::Table(sub) => first_moved_key(sub),
            Item::ArrayOfTables(tables) => tables.iter().find_map(first_moved_key),
            Item::Value(v) => first_moved_in_value(v),
            Item::None => None,
        })
    })
}

fn first_moved_in_value(v: &Value) -> Option<Moved> {
    match v {
        Value::Array(a) => a.iter().find_map(first_moved_in_value),
        Value::InlineTable(t) => {
            let printed = t.get_values();
            out_of_order(printed.iter().map(|(path, _)| path.as_slice()))
                .or_else(|| t.iter().find_map(|(_, v)| first_moved_in_value(v)))
        }
        _ => None,
    }
}

/// Among key paths in printed order, the first whose key was written after the next one's. Keys are placed by
/// their last part: the first parts of dotted keys that share them are one key, placed where it first appears.
fn out_of_order<'a>(paths: impl Iterator<Item = &'a [&'a Key]>) -> Option<Moved> {
    let spanned: Vec<(String, Range<usize>)> = paths.filter_map(|p| Some((dotted(p), p.last()?.span()?))).collect();
    spanned.windows(2).find(|w| w[0].1.start > w[1].1.start).map(|w| Moved {
        key: w[0].0.clone(),
        above: w[1].0.clone(),
        span: w[0].1.clone(),
    })
}

fn dotted(path: &[&Key]) -> String {
    path.iter().map(|k| k.display_repr().into_owned()).collect::<Vec<_>>().join(".")
}

/// Whether two TOML texts parse to the same values (floats compared bit for bit, so `nan` equals itself).
fn same_document(a: &str, b: &str) -> bool {
    match (a.parse::<toml::Table>(), b.parse::<toml::Table>()) {
        (Ok(a), Ok(b)) => same(&toml::Value::Table(a), &toml::Value::Table(b)),
        _ => false,
    }
}

fn same(a: &toml::Value, b: &toml::Value) -> bool {
    use toml::Value::{Array, Float, Table};
    match (a, b) {
        (Float(x), Float(y)) => x.to_bits() == y.to_bits(),
        (Array(x), Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        (Table(x), Table(y)) => x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w))),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests;

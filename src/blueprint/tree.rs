//! The spanned document tree: TOML parsed with the byte span of every key and value, owned so that `--set`
//! overrides (which live in other texts) and schema defaults can be grafted onto it. Also field paths
//! (`node_pools.gpu.requirements[1].values`) and the path → place index later checks use to point at a field.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::diag::{Diagnostics, SourceId};

/// Where a node comes from: the blueprint file, a `--set` argument, or a schema default (which has no place the
/// user could be pointed at).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    File(SourceId),
    Set(SourceId),
    Default,
}

impl Origin {
    pub(crate) fn source(self) -> Option<SourceId> {
        match self {
            Origin::File(s) | Origin::Set(s) => Some(s),
            Origin::Default => None,
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub origin: Origin,
    pub span: Range<usize>,
    pub value: Value,
}

#[derive(Debug, Clone)]
pub(crate) enum Value {
    Str(String),
    Int(i64),
    /// Floats and datetimes are never valid in a blueprint; the source text shows what was written.
    Float,
    Datetime,
    Bool(bool),
    Array(Vec<Node>),
    Table(Vec<Entry>),
}

#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub key: String,
    pub key_span: Range<usize>,
    pub node: Node,
}

impl Value {
    /// "a string", "an integer", … for "expected X, found Y" messages.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Value::Str(_) => "a string",
            Value::Int(_) => "an integer",
            Value::Float => "a float",
            Value::Datetime => "a datetime",
            Value::Bool(_) => "a boolean",
            Value::Array(_) => "an array",
            Value::Table(_) => "a table",
        }
    }
}

impl Node {
    pub(crate) fn table(origin: Origin, span: Range<usize>) -> Node {
        Node { origin, span, value: Value::Table(Vec::new()) }
    }

    /// Converts a parsed TOML value; `offset` shifts spans when the parsed text is a slice of the source.
    pub(crate) fn from_toml(v: &Spanned<DeValue<'_>>, origin: Origin, offset: usize) -> Node {
        let span = shift(v.span(), offset);
        let value = match v.get_ref() {
            DeValue::String(s) => Value::Str(s.to_string()),
            DeValue::Integer(i) => Value::Int(i64::from_str_radix(i.as_str(), i.radix()).unwrap_or_else(|_| {
                // Out of i64 range: saturate, so range checks report it instead of a confusing type error.
                if i.as_str().starts_with('-') {
                    i64::MIN
                } else {
                    i64::MAX
                }
            })),
            DeValue::Float(_) => Value::Float,
            DeValue::Boolean(b) => Value::Bool(*b),
            DeValue::Datetime(_) => Value::Datetime,
            DeValue::Array(a) => Value::Array(a.iter().map(|x| Node::from_toml(x, origin, offset)).collect()),
            DeValue::Table(t) => Value::Table(entries(t, origin, offset)),
        };
        Node { origin, span, value }
    }
}

fn shift(span: Range<usize>, offset: usize) -> Range<usize> {
    span.start + offset..span.end + offset
}

pub(crate) fn entries(t: &DeTable<'_>, origin: Origin, offset: usize) -> Vec<Entry> {
    let mut out: Vec<Entry> = t
        .iter()
        .map(|(k, v)| Entry {
            key: k.get_ref().to_string(),
            key_span: shift(k.span(), offset),
            node: Node::from_toml(v, origin, offset),
        })
        .collect();
    // The parser keeps keys sorted by name; document order reads better in messages and `--print`.
    out.sort_by_key(|e| e.key_span.start);
    out
}

/// Parses the blueprint text; every syntax error that recovery finds becomes a diagnostic.
pub(crate) fn parse(source: SourceId, text: &str, diags: &mut Diagnostics) -> Node {
    let (table, errors) = DeTable::parse_recoverable(text);
    // In document order, so that the errors kept (`diag::KEPT`) are the first ones; a stable sort keeps the
    // parser's order at one place.
    let mut errors: Vec<(Range<usize>, &str)> =
        errors.iter().map(|e| (e.span().unwrap_or(0..0), e.message())).collect();
    errors.sort_by_key(|(span, _)| span.start);
    for (i, (span, message)) in errors.iter().enumerate() {
        // Recovery can report one mistake several times at the same place; once is enough. (Looking back a
        // few is enough too, and keeps this linear.)
        let here = errors[..i].iter().rev().take(8).take_while(|(s, _)| s.start == span.start);
        if here.into_iter().any(|(_, m)| m == message) {
            continue;
        }
        let (message, expected) = match message.split_once(", expected ") {
            Some((m, x)) => (m, Some(x)),
            None => (*message, None),
        };
        let b = diags.error(source, span.clone(), format!("TOML syntax: {message}"));
        if let Some(x) = expected {
            b.expected(x);
        }
    }
    let origin = Origin::File(source);
    Node { origin, span: 0..0, value: Value::Table(entries(table.get_ref(), origin, 0)) }
}

/// `parent.key`, quoting the key when it is not a bare TOML key (`limits."nvidia.com/gpu"`).
pub(crate) fn child(parent: &str, key: &str) -> String {
    let bare = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    let key = if bare { key.to_string() } else { format!("{key:?}") };
    if parent.is_empty() {
        key
    } else {
        format!("{parent}.{key}")
    }
}

pub(crate) fn item(parent: &str, i: usize) -> String {
    format!("{parent}[{i}]")
}

/// The path one level up (`a.b[2]` → `a.b`, `a."x.y"` → `a`), or None at the root.
pub(crate) fn parent(path: &str) -> Option<&str> {
    if path.is_empty() {
        return None;
    }
    // The last segment starts after the last `.` or `[` that is outside quotes.
    let mut cut = 0;
    let mut quoted = false;
    let mut escaped = false;
    for (i, c) in path.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            '.' | '[' if !quoted => cut = i,
            _ => {}
        }
    }
    Some(&path[..cut])
}

/// Where the user wrote a field.
#[derive(Debug, Clone)]
pub(crate) struct Place {
    pub source: SourceId,
    pub span: Range<usize>,
}

/// Path → place of every field the user wrote, and the paths whose value was rejected by the schema (so later
/// checks do not pile consequences of one mistake on top of it).
#[derive(Debug, Default)]
pub(crate) struct Index {
    places: HashMap<String, Place>,
    rejected: HashSet<String>,
}

impl Index {
    pub(crate) fn record(&mut self, path: &str, node: &Node) {
        if let Some(source) = node.origin.source() {
            self.places.insert(path.to_string(), Place { source, span: node.span.clone() });
        }
    }

    pub(crate) fn get(&self, path: &str) -> Option<&Place> {
        self.places.get(path)
    }

    /// The place of `path`, or of its nearest ancestor the user wrote (a defaulted field has no place of its own).
    pub(crate) fn locate(&self, path: &str) -> Option<&Place> {
        let mut p = Some(path);
        while let Some(cur) = p {
            if let Some(place) = self.places.get(cur) {
                return Some(place);
            }
            p = parent(cur);
        }
        None
    }

    pub(crate) fn reject(&mut self, path: &str) {
        self.rejected.insert(path.to_string());
    }

    /// Whether a value at `path` or inside it was rejected by the schema.
    pub(crate) fn has_rejected_in(&self, path: &str) -> bool {
        self.rejected
            .iter()
            .any(|r| r.strip_prefix(path).is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '['])))
    }

    /// Whether `path` or one of its ancestors was rejected by the schema.
    pub(crate) fn is_rejected(&self, path: &str) -> bool {
        let mut p = Some(path);
        while let Some(cur) = p {
            if self.rejected.contains(cur) {
                return true;
            }
            p = parent(cur).filter(|s| !s.is_empty());
        }
        false
    }
}

/// Lays a later file's document `over` onto `base` (`kbp plan base.toml -f prod.toml`): tables merge key by key;
/// anything else (a value, an array, an array of tables) is replaced whole, keeping the place in the file that
/// set it, so a diagnostic points into that file.
pub(crate) fn overlay(base: &mut Node, over: Node) {
    let Value::Table(over_entries) = over.value else {
        *base = over;
        return;
    };
    let Value::Table(entries) = &mut base.value else {
        *base = Node { value: Value::Table(over_entries), ..over };
        return;
    };
    for e in over_entries {
        match entries.iter_mut().find(|x| x.key == e.key) {
            Some(existing)
                if matches!(existing.node.value, Value::Table(_)) && matches!(e.node.value, Value::Table(_)) =>
            {
                overlay(&mut existing.node, e.node)
            }
            Some(existing) => *existing = e,
            None => entries.push(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_quote_dotted_keys_and_find_parents() {
        let p = child(&child("node_pools.gpu", "limits"), "nvidia.com/gpu");
        assert_eq!(p, r#"node_pools.gpu.limits."nvidia.com/gpu""#);
        assert_eq!(parent(&p), Some("node_pools.gpu.limits"));
        assert_eq!(parent("a.b[2]"), Some("a.b"));
        assert_eq!(parent("a"), Some(""));
        assert_eq!(parent(""), None);
        assert_eq!(child("", "vpc-cni"), "vpc-cni");
    }

    #[test]
    fn parse_keeps_document_order_and_spans() {
        let mut d = Diagnostics::new();
        let text = "[cluster]\nregion = \"r\"\nname = \"n\"\n";
        let s = d.add_source("t", text);
        let root = parse(s, text, &mut d);
        let Value::Table(top) = &root.value else { panic!("root is a table") };
        let Value::Table(cluster) = &top[0].node.value else { panic!("cluster is a table") };
        let keys: Vec<_> = cluster.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["region", "name"]);
        assert_eq!(&text[cluster[1].node.span.clone()], "\"n\"");
        assert!(d.is_empty());
    }

    #[test]
    fn syntax_errors_are_all_reported() {
        let mut d = Diagnostics::new();
        let text = "a = \nb = [1,\n";
        let s = d.add_source("t", text);
        parse(s, text, &mut d);
        assert!(d.items().len() >= 2, "{d}");
        assert!(d.items().iter().all(|i| i.message.starts_with("TOML syntax")));
    }
}

//! Checks the document tree against the schema, collecting every error rather than stopping at the first, and
//! produces the blueprint as JSON with every literal default filled in (computed defaults come next, in
//! `defaults`). A field whose value is refused is replaced by its default, or a placeholder of the right type,
//! and marked rejected in the index so that later checks stay quiet about it.

use std::collections::HashSet;
use std::ops::Range;

use serde_json::{Map, Value as Json};
use toml::de::DeValue;

use super::rules::{closest, Problem};
use super::schema::{code_list, Field, Presence, Rule, Ty, BLUEPRINT, CRD_JUDGED, OTHER_CRD_FIELDS};
use super::tree::{child, item, Entry, Index, Node, Origin, Value};
use crate::diag::{Diagnostics, SourceId};

/// A refused map key longer than this (as written in a path) is reported, but what it holds is not checked. No
/// valid key of a map whose values are tables (NodePool, EC2NodeClass and add-on names) is longer.
const LONG_REFUSED_KEY: usize = 128;

pub(crate) fn walk(root: &Node, diags: &mut Diagnostics, index: &mut Index) -> Json {
    let mut w = Walker { diags, index, muted: false };
    w.value(root, &Ty::Table(BLUEPRINT), "").unwrap_or_else(|| Json::Object(Map::new()))
}

struct Walker<'a> {
    diags: &'a mut Diagnostics,
    index: &'a mut Index,
    /// Set while building placeholders, whose own "missing field" errors would only repeat the first one.
    muted: bool,
}

/// What went wrong with one value, before it is placed.
struct Report {
    message: String,
    expected: Option<String>,
    hint: Option<String>,
    warning: bool,
}

impl Report {
    fn new(message: impl Into<String>) -> Report {
        Report { message: message.into(), expected: None, hint: None, warning: false }
    }

    fn expected(mut self, e: impl Into<String>) -> Report {
        self.expected = Some(e.into());
        self
    }

    fn hint(mut self, h: Option<String>) -> Report {
        self.hint = h;
        self
    }

    fn from_problem(p: Problem, expected: &str) -> Report {
        Report { message: p.message, expected: Some(expected.to_string()), hint: p.hint, warning: p.warning }
    }
}

impl Walker<'_> {
    /// Where to point for `node`; schema defaults have no place of their own, so their nearest written ancestor.
    fn place(&self, node: &Node, span: Range<usize>, path: &str) -> (SourceId, Range<usize>) {
        match node.origin.source() {
            Some(s) => (s, span),
            None => self.index.locate(path).map_or((0, 0..0), |p| (p.source, p.span.clone())),
        }
    }

    fn report(&mut self, at: (SourceId, Range<usize>), path: &str, r: Report) {
        if self.muted {
            return;
        }
        let b =
            if r.warning { self.diags.warning(at.0, at.1, r.message) } else { self.diags.error(at.0, at.1, r.message) };
        let b = b.path(path).hint_opt(r.hint);
        if let Some(e) = r.expected {
            b.expected(e);
        }
    }

    /// Reports a problem with the value of `node`.
    fn refuse(&mut self, node: &Node, path: &str, r: Report) {
        let at = self.place(node, node.span.clone(), path);
        self.report(at, path, r);
    }

    /// Applies a string rule; a warning does not refuse the value.
    fn check(&mut self, node: &Node, path: &str, rule: Option<Rule>, s: &str) -> bool {
        let Some(rule) = rule else { return true };
        match (rule.check)(s) {
            Ok(()) => true,
            Err(p) => {
                let warning = p.warning;
                self.refuse(node, path, Report::from_problem(p, rule.expected));
                warning
            }
        }
    }

    /// The text the user wrote for `node`.
    fn raw(&self, node: &Node) -> Option<String> {
        let text = &self.diags.source(node.origin.source()?).text;
        text.get(node.span.clone()).map(str::to_string)
    }

    /// Checks `node` against `ty`, indexing where it was written: tables and arrays first, as what they hold may
    /// need their place (a default inside points at them); a scalar only once accepted, since nothing is reported
    /// at a refused one after the walk (its field is marked rejected), and an array of a million refused scalars
    /// would otherwise cost an entry each.
    fn value(&mut self, node: &Node, ty: &Ty, path: &str) -> Option<Json> {
        let container = matches!(node.value, Value::Table(_) | Value::Array(_));
        if container {
            self.index.record(path, node);
        }
        let checked = self.checked(node, ty, path);
        if !container && checked.is_some() {
            self.index.record(path, node);
        }
        checked
    }

    fn checked(&mut self, node: &Node, ty: &Ty, path: &str) -> Option<Json> {
        let wants_string = matches!(ty, Ty::Str(_) | Ty::Enum(_) | Ty::IntOrStr(_));
        let scalar = matches!(node.value, Value::Int(_) | Value::Float | Value::Bool(_) | Value::Datetime);
        // A `--set` value is parsed as TOML when it parses, so `--set cluster.version=1.33` yields a float; where
        // a string is wanted the user meant the text.
        let coerced;
        let value = match (&node.value, node.origin) {
            (v, Origin::Set(_)) if wants_string && scalar && !matches!((ty, v), (Ty::IntOrStr(_), Value::Int(_))) => {
                coerced = Value::Str(self.raw(node).unwrap_or_default());
                &coerced
            }
            (v, _) => v,
        };
        match (ty, value) {
            (Ty::Bool, Value::Bool(b)) => Some(Json::Bool(*b)),
            (Ty::Int { min, max }, Value::Int(i)) | (Ty::CountOr { min, max, .. }, Value::Int(i)) => {
                if (*min..=*max).contains(i) {
                    return Some(Json::from(*i));
                }
                let r = Report::new(format!("{i} is out of range")).expected(ty.expected());
                self.refuse(node, path, r);
                None
            }
            (Ty::Str(rule), Value::Str(s)) => self.check(node, path, *rule, s).then(|| Json::String(s.clone())),
            (Ty::IntOrStr(rule), Value::Str(s)) => {
                self.check(node, path, Some(*rule), s).then(|| Json::String(s.clone()))
            }
            // Where the CRD judges the value, a float goes to it as written, for it to refuse.
            (Ty::IntOrStr(rule), Value::Float) if rule.expected == CRD_JUDGED => Some(self.verbatim(node, path)),
            (Ty::IntOrStr(rule), Value::Int(i)) => {
                let s = i.to_string();
                self.check(node, path, Some(*rule), &s).then_some(Json::String(s))
            }
            (Ty::Enum(values), Value::Str(s)) => {
                if values.contains(&s.as_str()) {
                    return Some(Json::String(s.clone()));
                }
                let hint = closest(s, values.iter().copied()).map(|c| format!("did you mean `{c}`?"));
                let r = Report::new(format!("`{s}` is not one of {}", code_list(values)))
                    .expected(ty.expected())
                    .hint(hint);
                self.refuse(node, path, r);
                None
            }
            (Ty::List { item: item_ty, max, unique, non_empty }, Value::Array(items)) => {
                self.list(node, items, (item_ty, *max, *unique, *non_empty), path)
            }
            (Ty::CountOr { list, .. }, Value::Array(_)) => self.value(node, list, path),
            (Ty::Table(fields), Value::Table(entries)) => Some(self.table(node, entries, fields, path)),
            (Ty::Free, Value::Table(_)) => Some(self.verbatim(node, path)),
            (Ty::Map { key, value, max, implied }, Value::Table(entries)) => {
                Some(self.map(node, entries, (*key, value, *max, implied), path))
            }
            (_, found) => {
                let hint = match found {
                    Value::Int(_) | Value::Float | Value::Bool(_) if wants_string => {
                        self.raw(node).map(|raw| format!("quote it: \"{raw}\""))
                    }
                    _ => None,
                };
                let r = Report::new(format!("expected {}, found {}", ty.kind(), found.kind()))
                    .expected(ty.expected())
                    .hint(hint);
                self.refuse(node, path, r);
                None
            }
        }
    }

    fn list(
        &mut self,
        node: &Node,
        items: &[Node],
        (ty, max, unique, non_empty): (&Ty, usize, bool, bool),
        path: &str,
    ) -> Option<Json> {
        let mut out: Vec<Json> = Vec::new();
        // Items as JSON text, to find duplicates without comparing every pair.
        let mut seen: HashSet<String> = HashSet::new();
        let mut complete = true;
        // Items past the maximum are not looked at: the array is refused anyway, and the input may be huge.
        for (i, it) in items.iter().enumerate().take(max) {
            let p = item(path, i);
            match self.value(it, ty, &p) {
                Some(v) if unique && !seen.insert(v.to_string()) => {
                    let r = Report::new(format!("{v} appears more than once"));
                    self.refuse(it, &p, r.hint(Some("remove the duplicate".into())));
                    complete = false;
                }
                Some(v) => out.push(v),
                None => complete = false,
            }
        }
        if items.len() > max {
            self.refuse(node, path, Report::new(format!("at most {max} items are allowed, found {}", items.len())));
            complete = false;
        }
        if non_empty && items.is_empty() {
            self.refuse(
                node,
                path,
                Report::new("the array must not be empty")
                    .expected(format!("at least one {}", ty.kind().trim_start_matches("a ").trim_start_matches("an "))),
            );
            complete = false;
        }
        // Checks on the array as a whole (counts, overlaps) would mislead once an item is gone.
        if !complete {
            self.index.reject(path);
        }
        Some(Json::Array(out))
    }

    fn table(&mut self, node: &Node, entries: &[Entry], fields: &[Field], path: &str) -> Json {
        let mut out = Map::new();
        // A table that also takes the other fields of a CRD spec keeps them as written, for the CRD to judge.
        let open = fields.iter().any(|f| f.name == OTHER_CRD_FIELDS);
        for e in entries {
            if fields.iter().any(|f| f.name == e.key && f.name != OTHER_CRD_FIELDS) {
                continue;
            }
            if open {
                let p = child(path, &e.key);
                let v = self.verbatim(&e.node, &p);
                out.insert(e.key.clone(), v);
                continue;
            }
            let p = child(path, &e.key);
            let names: Vec<&str> = fields.iter().map(|f| f.name).collect();
            let hint = match closest(&e.key, names.iter().copied()) {
                Some(c) => format!("did you mean `{c}`?"),
                None => format!("known fields here: {}", code_list(&names)),
            };
            let within = if path.is_empty() { "at the top level".to_string() } else { format!("in `{path}`") };
            let r = Report::new(format!("unknown field `{}` {within}", e.key)).hint(Some(hint));
            let at = self.place(&e.node, e.key_span.clone(), &p);
            self.report(at, &p, r);
        }
        for f in fields.iter().filter(|f| f.name != OTHER_CRD_FIELDS) {
            let p = child(path, f.name);
            let written = entries.iter().find(|e| e.key == f.name);
            if let Some(e) = written {
                if let Some(v) = self.value(&e.node, &f.ty, &p) {
                    out.insert(f.name.to_string(), v);
                    continue;
                }
                self.index.reject(&p);
            } else if let Presence::Required = f.presence {
                let required: Vec<&str> = match &f.ty {
                    Ty::Table(inner) => {
                        inner.iter().filter(|f| matches!(f.presence, Presence::Required)).map(|f| f.name).collect()
                    }
                    _ => Vec::new(),
                };
                let mut r = Report::new(format!("missing required field `{}`", f.name)).expected(f.ty.expected());
                if !required.is_empty() {
                    r = r.hint(Some(format!("add `[{p}]` with {}", code_list(&required))));
                }
                self.refuse(node, &p, r);
                self.index.reject(&p);
            }
            if let Some(v) = self.fallback(f, &p) {
                out.insert(f.name.to_string(), v);
            }
        }
        Json::Object(out)
    }

    /// A value kbp's schema does not describe, as JSON, every part indexed where it was written. TOML's floats
    /// and datetimes keep no value in the tree: their text is read back.
    fn verbatim(&mut self, node: &Node, path: &str) -> Json {
        self.index.record(path, node);
        match &node.value {
            Value::Str(s) => Json::String(s.clone()),
            Value::Int(i) => Json::from(*i),
            Value::Bool(b) => Json::Bool(*b),
            Value::Float => {
                let text = self.raw(node).unwrap_or_default().replace('_', "");
                text.parse::<f64>().ok().and_then(serde_json::Number::from_f64).map_or(Json::String(text), Json::Number)
            }
            Value::Datetime => Json::String(self.raw(node).unwrap_or_default()),
            Value::Array(items) => {
                Json::Array(items.iter().enumerate().map(|(i, it)| self.verbatim(it, &item(path, i))).collect())
            }
            Value::Table(entries) => Json::Object(
                entries.iter().map(|e| (e.key.clone(), self.verbatim(&e.node, &child(path, &e.key)))).collect(),
            ),
        }
    }

    /// The value of an absent or refused field: its default, a placeholder when required, else nothing.
    fn fallback(&mut self, f: &Field, path: &str) -> Option<Json> {
        match f.presence {
            Presence::Default(text) => self.default_value(text, &f.ty, path),
            Presence::Required => {
                let muted = std::mem::replace(&mut self.muted, true);
                let v = self.placeholder(&f.ty, path);
                self.muted = muted;
                Some(v)
            }
            Presence::Optional | Presence::Computed(_) => None,
        }
    }

    fn default_value(&mut self, text: &str, ty: &Ty, path: &str) -> Option<Json> {
        let node = default_node(text)?;
        self.value(&node, ty, path)
    }

    fn placeholder(&mut self, ty: &Ty, path: &str) -> Json {
        match ty {
            Ty::Bool => Json::Bool(false),
            Ty::Int { min, .. } | Ty::CountOr { min, .. } => Json::from(*min),
            Ty::Str(_) => Json::String(String::new()),
            Ty::IntOrStr(_) => Json::String("0".into()),
            Ty::Enum(values) => Json::String(values.first().map_or("", |v| v).to_string()),
            Ty::List { .. } => Json::Array(Vec::new()),
            Ty::Free => Json::Object(Map::new()),
            Ty::Table(_) | Ty::Map { .. } => {
                let empty = Node::table(Origin::Default, 0..0);
                self.value(&empty, ty, path).unwrap_or_else(|| Json::Object(Map::new()))
            }
        }
    }

    fn map(
        &mut self,
        node: &Node,
        entries: &[Entry],
        (key, ty, max, implied): (Rule, &Ty, usize, &[&str]),
        path: &str,
    ) -> Json {
        let mut out = Map::new();
        // Entries past the maximum are not looked at: the table is refused anyway, and the input may be huge.
        for e in entries.iter().take(max) {
            let p = child(path, &e.key);
            if let Err(problem) = (key.check)(&e.key) {
                let at = self.place(&e.node, e.key_span.clone(), &p);
                let warning = problem.warning;
                self.report(at, &p, Report::from_problem(problem, key.expected));
                if !warning {
                    self.index.reject(&p);
                    // Every path below repeats the key: a long one would make checking quadratic in its length.
                    if p.len() - path.len() > LONG_REFUSED_KEY {
                        continue;
                    }
                }
            }
            match self.value(&e.node, ty, &p) {
                Some(v) => {
                    out.insert(e.key.clone(), v);
                }
                None => self.index.reject(path),
            }
        }
        for name in implied {
            if !out.contains_key(*name) {
                let p = child(path, name);
                if let Some(v) = self.default_value("{}", ty, &p) {
                    out.insert(name.to_string(), v);
                }
            }
        }
        if entries.len() > max {
            self.refuse(node, path, Report::new(format!("at most {max} entries are allowed, found {}", entries.len())));
            self.index.reject(path);
        }
        Json::Object(out)
    }
}

/// Parses a schema default (a TOML value) into a tree node that points nowhere.
pub(crate) fn default_node(text: &str) -> Option<Node> {
    // Schema defaults are constants, and a test walks every one of them; None only if one stops parsing.
    let v = DeValue::parse(text).ok()?;
    Some(Node::from_toml(&v, Origin::Default, 0))
}

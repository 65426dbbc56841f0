//! The blueprint reference, rendered from the schema as Markdown (docs/blueprint.md holds a copy between markers; a test
//! keeps the two equal).

use std::fmt::Write;

use super::schema::{list_limits, Field, Presence, Ty, BLUEPRINT, OTHER_CRD_FIELDS};

/// Defaults longer than this go in a block under the table instead of the table cell.
const INLINE_DEFAULT: usize = 40;

/// The blueprint reference: every table, and for every field its type, default, constraints and description.
pub fn reference_markdown() -> String {
    let mut out = String::from(
        "A blueprint is a TOML file. Only `cluster.name` and `cluster.region` are required; every other field has a \
         default, listed below. `kbp validate --print` shows a blueprint with all defaults applied, and any field \
         can be overridden from the command line with `--set path=value` (for example \
         `--set node_pools.default.limits.cpu=200`).\n\n\
         ```toml\n[cluster]\nname = \"sbx\"\nregion = \"us-west-2\"\n```\n",
    );
    out.push_str(&limits());
    let mut sections: Vec<(String, &'static [Field])> = Vec::new();
    section(&mut out, &mut sections, "Top level", None, BLUEPRINT);
    out
}

/// The limits on a blueprint and on what kbp reports about it, from the constants that enforce them.
fn limits() -> String {
    use super::limits::{MAX_ADDONS, MAX_BYTES, MAX_DEPTH, MAX_NODE_CLASSES, MAX_NODE_POOLS};
    use crate::diag::{KEPT, SHOWN};
    format!(
        "\n**Limits.** A blueprint has at most {MAX_BYTES} bytes (1 MiB), tables and arrays nested at most \
         {MAX_DEPTH} deep, at most {MAX_NODE_POOLS} node pools, {MAX_NODE_CLASSES} node classes (Karpenter makes an \
         IAM instance profile for each, and IAM allows 1,000 per account by default) and {MAX_ADDONS} add-ons. \
         Past a limit, kbp reports that one error and checks nothing else. Of the problems found, a terminal is \
         shown the first {SHOWN} (errors first) and a count of the rest; `kbp validate --json` lists up to {KEPT} \
         errors and {KEPT} warnings, and counts all. See [Performance](performance.md).\n"
    )
}

/// Renders one table and then, depth first, the tables nested in it. `done` remembers rendered tables so one
/// shared by several fields (taints) is described once and referred to afterwards.
fn section(
    out: &mut String,
    done: &mut Vec<(String, &'static [Field])>,
    title: &str,
    doc: Option<&str>,
    fields: &'static [Field],
) {
    done.push((title.to_string(), fields));
    let _ = write!(out, "\n### {title}\n\n");
    if let Some(doc) = doc {
        let _ = write!(out, "{doc}\n\n");
    }
    out.push_str("| Field | Type | Default | Constraints | Description |\n| --- | --- | --- | --- | --- |\n");
    let mut nested: Vec<(String, &str, &'static [Field])> = Vec::new();
    let mut long_defaults = Vec::new();
    for f in fields {
        let (kind, table) = kind(&f.ty);
        let path = if title == "Top level" { f.name.to_string() } else { format!("{}.{}", strip(title), f.name) };
        let mut doc = f.doc.to_string();
        if let Some((shape, inner)) = table {
            let sub = match shape {
                Shape::Table => format!("`[{path}]`"),
                Shape::Entry => format!("`[{path}.<name>]`"),
                Shape::Array => format!("`[[{path}]]`"),
            };
            let seen = done
                .iter()
                .map(|(t, f)| (t.as_str(), *f))
                .chain(nested.iter().map(|(t, _, f)| (t.as_str(), *f)))
                .find(|(_, other)| same(other, inner))
                .map(|(t, _)| t.to_string());
            match seen {
                Some(t) => doc.push_str(&format!(" See {t}.")),
                None => {
                    doc.push_str(&format!(" See {sub}."));
                    nested.push((sub, f.doc, inner));
                }
            }
        }
        let default = match &f.presence {
            Presence::Required => "required".to_string(),
            Presence::Optional => "—".to_string(),
            Presence::Computed(how) => how.to_string(),
            Presence::Default(text) if text.len() > INLINE_DEFAULT || text.contains('\n') => {
                long_defaults.push((f.name, *text));
                "see below".to_string()
            }
            Presence::Default(text) => format!("`{text}`"),
        };
        if f.name == OTHER_CRD_FIELDS {
            let _ = writeln!(out, "| any other | as the CRD says | — | the CRD's schema and CEL rules | {doc} |");
            continue;
        }
        let constraints = constraints(&f.ty);
        let _ = writeln!(out, "| `{}` | {kind} | {default} | {constraints} | {doc} |", f.name);
    }
    for (name, text) in long_defaults {
        let _ = write!(out, "\nDefault of `{name}`:\n\n```toml\n{name} = {text}\n```\n");
    }
    for (sub, doc, inner) in nested {
        if !done.iter().any(|(_, other)| same(other, inner)) {
            section(out, done, &sub, Some(doc), inner);
        }
    }
}

/// How a nested table is written in TOML.
enum Shape {
    Table,
    Entry,
    Array,
}

/// The TOML type of a field, and the table nested in it, if any.
fn kind(ty: &'static Ty) -> (String, Option<(Shape, &'static [Field])>) {
    match ty {
        Ty::Bool => ("boolean".into(), None),
        Ty::Int { .. } => ("integer".into(), None),
        Ty::Str(_) | Ty::Enum(_) => ("string".into(), None),
        Ty::IntOrStr(_) => ("integer or string".into(), None),
        Ty::Free => ("table".into(), None),
        Ty::List { item: Ty::Table(f), .. } => ("array of tables".into(), Some((Shape::Array, f))),
        Ty::List { item, .. } => (format!("array of {}", plural(&kind(item).0)), None),
        Ty::Table(f) => ("table".into(), Some((Shape::Table, f))),
        Ty::Map { value: Ty::Table(f), .. } => ("table of tables".into(), Some((Shape::Entry, f))),
        Ty::Map { value, .. } => (format!("table of {}", plural(&kind(value).0)), None),
        Ty::CountOr { list, .. } => (format!("integer or {}", kind(list).0), None),
    }
}

/// "integer or string" → "integers or strings"
fn plural(kind: &str) -> String {
    kind.split(" or ").map(|k| format!("{k}s")).collect::<Vec<_>>().join(" or ")
}

fn constraints(ty: &Ty) -> String {
    let parts: Vec<String> = match ty {
        Ty::Bool | Ty::Str(None) | Ty::Table(_) | Ty::Free => Vec::new(),
        Ty::Int { .. } | Ty::Str(Some(_)) | Ty::IntOrStr(_) | Ty::Enum(_) => vec![ty.expected()],
        Ty::List { item, max, unique, non_empty } => {
            let mut p = match item {
                Ty::Table(_) => Vec::new(),
                _ => vec![format!("each {}", constraints(item))].into_iter().filter(|c| c != "each —").collect(),
            };
            p.extend(list_limits(*max, *unique, *non_empty));
            p
        }
        Ty::Map { key, value, max, .. } => {
            let mut p = vec![format!("keys: {}", key.expected)];
            let v = constraints(value);
            if v != "—" && !matches!(value, Ty::Table(_)) {
                p.push(format!("values: {v}"));
            }
            if *max != usize::MAX {
                p.push(format!("at most {max} entries"));
            }
            p
        }
        Ty::CountOr { min, max, list } => {
            vec![format!("a count from {min} to {max}, or a list: {}", constraints(list))]
        }
    };
    if parts.is_empty() {
        "—".into()
    } else {
        parts.join("; ")
    }
}

/// Whether two field lists are the same table (compared by content: the schema's constants are not
/// guaranteed to share an address).
fn same(a: &[Field], b: &[Field]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.name == y.name && x.doc == y.doc)
}

/// `` `[[node_pools.<name>.requirements]]` `` → `node_pools.<name>.requirements`
fn strip(title: &str) -> &str {
    title.trim_matches(|c| c == '`' || c == '[' || c == ']')
}

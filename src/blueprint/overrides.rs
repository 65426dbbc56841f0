//! `--set path=value` overrides, grafted onto the document tree before the schema sees it. The path is a TOML
//! dotted key (`node_pools.gpu.limits."nvidia.com/gpu"`); the value is a TOML value when it parses as one (`3`,
//! `true`, `["a","b"]`, `"x"`) and otherwise the text itself. Each argument is its own pseudo file named `--set`,
//! so errors point into it.

use std::ops::Range;

use toml::de::{DeTable, DeValue};

use super::schema::default_at;
use super::tree::{Entry, Node, Origin, Value};
use super::walk::default_node;
use crate::diag::Diagnostics;

pub(crate) fn apply(root: &mut Node, arg: &str, diags: &mut Diagnostics) {
    let source = diags.add_source("--set", arg);
    let Some(eq) = split_at_equals(arg) else {
        diags
            .error(source, 0..arg.len(), format!("`{arg}` is not an override"))
            .expected("`path=value`")
            .hint("write like `--set cluster.name=sbx-42`");
        return;
    };
    let Some(keys) = path(&arg[..eq]) else {
        diags
            .error(source, 0..eq, format!("`{}` is not a field path", &arg[..eq]))
            .expected("a dotted key such as `node_pools.default.weight`")
            .hint("quote keys that contain dots: node_pools.gpu.limits.\"nvidia.com/gpu\"=8");
        return;
    };
    let origin = Origin::Set(source);
    let text = &arg[eq + 1..];
    let value = match DeValue::parse(text) {
        Ok(v) => Node::from_toml(&v, origin, eq + 1),
        Err(_) => Node { origin, span: eq + 1..arg.len(), value: Value::Str(text.to_string()) },
    };
    if let Err((at, message)) = graft(root, &keys, value, origin) {
        diags.error(source, at, message).hint("override a field inside a table, such as `cluster.name`");
    }
}

/// The first `=` outside quotes.
fn split_at_equals(arg: &str) -> Option<usize> {
    let mut quote = None;
    for (i, c) in arg.char_indices() {
        match (c, quote) {
            ('"' | '\'', None) => quote = Some(c),
            (c, Some(q)) if c == q => quote = None,
            ('=', None) => return Some(i),
            _ => {}
        }
    }
    None
}

/// The keys of a TOML dotted key with their spans in the argument, parsed by the TOML parser itself so quoting
/// works as in the file.
fn path(key: &str) -> Option<Vec<(String, Range<usize>)>> {
    let doc = format!("{key}=0");
    let table = DeTable::parse(&doc).ok()?;
    let mut keys = Vec::new();
    let mut cur = table.into_inner();
    loop {
        let (k, v) = cur.into_iter().next()?;
        keys.push((k.get_ref().to_string(), k.span()));
        match v.into_inner() {
            DeValue::Table(t) => cur = t,
            _ => return Some(keys),
        }
    }
}

/// Sets `keys` to `value` in `root`, creating missing tables; a missing table the schema has a default for
/// starts as that default, so `--set node_pools.default.limits.cpu=200` changes one limit of the default pool
/// rather than replacing the pool.
fn graft(
    root: &mut Node,
    keys: &[(String, Range<usize>)],
    value: Node,
    origin: Origin,
) -> Result<(), (Range<usize>, String)> {
    let mut cur = root;
    for (depth, (key, span)) in keys.iter().enumerate() {
        let kind = cur.value.kind();
        let Value::Table(entries) = &mut cur.value else {
            let written: Vec<&str> = keys[..depth].iter().map(|(k, _)| k.as_str()).collect();
            return Err((span.clone(), format!("`{}` is {kind}, so it has no field `{key}`", written.join("."))));
        };
        if depth + 1 == keys.len() {
            entries.retain(|e| e.key != *key);
            entries.push(Entry { key: key.clone(), key_span: span.clone(), node: value });
            return Ok(());
        }
        let pos = match entries.iter().position(|e| e.key == *key) {
            Some(p) => p,
            None => {
                let names: Vec<&str> = keys[..=depth].iter().map(|(k, _)| k.as_str()).collect();
                let node = default_at(&names)
                    .and_then(default_node)
                    .filter(|n| matches!(n.value, Value::Table(_)))
                    .unwrap_or_else(|| Node::table(origin, span.clone()));
                entries.push(Entry { key: key.clone(), key_span: span.clone(), node });
                entries.len() - 1
            }
        };
        cur = &mut entries[pos].node;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_allow_quoted_keys() {
        let keys = path(r#"node_pools.gpu.limits."nvidia.com/gpu""#).expect("valid path");
        let names: Vec<_> = keys.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["node_pools", "gpu", "limits", "nvidia.com/gpu"]);
        assert_eq!(keys[1].1, 11..14);
        assert!(path("a..b").is_none());
        assert!(path("").is_none());
    }

    #[test]
    fn equals_inside_quotes_is_part_of_the_key() {
        assert_eq!(split_at_equals(r#"a."x=y"=1"#), Some(7));
        assert_eq!(split_at_equals("novalue"), None);
    }
}

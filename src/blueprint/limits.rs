//! kbp's limits on a blueprint, in one place, and their checks. They exist so that validating any input takes
//! bounded time and memory (see docs/performance.md), and sit far above any blueprint a person writes.
//! Each limit broken is one diagnostic, and checking stops there: the input is not a blueprint kbp should try
//! to make sense of.
//!
//! How many diagnostics are kept and shown is the diagnostics' own business: `diag::KEPT`, `diag::SHOWN`.

use std::io::Read;
use std::path::Path;

use super::tree::{Node, Value};
use crate::diag::{Diagnostics, SourceId};

/// The largest blueprint kbp reads: 1 MiB, checked before parsing. The largest shipped blueprint is 2 KiB, and a
/// NodePool as people write them takes a few hundred bytes: [`MAX_NODE_POOLS`] of them fit in a third of this.
/// Beyond it, the text is not a hand-written blueprint.
pub const MAX_BYTES: usize = 1 << 20;

/// The deepest nesting of tables and arrays (a value inside 32 of them). The schema's deepest field is 5 levels
/// down (`node_pools.<name>.disruption.budgets[0].nodes`).
pub const MAX_DEPTH: usize = 32;

/// The most NodePools a blueprint may declare. Kubernetes sets no number; Karpenter weighs every NodePool for
/// every pending pod, orders them by a `weight` of only 1 to 100, and has no scale tests for many of them
/// (aws/karpenter-provider-aws#5228). Each one also costs kbp a few KB once its defaults are filled in, so
/// without a bound a 1 MiB blueprint of `a = {}` pools would take gigabytes to check.
pub const MAX_NODE_POOLS: usize = 1000;

/// The most EC2NodeClasses a blueprint may declare: Karpenter makes an IAM instance profile for each one (kbp
/// gives every class a `role`), and IAM's default quota is 1,000 instance profiles per account.
pub const MAX_NODE_CLASSES: usize = 1000;

/// The most add-ons a blueprint may name. EKS installs only add-ons from its catalog (`DescribeAddonVersions`:
/// AWS's own and those sold through AWS Marketplace), which holds well under this many.
pub const MAX_ADDONS: usize = 200;

/// Reads the blueprint at `path`, refusing one larger than [`MAX_BYTES`] without reading it all.
pub(crate) fn read(path: &Path) -> Result<String, Diagnostics> {
    let file = std::fs::File::open(path).map_err(|e| Diagnostics::io(path, &e))?;
    let mut bytes = Vec::new();
    // One byte more than allowed tells "too large" apart from "exactly at the limit".
    file.take(MAX_BYTES as u64 + 1).read_to_end(&mut bytes).map_err(|e| Diagnostics::io(path, &e))?;
    if bytes.len() > MAX_BYTES {
        // A pipe or a device has no size to tell.
        let size = std::fs::metadata(path).ok().map(|m| m.len()).filter(|n| *n > MAX_BYTES as u64);
        return Err(too_large(&path.display().to_string(), size));
    }
    String::from_utf8(bytes).map_err(|e| {
        let invalid = std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error());
        Diagnostics::io(path, &invalid)
    })
}

/// Refuses a text larger than [`MAX_BYTES`].
pub(crate) fn check_size(name: &str, text: &str) -> Result<(), Diagnostics> {
    if text.len() > MAX_BYTES {
        return Err(too_large(name, Some(text.len() as u64)));
    }
    Ok(())
}

fn too_large(name: &str, size: Option<u64>) -> Diagnostics {
    let size = size.map_or_else(|| format!("more than {MAX_BYTES}"), |n| n.to_string());
    Diagnostics::whole_file(
        name,
        format!("{name} has {size} bytes; a blueprint has at most {MAX_BYTES} (1 MiB)"),
        Some(format!(
            "is this the blueprint you meant? {MAX_NODE_POOLS} node pools, the most allowed, fit in a third of that"
        )),
    )
}

/// Reports the first value nested deeper than [`MAX_DEPTH`]; true when there is none.
pub(crate) fn check_depth(root: &Node, diags: &mut Diagnostics) -> bool {
    // Iterative: the point of the limit is that nothing here depends on the depth of the input.
    let mut stack: Vec<(&Node, usize)> = vec![(root, 0)];
    while let Some((node, depth)) = stack.pop() {
        let children: Vec<&Node> = match &node.value {
            Value::Table(entries) => entries.iter().map(|e| &e.node).collect(),
            Value::Array(items) => items.iter().collect(),
            _ => continue,
        };
        if depth > MAX_DEPTH {
            let source: SourceId = node.origin.source().unwrap_or(0);
            diags
                .error(source, node.span.clone(), format!("tables and arrays nested more than {MAX_DEPTH} deep"))
                .expected(format!("at most {MAX_DEPTH} levels of nesting"))
                .hint("no blueprint field is more than 5 levels deep; is this the blueprint you meant?");
            return false;
        }
        // In reverse, so that the first deep value in the document is the one reported.
        stack.extend(children.into_iter().rev().map(|c| (c, depth + 1)));
    }
    true
}

/// Reports a table of NodePools, EC2NodeClasses or add-ons with more entries than its limit, at the first entry too many;
/// true when there is none.
pub(crate) fn check_counts(root: &Node, diags: &mut Diagnostics) -> bool {
    let Value::Table(top) = &root.value else { return true };
    let mut within = true;
    for (key, max, what, why) in [
        ("node_pools", MAX_NODE_POOLS, "node pools", "Karpenter weighs every pool for every pending pod: merge pools that differ little"),
        ("node_classes", MAX_NODE_CLASSES, "node classes", "each class needs an IAM instance profile, and IAM allows 1,000 by default: merge classes that differ little"),
        ("addons", MAX_ADDONS, "add-ons", "EKS offers fewer add-ons than that: check the names under `[addons]`"),
    ] {
        let Some(Value::Table(entries)) = top.iter().find(|e| e.key == key).map(|e| &e.node.value) else {
            continue;
        };
        let Some(first_over) = entries.get(max) else { continue };
        let source = first_over.node.origin.source().unwrap_or(0);
        diags
            .error(source, first_over.key_span.clone(), format!("{} {what}; a blueprint has at most {max}", entries.len()))
            .path(key)
            .expected(format!("at most {max} {what}"))
            .hint(why);
        within = false;
    }
    within
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blueprint::check_str;
    use crate::blueprint::tests::HEADER;

    #[test]
    fn a_blueprint_over_the_size_limit_is_one_error_without_position() {
        let text = format!("{HEADER}# {}\n", "x".repeat(MAX_BYTES));
        let d = check_str("big.toml", &text, &[]).expect_err("too large");
        assert_eq!(d.items().len(), 1, "{d}");
        assert!(d.items()[0].position.is_none());
        assert!(d.items()[0].message.contains("at most 1048576"), "{d}");
    }

    #[test]
    fn a_file_over_the_size_limit_is_refused_before_it_is_read() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("big.toml");
        std::fs::write(&path, vec![b'#'; MAX_BYTES + 10]).expect("written");
        let d = read(&path).expect_err("too large");
        assert!(d.items()[0].message.contains(&format!("has {} bytes", MAX_BYTES + 10)), "{d}");
        std::fs::write(&path, vec![b'#'; MAX_BYTES]).expect("written");
        assert_eq!(read(&path).map(|t| t.len()).ok(), Some(MAX_BYTES));
    }

    #[test]
    fn pools_and_classes_past_their_limits_are_one_error_each_at_the_first_too_many() {
        let pools: String = (0..=MAX_NODE_POOLS).map(|i| format!("[node_pools.p{i}]\n")).collect();
        let d = check_str("t.toml", &format!("{HEADER}{pools}"), &[]).expect_err("too many");
        assert_eq!(d.items().len(), 1, "{d}");
        let p = d.items()[0].position.as_ref().expect("a position");
        assert_eq!(p.line, 4 + MAX_NODE_POOLS, "{d}");
        assert!(d.items()[0].message.starts_with("1001 node pools; a blueprint has at most 1000"), "{d}");
        let classes: String = (0..MAX_NODE_CLASSES).map(|i| format!("c{i} = {{}}, ")).collect();
        let sets = [format!("node_classes={{ {classes}x = {{}} }}")];
        let d = check_str("t.toml", HEADER, &sets).expect_err("too many");
        assert_eq!(d.items().len(), 1, "{d}");
        assert_eq!(d.items()[0].file, "--set", "{d}");
        let at_the_limit: String = (0..MAX_NODE_POOLS).map(|i| format!("[node_pools.p{i}]\n")).collect();
        assert!(check_str("t.toml", &format!("{HEADER}{at_the_limit}"), &[]).is_ok());
    }

    #[test]
    fn nesting_past_the_limit_is_one_error_at_the_first_deep_value() {
        let deep = |n: usize| format!("x = {}{}\n{HEADER}", "[".repeat(n), "]".repeat(n));
        let d = check_str("t.toml", &deep(MAX_DEPTH + 2), &[]).expect_err("too deep");
        assert_eq!(d.items().len(), 1, "{d}");
        assert!(d.items()[0].message.contains("nested more than 32 deep"), "{d}");
        let p = d.items()[0].position.as_ref().expect("a position");
        assert_eq!((p.line, p.column), (1, 5 + MAX_DEPTH), "{d}");
        // At the limit, the walker has its say: `x` is not a field.
        let d = check_str("t.toml", &deep(MAX_DEPTH), &[]).expect_err("unknown field");
        assert!(d.items().iter().all(|i| !i.message.contains("nested")), "{d}");
    }
}

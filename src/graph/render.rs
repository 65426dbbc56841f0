//! The graph as Graphviz dot or JSON, for `kbp graph`.

use serde_json::{json, Value};

use super::ResourceGraph;

/// The graph in Graphviz's dot language, for `kbp graph --format dot`: a box per resource, an arrow per
/// dependency.
pub fn to_dot(g: &ResourceGraph) -> String {
    let mut out = String::from("digraph kbp {\n  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n");
    let pg = g.petgraph();
    for r in g.in_order() {
        out.push_str(&format!(
            "  {} [label=\"{}\\n({})\"];\n",
            quote(&r.address.to_string()),
            escape(&r.address.to_string()),
            r.kind
        ));
    }
    let mut edges: Vec<(String, String)> = pg
        .edge_indices()
        .filter_map(|e| pg.edge_endpoints(e))
        .map(|(a, b)| (pg[a].address.to_string(), pg[b].address.to_string()))
        .collect();
    edges.sort();
    for (a, b) in edges {
        out.push_str(&format!("  {} -> {};\n", quote(&a), quote(&b)));
    }
    out.push_str("}\n");
    out
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

fn quote(s: &str) -> String {
    format!("\"{}\"", escape(s))
}

/// `{"resources": [{address, kind, depends_on, attributes}]}` in creation order.
pub fn to_json(g: &ResourceGraph) -> Value {
    let resources: Vec<Value> = g
        .in_order()
        .into_iter()
        .map(|r| {
            let mut deps: Vec<String> = r.dependencies().iter().map(|a| a.to_string()).collect();
            deps.sort();
            json!({ "address": r.address.to_string(), "kind": r.kind, "depends_on": deps, "attributes": r.attrs })
        })
        .collect();
    json!({ "format_version": 1, "resources": resources })
}

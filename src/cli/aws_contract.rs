//! What the stack would send AWS, judged offline: every name, tag set, description and policy document the
//! compiled graph holds, against the constraints each kind declares (`providers::contract`), reported as blueprint
//! diagnostics at the field each value comes from. One problem shared by many resources (too many `cluster.tags`
//! for each of them) is one diagnostic naming them.

use std::collections::BTreeMap;

use crate::blueprint::{DerivedProblem, Loaded};
use crate::diag::Diagnostics;
use crate::graph::ResourceGraph;
use crate::providers::{contract, Registry};

/// Resources named in one diagnostic before "and N more".
const NAMED: usize = 3;

/// Every attribute value of `graph` checked against what AWS accepts of its kind ([`contract`]): the problems
/// at the blueprint field that set the value, as `kbp validate` reports them.
pub fn check(loaded: &Loaded, graph: &ResourceGraph) -> Result<(), Diagnostics> {
    loaded.derived_problems(&problems(graph, &Registry::builtin()))
}

/// The findings of `graph` as one problem per field and fault.
pub fn problems(graph: &ResourceGraph, registry: &Registry) -> Vec<DerivedProblem> {
    struct Group {
        fields: Vec<String>,
        message: String,
        hint: String,
        count: usize,
        addresses: Vec<String>,
    }
    let mut groups: BTreeMap<(String, String), Group> = BTreeMap::new();
    for f in contract::check(graph, registry) {
        let mut fields = graph.get(&f.address).map(|r| r.origin(&f.attr)).unwrap_or_default();
        if fields.is_empty() {
            fields.push("cluster.name".to_string());
        }
        // A count that differs between resources is one fault of the field: the largest is reported.
        let fault = if f.count.is_some() { f.attr.clone() } else { f.message.clone() };
        let g = groups.entry((fields[0].clone(), fault)).or_insert_with(|| Group {
            fields: fields.clone(),
            message: f.message.clone(),
            hint: f.hint.clone(),
            count: 0,
            addresses: Vec::new(),
        });
        if f.count.unwrap_or(0) > g.count {
            (g.count, g.message, g.hint) = (f.count.unwrap_or(0), f.message.clone(), f.hint.clone());
        }
        g.addresses.push(f.address.to_string());
    }
    groups
        .into_values()
        .map(|g| {
            let mut who: Vec<&str> = g.addresses.iter().map(String::as_str).take(NAMED).collect();
            let more = g.addresses.len().saturating_sub(NAMED);
            let more = if more > 0 { format!(" and {more} more") } else { String::new() };
            who.dedup();
            DerivedProblem {
                fields: g.fields,
                message: format!("{} ({}{more})", g.message, who.join(", ")),
                hint: g.hint,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;

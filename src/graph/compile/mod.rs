//! Blueprint → [`ResourceGraph`]. One file per layer of the stack (network, IAM, EKS, interruption handling,
//! in-cluster objects); each adds its resources to a [`Builder`] and references the others' outputs by address.
//! Compiling is pure: no AWS call, the same blueprint always gives the same graph.

mod eks;
mod iam;
mod interruption;
mod karpenter_iam;
mod kubernetes;
mod network;

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::{Address, GraphError, Resource, ResourceGraph};
use crate::blueprint::Blueprint;

pub use super::kinds;

/// Compiles a validated blueprint into the graph of every resource of its stack.
pub fn compile(bp: &Blueprint) -> Result<ResourceGraph, GraphError> {
    let mut b = Builder::new(bp);
    b.add(Resource::new(b.caller(), kinds::CALLER_IDENTITY, json!({})));
    network::compile(&mut b);
    iam::compile(&mut b);
    karpenter_iam::compile(&mut b);
    eks::compile(&mut b);
    interruption::compile(&mut b);
    kubernetes::compile(&mut b);
    ResourceGraph::from_resources(b.resources)
}

/// Collects resources and knows the addresses and tags every layer shares.
pub(crate) struct Builder<'a> {
    pub bp: &'a Blueprint,
    resources: Vec<Resource>,
}

impl<'a> Builder<'a> {
    fn new(bp: &'a Blueprint) -> Self {
        Builder { bp, resources: Vec::new() }
    }

    pub(crate) fn add(&mut self, r: Resource) -> Address {
        let r = self.with_origins(r);
        let a = r.address.clone();
        self.resources.push(r);
        a
    }

    /// `r` with the blueprint fields its tags and name come from, unless a layer said otherwise: each tag from
    /// the table that set it (`vpc.private_subnet_tags` over `vpc.tags` over `cluster.tags`), the tags as a whole
    /// from `cluster.tags`, and names from `cluster.name`, which every derived name starts from.
    fn with_origins(&self, mut r: Resource) -> Resource {
        let bp = self.bp;
        let tables = [
            ("vpc.public_subnet_tags", &bp.vpc.public_subnet_tags),
            ("vpc.private_subnet_tags", &bp.vpc.private_subnet_tags),
            ("vpc.tags", bp.vpc.tags()),
            ("cluster.tags", &bp.cluster.tags),
        ];
        let tag_keys: Vec<String> =
            r.attrs.get("tags").and_then(Value::as_object).map(|m| m.keys().cloned().collect()).unwrap_or_default();
        for key in tag_keys {
            if let Some((table, _)) = tables.iter().find(|(_, t)| t.contains_key(&key)) {
                let field = crate::blueprint::field_child(table, &key);
                r = r.from_fields(&crate::blueprint::field_child("tags", &key), &[field.as_str()]);
            }
        }
        let has = |r: &Resource, attr: &str| r.origins.iter().any(|o| o.attr == attr);
        if r.attrs.contains_key("tags") && !has(&r, "tags") {
            r = r.from_fields("tags", &["cluster.tags", "cluster.name"]);
        }
        if !has(&r, "") {
            r = r.from_fields("", &["cluster.name"]);
        }
        r
    }

    pub(crate) fn cluster_name(&self) -> &str {
        &self.bp.cluster.name
    }

    /// The account, partition and ARN kbp runs as.
    pub(crate) fn caller(&self) -> Address {
        Address::new("caller_identity", "current")
    }

    pub(crate) fn cluster(&self) -> Address {
        Address::new("eks_cluster", "main")
    }

    /// `cluster.tags` plus `extra`, plus a `Name` tag when `name` is given.
    pub(crate) fn tags(&self, extra: &[&BTreeMap<String, String>], name: Option<&str>) -> BTreeMap<String, String> {
        let mut t: BTreeMap<String, String> = self.bp.cluster.tags.clone();
        for e in extra {
            t.extend(e.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        if let Some(n) = name {
            t.insert("Name".to_string(), n.to_string());
        }
        t
    }
}

/// `name` if it is at most `max` characters, else its first characters and a short hash of the whole, `max` in
/// all: names cut to fit stay apart (a cluster name of 63 characters cut the five interruption rules' names to
/// one), and the same name always gives the same result. Names are ASCII (every AWS name kbp derives is).
pub(crate) fn fit_name(name: &str, max: usize) -> String {
    use sha2::{Digest, Sha256};
    if name.len() <= max {
        return name.to_string();
    }
    let digest = Sha256::digest(name.as_bytes());
    let hash: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    let keep = max.saturating_sub(hash.len() + 1);
    let head: String = name.chars().take(keep).collect();
    format!("{}-{hash}", head.trim_end_matches('-'))
}

#[cfg(test)]
mod tests;

/// A hand-built blueprint for tests of the later stages, independent of the parser.
#[cfg(test)]
pub(crate) mod tests_support {
    pub(crate) use super::tests::{managed, sample};
}

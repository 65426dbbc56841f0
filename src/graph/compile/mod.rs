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

    pub fn add(&mut self, r: Resource) -> Address {
        let a = r.address.clone();
        self.resources.push(r);
        a
    }

    pub fn cluster_name(&self) -> &str {
        &self.bp.cluster.name
    }

    /// The account, partition and ARN kbp runs as.
    pub fn caller(&self) -> Address {
        Address::new("caller_identity", "current")
    }

    pub fn cluster(&self) -> Address {
        Address::new("eks_cluster", "main")
    }

    /// `cluster.tags` plus `extra`, plus a `Name` tag when `name` is given.
    pub fn tags(&self, extra: &[&BTreeMap<String, String>], name: Option<&str>) -> Value {
        let mut t: BTreeMap<String, String> = self.bp.cluster.tags.clone();
        for e in extra {
            t.extend(e.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        if let Some(n) = name {
            t.insert("Name".to_string(), n.to_string());
        }
        json!(t)
    }
}

#[cfg(test)]
mod tests;

/// A hand-built blueprint for tests of the later stages, independent of the parser.
#[cfg(test)]
pub(crate) mod tests_support {
    pub(crate) use super::tests::{managed, sample};
}

//! The resource graph: the compiled form of a blueprint. It owns the desired resources, their addresses and the
//! dependency edges implied by references; it knows nothing of AWS, state or plans.
//!
//! Edges point from a dependency to its dependent (`vpc.main → subnet.private["a"]`), so a topological order is
//! a creation order and its reverse a deletion order.

mod address;
pub mod compile;
pub mod kinds;
mod render;
pub mod value;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use petgraph::graph::{DiGraph, NodeIndex};
use serde::{Deserialize, Serialize};

pub use address::{Address, BadAddress};
pub use compile::compile;
pub use render::{to_dot, to_json};
pub use value::Attrs;

/// One desired resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resource {
    /// Where it stands in the graph, and in state.
    pub address: Address,
    /// The provider kind that manages it, such as `aws_subnet`.
    pub kind: String,
    /// Desired attributes; may contain references (see [`value`]).
    pub attrs: Attrs,
    /// Dependencies that no attribute references (ordering only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<Address>,
    /// Those of `depends_on` that only need to exist: their create comes first, but their update does not
    /// (CoreDNS needs a node group to run on, not its upgrade).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub needs_existing: Vec<Address>,
    /// Resources whose update, when they and this one both change in one apply, comes before this one's:
    /// an ordering of upgrades only (the add-ons before the node group), never a dependency.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub updated_after: Vec<Address>,
    /// Which blueprint fields its attributes come from, so that a value AWS would refuse is reported where it
    /// was written ([`Resource::origin`]). Not part of the graph's output.
    #[serde(skip)]
    pub origins: Vec<Origin>,
}

/// The blueprint fields an attribute (and what is under it) comes from: the first the user wrote is the one
/// to point at (`karpenter.node_role_name` when set, else `cluster.name`, from which it is derived).
#[derive(Debug, Clone, PartialEq)]
pub struct Origin {
    /// An attribute path: `name`, `tags`, `tags.team`, `taints[1]`.
    pub attr: String,
    /// The blueprint fields (`cluster.tags`, `node_pools[0].limits`) the attribute's value comes from.
    pub fields: Vec<String>,
}

impl Resource {
    /// A resource of `kind` at `address` with the attributes `attrs` (a JSON object), with no dependencies but
    /// those its references make.
    pub fn new(address: Address, kind: &str, attrs: serde_json::Value) -> Self {
        let attrs = match attrs {
            serde_json::Value::Object(m) => m,
            other => panic!("invariant: resource attributes are a JSON object, got {other}"),
        };
        Resource {
            address,
            kind: kind.to_string(),
            attrs,
            depends_on: Vec::new(),
            needs_existing: Vec::new(),
            updated_after: Vec::new(),
            origins: Vec::new(),
        }
    }

    /// With attribute path `attr` coming from the blueprint field `fields[0]`, or the next when that one is not
    /// written (a computed default).
    pub fn from_fields(mut self, attr: &str, fields: &[&str]) -> Self {
        self.origins.push(Origin { attr: attr.to_string(), fields: fields.iter().map(|f| f.to_string()).collect() });
        self
    }

    /// The blueprint fields attribute path `attr` comes from, most likely first: the longest recorded prefix's
    /// fields with the rest of the path after them (`taints[1]` → `node_group.taints[0]` makes `taints[1].key`
    /// `node_group.taints[0].key`). Empty when nothing is recorded.
    pub fn origin(&self, attr: &str) -> Vec<String> {
        let under = |o: &&Origin| {
            o.attr.is_empty()
                || attr == o.attr
                || attr.strip_prefix(o.attr.as_str()).is_some_and(|r| r.starts_with('.') || r.starts_with('['))
        };
        let Some(best) = self.origins.iter().filter(under).max_by_key(|o| o.attr.len()) else { return Vec::new() };
        // The resource as a whole comes from its fields; a path under an attribute keeps its own steps.
        let rest = if best.attr.is_empty() { "" } else { &attr[best.attr.len()..] };
        best.fields.iter().map(|f| format!("{f}{rest}")).collect()
    }

    /// This resource, ordered after `dependency` although no attribute references it.
    pub fn after(mut self, dependency: &Address) -> Self {
        self.depends_on.push(dependency.clone());
        self
    }

    /// Depends on `dependency` existing: created after it, but updated independently of its updates.
    pub fn after_created(mut self, dependency: &Address) -> Self {
        self.needs_existing.push(dependency.clone());
        self.after(dependency)
    }

    /// When both change in one apply, updated after `other` is (see [`Resource::updated_after`]).
    pub fn update_after(mut self, other: &Address) -> Self {
        self.updated_after.push(other.clone());
        self
    }

    /// Every address this resource depends on, by reference or explicitly.
    pub fn dependencies(&self) -> BTreeSet<Address> {
        let mut deps: BTreeSet<Address> = self.depends_on.iter().cloned().collect();
        for v in self.attrs.values() {
            deps.extend(value::references(v).into_iter().map(|(a, _)| a));
        }
        deps
    }
}

/// Why a set of resources is not a graph kbp can apply.
#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    /// Two resources compile to one address.
    #[error("two resources have the address {0}")]
    Duplicate(Address),
    /// A reference names a resource the graph lacks.
    #[error("{from} references {to}, which is not in the graph")]
    Dangling {
        /// The resource that holds the reference.
        from: String,
        /// The address it names.
        to: String,
    },
    /// Resources depend on each other in a circle.
    #[error("dependency cycle through {0}")]
    Cycle(Address),
}

/// A DAG of desired resources.
#[derive(Debug, Clone, Default)]
pub struct ResourceGraph {
    graph: DiGraph<Resource, ()>,
    index: HashMap<Address, NodeIndex>,
}

impl ResourceGraph {
    /// Builds the graph, checking that addresses are unique, references resolve and there is no cycle.
    pub fn from_resources(resources: Vec<Resource>) -> Result<Self, GraphError> {
        let mut g = ResourceGraph::default();
        for r in resources {
            if g.index.contains_key(&r.address) {
                return Err(GraphError::Duplicate(r.address));
            }
            let address = r.address.clone();
            let ix = g.graph.add_node(r);
            g.index.insert(address, ix);
        }
        let mut edges = Vec::new();
        for ix in g.graph.node_indices() {
            let r = &g.graph[ix];
            for dep in r.dependencies() {
                let Some(&from) = g.index.get(&dep) else {
                    return Err(GraphError::Dangling { from: r.address.to_string(), to: dep.to_string() });
                };
                edges.push((from, ix));
            }
        }
        // `dependencies()` is a set, so each edge comes once: `add_edge`, not `update_edge`, which looks through
        // the edges already there and made thousands of NodePools of one EC2NodeClass quadratic.
        for (a, b) in edges {
            g.graph.add_edge(a, b, ());
        }
        petgraph::algo::toposort(&g.graph, None)
            .map_err(|c| GraphError::Cycle(g.graph[c.node_id()].address.clone()))?;
        Ok(g)
    }

    /// The resource at `address`, if the graph has one.
    pub fn get(&self, address: &Address) -> Option<&Resource> {
        self.index.get(address).map(|&ix| &self.graph[ix])
    }

    /// How many resources the graph holds.
    pub fn len(&self) -> usize {
        self.graph.node_count()
    }

    /// Whether the graph holds no resource.
    pub fn is_empty(&self) -> bool {
        self.graph.node_count() == 0
    }

    /// Resources in a dependency order (every resource after all it depends on), ties broken by address.
    pub fn in_order(&self) -> Vec<&Resource> {
        let mut indegree: BTreeMap<&Address, usize> = BTreeMap::new();
        for ix in self.graph.node_indices() {
            indegree.insert(&self.graph[ix].address, self.graph.neighbors_directed(ix, petgraph::Incoming).count());
        }
        let mut ready: BTreeSet<&Address> = indegree.iter().filter(|(_, &d)| d == 0).map(|(a, _)| *a).collect();
        let mut out = Vec::with_capacity(self.len());
        while let Some(a) = ready.pop_first() {
            let ix = self.index[a];
            out.push(&self.graph[ix]);
            for n in self.graph.neighbors_directed(ix, petgraph::Outgoing) {
                let na = &self.graph[n].address;
                let d = indegree.get_mut(na).expect("invariant: every node has an indegree entry");
                *d -= 1;
                if *d == 0 {
                    ready.insert(na);
                }
            }
        }
        out
    }

    /// Every resource, in no particular order (use [`ResourceGraph::in_order`] for a dependency order).
    pub fn resources(&self) -> impl Iterator<Item = &Resource> {
        self.graph.node_weights()
    }

    /// The direct dependencies of `address`.
    pub fn dependencies_of(&self, address: &Address) -> Vec<&Address> {
        let Some(&ix) = self.index.get(address) else { return Vec::new() };
        self.graph.neighbors_directed(ix, petgraph::Incoming).map(|n| &self.graph[n].address).collect()
    }

    pub(crate) fn petgraph(&self) -> &DiGraph<Resource, ()> {
        &self.graph
    }
}

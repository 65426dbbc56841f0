//! What Karpenter would do with a blueprint's NodePools for a workload, computed offline (`kbp simulate`): pure
//! functions from a catalog of instance types, the blueprint and the pods to decisions and their cost, with no
//! AWS or Kubernetes call (the catalog is read and cached by [`crate::catalog`]).
//!
//! - [`workload`]: Kubernetes YAML or the compact TOML form → pod groups;
//! - [`catalog`]: the labels Karpenter derives for an instance type and offering;
//! - [`requirements`], [`taints`]: the rules a pod and a NodePool are matched by;
//! - [`overhead`]: what a node leaves pods (kubelet reservations, max pods, DaemonSets);
//! - [`pools`]: each NodePool's instance types and offerings;
//! - [`schedule`]: the provisioning pass, pods → planned nodes → the cheapest launch of each;
//! - [`cost`]: a stack's fixed monthly cost and each NodePool's worst case at its limits, for `kbp plan`.

use std::collections::BTreeMap;

use serde::Serialize;

pub mod catalog;
pub mod cost;
pub mod overhead;
pub mod pools;
pub mod requirements;
pub mod resources;
pub mod schedule;
pub mod taints;
#[cfg(test)]
pub(crate) mod testing;
pub mod workload;

pub use schedule::simulate;

use resources::Resources;

/// A node's labels (the well-known ones an instance type gives it, plus the pool's own), by key.
pub type Labels = BTreeMap<String, String>;

/// Hours in a month, as AWS's pricing pages count them.
pub const HOURS_PER_MONTH: f64 = 730.0;

/// One node Karpenter would launch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Launch {
    pub node_pool: String,
    pub instance_type: String,
    pub zone: String,
    /// `spot` or `on-demand`.
    pub capacity_type: String,
    pub pods: u32,
    /// What its pods request.
    pub requested: Resources,
    /// What it leaves pods, after kubelet reservations and DaemonSets.
    pub allocatable: Resources,
    /// The instance type's capacity, as counted against the pool's limits.
    pub capacity: Resources,
    /// USD an hour; `None` when the catalog has no price for it.
    pub hourly_price: Option<f64>,
}

/// What a NodePool launches.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoolOutcome {
    pub name: String,
    pub weight: i64,
    pub nodes: u32,
    /// Instance type → nodes.
    pub instance_types: BTreeMap<String, u32>,
    pub zones: BTreeMap<String, u32>,
    pub capacity_types: BTreeMap<String, u32>,
    /// Sum of its nodes' capacity.
    pub capacity: Resources,
    pub hourly_cost: Option<f64>,
}

/// Where a pod group's pods go.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupOutcome {
    pub name: String,
    pub replicas: u32,
    /// NodePool → pods placed there.
    pub node_pools: BTreeMap<String, u32>,
    /// Pods no NodePool takes.
    pub pending: u32,
    /// When some are pending: NodePool → why it does not take them, as Karpenter's "incompatible with nodepool"
    /// events say.
    pub reasons: BTreeMap<String, String>,
}

/// The whole answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Simulation {
    pub nodes: Vec<Launch>,
    pub node_pools: Vec<PoolOutcome>,
    pub groups: Vec<GroupOutcome>,
    pub pending_pods: u32,
    /// USD; `None` when a launched type has no price in the catalog (listed in `unpriced`).
    pub hourly_cost: Option<f64>,
    pub monthly_cost: Option<f64>,
    pub unpriced: Vec<String>,
}

fn summarise(
    pools: &[pools::Pool],
    nodes: Vec<Launch>,
    groups: &[&workload::PodGroup],
    placed: &[BTreeMap<usize, u32>],
    pending: &[u32],
    reasons: Vec<BTreeMap<String, String>>,
) -> Simulation {
    let node_pools = pools
        .iter()
        .map(|p| {
            let mine: Vec<&Launch> = nodes.iter().filter(|n| n.node_pool == p.name).collect();
            let count = |f: fn(&Launch) -> &str| {
                mine.iter().fold(BTreeMap::new(), |mut m: BTreeMap<String, u32>, n| {
                    *m.entry(f(n).to_string()).or_default() += 1;
                    m
                })
            };
            PoolOutcome {
                name: p.name.to_string(),
                weight: p.weight,
                nodes: mine.len() as u32,
                instance_types: count(|n| &n.instance_type),
                zones: count(|n| &n.zone),
                capacity_types: count(|n| &n.capacity_type),
                capacity: mine.iter().fold(Resources::default(), |r, n| r.plus(n.capacity)),
                hourly_cost: mine.iter().map(|n| n.hourly_price).sum(),
            }
        })
        .collect();
    let groups = groups
        .iter()
        .enumerate()
        .map(|(g, group)| GroupOutcome {
            name: group.name.clone(),
            replicas: group.replicas,
            node_pools: placed[g].iter().map(|(p, n)| (pools[*p].name.to_string(), *n)).collect(),
            pending: pending[g],
            reasons: reasons[g].clone(),
        })
        .collect();
    let mut unpriced: Vec<String> =
        nodes.iter().filter(|n| n.hourly_price.is_none()).map(|n| n.instance_type.clone()).collect();
    unpriced.sort();
    unpriced.dedup();
    let hourly: Option<f64> = nodes.iter().map(|n| n.hourly_price).sum();
    Simulation {
        pending_pods: pending.iter().sum(),
        hourly_cost: hourly,
        monthly_cost: hourly.map(|h| h * HOURS_PER_MONTH),
        nodes,
        node_pools,
        groups,
        unpriced,
    }
}

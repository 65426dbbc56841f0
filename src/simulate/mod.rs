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
    /// The NodePool that launches it.
    pub node_pool: String,
    /// EC2 instance type, such as `m7i.xlarge`.
    pub instance_type: String,
    /// Availability zone it lands in.
    pub zone: String,
    /// `spot` or `on-demand`.
    pub capacity_type: String,
    /// How many pods the simulation places on it.
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
    /// The NodePool's name.
    pub name: String,
    /// Its `weight` (0 when unset); heavier pools are tried first.
    pub weight: i64,
    /// How many nodes it launches.
    pub nodes: u32,
    /// Instance type → nodes.
    pub instance_types: BTreeMap<String, u32>,
    /// Availability zone → nodes.
    pub zones: BTreeMap<String, u32>,
    /// Capacity type (`spot`, `on-demand`) → nodes.
    pub capacity_types: BTreeMap<String, u32>,
    /// Sum of its nodes' capacity.
    pub capacity: Resources,
    /// USD an hour for all its nodes; `None` when one of them has no price in the catalog.
    pub hourly_cost: Option<f64>,
}

/// Where a pod group's pods go.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupOutcome {
    /// The pod group's name: `Deployment/web`, or the compact form's `name`.
    pub name: String,
    /// How many pods the group asks for.
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
    /// Every node launched, in the order the provisioning pass decided them.
    pub nodes: Vec<Launch>,
    /// One outcome per NodePool, heaviest weight first.
    pub node_pools: Vec<PoolOutcome>,
    /// One outcome per pod group (DaemonSets aside), in the workload's order.
    pub groups: Vec<GroupOutcome>,
    /// Pods no NodePool takes, over all groups.
    pub pending_pods: u32,
    /// USD; `None` when a launched type has no price in the catalog (listed in `unpriced`).
    pub hourly_cost: Option<f64>,
    /// USD a month ([`HOURS_PER_MONTH`] × the hourly cost); `None` when `hourly_cost` is.
    pub monthly_cost: Option<f64>,
    /// Instance types launched that have no price in the catalog, sorted and deduplicated.
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

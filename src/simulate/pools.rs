//! A NodePool as the simulation sees it: the instance types of the catalog its requirements admit (each with its
//! labels, the offerings — zone × capacity type — it may be bought as, and the room it leaves pods), its taints,
//! weight and limits.
//!
//! Offerings are bits of a mask (`zone index × 2 + capacity type`), so narrowing a node's choices as pods land on
//! it is an AND. Requirements on zone and capacity type are judged per offering; every other requirement per
//! instance type. As Karpenter does, a pool that does not constrain `karpenter.sh/capacity-type` launches
//! on-demand.

use super::catalog::{Catalog, CatalogType};
use super::overhead::{self, Kubelet};
use super::requirements::matches;
use super::resources::Resources;
use super::taints::repelling;
use super::workload::PodGroup;
use super::Labels;
use crate::blueprint::model::{Blueprint, Network, NodePool, Requirement};

/// The well-known label of a node's availability zone.
pub const ZONE: &str = "topology.kubernetes.io/zone";
/// The label of a node's capacity type, which Karpenter sets and NodePools select on.
pub const CAPACITY_TYPE: &str = "karpenter.sh/capacity-type";
/// The capacity types Karpenter buys, in bit order: on-demand is the even bit of a zone, Spot the odd.
pub const CAPACITY_TYPES: [&str; 2] = ["on-demand", "spot"];

/// Every zone × capacity type a node may be bought in, by bit.
#[derive(Debug, Clone)]
pub struct Offers {
    /// The zones, sorted (at most 32: two bits each in a `u64`); a zone's index is its place here.
    pub zones: Vec<String>,
    labels: Vec<Labels>,
}

impl Offers {
    /// The zones the blueprint's VPC has subnets in; for a VPC kbp does not manage (whose subnets' zones are
    /// not in the blueprint), every zone of the catalog.
    pub fn new(bp: &Blueprint, catalog: &Catalog) -> Offers {
        let mut zones: Vec<String> = match &bp.vpc.network {
            Network::Managed(m) => m.azs.clone(),
            Network::Existing(_) => catalog.types.iter().flat_map(|t| t.zones.iter().cloned()).collect(),
        };
        zones.sort();
        zones.dedup();
        zones.truncate(32);
        let labels = zones
            .iter()
            .flat_map(|z| {
                CAPACITY_TYPES.iter().map(move |ct| {
                    Labels::from([(ZONE.to_string(), z.clone()), (CAPACITY_TYPE.to_string(), ct.to_string())])
                })
            })
            .collect();
        Offers { zones, labels }
    }

    /// The mask of every offering.
    pub fn all(&self) -> u64 {
        if self.labels.len() >= 64 {
            u64::MAX
        } else {
            (1u64 << self.labels.len()) - 1
        }
    }

    /// The zone of offering `bit`.
    pub fn zone(&self, bit: usize) -> &str {
        &self.zones[bit / 2]
    }

    /// The capacity type of offering `bit`: `on-demand` or `spot`.
    pub fn capacity_type(bit: usize) -> &'static str {
        CAPACITY_TYPES[bit % 2]
    }

    /// The bits of zone `z` (by index).
    pub fn zone_mask(z: usize) -> u64 {
        0b11 << (2 * z)
    }

    /// The bits of `t`'s offerings: its zones, Spot only where it is sold as Spot.
    fn of_type(&self, t: &CatalogType) -> u64 {
        let mut mask = 0;
        for (z, zone) in self.zones.iter().enumerate() {
            if t.zones.contains(zone) {
                mask |= 1 << (2 * z);
                if t.spot {
                    mask |= 1 << (2 * z + 1);
                }
            }
        }
        mask
    }

    /// The bits of `within` whose zone and capacity type meet `reqs` (only their zone and capacity-type ones).
    pub fn meeting(&self, reqs: &[Requirement], within: u64) -> u64 {
        let offering_reqs: Vec<&Requirement> = reqs.iter().filter(|r| is_offering_key(&r.key)).collect();
        (0..self.labels.len())
            .filter(|bit| within & (1 << bit) != 0)
            .filter(|bit| offering_reqs.iter().all(|r| matches(r, &self.labels[*bit])))
            .fold(0, |m, bit| m | (1 << bit))
    }
}

fn is_offering_key(key: &str) -> bool {
    key == ZONE || key == CAPACITY_TYPE
}

/// The offerings of a node with `labels` (type and pool labels) that meet `reqs`: none when a requirement on
/// the type fails.
pub fn mask_for(reqs: &[Requirement], labels: &Labels, offers: &Offers, within: u64) -> u64 {
    if reqs.iter().filter(|r| !is_offering_key(&r.key)).all(|r| matches(r, labels)) {
        offers.meeting(reqs, within)
    } else {
        0
    }
}

/// One instance type a pool may launch.
#[derive(Debug, Clone)]
pub struct NodeOption {
    /// Index in the catalog's types.
    pub ty: usize,
    /// The type's labels and the pool's.
    pub labels: Labels,
    /// The offerings the pool may buy it as.
    pub mask: u64,
    /// What pods have left on it, after kubelet reservations and DaemonSets.
    pub room: Resources,
    /// What counts against the pool's limits: the type's whole capacity.
    pub capacity: Resources,
}

/// A NodePool with its options.
#[derive(Debug, Clone)]
pub struct Pool<'a> {
    /// The NodePool's name in the blueprint.
    pub name: &'a str,
    /// The NodePool as the blueprint writes it.
    pub spec: &'a NodePool,
    /// The pool's `weight`, 0 when unset; heavier pools are tried first.
    pub weight: i64,
    /// The pool's requirements, with Karpenter's on-demand default when it names no capacity type.
    pub requirements: Vec<Requirement>,
    /// The instance types the pool may launch, each with the offerings it may buy it as.
    pub options: Vec<NodeOption>,
    /// Per resource, `u64::MAX` where unlimited.
    pub limits: Resources,
    /// Why it launches nothing at all, if so.
    pub unusable: Option<String>,
}

/// The blueprint's NodePools, heaviest weight first (ties by name, as Karpenter orders them).
pub fn pools<'a>(bp: &'a Blueprint, catalog: &Catalog, offers: &Offers, daemons: &[PodGroup]) -> Vec<Pool<'a>> {
    let mut pools: Vec<Pool> =
        bp.node_pools.iter().map(|(name, p)| pool(bp, name, p, catalog, offers, daemons)).collect();
    pools.sort_by(|a, b| b.weight.cmp(&a.weight).then(a.name.cmp(b.name)));
    pools
}

fn pool<'a>(
    bp: &'a Blueprint,
    name: &'a str,
    spec: &'a NodePool,
    catalog: &Catalog,
    offers: &Offers,
    daemons: &[PodGroup],
) -> Pool<'a> {
    let mut requirements = spec.requirements.clone();
    if !requirements.iter().any(|r| r.key == CAPACITY_TYPE) {
        requirements.push(Requirement {
            key: CAPACITY_TYPE.into(),
            operator: "In".into(),
            values: vec!["on-demand".into()],
            min_values: None,
        });
    }
    let limits = limits(spec);
    let mut out =
        Pool { name, spec, weight: spec.weight.unwrap_or(0), requirements, options: vec![], limits, unusable: None };
    let Some(class) = bp.node_classes.get(&spec.node_class) else {
        out.unusable = Some(format!("its node class {:?} is not in the blueprint", spec.node_class));
        return out;
    };
    let kubelet = Kubelet::of(class);
    let windows = class.windows();
    for (ty, t) in catalog.types.iter().enumerate() {
        let mut labels = t.instance_type.labels();
        if windows {
            labels.insert("kubernetes.io/os".into(), "windows".into());
        }
        for (k, v) in &spec.labels {
            labels.insert(k.clone(), v.clone());
        }
        // A requirement on a key of the pool's own (`team In [a]`) labels its nodes with it.
        for r in &out.requirements {
            let well_known = r.key.contains("kubernetes.io/") || r.key.starts_with("karpenter.");
            if r.operator == "In" && !well_known && !labels.contains_key(&r.key) {
                if let Some(v) = r.values.first() {
                    labels.insert(r.key.clone(), v.clone());
                }
            }
        }
        let mask = mask_for(&out.requirements, &labels, offers, offers.of_type(t));
        if mask == 0 {
            continue;
        }
        let mut room = overhead::allocatable(t, &kubelet);
        for d in daemons {
            let placed = repelling(&spec.taints, &d.tolerations).is_none()
                && d.terms.iter().any(|term| mask_for(term, &labels, offers, mask) != 0);
            if placed {
                room = room.minus(d.requests);
            }
        }
        let it = &t.instance_type;
        let capacity = Resources {
            cpu_milli: u64::from(it.vcpus) * 1000,
            memory: it.memory_mib * 1024 * 1024,
            gpu: it.gpu.as_ref().map_or(0, |g| u64::from(g.count)),
            pods: room.pods,
        };
        out.options.push(NodeOption { ty, labels, mask, room, capacity });
    }
    if out.options.is_empty() {
        out.unusable = Some(format!(
            "no instance type of the {} catalog in the VPC's zones meets its requirements",
            catalog.region
        ));
    }
    out
}

/// A pool's `limits` as resources, `u64::MAX` for each one not limited.
fn limits(spec: &NodePool) -> Resources {
    let mut limits = Resources { cpu_milli: u64::MAX, memory: u64::MAX, gpu: u64::MAX, pods: u64::MAX };
    for (name, value) in &spec.limits {
        let text = match value {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let Ok(r) = Resources::from_quantities([(name.as_str(), text.as_str())]) else { continue };
        match name.as_str() {
            "cpu" => limits.cpu_milli = r.cpu_milli,
            "memory" => limits.memory = r.memory,
            "pods" => limits.pods = r.pods,
            n if super::resources::GPU_RESOURCES.contains(&n) => limits.gpu = r.gpu,
            _ => {}
        }
    }
    limits
}

//! The provisioning pass: pods, largest first, go onto nodes already planned when one fits (first fit), else onto
//! a new node of the first NodePool, by weight, that takes them — its taints tolerated, its requirements and the
//! pod's met by some instance type with room, under its `limits`, keeping each `minValues`. A planned node keeps
//! every instance type and offering that still fits what it holds, as Karpenter's NodeClaims keep their
//! flexibility; when all pods are placed each node is launched as the cheapest of them (Spot where the pool
//! allows it and the type is sold so, as Karpenter prefers).
//!
//! Like Karpenter's scheduler, a pool's limits count each planned node at the largest capacity it may still be
//! launched with. Zone spreads and anti-affinity decide a pod's zone before its node, the least used zone that
//! keeps the skew.

use std::collections::BTreeMap;

use super::catalog::Catalog;
use super::pools::{self, mask_for, Offers, Pool};
use super::resources::Resources;
use super::taints::repelling;
use super::workload::{PodGroup, Workload};
use super::{Launch, Simulation};
use crate::blueprint::model::Blueprint;

const SPOT_BITS: u64 = 0xAAAA_AAAA_AAAA_AAAA;

/// How a pod group fits one pool: the taint it does not tolerate, else per option the offerings its
/// requirements allow (0: none).
struct Fit {
    repelled_by: Option<String>,
    masks: Vec<u64>,
}

/// A node being planned.
struct Planned {
    pool: usize,
    /// (option index, offerings still possible).
    options: Vec<(usize, u64)>,
    used: Resources,
    /// Each resource's most room over the options: a quick "cannot fit" before looking at each option.
    max_room: Resources,
    /// Pods per group on it.
    counts: BTreeMap<usize, u32>,
}

struct Scheduler<'a> {
    catalog: &'a Catalog,
    offers: Offers,
    pools: Vec<Pool<'a>>,
    groups: Vec<&'a PodGroup>,
    fits: Vec<Vec<Fit>>,
    nodes: Vec<Planned>,
    /// Pods per group per zone index.
    zone_counts: Vec<Vec<u32>>,
    placed: Vec<BTreeMap<usize, u32>>,
    pending: Vec<u32>,
    reasons: Vec<BTreeMap<String, String>>,
}

/// What Karpenter would launch for `workload` with the NodePools of `bp`, choosing from `catalog`.
pub fn simulate(catalog: &Catalog, bp: &Blueprint, workload: &Workload) -> Simulation {
    let offers = Offers::new(bp, catalog);
    let mut daemons = super::overhead::addon_daemonsets(bp);
    daemons.extend(workload.groups.iter().filter(|g| g.daemon).cloned());
    let pools = pools::pools(bp, catalog, &offers, &daemons);
    let groups: Vec<&PodGroup> = workload.groups.iter().filter(|g| !g.daemon).collect();
    let fits = groups.iter().map(|g| pools.iter().map(|p| fit(g, p, &offers)).collect()).collect();
    let n = groups.len();
    let mut s = Scheduler {
        catalog,
        zone_counts: vec![vec![0; offers.zones.len()]; n],
        offers,
        pools,
        groups,
        fits,
        nodes: Vec::new(),
        placed: vec![BTreeMap::new(); n],
        pending: vec![0; n],
        reasons: vec![BTreeMap::new(); n],
    };
    let mut order: Vec<usize> = (0..n).flat_map(|g| std::iter::repeat_n(g, s.groups[g].replicas as usize)).collect();
    order.sort_by(|a, b| {
        let (ra, rb) = (s.groups[*a].requests, s.groups[*b].requests);
        (rb.gpu, rb.cpu_milli, rb.memory).cmp(&(ra.gpu, ra.cpu_milli, ra.memory)).then(a.cmp(b))
    });
    for g in order {
        s.place(g);
    }
    s.finish()
}

fn fit(group: &PodGroup, pool: &Pool, offers: &Offers) -> Fit {
    let repelled_by = repelling(&pool.spec.taints, &group.tolerations).map(|t| {
        let value = t.value.as_deref().map(|v| format!("={v}")).unwrap_or_default();
        format!("{}{value}:{}", t.key, t.effect)
    });
    let masks = pool
        .options
        .iter()
        .map(|o| group.terms.iter().fold(0, |m, term| m | mask_for(term, &o.labels, offers, o.mask)))
        .collect();
    Fit { repelled_by, masks }
}

impl Scheduler<'_> {
    fn place(&mut self, g: usize) {
        let mut reasons = BTreeMap::new();
        for (zone, zmask) in self.zone_choices(g) {
            if let Some(n) = (0..self.nodes.len()).find(|n| self.try_node(*n, g, zmask)) {
                return self.record(g, n, zone);
            }
            for p in 0..self.pools.len() {
                match self.try_new(p, g, zmask) {
                    Ok(n) => return self.record(g, n, zone),
                    Err(why) => {
                        reasons.entry(self.pools[p].name.to_string()).or_insert(why);
                    }
                }
            }
        }
        if reasons.is_empty() {
            reasons.insert("*".into(), "no zone keeps the pod's topology spread or anti-affinity".into());
        }
        self.pending[g] += 1;
        if self.reasons[g].is_empty() {
            self.reasons[g] = reasons;
        }
    }

    fn record(&mut self, g: usize, n: usize, zone: Option<usize>) {
        *self.placed[g].entry(self.nodes[n].pool).or_default() += 1;
        if let Some(z) = zone {
            self.zone_counts[g][z] += 1;
        }
    }

    /// The zones the next pod of `g` may go to, best first, with their offering bits; one unconstrained choice
    /// when the group neither spreads over nor avoids zones.
    fn zone_choices(&self, g: usize) -> Vec<(Option<usize>, u64)> {
        let group = self.groups[g];
        if group.zone_skew.is_none() && group.per_zone.is_none() {
            return vec![(None, self.offers.all())];
        }
        let allowed = group.terms.iter().fold(0, |m, t| m | self.offers.meeting(t, self.offers.all()));
        let zones: Vec<usize> = (0..self.offers.zones.len()).filter(|z| allowed & Offers::zone_mask(*z) != 0).collect();
        let counts = &self.zone_counts[g];
        let min = zones.iter().map(|z| counts[*z]).min().unwrap_or(0);
        let mut ok: Vec<usize> = zones
            .into_iter()
            .filter(|z| group.zone_skew.is_none_or(|skew| counts[*z] + 1 - min <= skew))
            .filter(|z| group.per_zone.is_none_or(|cap| counts[*z] < cap))
            .collect();
        ok.sort_by_key(|z| (counts[*z], *z));
        ok.into_iter().map(|z| (Some(z), Offers::zone_mask(z))).collect()
    }

    fn try_node(&mut self, n: usize, g: usize, zmask: u64) -> bool {
        let node = &self.nodes[n];
        let (pool, fit, group) = (&self.pools[node.pool], &self.fits[g][node.pool], self.groups[g]);
        let used = node.used.plus(group.requests);
        if fit.repelled_by.is_some()
            || !used.fits(&node.max_room)
            || group.per_node.is_some_and(|cap| node.counts.get(&g).copied().unwrap_or(0) >= cap)
        {
            return false;
        }
        let options: Vec<(usize, u64)> = node
            .options
            .iter()
            .filter_map(|&(o, m)| {
                let m = m & fit.masks[o] & zmask;
                (m != 0 && used.fits(&pool.options[o].room)).then_some((o, m))
            })
            .collect();
        if options.is_empty() || min_values_unmet(pool, &options, &self.offers).is_some() {
            return false;
        }
        let max_room = options.iter().fold(Resources::default(), |r, (o, _)| r.max(pool.options[*o].room));
        let node = &mut self.nodes[n];
        node.options = options;
        node.used = used;
        node.max_room = max_room;
        *node.counts.entry(g).or_default() += 1;
        true
    }

    fn try_new(&mut self, p: usize, g: usize, zmask: u64) -> Result<usize, String> {
        let (pool, fit, group) = (&self.pools[p], &self.fits[g][p], self.groups[g]);
        if let Some(why) = &pool.unusable {
            return Err(why.clone());
        }
        if let Some(taint) = &fit.repelled_by {
            return Err(format!("the pod does not tolerate its taint {taint}"));
        }
        let compatible: Vec<(usize, u64)> =
            (0..pool.options.len()).map(|o| (o, fit.masks[o] & zmask)).filter(|(_, m)| *m != 0).collect();
        if compatible.is_empty() {
            return Err(self.incompatible(p, g, zmask));
        }
        let most = compatible.iter().fold(Resources::default(), |r, (o, _)| r.max(pool.options[*o].room));
        let roomy: Vec<(usize, u64)> =
            compatible.into_iter().filter(|(o, _)| group.requests.fits(&pool.options[*o].room)).collect();
        if roomy.is_empty() {
            let over = group.requests.first_over(&most).unwrap_or("cpu");
            return Err(format!(
                "no instance type it may launch has room for the pod's {over} {} (the most one leaves pods, after \
                 kubelet reservations and DaemonSets, is {})",
                amount(over, group.requests),
                amount(over, most)
            ));
        }
        let in_use = self.in_use(p);
        let left = pool.limits.minus(in_use);
        let under: Vec<(usize, u64)> =
            roomy.iter().copied().filter(|(o, _)| pool.options[*o].capacity.fits(&left)).collect();
        if under.is_empty() {
            let smallest =
                roomy.iter().map(|(o, _)| pool.options[*o].capacity).fold(None, |m: Option<Resources>, c| {
                    Some(m.map_or(c, |m| if c.cpu_milli < m.cpu_milli { c } else { m }))
                });
            let over = smallest.and_then(|c| c.first_over(&left)).unwrap_or("cpu");
            return Err(format!(
                "its limits are reached ({over}: {} of {} planned)",
                amount(over, in_use),
                amount(over, pool.limits)
            ));
        }
        if let Some(why) = min_values_unmet(pool, &under, &self.offers) {
            return Err(why);
        }
        let max_room = under.iter().fold(Resources::default(), |r, (o, _)| r.max(pool.options[*o].room));
        let mut counts = BTreeMap::new();
        counts.insert(g, 1);
        self.nodes.push(Planned { pool: p, options: under, used: group.requests, max_room, counts });
        Ok(self.nodes.len() - 1)
    }

    /// What pool `p`'s planned nodes count against its limits.
    fn in_use(&self, p: usize) -> Resources {
        let pool = &self.pools[p];
        self.nodes.iter().filter(|n| n.pool == p).fold(Resources::default(), |sum, n| {
            sum.plus(n.options.iter().fold(Resources::default(), |m, (o, _)| m.max(pool.options[*o].capacity)))
        })
    }

    /// Why no instance type of pool `p` meets group `g`'s requirements: the first requirement none meets on
    /// its own, else that none meets them together.
    fn incompatible(&self, p: usize, g: usize, zmask: u64) -> String {
        let (pool, group) = (&self.pools[p], self.groups[g]);
        let term = group.terms.first().map(Vec::as_slice).unwrap_or_default();
        let alone = |r: &crate::blueprint::model::Requirement, within: u64| {
            pool.options
                .iter()
                .any(|o| mask_for(std::slice::from_ref(r), &o.labels, &self.offers, o.mask & within) != 0)
        };
        if let Some(r) = term.iter().find(|r| !alone(r, self.offers.all())) {
            return format!(
                "incompatible: the pod requires {} {} [{}], which none of its instance types and offerings has",
                r.key,
                r.operator,
                r.values.join(", ")
            );
        }
        if zmask != self.offers.all() && term.iter().all(|r| alone(r, self.offers.all())) {
            return "incompatible: none of its instance types is offered in the zone the pod's spread needs".into();
        }
        "incompatible: none of its instance types meets all of the pod's requirements together".into()
    }

    fn finish(self) -> Simulation {
        let mut launches: Vec<Launch> = self.nodes.iter().map(|n| self.launch(n)).collect();
        launches.sort_by_key(|l| self.pools.iter().position(|p| p.name == l.node_pool));
        super::summarise(&self.pools, launches, &self.groups, &self.placed, &self.pending, self.reasons)
    }

    /// The cheapest instance type and offering `node` may still be: Spot when any option allows it.
    fn launch(&self, node: &Planned) -> Launch {
        let pool = &self.pools[node.pool];
        let spot = node.options.iter().any(|(_, m)| m & SPOT_BITS != 0);
        let wanted = if spot { SPOT_BITS } else { !SPOT_BITS };
        let mut best: Option<(Option<f64>, usize, usize)> = None;
        for &(o, m) in &node.options {
            let t = &self.catalog.types[pool.options[o].ty];
            for bit in (0..64).filter(|b| m & wanted & (1u64 << b) != 0) {
                let price = if spot { t.spot_prices.get(self.offers.zone(bit)).copied() } else { t.on_demand_price };
                let better = match &best {
                    None => true,
                    Some((best_price, bo, _)) => {
                        let bt = &self.catalog.types[pool.options[*bo].ty].instance_type;
                        let key = |p: Option<f64>, it: &super::catalog::InstanceType| {
                            (p.is_none(), p.unwrap_or(0.0), it.vcpus, it.memory_mib)
                        };
                        key(price, &t.instance_type).partial_cmp(&key(*best_price, bt))
                            == Some(std::cmp::Ordering::Less)
                    }
                };
                if better {
                    best = Some((price, o, bit));
                }
            }
        }
        let (price, o, bit) = best.unwrap_or((None, node.options[0].0, 0));
        let option = &pool.options[o];
        Launch {
            node_pool: pool.name.to_string(),
            instance_type: self.catalog.types[option.ty].instance_type.name.clone(),
            zone: self.offers.zone(bit).to_string(),
            capacity_type: Offers::capacity_type(bit).to_string(),
            pods: node.counts.values().sum(),
            requested: node.used,
            allocatable: option.room,
            capacity: option.capacity,
            hourly_price: price,
        }
    }
}

/// `resource` of `r` as a person reads it.
fn amount(resource: &str, r: Resources) -> String {
    match resource {
        "cpu" => super::resources::cores(r.cpu_milli),
        "memory" => super::resources::bytes(r.memory),
        "gpu" => r.gpu.to_string(),
        _ => r.pods.to_string(),
    }
}

/// The first `minValues` of pool's requirements that `options` cannot keep, as a reason.
fn min_values_unmet(pool: &Pool, options: &[(usize, u64)], offers: &Offers) -> Option<String> {
    for r in &pool.requirements {
        let Some(min) = r.min_values.filter(|m| *m > 0) else { continue };
        let mut values: Vec<String> = Vec::new();
        for (o, m) in options {
            match r.key.as_str() {
                pools::ZONE | pools::CAPACITY_TYPE => {
                    for bit in (0..64).filter(|b| m & (1u64 << b) != 0) {
                        values.push(if r.key == pools::ZONE {
                            offers.zone(bit).to_string()
                        } else {
                            Offers::capacity_type(bit).to_string()
                        });
                    }
                }
                key => values.extend(pool.options[*o].labels.get(key).cloned()),
            }
        }
        values.sort();
        values.dedup();
        if (values.len() as i64) < min {
            return Some(format!(
                "minValues {min} of {} cannot be kept: only {} left that fit the pod",
                r.key,
                values.len()
            ));
        }
    }
    None
}

#[cfg(test)]
mod seed_004;
#[cfg(test)]
mod tests;

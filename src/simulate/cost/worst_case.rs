//! The most a NodePool could cost: Karpenter launches no node that would take the pool past a limit, so filled
//! to its `limits` a pool holds, of one instance type, as many nodes as the tightest limit allows (the floor of
//! limit ÷ the type's capacity, over each limited resource). Priced at the dearest offering the pool may buy
//! the type as (Spot price for Spot, on-demand otherwise), the worst case is the dearest such fill over the
//! types the pool admits ([`crate::simulate::pools`] decides which, with Karpenter's on-demand default).
//!
//! A pool without limits has no worst case: nothing stops Karpenter from launching until the account's quotas
//! do. That is reported as unbounded, not as a number.

use super::{rate, PoolWorstCase, HOURS_PER_MONTH};
use crate::blueprint::model::{Blueprint, NodePool};
use crate::simulate::catalog::{Catalog, CatalogType};
use crate::simulate::pools::{self, Offers, Pool};
use crate::simulate::resources::{Resources, GPU_RESOURCES};

/// Every NodePool of the blueprint, by name.
pub fn node_pools(bp: &Blueprint, catalog: Option<&Catalog>) -> Vec<PoolWorstCase> {
    let Some(catalog) = catalog else {
        return bp.node_pools.iter().map(|(name, spec)| without_catalog(name, spec, &bp.cluster.region)).collect();
    };
    let offers = Offers::new(bp, catalog);
    // DaemonSets change the room pods have on a node, not its capacity, which is what limits count.
    let mut all: Vec<PoolWorstCase> =
        pools::pools(bp, catalog, &offers, &[]).iter().map(|p| worst_case(p, catalog, &offers)).collect();
    all.sort_by(|a, b| a.name.cmp(&b.name));
    all
}

fn none(name: &str, bound_by: &str, detail: String) -> PoolWorstCase {
    PoolWorstCase {
        name: name.to_string(),
        worst_case_monthly_usd: None,
        nodes: None,
        instance_type: None,
        capacity_type: None,
        bound_by: bound_by.to_string(),
        detail,
    }
}

fn unbounded(name: &str) -> PoolWorstCase {
    none(
        name,
        "no limits",
        "unbounded: it has no limits, so Karpenter may launch until the account's quotas stop it".into(),
    )
}

fn without_catalog(name: &str, spec: &NodePool, region: &str) -> PoolWorstCase {
    if spec.limits.is_empty() {
        return unbounded(name);
    }
    let why = format!(
        "price unknown: no cached instance-type catalog for {region} (`kbp plan --refresh-catalog` or `kbp simulate` reads one)"
    );
    none(name, "no catalog", why)
}

/// The limited resources, each with the name and value the blueprint gives it.
fn limited(pool: &Pool) -> Vec<(&'static str, u64, String)> {
    let named = |key: &str| -> String {
        let value = match pool.spec.limits.get(key) {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => "?".to_string(),
        };
        format!("{key} {value}")
    };
    let gpu_key = GPU_RESOURCES.iter().copied().find(|k| pool.spec.limits.contains_key(*k)).unwrap_or("gpu");
    let l = &pool.limits;
    [("cpu", l.cpu_milli), ("memory", l.memory), (gpu_key, l.gpu), ("pods", l.pods)]
        .into_iter()
        .filter(|(_, limit)| *limit != u64::MAX)
        .map(|(key, limit)| (key, limit, named(key)))
        .collect()
}

/// How many nodes of `capacity` the limits allow, and the limit that decides; `None` when no limited resource
/// is one the type has (a GPU limit on a type without GPUs caps nothing).
fn fill(limits: &[(&'static str, u64, String)], capacity: &Resources) -> Option<(u64, usize)> {
    let of = |key: &str| match key {
        "cpu" => capacity.cpu_milli,
        "memory" => capacity.memory,
        "pods" => capacity.pods,
        _ => capacity.gpu,
    };
    limits
        .iter()
        .enumerate()
        .filter(|(_, (key, _, _))| of(key) > 0)
        .map(|(i, (key, limit, _))| (limit / of(key), i))
        .min_by_key(|(nodes, _)| *nodes)
}

/// The dearest offering in `mask`: its hourly price and capacity type.
fn dearest_offering(t: &CatalogType, mask: u64, offers: &Offers) -> Option<(f64, &'static str)> {
    (0..offers.zones.len() * 2)
        .filter(|bit| mask & (1 << bit) != 0)
        .filter_map(|bit| {
            let capacity_type = Offers::capacity_type(bit);
            let price =
                if capacity_type == "spot" { t.spot_prices.get(offers.zone(bit)).copied() } else { t.on_demand_price };
            price.map(|p| (p, capacity_type))
        })
        .reduce(|a, b| if b.0 > a.0 { b } else { a })
}

fn worst_case(pool: &Pool, catalog: &Catalog, offers: &Offers) -> PoolWorstCase {
    let limits = limited(pool);
    if limits.is_empty() {
        return unbounded(pool.name);
    }
    if let Some(why) = &pool.unusable {
        let mut nothing = none(pool.name, "nothing to launch", format!("it can launch nothing: {why}"));
        nothing.worst_case_monthly_usd = Some(0.0);
        return nothing;
    }
    // (monthly, nodes, type, capacity type, hourly price, deciding limit)
    let mut dearest: Option<(f64, u64, &str, &str, f64, usize)> = None;
    let mut unpriced = 0;
    for option in &pool.options {
        let t = &catalog.types[option.ty];
        let name = t.instance_type.name.as_str();
        let Some((nodes, limit)) = fill(&limits, &option.capacity) else {
            let keys: Vec<&str> = limits.iter().map(|(k, _, _)| *k).collect();
            let why = format!("unbounded: its limits ({}) do not cap {name}, which has none of it", keys.join(", "));
            return none(pool.name, "no limits", why);
        };
        let Some((hourly, capacity_type)) = dearest_offering(t, option.mask, offers) else {
            unpriced += 1;
            continue;
        };
        let monthly = nodes as f64 * hourly * HOURS_PER_MONTH;
        if dearest.is_none_or(|d| monthly > d.0) {
            dearest = Some((monthly, nodes, name, capacity_type, hourly, limit));
        }
    }
    let Some((monthly, nodes, name, capacity_type, hourly, limit)) = dearest else {
        let why = format!("price unknown: the {} catalog has no price for the types it may launch", catalog.region);
        return none(pool.name, "no price", why);
    };
    // A type without a price could be dearer still: the figure is then a floor, and says so.
    let left_out = if unpriced > 0 {
        format!("; at least: {unpriced} of the types it admits have no price in the catalog")
    } else {
        String::new()
    };
    PoolWorstCase {
        name: pool.name.to_string(),
        worst_case_monthly_usd: Some(monthly),
        nodes: Some(nodes),
        instance_type: Some(name.to_string()),
        capacity_type: Some(capacity_type.to_string()),
        bound_by: limits[limit].0.to_string(),
        detail: format!(
            "{nodes} × {name} {capacity_type} at ${}/h, capped by {}{left_out}",
            rate(hourly),
            limits[limit].2
        ),
    }
}

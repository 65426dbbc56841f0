//! What a stack costs a month before any workload runs, for `kbp plan`: its fixed items (the EKS control plane,
//! the NAT gateways, the controller node group and its disks, the KMS key, the interruption queue) and, per
//! NodePool, the most it could cost filled to its `limits` ([`worst_case`]). Pure: the blueprint and, when there
//! is one, the region's instance-type catalog in; figures out.
//!
//! Instances are priced from the catalog (the Price List API's on-demand price, EC2's Spot price); everything
//! else from AWS's published list prices written in [`list_prices`] (us-east-1, us-east-2, us-west-2,
//! eu-west-1 and eu-central-1; other regions take us-east-1's, and the line says so). Not counted: what depends
//! on use — data transfer, NAT data processing, control-plane logs in CloudWatch, API requests (SQS, KMS) —
//! nor the EBS volumes of Karpenter's nodes. A month is [`HOURS_PER_MONTH`] hours.

pub mod list_prices;
#[cfg(test)]
mod tests;
pub mod worst_case;

use serde::{Deserialize, Serialize};

use super::catalog::Catalog;
use super::HOURS_PER_MONTH;
use crate::blueprint::model::{Blueprint, NatGatewayMode, Network};
use list_prices::RegionPrices;

/// The cost block of a plan (`Plan::cost`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StackCost {
    /// The blueprint's region (`cluster.region`), whose prices apply.
    pub region: String,
    /// The catalog instances were priced from; `None` when there was none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog: Option<CatalogUsed>,
    /// What the stack pays for with no workload: control plane, NAT gateways, node group and its disks, KMS, SQS.
    pub fixed: Vec<FixedItem>,
    /// The sum of the fixed items that have a price (a floor when `unpriced` names one of them).
    pub fixed_monthly_usd: f64,
    /// Each NodePool's worst case at its limits, by name.
    pub node_pools: Vec<PoolWorstCase>,
    /// The fixed items plus every NodePool at its limits; `None` when something in `unpriced` has no figure.
    pub worst_case_monthly_usd: Option<f64>,
    /// Fixed items and NodePools without a figure (no catalog, unbounded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unpriced: Vec<String>,
    /// What no figure counts.
    pub not_counted: String,
}

/// Which catalog priced the instances, and how old its prices are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CatalogUsed {
    /// The region the catalog was read for.
    pub region: String,
    /// When it was read from AWS, RFC 3339.
    pub fetched_at: String,
}

/// One thing the stack pays for whether or not anything runs on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FixedItem {
    /// What is paid for, such as `EKS control plane` or `NAT gateways`.
    pub item: String,
    /// How the figure was reached, or why there is none.
    pub detail: String,
    /// USD a month; `None` when the price is unknown.
    pub monthly_usd: Option<f64>,
}

/// The most a NodePool could cost a month if Karpenter filled it to its `limits`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolWorstCase {
    /// The NodePool's name.
    pub name: String,
    /// USD a month; `None` when unbounded (no limits) or unpriced.
    pub worst_case_monthly_usd: Option<f64>,
    /// How many nodes of `instance_type` the limits allow.
    pub nodes: Option<u64>,
    /// The instance type of the dearest fill the limits allow; `None` when there is no figure.
    pub instance_type: Option<String>,
    /// `on-demand` or `spot`.
    pub capacity_type: Option<String>,
    /// The limit that caps the count (`cpu`, `memory`, `nvidia.com/gpu`, `pods`), or why there is no figure:
    /// `no limits`, `no catalog`, `no price`, `nothing to launch`.
    pub bound_by: String,
    /// The same in words.
    pub detail: String,
}

const NOT_COUNTED: &str =
    "data transfer, NAT data processing, control-plane logs, API requests, and the volumes of Karpenter's nodes";

/// The stack's fixed items and each NodePool's worst case. `catalog` prices instances; one for another region
/// counts as none.
pub fn stack_cost(bp: &Blueprint, catalog: Option<&Catalog>) -> StackCost {
    let region = bp.cluster.region.as_str();
    let catalog = catalog.filter(|c| c.region == region);
    let prices = list_prices::for_region(region);
    let mut fixed = vec![
        FixedItem {
            item: "EKS control plane".into(),
            detail: format!("standard support at ${}/h", rate(list_prices::EKS_CONTROL_PLANE_HOURLY)),
            monthly_usd: Some(list_prices::EKS_CONTROL_PLANE_HOURLY * HOURS_PER_MONTH),
        },
        nat_gateways(bp, &prices),
        node_group(bp, catalog),
        node_group_disks(bp, &prices),
    ];
    if bp.cluster.secrets_encryption {
        fixed.push(FixedItem {
            item: "KMS key".into(),
            detail: "secrets encryption: a customer managed key; its requests are usage-based".into(),
            monthly_usd: Some(list_prices::KMS_KEY_MONTHLY),
        });
    }
    if bp.karpenter.interruption_queue {
        fixed.push(FixedItem {
            item: "Interruption queue".into(),
            detail: "usage-based: SQS requests (the first million a month free), EventBridge rules of AWS events free"
                .into(),
            monthly_usd: Some(0.0),
        });
    }
    let node_pools = worst_case::node_pools(bp, catalog);
    let unpriced: Vec<String> = fixed
        .iter()
        .filter(|f| f.monthly_usd.is_none())
        .map(|f| f.item.clone())
        .chain(node_pools.iter().filter(|p| p.worst_case_monthly_usd.is_none()).map(|p| format!("NodePool {}", p.name)))
        .collect();
    let fixed_monthly_usd = fixed.iter().filter_map(|f| f.monthly_usd).sum();
    let pools: Option<f64> = node_pools.iter().map(|p| p.worst_case_monthly_usd).sum();
    let worst_case_monthly_usd = pools.filter(|_| unpriced.is_empty()).map(|p| p + fixed_monthly_usd);
    StackCost {
        region: region.to_string(),
        catalog: catalog.map(|c| CatalogUsed { region: c.region.clone(), fetched_at: c.fetched_at.clone() }),
        fixed,
        fixed_monthly_usd,
        node_pools,
        worst_case_monthly_usd,
        unpriced,
        not_counted: NOT_COUNTED.into(),
    }
}

/// ` (us-east-1's price: kbp lists none for REGION)` when the table has no figure of the region's own.
fn fallback_note(prices: &RegionPrices, region: &str) -> String {
    if prices.region == region {
        String::new()
    } else {
        format!(" ({}'s price: kbp lists none for {region})", prices.region)
    }
}

/// One per zone, one in all, or none, as `nat_gateway` says; each holds an Elastic IP, billed as a public IPv4
/// address. A VPC kbp does not manage has its owner's gateways, not the stack's.
fn nat_gateways(bp: &Blueprint, prices: &RegionPrices) -> FixedItem {
    let (count, why) = match &bp.vpc.network {
        Network::Existing(_) => (0, "none of the stack's: the VPC and its gateways are its owner's".to_string()),
        Network::Managed(m) => match m.nat_gateway {
            NatGatewayMode::None => (0, "none (nat_gateway = \"none\")".to_string()),
            NatGatewayMode::Single => (1, "1, shared by all zones (nat_gateway = \"single\")".to_string()),
            NatGatewayMode::PerAz => (m.azs.len(), format!("{}, one per zone (nat_gateway = \"per-az\")", m.azs.len())),
        },
    };
    let hourly = prices.nat_gateway_hourly + list_prices::PUBLIC_IPV4_HOURLY;
    let detail = if count == 0 {
        why
    } else {
        format!(
            "{why}, each ${}/h{} plus ${}/h for its public IPv4 address; data processed is charged per GB on top",
            rate(prices.nat_gateway_hourly),
            fallback_note(prices, &bp.cluster.region),
            rate(list_prices::PUBLIC_IPV4_HOURLY)
        )
    };
    FixedItem { item: "NAT gateways".into(), detail, monthly_usd: Some(count as f64 * hourly * HOURS_PER_MONTH) }
}

/// `desired_size` instances of the node group's dearest instance type, at the catalog's on-demand price (its
/// highest Spot price for a Spot node group): it may launch any type it lists.
fn node_group(bp: &Blueprint, catalog: Option<&Catalog>) -> FixedItem {
    let ng = &bp.node_group;
    let item = "Controller node group".to_string();
    let types = ng.instance_types.join(", ");
    let spot = ng.capacity_type == "SPOT";
    let how = if spot { "Spot" } else { "on demand" };
    let unknown = |why: String| FixedItem {
        item: item.clone(),
        detail: format!("{} × {types}: price unknown, {why}", ng.desired_size),
        monthly_usd: None,
    };
    let Some(catalog) = catalog else {
        return unknown(format!(
            "no cached instance-type catalog for {} (`kbp plan --refresh-catalog` or `kbp simulate` reads one)",
            bp.cluster.region
        ));
    };
    let mut dearest: Option<(&str, f64)> = None;
    for name in &ng.instance_types {
        let t = catalog.types.iter().find(|t| &t.instance_type.name == name);
        let price =
            t.and_then(|t| if spot { t.spot_prices.values().copied().reduce(f64::max) } else { t.on_demand_price });
        let Some(price) = price else {
            return unknown(format!(
                "the {} catalog of {} has no {how} price for {name}",
                catalog.region, catalog.fetched_at
            ));
        };
        if dearest.is_none_or(|(_, p)| price > p) {
            dearest = Some((name, price));
        }
    }
    let Some((name, price)) = dearest else { return unknown("it lists no instance type".into()) };
    let which = if ng.instance_types.len() > 1 { format!(" (the dearest of {types})") } else { String::new() };
    FixedItem {
        item,
        detail: format!("{} × {name}{which} {how} at ${}/h", ng.desired_size, rate(price)),
        monthly_usd: Some(f64::from(ng.desired_size) * price * HOURS_PER_MONTH),
    }
}

/// Each node's root disk (`disk_size` GiB), priced as gp3.
fn node_group_disks(bp: &Blueprint, prices: &RegionPrices) -> FixedItem {
    let ng = &bp.node_group;
    let gb = f64::from(ng.desired_size) * f64::from(ng.disk_size);
    FixedItem {
        item: "Controller node group disks".into(),
        detail: format!(
            "{} × {} GiB at ${}/GB-month (gp3){}",
            ng.desired_size,
            ng.disk_size,
            rate(prices.gp3_gb_month),
            fallback_note(prices, &bp.cluster.region)
        ),
        monthly_usd: Some(gb * prices.gp3_gb_month),
    }
}

/// USD with cents, thousands separated: `5128.97` → `$5,128.97`.
pub fn usd(v: f64) -> String {
    let cents = (v * 100.0).round() as u64;
    let whole = (cents / 100).to_string();
    let mut grouped = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("${grouped}.{:02}", cents % 100)
}

/// A unit price with what precision it has, at least cents and at most four decimals: `0.1` → `0.10`,
/// `0.0952` → `0.0952`, `0.03984` → `0.0398`.
pub fn rate(v: f64) -> String {
    let text = format!("{v:.4}");
    let trimmed = text.trim_end_matches('0');
    let decimals = trimmed.split_once('.').map_or(0, |(_, d)| d.len());
    if decimals < 2 {
        format!("{v:.2}")
    } else {
        trimmed.to_string()
    }
}

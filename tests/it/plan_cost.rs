//! The plan's cost block against the emulator: with `--refresh-catalog` the instance-type catalog is read (the
//! emulator's figures, `emulator/kbp_emulator/prices.py`) and prices the controller node group and the
//! NodePool; without it and with nothing cached, the plan still shows the list-priced items, says the
//! instances' price is unknown, and sends no catalog call (counted by the fault proxy, with no faults).

use serde_json::{json, Value};

use crate::support::fault_proxy::FaultProxy;
use crate::support::*;

/// The emulator's on-demand figure for m5.large in us-west-2 (AWS's published list price).
const M5_LARGE_ON_DEMAND: f64 = 0.096;
/// What karpenter-mng.toml says: one NAT gateway shared by all zones, two m5.large controllers.
const NAT_GATEWAYS: f64 = 1.0;
const DESIRED_SIZE: f64 = 2.0;
/// The operations a catalog read sends.
const CATALOG_READS: [&str; 4] =
    ["DescribeInstanceTypes", "DescribeInstanceTypeOfferings", "DescribeSpotPriceHistory", "GetProducts"];

fn fixed<'a>(cost: &'a Value, item: &str) -> &'a Value {
    let items = cost["fixed"].as_array().expect("fixed items");
    items.iter().find(|f| f["item"] == item).unwrap_or_else(|| panic!("{item} in {cost:#}"))
}

fn close(v: &Value, want: f64) -> bool {
    v.as_f64().is_some_and(|v| (v - want).abs() < 1e-6)
}

#[test]
fn plan_prices_the_stack_from_a_catalog_it_refreshes() {
    let em = Emulator::start_without_kubernetes();
    let ws = Workspace::with_blueprint("karpenter-mng");
    let cache = tempfile::tempdir().expect("a cache dir");
    let out = kbp_command(&em, &["plan", ws.blueprint_arg(), "--json", "--refresh-catalog"], ws.path())
        .env("KBP_CACHE_DIR", cache.path())
        .output()
        .expect("run kbp plan");
    assert_success(&out, "plan --json --refresh-catalog");
    let plan = events::plan(&out);
    let cost = &plan["cost"];

    assert_eq!(cost["catalog"]["region"], REGION, "{cost:#}");
    assert!(close(&fixed(cost, "EKS control plane")["monthly_usd"], 73.0), "{cost:#}");
    let nat = fixed(cost, "NAT gateways");
    assert!(close(&nat["monthly_usd"], NAT_GATEWAYS * (0.045 + 0.005) * 730.0), "{nat:#}");
    assert!(nat["detail"].as_str().is_some_and(|d| d.starts_with("1, shared by all zones")), "{nat:#}");

    // The node group's price is the catalog's, as the run cached it.
    let cached = std::fs::read_to_string(cache.path().join(format!("catalog/{REGION}.json"))).expect("cached");
    let catalog: Value = serde_json::from_str(&cached).expect("a catalog");
    let types = catalog["types"].as_array().expect("types");
    let m5 = types.iter().find(|t| t["name"] == "m5.large").expect("m5.large in the catalog");
    assert_eq!(m5["on_demand_price"].as_f64(), Some(M5_LARGE_ON_DEMAND));
    let node_group = fixed(cost, "Controller node group");
    assert!(close(&node_group["monthly_usd"], M5_LARGE_ON_DEMAND * DESIRED_SIZE * 730.0), "{node_group:#}");

    // The pool's 1000 vCPUs, filled with the dearest type it admits, on demand (Karpenter's default).
    let pools = cost["node_pools"].as_array().expect("node_pools");
    let [default] = pools.as_slice() else { panic!("one NodePool: {cost:#}") };
    assert_eq!((&default["name"], &default["bound_by"]), (&json!("default"), &json!("cpu")), "{default:#}");
    assert_eq!(default["capacity_type"], "on-demand");
    let nodes = default["nodes"].as_u64().expect("a node count");
    let vcpus = types.iter().find(|t| t["name"] == default["instance_type"]).expect("its type")["vcpus"].as_u64();
    assert_eq!(Some(nodes), vcpus.map(|v| 1000 / v), "as many as cpu = 1000 allows: {default:#}");
    let worst = default["worst_case_monthly_usd"].as_f64().expect("a worst case");
    assert!(worst > 0.0, "{default:#}");
    let total = cost["worst_case_monthly_usd"].as_f64().expect("a total");
    assert!((total - cost["fixed_monthly_usd"].as_f64().unwrap() - worst).abs() < 1e-6, "{cost:#}");
}

#[test]
fn plan_without_a_cached_catalog_calls_no_catalog_api_and_says_the_price_is_unknown() {
    let em = Emulator::start_without_kubernetes();
    let ws = Workspace::with_blueprint("karpenter-mng");
    let cache = tempfile::tempdir().expect("an empty cache dir");
    let proxy = FaultProxy::start(&em, json!({}));
    let out = kbp_command(&em, &["plan", ws.blueprint_arg(), "--json"], ws.path())
        .envs(proxy.env())
        .env("KBP_CACHE_DIR", cache.path())
        .output()
        .expect("run kbp plan");
    assert_success(&out, "plan --json");
    let plan = events::plan(&out);
    let cost = &plan["cost"];

    assert!(cost.get("catalog").is_none(), "{cost:#}");
    assert!(close(&fixed(cost, "EKS control plane")["monthly_usd"], 73.0), "{cost:#}");
    assert!(fixed(cost, "NAT gateways")["monthly_usd"].as_f64().is_some_and(|v| v > 0.0), "{cost:#}");
    let node_group = fixed(cost, "Controller node group");
    assert!(node_group["monthly_usd"].is_null(), "{node_group:#}");
    let detail = node_group["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("price unknown") && detail.contains("kbp plan --refresh-catalog"), "{node_group:#}");
    assert_eq!(cost["node_pools"][0]["bound_by"], "no catalog", "{cost:#}");
    assert!(cost["worst_case_monthly_usd"].is_null(), "{cost:#}");

    let stats = proxy.stats();
    let operations = stats["operations"].as_object().expect("operations in the proxy's stats");
    let sent: Vec<&String> =
        operations.keys().filter(|op| CATALOG_READS.iter().any(|read| op.ends_with(read))).collect();
    assert!(sent.is_empty(), "a plan reads no catalog from AWS by default: {sent:?}");
    assert!(!operations.is_empty(), "the proxy saw the plan's other calls: {stats:#}");
    assert!(!cache.path().join("catalog").exists(), "and caches none");
}

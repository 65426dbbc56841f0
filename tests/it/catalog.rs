//! The instance-type catalog `kbp simulate` chooses from (`kbp::catalog`), read from the emulator: what EC2
//! and the Price List API say of us-west-2 (the emulator's figures, `emulator/kbp_emulator/prices.py`), the
//! cache that spares a second read, and a refused price read that leaves a catalog without costs.

use std::collections::BTreeMap;

use kbp::aws::CallStats;
use kbp::catalog::{load_with, CatalogCache, Loaded, DEFAULT_MAX_AGE};
use kbp::simulate::catalog::CatalogType;
use serde_json::json;

use crate::support::fault_proxy::FaultProxy;
use crate::support::*;

/// The emulator's on-demand figure for m5.large in us-west-2 (AWS's published list price).
const M5_LARGE_ON_DEMAND: f64 = 0.096;
/// The calls a catalog read makes, one operation each.
const READS: [&str; 4] = [
    "ec2:DescribeInstanceTypes",
    "ec2:DescribeInstanceTypeOfferings",
    "ec2:DescribeSpotPriceHistory",
    "pricing:GetProducts",
];

fn of<'a>(loaded: &'a Loaded, name: &str) -> &'a CatalogType {
    let types = &loaded.catalog.types;
    types.iter().find(|t| t.instance_type.name == name).unwrap_or_else(|| panic!("{name} in the catalog"))
}

/// Calls of the catalog's operations so far in this process, by operation. kbp counts per process; nextest
/// runs each test in a process of its own, so no other test's calls are in it.
fn reads() -> BTreeMap<String, u64> {
    let stats: BTreeMap<String, CallStats> = kbp::aws::call_stats();
    READS.iter().map(|op| (op.to_string(), stats.get(*op).map_or(0, |s| s.calls))).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_catalog_is_read_from_aws_once_then_from_the_cache() {
    let em = Emulator::start_without_kubernetes();
    let sdk = em.sdk_config().await;
    let dir = tempfile::tempdir().unwrap();
    let cache = CatalogCache::at(dir.path().join("catalog"), DEFAULT_MAX_AGE);

    let before = reads();
    let loaded = load_with(&sdk, REGION, false, Some(&cache)).await.expect("the catalog loads");
    let after_first = reads();
    assert!(!loaded.from_cache);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(loaded.path.as_deref(), Some(cache.path(REGION).as_path()));
    assert!(cache.path(REGION).exists(), "the catalog is cached");
    for op in READS {
        assert!(after_first[op] > before[op], "{op} was called: {after_first:?}");
    }
    assert!(after_first["ec2:DescribeInstanceTypes"] - before["ec2:DescribeInstanceTypes"] > 1, "types come in pages");
    assert_eq!(loaded.catalog.region, REGION);

    let m5 = of(&loaded, "m5.large");
    assert_eq!((m5.instance_type.vcpus, m5.instance_type.memory_mib), (2, 8192));
    assert_eq!((m5.max_network_interfaces, m5.ipv4_per_interface), (3, 10));
    assert_eq!(m5.instance_type.architecture, "x86_64");
    assert!(m5.spot && m5.instance_type.gpu.is_none());
    assert_eq!(m5.zones, ["us-west-2a", "us-west-2b", "us-west-2c", "us-west-2d"]);
    assert!(loaded.catalog.types.iter().flat_map(|t| &t.zones).all(|z| z.starts_with(REGION)));
    assert_eq!(m5.on_demand_price, Some(M5_LARGE_ON_DEMAND));
    assert_eq!(m5.spot_prices.keys().collect::<Vec<_>>(), m5.zones.iter().collect::<Vec<_>>(), "a price per zone");
    assert!(m5.spot_prices.values().all(|p| *p > 0.0 && *p < M5_LARGE_ON_DEMAND), "{:?}", m5.spot_prices);

    let g5 = of(&loaded, "g5.xlarge");
    let gpu = g5.instance_type.gpu.as_ref().expect("g5.xlarge has a GPU");
    assert_eq!((gpu.count, gpu.name.as_str(), gpu.manufacturer.as_str()), (1, "a10g", "nvidia"));
    assert_eq!(of(&loaded, "m7g.large").instance_type.architecture, "arm64");
    assert!(!loaded.catalog.types.iter().any(|t| t.instance_type.name.starts_with("mac")), "macOS types are left out");

    let again = load_with(&sdk, REGION, false, Some(&cache)).await.expect("the cached catalog loads");
    assert!(again.from_cache);
    assert_eq!(reads(), after_first, "a cached catalog costs no AWS call");
    assert_eq!(again.catalog, loaded.catalog);

    let refreshed = load_with(&sdk, REGION, true, Some(&cache)).await.expect("a refresh loads");
    assert!(!refreshed.from_cache);
    let after_refresh = reads();
    for op in READS {
        assert!(after_refresh[op] > after_first[op], "a refresh calls {op} again");
    }
    assert_ne!(refreshed.catalog.fetched_at, "", "a refresh records when it read");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_price_read_leaves_a_catalog_without_costs_and_uncached() {
    let em = Emulator::start_without_kubernetes();
    let refuse = json!({"rules": [{"operation": "GetProducts", "action": "fail", "status": 400,
        "code": "AccessDeniedException", "message": "not authorized to perform: pricing:GetProducts"}]});
    let proxy = FaultProxy::start(&em, refuse);
    let sdk = em.sdk_config().await.to_builder().endpoint_url(proxy.endpoint()).build();
    let dir = tempfile::tempdir().unwrap();
    let cache = CatalogCache::at(dir.path().join("catalog"), DEFAULT_MAX_AGE);

    let loaded = load_with(&sdk, REGION, false, Some(&cache)).await.expect("the catalog loads without prices");
    let [warning] = loaded.warnings.as_slice() else { panic!("one warning: {:?}", loaded.warnings) };
    let text = warning.to_string();
    assert!(text.contains("on-demand prices") && text.contains("AccessDeniedException"), "{text}");
    assert!(text.contains("\n  hint: ") && text.contains("permission"), "{text}");
    let m5 = of(&loaded, "m5.large");
    assert_eq!(m5.on_demand_price, None);
    assert!(!m5.spot_prices.is_empty(), "Spot prices come from EC2, which answered");
    assert!(loaded.path.is_none() && !cache.path(REGION).exists(), "an incomplete catalog is not cached");
}

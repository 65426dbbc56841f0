//! The cost of blueprints worked out on paper against the test catalog (`simulate::testing`: AWS's us-west-2
//! on-demand prices, Spot a fixed share of them, zone c dearest at 1.03 of zone a).

use super::*;
use crate::blueprint;
use crate::simulate::testing;

const SEED_004: &str = include_str!("../../../tests/fixtures/blueprints/seed-004.toml");

fn load(text: &str) -> Blueprint {
    blueprint::load_str("bp.toml", text, &[]).unwrap_or_else(|d| panic!("{d:?}"))
}

fn with(extra: &str) -> Blueprint {
    load(&format!("[cluster]\nname = \"c\"\nregion = \"us-west-2\"\n{extra}"))
}

fn item<'a>(cost: &'a StackCost, name: &str) -> &'a FixedItem {
    cost.fixed.iter().find(|f| f.item == name).unwrap_or_else(|| panic!("{name} in {:#?}", cost.fixed))
}

fn pool<'a>(cost: &'a StackCost, name: &str) -> &'a PoolWorstCase {
    cost.node_pools.iter().find(|p| p.name == name).unwrap_or_else(|| panic!("{name} in {:#?}", cost.node_pools))
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-6)
}

#[test]
fn nat_gateways_are_counted_from_the_mode_and_the_zones() {
    let catalog = testing::catalog();
    let nat = |vpc: &str| item(&stack_cost(&with(vpc), Some(&catalog)), "NAT gateways").clone();
    let hour = 0.045 + 0.005;
    let single = nat("[vpc]\nazs = 3\nnat_gateway = \"single\"\n");
    assert!(close(single.monthly_usd, hour * 730.0), "{single:?}");
    assert!(single.detail.contains("public IPv4") && single.detail.contains("per GB"), "{single:?}");
    assert!(close(nat("[vpc]\nazs = 3\nnat_gateway = \"per-az\"\n").monthly_usd, 3.0 * hour * 730.0));
    assert!(close(nat("[vpc]\nazs = 2\nnat_gateway = \"per-az\"\n").monthly_usd, 2.0 * hour * 730.0));
    assert_eq!(nat("[vpc]\nnat_gateway = \"none\"\n").monthly_usd, Some(0.0));
    let existing = "[vpc]\nid = \"vpc-0123456789abcdef0\"\nprivate_subnet_ids = [\"subnet-0123456789abcdef0\", \"subnet-0123456789abcdef1\"]\n";
    let theirs = nat(existing);
    assert_eq!(theirs.monthly_usd, Some(0.0), "{theirs:?}");
    assert!(theirs.detail.contains("owner"), "{theirs:?}");
}

#[test]
fn the_node_group_is_its_dearest_type_times_its_desired_size() {
    let catalog = testing::catalog();
    let cost = stack_cost(&with("[node_group]\ninstance_types = [\"m5.large\"]\ndesired_size = 2\n"), Some(&catalog));
    let ng = item(&cost, "Controller node group");
    assert!(close(ng.monthly_usd, 2.0 * 0.096 * 730.0), "{ng:?}");
    assert_eq!(ng.detail, "2 × m5.large on demand at $0.096/h");
    let disks = item(&cost, "Controller node group disks");
    assert!(close(disks.monthly_usd, 2.0 * 20.0 * 0.08), "{disks:?}");
    assert!(close(item(&cost, "EKS control plane").monthly_usd, 73.0));

    let two = "[node_group]\ninstance_types = [\"m5.large\", \"m5.xlarge\"]\ndesired_size = 3\ndisk_size = 50\n";
    let cost = stack_cost(&with(two), Some(&catalog));
    let ng = item(&cost, "Controller node group");
    assert!(close(ng.monthly_usd, 3.0 * 0.192 * 730.0), "{ng:?}");
    assert_eq!(ng.detail, "3 × m5.xlarge (the dearest of m5.large, m5.xlarge) on demand at $0.192/h");
    assert!(close(item(&cost, "Controller node group disks").monthly_usd, 150.0 * 0.08));

    let unknown = stack_cost(&with("[node_group]\ninstance_types = [\"x9.huge\"]\n"), Some(&catalog));
    let ng = item(&unknown, "Controller node group");
    assert_eq!(ng.monthly_usd, None);
    assert!(ng.detail.contains("no on demand price for x9.huge"), "{ng:?}");
}

/// Seed 004's pools at their limits: Spot bound by cpu 200, general by memory 200Gi before cpu 100, the GPU
/// pool by its 8 GPUs before its 48 CPUs.
#[test]
fn each_pool_is_filled_to_the_limit_that_binds_first() {
    let cost = stack_cost(&load(SEED_004), Some(&testing::catalog()));

    // Spot: every r6i size fills 200 vCPUs for the same money (Spot at 0.39 of on-demand), the dearest family;
    // priced in zone c, the dearest.
    let spot = pool(&cost, "spot");
    assert_eq!((spot.bound_by.as_str(), spot.capacity_type.as_deref()), ("cpu", Some("spot")));
    assert!(spot.instance_type.as_deref().is_some_and(|t| t.starts_with("r6i.")), "{spot:?}");
    assert!(close(spot.worst_case_monthly_usd, 100.0 * 0.126 * 0.39 * 1.03 * 730.0), "{spot:?}");
    assert!(spot.detail.contains("capped by cpu 200"), "{spot:?}");

    // General: m7i.large, 200Gi ÷ 8Gi = 25 nodes (cpu would allow 50).
    let general = pool(&cost, "general");
    assert_eq!(general.bound_by, "memory");
    assert_eq!((general.nodes, general.instance_type.as_deref()), (Some(25), Some("m7i.large")));
    assert!(close(general.worst_case_monthly_usd, 25.0 * 0.1008 * 730.0), "{general:?}");
    assert_eq!(general.capacity_type.as_deref(), Some("on-demand"));

    // GPU: g5.xlarge, 8 GPUs = 8 nodes (cpu would allow 12); p4d.24xlarge's 96 vCPUs exceed the limit itself.
    let gpu = pool(&cost, "gpu");
    assert_eq!(gpu.bound_by, "nvidia.com/gpu");
    assert_eq!((gpu.nodes, gpu.instance_type.as_deref()), (Some(8), Some("g5.xlarge")));
    assert!(close(gpu.worst_case_monthly_usd, 8.0 * 1.006 * 730.0), "{gpu:?}");

    let fallback = pool(&cost, "on-demand-fallback");
    assert!(close(fallback.worst_case_monthly_usd, 50.0 * 0.096 * 730.0), "{fallback:?}");
    let idp = pool(&cost, "idp-server");
    assert_eq!(idp.bound_by, "memory");

    let pools: f64 = cost.node_pools.iter().filter_map(|p| p.worst_case_monthly_usd).sum();
    assert!(cost.unpriced.is_empty(), "{:?}", cost.unpriced);
    assert!(close(cost.worst_case_monthly_usd, cost.fixed_monthly_usd + pools), "{cost:#?}");
    assert_eq!(cost.catalog.as_ref().map(|c| c.fetched_at.as_str()), Some("2026-12-05T00:00:00Z"));
}

#[test]
fn a_pool_without_limits_is_unbounded_and_so_is_the_total() {
    let bp =
        with("[node_classes.default]\nami_alias = \"al2023@latest\"\n[node_pools.open]\nnode_class = \"default\"\n");
    let cost = stack_cost(&bp, Some(&testing::catalog()));
    let open = pool(&cost, "open");
    assert_eq!((open.worst_case_monthly_usd, open.bound_by.as_str()), (None, "no limits"));
    assert!(open.detail.starts_with("unbounded"), "{open:?}");
    assert_eq!(cost.worst_case_monthly_usd, None);
    assert_eq!(cost.unpriced, ["NodePool open"]);
}

#[test]
fn without_a_catalog_everything_but_instances_is_still_priced() {
    let bp = load(SEED_004);
    let cost = stack_cost(&bp, None);
    for f in &cost.fixed {
        let instance_priced = f.item == "Controller node group";
        assert_eq!(f.monthly_usd.is_none(), instance_priced, "{f:?}");
    }
    let ng = item(&cost, "Controller node group");
    assert!(ng.detail.contains("kbp plan --refresh-catalog") && ng.detail.contains("kbp simulate"), "{ng:?}");
    assert!(cost.node_pools.iter().all(|p| p.worst_case_monthly_usd.is_none() && p.bound_by == "no catalog"));
    assert_eq!(cost.worst_case_monthly_usd, None);
    assert!(close(Some(cost.fixed_monthly_usd), 73.0 + 36.5 + 2.0 * 20.0 * 0.08 + 1.0), "{cost:#?}");
    assert!(cost.catalog.is_none());

    let mut elsewhere = testing::catalog();
    elsewhere.region = "eu-central-1".into();
    assert_eq!(stack_cost(&bp, Some(&elsewhere)), cost, "another region's catalog prices nothing here");
}

#[test]
fn a_region_kbp_lists_no_price_for_takes_us_east_1s_and_says_so() {
    let bp = load("[cluster]\nname = \"c\"\nregion = \"ap-south-2\"\n");
    let cost = stack_cost(&bp, None);
    let nat = item(&cost, "NAT gateways");
    assert!(nat.detail.contains("us-east-1's price: kbp lists none for ap-south-2"), "{nat:?}");
    assert!(close(nat.monthly_usd, 0.05 * 730.0));
}

#[test]
fn figures_read_as_dollars_and_rates() {
    assert_eq!(usd(5128.974), "$5,128.97");
    assert_eq!(usd(0.5), "$0.50");
    assert_eq!(usd(1234567.0), "$1,234,567.00");
    assert_eq!(rate(0.1), "0.10");
    assert_eq!(rate(0.0952), "0.0952");
    assert_eq!(rate(0.045), "0.045");
    assert_eq!(rate(0.039843), "0.0398");
}

#[test]
fn the_cost_survives_a_saved_plan() {
    let cost = stack_cost(&load(SEED_004), Some(&testing::catalog()));
    let text = serde_json::to_string(&cost).unwrap();
    assert_eq!(serde_json::from_str::<StackCost>(&text).unwrap(), cost);
}

#[test]
fn a_type_without_a_price_makes_the_worst_case_a_floor() {
    let mut catalog = testing::catalog();
    for t in catalog.types.iter_mut().filter(|t| t.instance_type.name.starts_with("m7i.")) {
        t.on_demand_price = None;
    }
    let general = pool(&stack_cost(&load(SEED_004), Some(&catalog)), "general").clone();
    assert_eq!(
        general.instance_type.as_deref(),
        Some("m5.large"),
        "the dearest priced type (m6i.large ties, later): {general:?}"
    );
    assert!(general.detail.ends_with("at least: 3 of the types it admits have no price in the catalog"), "{general:?}");
}

//! The NodePool patterns of the Karpenter guide (seed 004: Spot at weight 80 with an on-demand fallback at 20, a
//! general on-demand pool at 50, a GPU pool tainted `nvidia.com/gpu` at 10, the identity service's labelled pool)
//! against a mixed workload, with the outcome worked out by hand below (room per node as in `tests.rs`: an
//! 8-vCPU node takes 7785m of pods, a 4-vCPU one 3795m).

use super::*;
use crate::blueprint;
use crate::simulate::testing::catalog;
use crate::simulate::workload;
use crate::simulate::PoolOutcome;

const BLUEPRINT: &str = include_str!("../../../tests/fixtures/blueprints/seed-004.toml");
const WORKLOAD: &str = include_str!("../../../tests/fixtures/workloads/seed-004-mixed.yaml");

fn run(web_replicas: u32) -> Simulation {
    let bp = blueprint::load_str("seed-004.toml", BLUEPRINT, &[]).unwrap_or_else(|d| panic!("{d:?}"));
    let yaml = WORKLOAD.replace("replicas: 20", &format!("replicas: {web_replicas}"));
    simulate(&catalog(), &bp, &workload::parse_yaml("mixed.yaml", &yaml).unwrap())
}

fn pool<'a>(s: &'a Simulation, name: &str) -> &'a PoolOutcome {
    s.node_pools.iter().find(|p| p.name == name).unwrap()
}

fn group<'a>(s: &'a Simulation, name: &str) -> &'a crate::simulate::GroupOutcome {
    s.groups.iter().find(|g| g.name == name).unwrap()
}

#[test]
fn the_seed_patterns_place_a_mixed_workload_as_worked_out_by_hand() {
    let s = run(20);
    assert_eq!(
        s.node_pools.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
        ["spot", "general", "on-demand-fallback", "gpu", "idp-server"],
        "by weight: 80, 50, 20, 10, none"
    );
    // GPU pods go first (largest). Only the gpu pool has GPU types; g5.xlarge leaves 3795m < 4 CPUs; p4d's 96
    // vCPUs exceed the pool's cpu limit of 48. The second pod needs a second GPU: g5.12xlarge (4 GPUs).
    assert_eq!(group(&s, "Deployment/gpu-train").node_pools, BTreeMap::from([("gpu".into(), 2)]));
    assert_eq!(pool(&s, "gpu").instance_types, BTreeMap::from([("g5.12xlarge".into(), 1)]));
    // The GPU pod without the toleration: every pool says why.
    let stray = group(&s, "Pod/stray-gpu");
    assert_eq!(stray.pending, 1);
    assert!(stray.reasons["gpu"].contains("does not tolerate its taint nvidia.com/gpu:NoSchedule"), "{stray:?}");
    for untainted in ["spot", "general", "on-demand-fallback", "idp-server"] {
        let why = &stray.reasons[untainted];
        assert!(why.contains("room for the pod's gpu 1") && why.ends_with(" is 0)"), "{untainted}: {why}");
    }
    // Batch (2 CPU, on-demand only): Spot is incompatible; the general pool takes 3 + 1 on two m5.2xlarge.
    // Web (1 CPU) fills planned nodes first: 1 beside the three batch pods, 5 beside the fourth; the other 14
    // go to Spot, 7 per node (c5.2xlarge's 16Gi cannot hold 7 × 2Gi, m5.2xlarge is the cheapest that can).
    assert_eq!(group(&s, "Job/batch").node_pools, BTreeMap::from([("general".into(), 4)]));
    assert_eq!(group(&s, "Deployment/web").node_pools, BTreeMap::from([("general".into(), 6), ("spot".into(), 14)]));
    assert_eq!(pool(&s, "general").instance_types, BTreeMap::from([("m5.2xlarge".into(), 2)]));
    assert_eq!(pool(&s, "spot").instance_types, BTreeMap::from([("m5.2xlarge".into(), 2)]));
    assert_eq!(pool(&s, "spot").capacity_types, BTreeMap::from([("spot".into(), 2)]));
    assert_eq!(pool(&s, "general").capacity_types, BTreeMap::from([("on-demand".into(), 2)]));
    // The identity service: only its pool carries workload-type=idp-server; one per node, m5.large each.
    assert_eq!(group(&s, "Deployment/idp-server").node_pools, BTreeMap::from([("idp-server".into(), 3)]));
    assert_eq!(pool(&s, "idp-server").instance_types, BTreeMap::from([("m5.large".into(), 3)]));
    assert_eq!(pool(&s, "on-demand-fallback").nodes, 0);
    assert_eq!((s.nodes.len(), s.pending_pods), (8, 1));
    let hourly = 2.0 * 0.384 * 0.40 * 0.97 + 2.0 * 0.384 + 5.672 + 3.0 * 0.096;
    assert!((s.hourly_cost.unwrap() - hourly).abs() < 1e-9, "{:?} vs {hourly}", s.hourly_cost);
}

#[test]
fn past_the_spot_limit_web_spills_to_general_the_fallback_and_the_untainted_identity_pool() {
    // 330 web pods. Spot's 200 vCPUs: 25 nodes of 8 = 175 pods. General is capped by memory first (200Gi): its
    // two batch nodes (2xlarge, 32Gi each) and 4 more 2xlarge (28 pods) make 192Gi, and the last 8Gi is one
    // `large` (1 pod): 6 + 28 + 1 = 35. The fallback's 100 vCPUs: six m5.4xlarge (16 vCPUs, 15 pods each) and
    // one 4-vCPU node (3 pods): 93. The remaining 27 reach the identity service's pool, which has no taint:
    // its label keeps other pools' pods off nothing — only a taint would.
    let s = run(330);
    let web = group(&s, "Deployment/web");
    assert_eq!(
        web.node_pools,
        BTreeMap::from([
            ("general".into(), 35),
            ("idp-server".into(), 27),
            ("on-demand-fallback".into(), 93),
            ("spot".into(), 175)
        ])
    );
    assert_eq!(web.pending, 0);
    assert_eq!((pool(&s, "spot").nodes, pool(&s, "spot").capacity.cpu_milli), (25, 200_000));
    assert_eq!(pool(&s, "general").capacity.memory, 200 << 30, "general stops at its memory limit");
    assert_eq!(pool(&s, "on-demand-fallback").capacity.cpu_milli, 100_000);
    assert_eq!(group(&s, "Deployment/idp-server").pending, 0);
}

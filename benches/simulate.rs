//! Figures, not a test: how long `kbp simulate` takes for 1,000 pods over the 5 NodePools of the seed 004
//! patterns (tests/fixtures/blueprints/seed-004.toml) with a warm catalog: the cached catalog file read and
//! parsed, then the simulation. The catalog is made here with the size of a real region's (about 800 types in
//! 4 zones, Spot prices per zone), or read from `KBP_BENCH_CATALOG` (a file kbp cached, such as
//! `~/.cache/kbp/catalog/us-west-2.json`) to time the real one. Prints the best and the median of 20 runs.
//!
//! `cargo bench --bench simulate`.

// A benchmark prints its figures on stdout; its setup unwraps, as a test does.
#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kbp::simulate::catalog::{Catalog, CatalogType, Gpu, InstanceType};
use kbp::simulate::workload;

const BLUEPRINT: &str = include_str!("../tests/fixtures/blueprints/seed-004.toml");
const RUNS: usize = 20;

/// 1,000 pods in seven groups, each exercising a rule: plain, zone spread, on-demand only, one per node, a
/// pool chosen by label, GPUs with a toleration, and many small pods.
const WORKLOAD: &str = r#"
[[workload]]
name = "web"
replicas = 400
cpu = 1
memory = "2Gi"

[[workload]]
name = "api"
replicas = 200
cpu = "500m"
memory = "1Gi"
zone_spread = 1

[[workload]]
name = "batch"
replicas = 100
cpu = 2
memory = "4Gi"
node_selector = { "karpenter.sh/capacity-type" = "on-demand" }

[[workload]]
name = "cache"
replicas = 50
cpu = 1
memory = "8Gi"
per_node = 1

[[workload]]
name = "idp"
replicas = 30
cpu = "500m"
memory = "1Gi"
node_selector = { "workload-type" = "idp-server" }

[[workload]]
name = "train"
replicas = 20
gpu = 1
cpu = 4
memory = "16Gi"
tolerations = [{ key = "nvidia.com/gpu", operator = "Exists" }]

[[workload]]
name = "small"
replicas = 200
cpu = "100m"
memory = "128Mi"
"#;

/// A region-sized catalog: 66 families × 12 sizes.
fn synthetic() -> Catalog {
    let families = [
        "m5", "m5a", "m5d", "m5n", "m6i", "m6a", "m6id", "m7i", "m7a", "m6g", "m7g", "m8g", "c5", "c5a", "c5d", "c5n",
        "c6i", "c6a", "c6id", "c7i", "c7a", "c6g", "c7g", "c8g", "r5", "r5a", "r5d", "r5n", "r6i", "r6a", "r6id",
        "r7i", "r7a", "r6g", "r7g", "r8g", "t3", "t3a", "t4g", "x2idn", "x2iedn", "z1d", "i3", "i4i", "im4gn",
        "is4gen", "d3", "h1", "g4dn", "g5", "g6", "g6e", "p3", "p4d", "p5", "inf2", "trn1", "hpc7g", "m6in", "c6in",
        "r6in", "m7i-flex", "c7gn", "m5zn", "u-3tb1", "vt1",
    ];
    let sizes = [
        ("medium", 1),
        ("large", 2),
        ("xlarge", 4),
        ("2xlarge", 8),
        ("4xlarge", 16),
        ("8xlarge", 32),
        ("12xlarge", 48),
        ("16xlarge", 64),
        ("24xlarge", 96),
        ("32xlarge", 128),
        ("48xlarge", 192),
        ("metal", 96),
    ];
    let zones = ["us-west-2a", "us-west-2b", "us-west-2c", "us-west-2d"];
    let mut types = Vec::new();
    for (f, family) in families.iter().enumerate() {
        let per_cpu_gib = match family.as_bytes()[0] {
            b'c' => 2,
            b'r' | b'x' | b'z' => 8,
            _ => 4,
        };
        let gpu_family = ["g4dn", "g5", "g6", "g6e", "p3", "p4d", "p5"].contains(family);
        for (size, vcpus) in sizes {
            let price = 0.024 * f64::from(vcpus) * (1.0 + f as f64 / 100.0) * if gpu_family { 6.0 } else { 1.0 };
            let gpu = gpu_family.then(|| Gpu {
                count: (vcpus / 8).max(1),
                name: "a10g".into(),
                manufacturer: "nvidia".into(),
                memory_mib: 24576,
            });
            let arch = if family.contains('g') && !gpu_family { "arm64" } else { "x86_64" };
            types.push(CatalogType {
                instance_type: InstanceType {
                    name: format!("{family}.{size}"),
                    architecture: arch.into(),
                    vcpus,
                    memory_mib: u64::from(vcpus) * per_cpu_gib * 1024,
                    gpu,
                },
                max_network_interfaces: (vcpus / 4).clamp(2, 15),
                ipv4_per_interface: if vcpus <= 2 { 10 } else { 30 },
                zones: zones.iter().map(|z| z.to_string()).collect(),
                spot: true,
                on_demand_price: Some(price),
                spot_prices: zones
                    .iter()
                    .enumerate()
                    .map(|(i, z)| (z.to_string(), price * (0.35 + 0.03 * i as f64)))
                    .collect::<BTreeMap<_, _>>(),
            });
        }
    }
    Catalog { region: "us-west-2".into(), fetched_at: "2026-12-05T00:00:00Z".into(), types }
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    // Test runners list every target's tests (`--list`, as cargo-nextest does with --all-targets): a benchmark
    // that prints figures has none, so it says nothing then.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let catalog = match std::env::var("KBP_BENCH_CATALOG") {
        Ok(path) => serde_json::from_str(&std::fs::read_to_string(&path).expect("KBP_BENCH_CATALOG is readable"))
            .expect("KBP_BENCH_CATALOG is a catalog kbp wrote"),
        Err(_) => synthetic(),
    };
    let file = serde_json::to_string(&catalog).expect("a catalog serializes");
    let bp = kbp::blueprint::load_str("seed-004.toml", BLUEPRINT, &[]).expect("the seed 004 blueprint is valid");
    let work = workload::parse_toml("bench.toml", WORKLOAD).expect("the bench workload parses");
    let pods: u32 = work.groups.iter().map(|g| g.replicas).sum();

    let mut parse = Vec::new();
    let mut sim = Vec::new();
    let mut last = None;
    for _ in 0..RUNS {
        let t = Instant::now();
        let warm: Catalog = serde_json::from_str(&file).expect("the cached catalog parses");
        parse.push(t.elapsed());
        let t = Instant::now();
        last = Some(kbp::simulate::simulate(&warm, &bp, &work));
        sim.push(t.elapsed());
    }
    parse.sort();
    sim.sort();
    let s = last.expect("at least one run");
    println!(
        "simulate: {pods} pods, {} NodePools, {} instance types ({} KiB cached catalog), {} runs",
        bp.node_pools.len(),
        catalog.types.len(),
        file.len() / 1024,
        RUNS
    );
    println!(
        "  outcome: {} nodes, {} pods pending, ${:.2} a month",
        s.nodes.len(),
        s.pending_pods,
        s.monthly_cost.unwrap_or(0.0)
    );
    println!("  catalog read  best {:7.2} ms  median {:7.2} ms", millis(parse[0]), millis(parse[RUNS / 2]));
    println!("  simulation    best {:7.2} ms  median {:7.2} ms", millis(sim[0]), millis(sim[RUNS / 2]));
    let total: Vec<f64> = (0..RUNS).map(|i| millis(parse[i] + sim[i])).collect();
    println!("  warm total    best {:7.2} ms  median {:7.2} ms  (target: at most 200 ms)", total[0], total[RUNS / 2]);
}

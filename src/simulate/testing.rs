//! A small catalog for the simulation's tests: the families the seed's NodePools name, with AWS's published
//! us-west-2 on-demand prices and Spot prices set by hand (a per-family discount, zone b cheapest), so a test's
//! expected choice can be worked out on paper.

use super::catalog::{Catalog, CatalogType, Gpu, InstanceType};

/// (name, vCPUs, memory MiB, ENIs, IPv4 per ENI, GPUs, on-demand USD/h).
const TYPES: &[(&str, u32, u64, u32, u32, u32, f64)] = &[
    ("m5.large", 2, 8192, 3, 10, 0, 0.096),
    ("m5.xlarge", 4, 16384, 4, 15, 0, 0.192),
    ("m5.2xlarge", 8, 32768, 4, 15, 0, 0.384),
    ("m5.4xlarge", 16, 65536, 8, 30, 0, 0.768),
    ("m6i.large", 2, 8192, 3, 10, 0, 0.096),
    ("m6i.xlarge", 4, 16384, 4, 15, 0, 0.192),
    ("m6i.2xlarge", 8, 32768, 4, 15, 0, 0.384),
    ("m7i.large", 2, 8192, 3, 10, 0, 0.1008),
    ("m7i.xlarge", 4, 16384, 4, 15, 0, 0.2016),
    ("m7i.2xlarge", 8, 32768, 4, 15, 0, 0.4032),
    ("c5.large", 2, 4096, 3, 10, 0, 0.085),
    ("c5.xlarge", 4, 8192, 4, 15, 0, 0.17),
    ("c5.2xlarge", 8, 16384, 4, 15, 0, 0.34),
    ("c6i.large", 2, 4096, 3, 10, 0, 0.085),
    ("c6i.xlarge", 4, 8192, 4, 15, 0, 0.17),
    ("c6i.2xlarge", 8, 16384, 4, 15, 0, 0.34),
    ("r5.large", 2, 16384, 3, 10, 0, 0.126),
    ("r5.xlarge", 4, 32768, 4, 15, 0, 0.252),
    ("r5.2xlarge", 8, 65536, 4, 15, 0, 0.504),
    ("r6i.large", 2, 16384, 3, 10, 0, 0.126),
    ("r6i.xlarge", 4, 32768, 4, 15, 0, 0.252),
    ("r6i.2xlarge", 8, 65536, 4, 15, 0, 0.504),
    ("m7g.large", 2, 8192, 3, 10, 0, 0.0816),
    ("m7g.xlarge", 4, 16384, 4, 15, 0, 0.1632),
    ("g5.xlarge", 4, 16384, 4, 15, 1, 1.006),
    ("g5.2xlarge", 8, 32768, 4, 15, 1, 1.212),
    ("g5.12xlarge", 48, 196608, 8, 30, 4, 5.672),
    ("p4d.24xlarge", 96, 1179648, 15, 50, 8, 32.7726),
];

/// Spot as a share of on-demand, by family.
fn spot_share(family: &str) -> f64 {
    match family {
        "m5" => 0.40,
        "m6i" => 0.42,
        "m7i" => 0.45,
        "c5" => 0.38,
        "c6i" => 0.41,
        "r5" => 0.36,
        "r6i" => 0.39,
        "m7g" => 0.43,
        _ => 0.50,
    }
}

pub(crate) const ZONES: [&str; 3] = ["us-west-2a", "us-west-2b", "us-west-2c"];
const ZONE_SHARE: [f64; 3] = [1.00, 0.97, 1.03];

pub(crate) fn catalog() -> Catalog {
    let types = TYPES
        .iter()
        .map(|&(name, vcpus, memory_mib, enis, ips, gpus, price)| {
            let family = name.split('.').next().unwrap_or_default();
            let gpu = (gpus > 0).then(|| {
                let (gpu_name, each) = if family == "p4d" { ("a100", 40960) } else { ("a10g", 24576) };
                Gpu { count: gpus, name: gpu_name.into(), manufacturer: "nvidia".into(), memory_mib: each }
            });
            let architecture = if family.ends_with('g') { "arm64" } else { "x86_64" };
            let zones: Vec<String> =
                ZONES.iter().filter(|z| family != "p4d" || !z.ends_with('c')).map(|z| z.to_string()).collect();
            let spot_prices = zones
                .iter()
                .zip(ZONE_SHARE)
                .map(|(z, share)| (z.clone(), price * spot_share(family) * share))
                .collect();
            CatalogType {
                instance_type: InstanceType {
                    name: name.into(),
                    architecture: architecture.into(),
                    vcpus,
                    memory_mib,
                    gpu,
                },
                max_network_interfaces: enis,
                ipv4_per_interface: ips,
                zones,
                spot: true,
                on_demand_price: Some(price),
                spot_prices,
            }
        })
        .collect();
    Catalog { region: "us-west-2".into(), fetched_at: "2026-12-05T00:00:00Z".into(), types }
}

//! What EC2 says about a region's instance types: their description (DescribeInstanceTypes), the zones that
//! offer each (DescribeInstanceTypeOfferings by availability zone) and the current Spot price per zone
//! (DescribeSpotPriceHistory). Each read is one SDK paginator; turning an answer into catalog fields is a pure
//! function next to it, so the mapping is tested without AWS.

use std::collections::{BTreeMap, BTreeSet};

use aws_sdk_ec2::types::{ArchitectureType, InstanceTypeInfo, LocationType, UsageClassType};
use aws_smithy_types::DateTime;

use crate::providers::ProviderError;
use crate::simulate::catalog::{Gpu, InstanceType};

/// Page sizes: AWS's maximum for each call, so a region's ~900 types take 9 pages, not 90.
const TYPES_PAGE: i32 = 100;
const OFFERINGS_PAGE: i32 = 1000;
const SPOT_PAGE: i32 = 1000;

/// The Spot product kbp prices: Linux in a VPC, which AWS lists as `Linux/UNIX` since EC2-Classic is gone.
const SPOT_PRODUCT: &str = "Linux/UNIX";

/// One instance type as DescribeInstanceTypes describes it, before zones and prices are known.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Described {
    pub instance_type: InstanceType,
    pub max_network_interfaces: u32,
    pub ipv4_per_interface: u32,
    pub spot: bool,
}

/// Every instance type of the region that Karpenter could launch for Linux nodes.
pub(super) async fn instance_types(ec2: &aws_sdk_ec2::Client) -> Result<Vec<Described>, ProviderError> {
    let pages = ec2.describe_instance_types().into_paginator().page_size(TYPES_PAGE).items().send();
    let infos = pages
        .collect::<Result<Vec<_>, _>>()
        .await
        .map_err(|e| ProviderError::from_sdk("ec2:DescribeInstanceTypes", e))?;
    Ok(infos.iter().filter_map(describe).collect())
}

/// The zones offering each instance type, by name.
pub(super) async fn zones(ec2: &aws_sdk_ec2::Client) -> Result<BTreeMap<String, BTreeSet<String>>, ProviderError> {
    let request = ec2.describe_instance_type_offerings().location_type(LocationType::AvailabilityZone);
    let pages = request.into_paginator().page_size(OFFERINGS_PAGE).items().send();
    let offerings = pages
        .collect::<Result<Vec<_>, _>>()
        .await
        .map_err(|e| ProviderError::from_sdk("ec2:DescribeInstanceTypeOfferings", e))?;
    let mut zones: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for o in &offerings {
        if let (Some(t), Some(zone)) = (o.instance_type(), o.location()) {
            zones.entry(t.as_str().to_string()).or_default().insert(zone.to_string());
        }
    }
    Ok(zones)
}

/// The current Linux Spot price of every type in every zone, USD an hour. A StartTime of now makes AWS answer
/// with the price in effect now per type and zone rather than its 90-day history; should it still list an
/// older price too, the newest wins.
pub(super) async fn spot_prices(
    ec2: &aws_sdk_ec2::Client,
) -> Result<BTreeMap<String, BTreeMap<String, f64>>, ProviderError> {
    let request = ec2
        .describe_spot_price_history()
        .product_descriptions(SPOT_PRODUCT)
        .start_time(DateTime::from(std::time::SystemTime::now()));
    let pages = request.into_paginator().page_size(SPOT_PAGE).items().send();
    let history = pages
        .collect::<Result<Vec<_>, _>>()
        .await
        .map_err(|e| ProviderError::from_sdk("ec2:DescribeSpotPriceHistory", e))?;
    Ok(newest_prices(history.iter().filter_map(|p| {
        let at = p.timestamp()?;
        let price = p.spot_price()?.parse::<f64>().ok()?;
        Some(SpotPoint {
            instance_type: p.instance_type()?.as_str(),
            zone: p.availability_zone()?,
            price,
            at: (at.secs(), at.subsec_nanos()),
        })
    })))
}

/// One entry of the Spot price history.
#[derive(Debug, Clone, Copy)]
struct SpotPoint<'a, T> {
    instance_type: &'a str,
    zone: &'a str,
    price: f64,
    at: T,
}

/// The newest price per type and zone; of two at the same moment, the later listed.
fn newest_prices<'a, T: Ord + Copy>(
    points: impl Iterator<Item = SpotPoint<'a, T>>,
) -> BTreeMap<String, BTreeMap<String, f64>> {
    let mut newest: BTreeMap<(&str, &str), (T, f64)> = BTreeMap::new();
    for p in points {
        let key = (p.instance_type, p.zone);
        if newest.get(&key).is_none_or(|(at, _)| p.at >= *at) {
            newest.insert(key, (p.at, p.price));
        }
    }
    let mut out: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    for ((t, zone), (_, price)) in newest {
        out.entry(t.to_string()).or_default().insert(zone.to_string(), price);
    }
    out
}

/// What the catalog keeps of one DescribeInstanceTypes entry, or `None` for a type Karpenter does not launch
/// as a Linux node: one without an x86_64 or arm64 architecture (i386-only, `x86_64_mac`, `arm64_mac`), or
/// an entry missing its CPU or memory count. Bare-metal types are kept: Karpenter launches them too.
fn describe(info: &InstanceTypeInfo) -> Option<Described> {
    let name = info.instance_type()?.as_str().to_string();
    let arches = info.processor_info().map(|p| p.supported_architectures()).unwrap_or_default();
    // A type that runs both (none today) is described as x86_64, the architecture most images are built for.
    let architecture = [ArchitectureType::X8664, ArchitectureType::Arm64].into_iter().find(|a| arches.contains(a))?;
    let vcpus = u32::try_from(info.v_cpu_info()?.default_v_cpus()?).ok()?;
    let memory_mib = u64::try_from(info.memory_info()?.size_in_mib()?).ok()?;
    let network = info.network_info();
    let count = |n: Option<i32>| n.and_then(|n| u32::try_from(n).ok()).unwrap_or(0);
    Some(Described {
        instance_type: InstanceType {
            name,
            architecture: architecture.as_str().to_string(),
            vcpus,
            memory_mib,
            gpu: gpu(info),
        },
        max_network_interfaces: count(network.and_then(|n| n.maximum_network_interfaces())),
        ipv4_per_interface: count(network.and_then(|n| n.ipv4_addresses_per_interface())),
        spot: info.supported_usage_classes().contains(&UsageClassType::Spot),
    })
}

/// The GPUs of a type as Karpenter labels them: the first device's name and manufacturer in lower case, the
/// count over every device entry, and the memory of one GPU (Karpenter's `instance-gpu-memory` is per GPU, not
/// the type's total).
fn gpu(info: &InstanceTypeInfo) -> Option<Gpu> {
    let gpus = info.gpu_info()?.gpus();
    let first = gpus.first()?;
    let count: u32 = gpus.iter().filter_map(|g| g.count()).filter_map(|n| u32::try_from(n).ok()).sum();
    Some(Gpu {
        count,
        name: first.name().unwrap_or_default().to_lowercase(),
        manufacturer: first.manufacturer().unwrap_or_default().to_lowercase(),
        memory_mib: first.memory_info().and_then(|m| m.size_in_mib()).and_then(|n| u64::try_from(n).ok()).unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_ec2::types::{
        GpuDeviceInfo, GpuDeviceMemoryInfo, GpuInfo, MemoryInfo, NetworkInfo, ProcessorInfo, VCpuInfo,
    };

    fn info(name: &str, arches: &[&str], gpus: Vec<GpuDeviceInfo>) -> InstanceTypeInfo {
        let processor = arches
            .iter()
            .fold(ProcessorInfo::builder(), |p, a| p.supported_architectures(ArchitectureType::from(*a)))
            .build();
        let mut b = InstanceTypeInfo::builder()
            .instance_type(name.into())
            .processor_info(processor)
            .v_cpu_info(VCpuInfo::builder().default_v_cpus(4).build())
            .memory_info(MemoryInfo::builder().size_in_mib(16384).build())
            .network_info(NetworkInfo::builder().maximum_network_interfaces(4).ipv4_addresses_per_interface(15).build())
            .supported_usage_classes(UsageClassType::OnDemand)
            .supported_usage_classes(UsageClassType::Spot);
        if !gpus.is_empty() {
            b = b.gpu_info(GpuInfo::builder().set_gpus(Some(gpus)).build());
        }
        b.build()
    }

    fn device(name: &str, count: i32, mib: i32) -> GpuDeviceInfo {
        GpuDeviceInfo::builder()
            .name(name)
            .manufacturer("NVIDIA")
            .count(count)
            .memory_info(GpuDeviceMemoryInfo::builder().size_in_mib(mib).build())
            .build()
    }

    #[test]
    fn a_type_keeps_its_size_network_limits_and_spot_support() {
        let d = describe(&info("g5.xlarge", &["x86_64"], vec![device("A10G", 1, 22888)])).unwrap();
        assert_eq!(d.instance_type.name, "g5.xlarge");
        assert_eq!(d.instance_type.architecture, "x86_64");
        assert_eq!((d.instance_type.vcpus, d.instance_type.memory_mib), (4, 16384));
        assert_eq!((d.max_network_interfaces, d.ipv4_per_interface), (4, 15));
        assert!(d.spot);
        let gpu = d.instance_type.gpu.unwrap();
        assert_eq!((gpu.count, gpu.name.as_str(), gpu.manufacturer.as_str()), (1, "a10g", "nvidia"));
        assert_eq!(gpu.memory_mib, 22888);
    }

    #[test]
    fn gpu_counts_add_up_over_device_entries_and_memory_is_per_gpu() {
        let d = describe(&info("p.odd", &["x86_64"], vec![device("A100", 4, 40960), device("A100", 4, 40960)]));
        let gpu = d.unwrap().instance_type.gpu.unwrap();
        assert_eq!((gpu.count, gpu.memory_mib), (8, 40960));
        assert_eq!(describe(&info("m5.large", &["x86_64"], vec![])).unwrap().instance_type.gpu, None);
    }

    #[test]
    fn only_x86_64_and_arm64_types_are_kept() {
        assert_eq!(describe(&info("m7g.large", &["arm64"], vec![])).unwrap().instance_type.architecture, "arm64");
        assert_eq!(
            describe(&info("t1.micro", &["i386", "x86_64"], vec![])).unwrap().instance_type.architecture,
            "x86_64"
        );
        assert!(describe(&info("old.i386", &["i386"], vec![])).is_none());
        assert!(describe(&info("mac1.metal", &["x86_64_mac"], vec![])).is_none());
        assert!(describe(&info("mac2.metal", &["arm64_mac"], vec![])).is_none());
    }

    #[test]
    fn the_newest_spot_price_per_type_and_zone_is_kept() {
        let p = |t, zone, price, at| SpotPoint { instance_type: t, zone, price, at };
        let history = [
            p("m5.large", "us-west-2a", 0.04, 200),
            p("m5.large", "us-west-2a", 0.05, 100),
            p("m5.large", "us-west-2b", 0.03, 100),
            p("m5.large", "us-west-2b", 0.035, 300),
            p("c5.large", "us-west-2a", 0.02, 50),
        ];
        let newest = newest_prices(history.into_iter());
        assert_eq!(newest["m5.large"]["us-west-2a"], 0.04);
        assert_eq!(newest["m5.large"]["us-west-2b"], 0.035);
        assert_eq!(newest["c5.large"].len(), 1);
    }
}

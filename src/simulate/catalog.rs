//! Instance types as Karpenter sees them: the labels it derives from EC2's description of a type (family,
//! category, generation, size, CPUs, memory, architecture, GPUs) and from an offering (zone, capacity type),
//! which NodePool requirements and pod selectors are matched against. Where the catalog comes from
//! (DescribeInstanceTypes and DescribeInstanceTypeOfferings, cached) is not here: this is the pure part.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Labels;

/// A region's instance types with where they are offered and what they cost: what `kbp simulate` chooses
/// from. Read from AWS and cached on disk by [`crate::catalog`]; built by hand in tests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Catalog {
    /// The AWS region the catalog describes.
    pub region: String,
    /// When it was read from AWS, RFC 3339.
    pub fetched_at: String,
    /// The instance types offered in at least one zone of the region, sorted by name.
    pub types: Vec<CatalogType>,
}

/// One instance type of a [`Catalog`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CatalogType {
    /// The type's name, architecture, size and GPUs.
    #[serde(flatten)]
    pub instance_type: InstanceType,
    /// Network interfaces an instance can attach and IPv4 addresses per interface (EC2's `NetworkInfo`): the
    /// VPC CNI's max pods.
    pub max_network_interfaces: u32,
    /// IPv4 addresses per network interface (EC2's `Ipv4AddressesPerInterface`).
    pub ipv4_per_interface: u32,
    /// The zones offering it (DescribeInstanceTypeOfferings by availability zone).
    pub zones: Vec<String>,
    /// Whether it is sold as Spot (`SupportedUsageClasses`).
    pub spot: bool,
    /// USD an hour on demand, Linux, shared tenancy (the Price List API); `None` where none is published.
    #[serde(default)]
    pub on_demand_price: Option<f64>,
    /// The latest Spot price per zone, USD an hour (DescribeSpotPriceHistory, `Linux/UNIX`).
    #[serde(default)]
    pub spot_prices: BTreeMap<String, f64>,
}

/// An EC2 instance type, with what Karpenter labels a node of it by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstanceType {
    /// `m6i.2xlarge`.
    pub name: String,
    /// EC2's spelling: `x86_64` or `arm64`.
    pub architecture: String,
    /// Default vCPUs (EC2's `VCpuInfo.DefaultVCpus`), Karpenter's `instance-cpu` label.
    pub vcpus: u32,
    /// Memory in MiB (EC2's `MemoryInfo.SizeInMiB`), Karpenter's `instance-memory` label.
    pub memory_mib: u64,
    /// Its GPUs; `None` for a type without any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<Gpu>,
}

/// The accelerators of an instance type (EC2's `GpuInfo`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gpu {
    /// GPUs per instance, Karpenter's `instance-gpu-count` label.
    pub count: u32,
    /// `a10g`, spelled as Karpenter labels it (lower case).
    pub name: String,
    /// `nvidia`.
    pub manufacturer: String,
    /// Memory of one GPU, as Karpenter's `instance-gpu-memory` label gives it.
    pub memory_mib: u64,
}

/// Where and how an instance type can be bought: one zone, one capacity type (`on-demand` or `spot`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offering {
    /// Availability zone name, such as `us-west-2a`.
    pub zone: String,
    /// `on-demand` or `spot`, as the `karpenter.sh/capacity-type` label spells it.
    pub capacity_type: String,
}

const K8S_AWS: &str = "karpenter.k8s.aws";

impl InstanceType {
    /// The labels every node of this type carries, whatever the offering.
    pub fn labels(&self) -> Labels {
        let (family, size) = self.name.split_once('.').unwrap_or((self.name.as_str(), ""));
        let (category, generation) = family_parts(family);
        let arch = match self.architecture.as_str() {
            "x86_64" => "amd64",
            other => other,
        };
        let mut labels = Labels::new();
        let mut put = |k: &str, v: String| {
            labels.insert(k.to_string(), v);
        };
        put("node.kubernetes.io/instance-type", self.name.clone());
        put("kubernetes.io/arch", arch.to_string());
        put("kubernetes.io/os", "linux".to_string());
        put(&format!("{K8S_AWS}/instance-family"), family.to_string());
        put(&format!("{K8S_AWS}/instance-size"), size.to_string());
        put(&format!("{K8S_AWS}/instance-category"), category.to_string());
        if !generation.is_empty() {
            put(&format!("{K8S_AWS}/instance-generation"), generation.to_string());
        }
        put(&format!("{K8S_AWS}/instance-cpu"), self.vcpus.to_string());
        put(&format!("{K8S_AWS}/instance-memory"), self.memory_mib.to_string());
        if let Some(gpu) = &self.gpu {
            put(&format!("{K8S_AWS}/instance-gpu-count"), gpu.count.to_string());
            put(&format!("{K8S_AWS}/instance-gpu-name"), gpu.name.clone());
            put(&format!("{K8S_AWS}/instance-gpu-manufacturer"), gpu.manufacturer.clone());
            put(&format!("{K8S_AWS}/instance-gpu-memory"), gpu.memory_mib.to_string());
        }
        labels
    }

    /// The labels of a node of this type bought as `offering`: [`InstanceType::labels`] plus zone and capacity
    /// type.
    pub fn node_labels(&self, offering: &Offering) -> Labels {
        let mut labels = self.labels();
        labels.insert("topology.kubernetes.io/zone".to_string(), offering.zone.clone());
        labels.insert("karpenter.sh/capacity-type".to_string(), offering.capacity_type.clone());
        labels
    }
}

/// A family's category (its leading letters) and generation (the digits after them): `m6i` → (`m`, `6`),
/// `inf2` → (`inf`, `2`), `p4d` → (`p`, `4`).
fn family_parts(family: &str) -> (&str, &str) {
    let letters = family.find(|c: char| !c.is_ascii_lowercase()).unwrap_or(family.len());
    let rest = &family[letters..];
    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    (&family[..letters], &rest[..digits])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blueprint::model::Requirement;
    use crate::simulate::requirements::{all_match, req};

    fn m6i_2xlarge() -> InstanceType {
        InstanceType {
            name: "m6i.2xlarge".into(),
            architecture: "x86_64".into(),
            vcpus: 8,
            memory_mib: 32768,
            gpu: None,
        }
    }

    fn m7g_xlarge() -> InstanceType {
        InstanceType { name: "m7g.xlarge".into(), architecture: "arm64".into(), vcpus: 4, memory_mib: 16384, gpu: None }
    }

    fn g5_xlarge() -> InstanceType {
        let gpu = Gpu { count: 1, name: "a10g".into(), manufacturer: "nvidia".into(), memory_mib: 24576 };
        InstanceType {
            name: "g5.xlarge".into(),
            architecture: "x86_64".into(),
            vcpus: 4,
            memory_mib: 16384,
            gpu: Some(gpu),
        }
    }

    #[test]
    fn labels_are_derived_from_the_name_and_description() {
        let l = m6i_2xlarge().labels();
        let get = |k: &str| l.get(k).map(String::as_str);
        assert_eq!(get("node.kubernetes.io/instance-type"), Some("m6i.2xlarge"));
        assert_eq!(get("kubernetes.io/arch"), Some("amd64"), "EC2's x86_64 is Kubernetes' amd64");
        assert_eq!(get("karpenter.k8s.aws/instance-family"), Some("m6i"));
        assert_eq!(get("karpenter.k8s.aws/instance-category"), Some("m"));
        assert_eq!(get("karpenter.k8s.aws/instance-generation"), Some("6"));
        assert_eq!(get("karpenter.k8s.aws/instance-size"), Some("2xlarge"));
        assert_eq!(get("karpenter.k8s.aws/instance-cpu"), Some("8"));
        assert_eq!(get("karpenter.k8s.aws/instance-memory"), Some("32768"));
        assert_eq!(get("karpenter.k8s.aws/instance-gpu-count"), None, "no GPU, no GPU labels");
        let g = g5_xlarge().labels();
        assert_eq!(g.get("karpenter.k8s.aws/instance-gpu-count").map(String::as_str), Some("1"));
        assert_eq!(g.get("karpenter.k8s.aws/instance-gpu-name").map(String::as_str), Some("a10g"));
        assert_eq!(m7g_xlarge().labels().get("kubernetes.io/arch").map(String::as_str), Some("arm64"));
    }

    #[test]
    fn families_split_into_category_and_generation() {
        assert_eq!(family_parts("m6i"), ("m", "6"));
        assert_eq!(family_parts("inf2"), ("inf", "2"));
        assert_eq!(family_parts("p4d"), ("p", "4"));
        assert_eq!(family_parts("c7gn"), ("c", "7"));
        assert_eq!(family_parts("x2iedn"), ("x", "2"));
    }

    #[test]
    fn an_offering_adds_zone_and_capacity_type() {
        let spot = Offering { zone: "us-west-2b".into(), capacity_type: "spot".into() };
        let l = m6i_2xlarge().node_labels(&spot);
        assert_eq!(l.get("topology.kubernetes.io/zone").map(String::as_str), Some("us-west-2b"));
        assert_eq!(l.get("karpenter.sh/capacity-type").map(String::as_str), Some("spot"));
    }

    /// Requirements of the seed's pools against catalog labels: arm64 against amd64, a GPU pool's family, a
    /// generation floor with `Gte`, Spot against on-demand.
    #[test]
    fn pool_requirements_pick_types_by_their_labels() {
        let on_demand = Offering { zone: "us-west-2a".into(), capacity_type: "on-demand".into() };
        let spot = Offering { zone: "us-west-2a".into(), capacity_type: "spot".into() };
        let catalog = [m6i_2xlarge(), m7g_xlarge(), g5_xlarge()];
        let eligible = |reqs: &[Requirement], offering: &Offering| -> Vec<String> {
            catalog.iter().filter(|t| all_match(reqs, &t.node_labels(offering))).map(|t| t.name.clone()).collect()
        };
        let arm = [req("kubernetes.io/arch", "In", &["arm64"])];
        assert_eq!(eligible(&arm, &on_demand), ["m7g.xlarge"]);
        let gpu = [req("karpenter.k8s.aws/instance-family", "In", &["g5", "p4d"])];
        assert_eq!(eligible(&gpu, &on_demand), ["g5.xlarge"]);
        let modern = [req("karpenter.k8s.aws/instance-generation", "Gte", &["7"])];
        assert_eq!(eligible(&modern, &on_demand), ["m7g.xlarge"]);
        let spot_only = [req("karpenter.sh/capacity-type", "In", &["spot"])];
        assert!(eligible(&spot_only, &on_demand).is_empty());
        assert_eq!(eligible(&spot_only, &spot).len(), 3);
        let no_gpu = [req("karpenter.k8s.aws/instance-gpu-count", "DoesNotExist", &[])];
        assert_eq!(eligible(&no_gpu, &on_demand), ["m6i.2xlarge", "m7g.xlarge"]);
    }
}

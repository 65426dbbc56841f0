//! What a node of an instance type has left for pods: its capacity less the hypervisor's share of memory, the
//! kubelet's reservations and eviction threshold, as Karpenter computes them for the AWS provider, and less the
//! DaemonSets that run on every node (the add-ons kbp installs, and those of the workload).
//!
//! The figures Karpenter uses unless the EC2NodeClass's `kubelet` says otherwise:
//! - memory lost to the VM: 7.5 % of the type's memory (`VM_MEMORY_OVERHEAD_PERCENT`, 0.075);
//! - max pods: the VPC CNI's ENI limit, `interfaces × (IPv4 per interface − 1) + 2` (`kubelet.maxPods`, or
//!   `podsPerCore × vCPUs` when lower, replace it);
//! - kube-reserved CPU: 6 % of the first core, 1 % of the second, 0.5 % of the third and fourth, 0.25 % of each
//!   core above four; kube-reserved memory: 11 MiB per pod the node may run, plus 255 MiB;
//! - eviction threshold `memory.available` 100 MiB; no system reservation.

use serde_json::Value;

use super::catalog::CatalogType;
use super::resources::Resources;
use super::workload::PodGroup;
use crate::blueprint::model::{Blueprint, NodeClass};

const MIB: u64 = 1024 * 1024;
const VM_MEMORY_OVERHEAD: f64 = 0.075;
const EVICTION_MEMORY: u64 = 100 * MIB;

/// The EC2NodeClass's kubelet settings that change a node's allocatable room.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Kubelet {
    /// `maxPods`: pods per node; `None` for the VPC CNI's limit from the type's network interfaces.
    pub max_pods: Option<u64>,
    /// `podsPerCore`: pods per vCPU, capping `max_pods`; `None` (or 0) for no such cap.
    pub pods_per_core: Option<u64>,
    /// `kubeReserved`: room held back for Kubernetes daemons; `None` for Karpenter's default (by vCPUs and max pods).
    pub kube_reserved: Option<Resources>,
    /// `systemReserved`: room held back for OS daemons; `None` for none.
    pub system_reserved: Option<Resources>,
    /// `evictionHard["memory.available"]` in bytes; `None` for kubelet's default of 100Mi.
    pub eviction_memory: Option<u64>,
}

impl Kubelet {
    /// The settings of `class` (its `kubelet` field, keys as written or as the CRD names them).
    pub fn of(class: &NodeClass) -> Kubelet {
        Kubelet::from_spec(&class.spec)
    }

    fn from_spec(spec: &std::collections::BTreeMap<String, Value>) -> Kubelet {
        let Some(kubelet) = spec.iter().find(|(k, _)| same(k, "kubelet")).map(|(_, v)| v) else {
            return Kubelet::default();
        };
        let number = |name: &str| field(kubelet, name).and_then(Value::as_u64);
        let reserved = |name: &str| {
            let map = field(kubelet, name)?.as_object()?;
            Resources::from_quantities(map.iter().filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)))).ok()
        };
        let eviction_memory = field(kubelet, "evictionHard")
            .and_then(|e| field(e, "memory.available"))
            .and_then(Value::as_str)
            .and_then(|q| Resources::from_quantities([("memory", q)]).ok())
            .map(|r| r.memory);
        Kubelet {
            max_pods: number("maxPods"),
            pods_per_core: number("podsPerCore"),
            kube_reserved: reserved("kubeReserved"),
            system_reserved: reserved("systemReserved"),
            eviction_memory,
        }
    }
}

/// `name` ignoring case and underscores, as `crd_fields` matches a written key to the CRD's.
fn same(written: &str, name: &str) -> bool {
    let norm = |s: &str| s.chars().filter(|c| *c != '_').flat_map(char::to_lowercase).collect::<String>();
    norm(written) == norm(name)
}

fn field<'a>(obj: &'a Value, name: &str) -> Option<&'a Value> {
    obj.as_object()?.iter().find(|(k, _)| same(k, name)).map(|(_, v)| v)
}

/// The pods a node of `t` may run.
pub fn max_pods(t: &CatalogType, kubelet: &Kubelet) -> u64 {
    let eni = u64::from(t.max_network_interfaces) * u64::from(t.ipv4_per_interface.saturating_sub(1)) + 2;
    let pods = kubelet.max_pods.unwrap_or(eni);
    match kubelet.pods_per_core {
        Some(per_core) if per_core > 0 => pods.min(per_core * u64::from(t.instance_type.vcpus)),
        _ => pods,
    }
}

/// Kube-reserved CPU in millicores for `vcpus` cores.
fn reserved_cpu(vcpus: u64) -> u64 {
    let quarter_points = [(1, 240), (1, 40), (2, 20)]; // per core, in 1/4000 of a core: 6 %, 1 %, 0.5 %
    let mut left = vcpus;
    let mut total = 0;
    for (cores, share) in quarter_points {
        let n = left.min(cores);
        total += n * share;
        left -= n;
    }
    total += left * 10; // 0.25 %
    total.div_ceil(4)
}

/// The room a node of `t` gives pods, before any DaemonSet.
pub fn allocatable(t: &CatalogType, kubelet: &Kubelet) -> Resources {
    let it = &t.instance_type;
    let pods = max_pods(t, kubelet);
    let memory = ((it.memory_mib as f64 * (1.0 - VM_MEMORY_OVERHEAD)) as u64) * MIB;
    let capacity = Resources {
        cpu_milli: u64::from(it.vcpus) * 1000,
        memory,
        gpu: it.gpu.as_ref().map_or(0, |g| u64::from(g.count)),
        pods,
    };
    let kube = kubelet.kube_reserved.unwrap_or(Resources {
        cpu_milli: reserved_cpu(u64::from(it.vcpus)),
        memory: (11 * pods + 255) * MIB,
        gpu: 0,
        pods: 0,
    });
    let system = kubelet.system_reserved.unwrap_or_default();
    let eviction = Resources { memory: kubelet.eviction_memory.unwrap_or(EVICTION_MEMORY), ..Resources::default() };
    capacity.minus(kube).minus(system).minus(eviction)
}

/// The DaemonSets of the add-ons kbp installs that run on every node, with the requests their default
/// manifests set (`aws-node` 25m CPU, `kube-proxy` 100m CPU; the Pod Identity agent's are not counted). They
/// tolerate every taint.
pub fn addon_daemonsets(bp: &Blueprint) -> Vec<PodGroup> {
    let every_taint = vec![super::taints::Toleration { operator: Some("Exists".into()), ..Default::default() }];
    let cpu = |addon: &str, name: &str, milli: u64| {
        bp.addons.contains_key(addon).then(|| PodGroup {
            name: format!("DaemonSet/{name}"),
            replicas: 1,
            requests: Resources { cpu_milli: milli, pods: 1, ..Resources::default() },
            terms: vec![vec![]],
            tolerations: every_taint.clone(),
            daemon: true,
            ..PodGroup::default()
        })
    };
    [
        cpu("vpc-cni", "aws-node", 25),
        cpu("kube-proxy", "kube-proxy", 100),
        cpu("eks-pod-identity-agent", "eks-pod-identity-agent", 0),
    ]
    .into_iter()
    .flatten()
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::catalog::InstanceType;

    fn m5(size: &str, vcpus: u32, memory_mib: u64, enis: u32, ips: u32) -> CatalogType {
        CatalogType {
            instance_type: InstanceType {
                name: format!("m5.{size}"),
                architecture: "x86_64".into(),
                vcpus,
                memory_mib,
                gpu: None,
            },
            max_network_interfaces: enis,
            ipv4_per_interface: ips,
            zones: vec!["us-west-2a".into()],
            spot: true,
            on_demand_price: None,
            spot_prices: Default::default(),
        }
    }

    #[test]
    fn max_pods_follow_the_eni_limit_unless_the_kubelet_says_otherwise() {
        let large = m5("large", 2, 8192, 3, 10);
        assert_eq!(max_pods(&large, &Kubelet::default()), 29);
        assert_eq!(max_pods(&m5("4xlarge", 16, 65536, 8, 30), &Kubelet::default()), 234);
        assert_eq!(max_pods(&large, &Kubelet { max_pods: Some(110), ..Kubelet::default() }), 110);
        assert_eq!(max_pods(&large, &Kubelet { pods_per_core: Some(5), ..Kubelet::default() }), 10);
    }

    #[test]
    fn kube_reserved_cpu_is_tiered_by_core() {
        assert_eq!(reserved_cpu(1), 60);
        assert_eq!(reserved_cpu(2), 70);
        assert_eq!(reserved_cpu(4), 80);
        assert_eq!(reserved_cpu(8), 90);
        assert_eq!(reserved_cpu(96), 310);
    }

    #[test]
    fn allocatable_is_capacity_less_vm_overhead_reservations_and_eviction() {
        let a = allocatable(&m5("large", 2, 8192, 3, 10), &Kubelet::default());
        assert_eq!(a.cpu_milli, 2000 - 70);
        // 8192 MiB × 0.925 = 7577 MiB; less 11 × 29 + 255 = 574 MiB kube-reserved and 100 MiB eviction.
        assert_eq!(a.memory, (7577 - 574 - 100) * MIB);
        assert_eq!(a.pods, 29);
        let spec = [(
            "kubelet".to_string(),
            serde_json::json!({"max_pods": 20, "kubeReserved": {"cpu": "200m", "memory": "1Gi"}}),
        )]
        .into();
        let k = Kubelet::from_spec(&spec);
        assert_eq!(k.max_pods, Some(20));
        let a = allocatable(&m5("large", 2, 8192, 3, 10), &k);
        assert_eq!((a.cpu_milli, a.pods), (1800, 20));
        assert_eq!(a.memory, (7577 - 1024 - 100) * MIB);
    }
}

//! One test per rule of the provisioning pass, on the hand-made catalog of [`crate::simulate::testing`]. Room
//! on a node, worked out once: an 8-vCPU type leaves pods 8000m − 90m kube-reserved − 125m of add-on DaemonSets
//! (aws-node 25m, kube-proxy 100m) = 7785m, so seven 1-CPU pods; a 4-vCPU type 3795m, a 2-vCPU type 1805m.

use super::*;
use crate::blueprint;
use crate::simulate::testing::catalog;
use crate::simulate::workload;

fn bp(pools: &str) -> Blueprint {
    let text = format!("[cluster]\nname = \"t\"\nregion = \"us-west-2\"\n\n[node_classes.default]\nami_alias = \"al2023@latest\"\n\n{pools}");
    blueprint::load_str("t.toml", &text, &[]).unwrap_or_else(|d| panic!("test blueprint: {d:?}"))
}

fn pods(toml: &str) -> Workload {
    workload::parse_toml("w.toml", toml).unwrap()
}

fn run(pools: &str, work: &str) -> Simulation {
    simulate(&catalog(), &bp(pools), &pods(work))
}

fn types(s: &Simulation, pool: &str) -> Vec<String> {
    s.nodes.iter().filter(|n| n.node_pool == pool).map(|n| format!("{} {}", n.instance_type, n.capacity_type)).collect()
}

const TWO_POOLS: &str = r#"
[node_pools.heavy]
weight = 80
requirements = [
  { key = "karpenter.k8s.aws/instance-family", operator = "In", values = ["m5"] },
  { key = "karpenter.k8s.aws/instance-cpu", operator = "Lte", values = ["8"] },
]
limits = { cpu = 16 }

[node_pools.light]
weight = 20
requirements = [{ key = "karpenter.k8s.aws/instance-family", operator = "In", values = ["c5"] }]
"#;

#[test]
fn the_heaviest_pool_is_used_until_its_limits_then_the_next() {
    // 14 pods of 1 CPU fill two 8-vCPU m5 nodes (7 each) = 16 vCPUs, the heavy pool's limit.
    let s = run(TWO_POOLS, "[[workload]]\nname = \"web\"\nreplicas = 14\ncpu = 1\nmemory = \"1Gi\"\n");
    assert_eq!(types(&s, "heavy"), ["m5.2xlarge on-demand", "m5.2xlarge on-demand"]);
    assert!(types(&s, "light").is_empty(), "weight 80 is tried before weight 20");
    // Two more pods: heavy has no vCPU left under its limit, so light launches one c5 node for both.
    let s = run(TWO_POOLS, "[[workload]]\nname = \"web\"\nreplicas = 16\ncpu = 1\nmemory = \"1Gi\"\n");
    assert_eq!(types(&s, "heavy").len(), 2);
    assert_eq!(types(&s, "light"), ["c5.xlarge on-demand"], "two 1-CPU pods fit 3795m; c5.xlarge is the cheapest");
    assert_eq!(s.groups[0].node_pools, BTreeMap::from([("heavy".into(), 14), ("light".into(), 2)]));
    assert_eq!(s.pending_pods, 0);
}

#[test]
fn limits_reached_leave_pods_pending_with_the_reason() {
    let pools = r#"
[node_pools.only]
requirements = [{ key = "karpenter.k8s.aws/instance-family", operator = "In", values = ["m5"] }]
limits = { cpu = 8 }
"#;
    let s = run(pools, "[[workload]]\nname = \"web\"\nreplicas = 9\ncpu = 1\n");
    assert_eq!(types(&s, "only"), ["m5.2xlarge on-demand"]);
    assert_eq!((s.groups[0].node_pools.get("only"), s.groups[0].pending), (Some(&7), 2));
    assert_eq!(s.pending_pods, 2);
    let why = &s.groups[0].reasons["only"];
    assert!(why.contains("limits are reached (cpu: 8 of 8 planned)"), "{why}");
}

const GPU: &str = r#"
[node_pools.general]
weight = 50
requirements = [{ key = "karpenter.k8s.aws/instance-category", operator = "In", values = ["m", "c", "g"] }]

[node_pools.gpu]
weight = 10
taints = [{ key = "nvidia.com/gpu", effect = "NoSchedule" }]
requirements = [{ key = "karpenter.k8s.aws/instance-family", operator = "In", values = ["g5"] }]
"#;

#[test]
fn a_tainted_gpu_pool_takes_only_pods_that_tolerate_its_taint() {
    let work = r#"
[[workload]]
name = "train"
gpu = 1
cpu = 2
tolerations = [{ key = "nvidia.com/gpu", operator = "Exists", effect = "NoSchedule" }]

[[workload]]
name = "careless"
gpu = 1
cpu = 2

[[workload]]
name = "web"
cpu = 1
tolerations = [{ key = "nvidia.com/gpu", operator = "Exists" }]
"#;
    let s = run(GPU, work);
    let by_name = |n: &str| s.groups.iter().find(|g| g.name == n).unwrap();
    // The general pool (weight 50) has g5 too, untainted: a GPU pod goes there first whether or not it tolerates.
    assert_eq!(by_name("train").node_pools.keys().collect::<Vec<_>>(), ["general"]);
    let only_gpu = GPU.replace("\"m\", \"c\", \"g\"", "\"m\", \"c\"");
    let s = run(&only_gpu, work);
    let by_name = |n: &str| s.groups.iter().find(|g| g.name == n).unwrap();
    assert_eq!(by_name("train").node_pools.get("gpu"), Some(&1));
    let careless = by_name("careless");
    assert_eq!(careless.pending, 1, "an intolerant GPU pod cannot use the tainted pool");
    assert!(careless.reasons["gpu"].contains("does not tolerate its taint nvidia.com/gpu:NoSchedule"));
    assert!(careless.reasons["general"].contains("no instance type it may launch has room"), "{:?}", careless.reasons);
    // Planned nodes are tried before new ones, whatever their pool: the tolerating web pod joins the GPU node.
    assert_eq!(by_name("web").node_pools.get("gpu"), Some(&1));
    assert_eq!(types(&s, "gpu"), ["g5.xlarge on-demand"]);
    // On its own, tolerating the taint does not draw it to the GPU pool: weight does.
    let web_only =
        "[[workload]]\nname = \"web\"\ncpu = 1\ntolerations = [{ key = \"nvidia.com/gpu\", operator = \"Exists\" }]\n";
    // (m7g.large: the pool names no architecture, and the arm64 type is the cheapest.)
    assert_eq!(types(&run(&only_gpu, web_only), "general"), ["m7g.large on-demand"]);
}

#[test]
fn requirement_operators_select_instance_types_by_their_labels() {
    let pool = "[node_pools.any]\nrequirements = [{ key = \"karpenter.sh/capacity-type\", operator = \"In\", values = [\"on-demand\"] }]\n";
    let one = |reqs: &str| {
        let s = run(pool, &format!("[[workload]]\nname = \"p\"\ncpu = \"500m\"\nrequirements = [{reqs}]\n"));
        s.nodes.first().map(|n| n.instance_type.clone()).unwrap_or_default()
    };
    assert_eq!(one(r#"{ key = "karpenter.k8s.aws/instance-family", operator = "In", values = ["r6i"] }"#), "r6i.large");
    assert_eq!(
        one(r#"{ key = "karpenter.k8s.aws/instance-category", operator = "NotIn", values = ["m", "c"] }"#),
        "r5.large",
        "cheapest outside m and c"
    );
    assert_eq!(one(r#"{ key = "karpenter.k8s.aws/instance-gpu-count", operator = "Exists" }"#), "g5.xlarge");
    assert_eq!(one(r#"{ key = "karpenter.k8s.aws/instance-gpu-count", operator = "DoesNotExist" }"#), "m7g.large");
    assert_eq!(one(r#"{ key = "karpenter.k8s.aws/instance-cpu", operator = "Gt", values = ["8"] }"#), "m5.4xlarge");
    assert_eq!(one(r#"{ key = "karpenter.k8s.aws/instance-memory", operator = "Lt", values = ["8192"] }"#), "c5.large");
    assert_eq!(
        one(r#"{ key = "karpenter.k8s.aws/instance-generation", operator = "Gte", values = ["7"] }"#),
        "m7g.large"
    );
    assert_eq!(
        one(
            r#"{ key = "karpenter.k8s.aws/instance-generation", operator = "Lte", values = ["5"] }, { key = "kubernetes.io/arch", operator = "In", values = ["amd64"] }"#
        ),
        "c5.large"
    );
}

#[test]
fn arm64_and_amd64_pods_get_their_architecture() {
    let pool = "[node_pools.both]\nrequirements = [{ key = \"kubernetes.io/arch\", operator = \"In\", values = [\"amd64\", \"arm64\"] }]\n";
    let work = |arch: &str| {
        format!("[[workload]]\nname = \"{arch}\"\ncpu = 1\nmemory = \"4Gi\"\nnode_selector = {{ \"kubernetes.io/arch\" = \"{arch}\" }}\n")
    };
    assert_eq!(types(&run(pool, &work("arm64")), "both"), ["m7g.large on-demand"]);
    assert_eq!(
        types(&run(pool, &work("amd64")), "both"),
        ["m5.large on-demand"],
        "m5.large ties m6i.large; listed first"
    );
    let amd_only = pool.replace(", \"arm64\"", "");
    let s = run(&amd_only, &work("arm64"));
    assert_eq!(s.pending_pods, 1);
    assert!(
        s.groups[0].reasons["both"].contains("requires kubernetes.io/arch In [arm64]"),
        "{:?}",
        s.groups[0].reasons
    );
}

#[test]
fn spot_is_chosen_where_allowed_and_on_demand_is_the_default() {
    let both = "[node_pools.p]\nrequirements = [{ key = \"karpenter.sh/capacity-type\", operator = \"In\", values = [\"spot\", \"on-demand\"] }, { key = \"karpenter.k8s.aws/instance-family\", operator = \"In\", values = [\"m5\"] }]\n";
    let s = run(both, "[[workload]]\nname = \"w\"\ncpu = 1\n");
    assert_eq!(
        (s.nodes[0].capacity_type.as_str(), s.nodes[0].zone.as_str()),
        ("spot", "us-west-2b"),
        "Spot, in its cheapest zone"
    );
    let price = s.nodes[0].hourly_price.unwrap();
    assert!((price - 0.096 * 0.40 * 0.97).abs() < 1e-9, "{price}");
    let s = run(
        both,
        "[[workload]]\nname = \"w\"\ncpu = 1\nnode_selector = { \"karpenter.sh/capacity-type\" = \"on-demand\" }\n",
    );
    assert_eq!(s.nodes[0].capacity_type, "on-demand", "a pod may ask for on-demand");
    let unsaid = "[node_pools.p]\nrequirements = [{ key = \"karpenter.k8s.aws/instance-family\", operator = \"In\", values = [\"m5\"] }]\n";
    let s = run(
        unsaid,
        "[[workload]]\nname = \"w\"\ncpu = 1\nnode_selector = { \"karpenter.sh/capacity-type\" = \"spot\" }\n",
    );
    assert_eq!(s.pending_pods, 1, "a pool that names no capacity type launches on-demand only");
}

#[test]
fn min_values_keep_enough_families_or_open_another_node() {
    let pool = r#"
[node_pools.spot]
requirements = [
  { key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] },
  { key = "karpenter.k8s.aws/instance-family", operator = "In", values = ["m5", "c5", "r5"], min_values = 3 },
  { key = "karpenter.k8s.aws/instance-size", operator = "In", values = ["large", "xlarge", "2xlarge"] },
]
"#;
    // Seven 1-CPU pods with 2Gi each would need 14Gi: c5.2xlarge (16Gi) leaves 13.8Gi, so only m5 and r5 could
    // hold them; keeping three families, a node takes six (12Gi) and a second node the seventh.
    let s = run(pool, "[[workload]]\nname = \"w\"\nreplicas = 7\ncpu = 1\nmemory = \"2Gi\"\n");
    assert_eq!(s.nodes.iter().map(|n| n.pods).collect::<Vec<_>>(), [6, 1]);
    let without = pool.replace(", min_values = 3", "");
    let s = run(&without, "[[workload]]\nname = \"w\"\nreplicas = 7\ncpu = 1\nmemory = \"2Gi\"\n");
    assert_eq!(s.nodes.iter().map(|n| n.pods).collect::<Vec<_>>(), [7]);
    // A pod only r5 can hold (40Gi) cannot keep three families at all.
    let s = run(pool, "[[workload]]\nname = \"big\"\ncpu = 1\nmemory = \"40Gi\"\n");
    assert_eq!(s.pending_pods, 1);
    assert!(
        s.groups[0].reasons["spot"].contains("minValues 3 of karpenter.k8s.aws/instance-family"),
        "{:?}",
        s.groups[0].reasons
    );
}

#[test]
fn a_zone_spread_puts_pods_in_every_zone() {
    let pool = "[node_pools.p]\nrequirements = [{ key = \"karpenter.k8s.aws/instance-family\", operator = \"In\", values = [\"m5\"] }]\n";
    let s = run(pool, "[[workload]]\nname = \"w\"\nreplicas = 6\ncpu = 1\nzone_spread = 1\n");
    let mut zones: Vec<&str> = s.nodes.iter().map(|n| n.zone.as_str()).collect();
    zones.sort();
    assert_eq!(zones, ["us-west-2a", "us-west-2b", "us-west-2c"], "one node per zone, two pods each");
    assert!(s.nodes.iter().all(|n| n.pods == 2));
    let s = run(pool, "[[workload]]\nname = \"w\"\nreplicas = 6\ncpu = 1\n");
    assert_eq!(s.nodes.len(), 1, "without the spread, one node holds all six");
    let s = run(pool, "[[workload]]\nname = \"w\"\nreplicas = 4\ncpu = 1\nper_zone = 1\n");
    assert_eq!((s.nodes.len(), s.pending_pods), (3, 1), "zone anti-affinity: one per zone, the fourth waits");
}

#[test]
fn anti_affinity_and_daemonsets_change_the_node_count() {
    let pool = "[node_pools.p]\nrequirements = [{ key = \"karpenter.k8s.aws/instance-family\", operator = \"In\", values = [\"m5\"] }, { key = \"karpenter.k8s.aws/instance-size\", operator = \"NotIn\", values = [\"4xlarge\"] }]\n";
    let s = run(pool, "[[workload]]\nname = \"w\"\nreplicas = 3\ncpu = 1\nper_node = 1\n");
    assert_eq!(types(&s, "p"), ["m5.large on-demand"; 3]);
    // A 1-CPU DaemonSet on every node leaves an 8-vCPU node 6785m: six 1-CPU pods instead of seven.
    let s = run(pool, "[[workload]]\nname = \"w\"\nreplicas = 7\ncpu = 1\n");
    assert_eq!(s.nodes.len(), 1);
    let s = run(pool, "[[workload]]\nname = \"w\"\nreplicas = 7\ncpu = 1\n\n[[workload]]\nname = \"agent\"\ncpu = 1\ndaemonset = true\n");
    assert_eq!(s.nodes.iter().map(|n| n.pods).collect::<Vec<_>>(), [6, 1]);
}

#[test]
fn cost_is_the_sum_of_the_launched_nodes() {
    let s = run(TWO_POOLS, "[[workload]]\nname = \"web\"\nreplicas = 16\ncpu = 1\nmemory = \"1Gi\"\n");
    let hourly = 2.0 * 0.384 + 0.17;
    assert!((s.hourly_cost.unwrap() - hourly).abs() < 1e-9);
    assert!((s.monthly_cost.unwrap() - hourly * 730.0).abs() < 1e-6);
    assert_eq!(s.node_pools.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["heavy", "light"]);
    let mut unpriced = catalog();
    unpriced.types.iter_mut().for_each(|t| t.on_demand_price = None);
    let s = simulate(&unpriced, &bp(TWO_POOLS), &pods("[[workload]]\nname = \"w\"\ncpu = 1\n"));
    assert_eq!((s.hourly_cost, s.unpriced.as_slice()), (None, ["m5.large".to_string()].as_slice()));
}

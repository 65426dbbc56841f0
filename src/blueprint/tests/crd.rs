//! The NodePool and EC2NodeClass CRD rules (Karpenter v1.14.1), end to end through `load_str`: each rule is
//! refused when broken and accepted when right, and the message names the problem.

use super::{check_str, HEADER};

/// A blueprint with one node pool `p` whose table body is `body` (plus any further tables after it).
fn pool(body: &str) -> String {
    format!("{HEADER}[node_pools.p]\n{body}\n")
}

fn requirement(r: &str) -> String {
    pool(&format!("requirements = [{r}]"))
}

fn class(body: &str) -> String {
    format!("{HEADER}[node_classes.default]\n{body}\n")
}

fn budget(b: &str) -> String {
    pool(&format!("disruption = {{ budgets = [{b}] }}"))
}

/// Loads `text`; None when it loads, else every error message, one per line.
fn errors_of(text: &str) -> Option<String> {
    match check_str("crd.toml", text, &[]) {
        Ok(_) => None,
        Err(d) => Some(d.items.iter().map(|i| i.message.clone()).collect::<Vec<_>>().join("\n")),
    }
}

fn accepts(text: &str) {
    if let Some(e) = errors_of(text) {
        panic!("refused:\n{text}\n--- errors:\n{e}");
    }
}

fn rejects(text: &str, needle: &str) {
    match errors_of(text) {
        None => panic!("accepted, expected {needle:?}:\n{text}"),
        Some(e) => assert!(e.contains(needle), "expected {needle:?} for\n{text}\n--- got:\n{e}"),
    }
}

#[test]
fn operators() {
    for op in ["In", "NotIn", "Exists", "DoesNotExist"] {
        accepts(&requirement(&format!(r#"{{ key = "kubernetes.io/arch", operator = "{op}", values = ["amd64"] }}"#)));
    }
    for op in ["Gt", "Lt", "Gte", "Lte"] {
        accepts(&requirement(&format!(
            r#"{{ key = "karpenter.k8s.aws/instance-cpu", operator = "{op}", values = ["4"] }}"#
        )));
    }
    rejects(
        &requirement(r#"{ key = "kubernetes.io/arch", operator = "Equals", values = ["amd64"] }"#),
        "`Equals` is not one of",
    );
    rejects(&requirement(r#"{ key = "kubernetes.io/arch", values = ["amd64"] }"#), "missing required field `operator`");
    rejects(&requirement(r#"{ operator = "Exists" }"#), "missing required field `key`");
}

#[test]
fn in_needs_a_value() {
    rejects(&requirement(r#"{ key = "kubernetes.io/arch", operator = "In" }"#), "`In` needs at least one value");
    rejects(
        &requirement(r#"{ key = "kubernetes.io/arch", operator = "In", values = [] }"#),
        "`In` needs at least one value",
    );
    accepts(&requirement(r#"{ key = "kubernetes.io/arch", operator = "In", values = ["arm64"] }"#));
}

#[test]
fn comparisons_take_one_non_negative_integer() {
    let gen = |op: &str, values: &str| {
        requirement(&format!(
            r#"{{ key = "karpenter.k8s.aws/instance-generation", operator = "{op}", values = {values} }}"#
        ))
    };
    rejects(&gen("Gt", r#"["2", "5"]"#), "`Gt` takes exactly one integer value, found 2 values");
    rejects(&gen("Lte", "[]"), "`Lte` takes exactly one integer value, found 0 values");
    rejects(&gen("Gt", r#"["two"]"#), "`two` is not a non-negative integer");
    rejects(&gen("Gte", r#"["-1"]"#), "`-1` is not a non-negative integer");
    rejects(&gen("Lt", r#"["1.5"]"#), "not a non-negative integer");
    accepts(&gen("Gt", r#"["0"]"#));
    accepts(&gen("Lt", r#"["+7"]"#));
}

#[test]
fn min_values() {
    let req = |min: i64| {
        requirement(&format!(
            r#"{{ key = "karpenter.k8s.aws/instance-family", operator = "In", values = ["m5", "c5"], min_values = {min} }}"#
        ))
    };
    rejects(&req(3), "min_values (3) is more than the 2 values listed");
    rejects(&req(0), "0 is out of range");
    rejects(&req(51), "51 is out of range");
    accepts(&req(2));
    // The CRD compares min_values with the values of `In` only.
    accepts(&requirement(r#"{ key = "karpenter.k8s.aws/instance-family", operator = "Exists", min_values = 5 }"#));
}

#[test]
fn requirement_keys() {
    let key = |k: &str| requirement(&format!(r#"{{ key = "{k}", operator = "Exists" }}"#));
    for ok in [
        "karpenter.sh/capacity-type",
        "karpenter.k8s.aws/instance-family",
        "topology.kubernetes.io/zone",
        "example.com/team",
    ] {
        accepts(&key(ok));
    }
    rejects(&key("karpenter.sh/nodepool"), "label \"karpenter.sh/nodepool\" is restricted");
    rejects(&key("karpenter.sh/registered"), "label domain \"karpenter.sh\" is restricted");
    rejects(&key("kubernetes.io/hostname"), "label \"kubernetes.io/hostname\" is restricted");
    rejects(&key("karpenter.k8s.aws/instance-ami-id"), "label domain \"karpenter.k8s.aws\" is restricted");
    rejects(&key("bad key"), "is not a valid requirement key");
    rejects(&key(&format!("example.com/{}", "k".repeat(310))), "is not a valid requirement key");
}

#[test]
fn at_most_100_requirements_and_50_budgets() {
    let reqs = |n: usize| {
        pool(&format!(
            "requirements = [{}]",
            vec![r#"{ key = "kubernetes.io/os", operator = "Exists" }"#; n].join(", ")
        ))
    };
    accepts(&reqs(100));
    rejects(&reqs(101), "at most 100 items are allowed, found 101");
    let budgets = |n: usize| budget(&vec![r#"{ nodes = "10%" }"#; n].join(", "));
    accepts(&budgets(50));
    rejects(&budgets(51), "at most 50 items are allowed, found 51");
}

#[test]
fn labels() {
    accepts(&pool(r#"labels = { team = "data", "example.com/tier" = "" }"#));
    rejects(&pool(r#"labels = { "karpenter.sh/foo" = "x" }"#), "label domain \"karpenter.sh\" is restricted");
    rejects(&pool(r#"labels = { "kubernetes.io/hostname" = "x" }"#), "is restricted");
    rejects(&pool(r#"labels = { team = "-data" }"#), "is not a valid label value");
    rejects(&pool(&format!(r#"labels = {{ team = "{}" }}"#, "v".repeat(64))), "is not a valid label value");
    let many: Vec<String> = (0..101).map(|i| format!("l{i} = \"v\"")).collect();
    rejects(&pool(&format!("labels = {{ {} }}", many.join(", "))), "at most 100 entries are allowed");
}

#[test]
fn taints() {
    for field in ["taints", "startup_taints"] {
        accepts(&pool(&format!(
            r#"{field} = [{{ key = "nvidia.com/gpu", value = "true", effect = "NoSchedule" }}, {{ key = "dedicated", effect = "NoExecute" }}]"#
        )));
        rejects(
            &pool(&format!(r#"{field} = [{{ key = "gpu", effect = "NoScheduled" }}]"#)),
            "`NoScheduled` is not one of",
        );
        rejects(
            &pool(&format!(r#"{field} = [{{ key = "bad key", effect = "NoSchedule" }}]"#)),
            "is not a valid taint key",
        );
        rejects(
            &pool(&format!(r#"{field} = [{{ key = "gpu", value = "", effect = "NoSchedule" }}]"#)),
            "is not a valid taint value",
        );
        rejects(&pool(&format!(r#"{field} = [{{ key = "gpu" }}]"#)), "missing required field `effect`");
    }
}

#[test]
fn durations() {
    for (field, ok, bad) in [
        ("expire_after", ["720h", "Never"], ["30d", "never"]),
        ("termination_grace_period", ["48h", "1h30m"], ["Never", "2 days"]),
    ] {
        for v in ok {
            accepts(&pool(&format!("{field} = \"{v}\"")));
        }
        for v in bad {
            rejects(&pool(&format!("{field} = \"{v}\"")), "is not a duration");
        }
    }
    accepts(&pool(r#"disruption = { consolidate_after = "Never" }"#));
    rejects(&pool(r#"disruption = { consolidate_after = "1.5h" }"#), "is not a duration or `Never`");
}

#[test]
fn consolidation_policy() {
    for p in ["WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"] {
        accepts(&pool(&format!("disruption = {{ consolidation_policy = \"{p}\" }}")));
    }
    rejects(&pool(r#"disruption = { consolidation_policy = "WhenUnderutilized" }"#), "is not one of");
}

#[test]
fn budgets() {
    accepts(&budget(
        r#"{ nodes = "10%" }, { nodes = 3 }, { nodes = "0", schedule = "@daily", duration = "10m", reasons = ["Drifted", "Empty"] }"#,
    ));
    rejects(&budget(r#"{ nodes = "101%" }"#), "is not a node count or a percentage");
    rejects(&budget(r#"{ nodes = "0", schedule = "@daily" }"#), "'schedule' must be set with 'duration'");
    rejects(&budget(r#"{ nodes = "0", duration = "10m" }"#), "'schedule' must be set with 'duration'");
    rejects(&budget(r#"{ nodes = "0", schedule = "daily", duration = "10m" }"#), "is not a cron schedule");
    rejects(&budget(r#"{ nodes = "0", schedule = "0 9 * * *", duration = "30s" }"#), "is not a budget duration");
    accepts(&budget(r#"{ nodes = "0", schedule = "0 9 * * mon-fri", duration = "8h30m" }"#));
    rejects(&budget(r#"{ reasons = ["Expired"] }"#), "`Expired` is not one of");
    rejects(&budget(r#"{ reasons = ["Empty", "Empty"] }"#), "appears more than once");
}

#[test]
fn weight_and_limits() {
    accepts(&pool("weight = 1"));
    accepts(&pool("weight = 100"));
    rejects(&pool("weight = 0"), "0 is out of range");
    rejects(&pool("weight = 101"), "101 is out of range");
    accepts(&pool(r#"limits = { cpu = 1000, memory = "1000Gi", "nvidia.com/gpu" = 8, pods = "1e3" }"#));
    rejects(&pool(r#"limits = { cpu = "lots" }"#), "is not a Kubernetes quantity");
    rejects(&pool("limits = { cpu = 1.5 }"), "expected an integer or a string, found a float");
}

#[test]
fn object_names() {
    accepts(&format!("{HEADER}[node_pools.\"gpu.v2\"]\n"));
    rejects(&format!("{HEADER}[node_pools.GPU]\n"), "is not a valid Kubernetes object name");
    rejects(&format!("{HEADER}[node_pools.{}]\n", "p".repeat(64)), "is not a valid Kubernetes object name");
    rejects(
        &format!("{HEADER}[node_classes.Default]\n[node_pools.p]\nnode_class = \"Default\"\n"),
        "is not a valid Kubernetes object name",
    );
}

#[test]
fn ami_aliases() {
    for ok in ["bottlerocket@latest", "al2023@v20250505", "al2@latest", "windows2022@latest"] {
        accepts(&class(&format!("ami_alias = \"{ok}\"")));
    }
    rejects(&class(r#"ami_alias = "bottlerocket""#), "must match the format 'family@version'");
    rejects(&class(r#"ami_alias = "ubuntu@latest""#), "AMI family `ubuntu` is not supported");
    rejects(&class(r#"ami_alias = "windows2019@v1""#), "windows families may only specify version 'latest'");
    rejects(&class(r#"ami_alias = "al2023@v20250505-with-a-long-tail""#), "longer than 30 characters");
}

#[test]
fn root_volumes() {
    accepts(&class(r#"root_volume = { size = "17Ti", type = "gp3", iops = 3000, throughput = 125 }"#));
    accepts(&class(r#"root_volume = { size = "100G", type = "io2", iops = 10000, device_name = "/dev/xvda" }"#));
    rejects(&class(r#"root_volume = { size = "18Ti" }"#), "is not a volume size the EC2NodeClass accepts");
    rejects(&class(r#"root_volume = { size = "20GB" }"#), "is not a volume size");
    rejects(&class(r#"root_volume = { type = "gp4" }"#), "`gp4` is not one of");
    rejects(&class(r#"root_volume = { type = "gp2", iops = 3000 }"#), "`iops` cannot be set on a gp2 volume");
    rejects(
        &class(r#"root_volume = { type = "io1", throughput = 200 }"#),
        "`throughput` cannot be set on a io1 volume",
    );
}

#[test]
fn nodeclass_tags() {
    accepts(&class(r#"tags = { team = "data" }"#));
    for key in [
        "kubernetes.io/cluster/t",
        "eks:eks-cluster-name",
        "karpenter.sh/nodepool",
        "karpenter.sh/nodeclaim",
        "karpenter.k8s.aws/ec2nodeclass",
    ] {
        rejects(&class(&format!(r#"tags = {{ "{key}" = "x" }}"#)), "tag contains a restricted tag");
    }
}

#[test]
fn warnings_do_not_fail_the_load() {
    let text = requirement(r#"{ key = "karpenter.sh/capacity-type", operator = "In", values = ["Spot"] }"#);
    let loaded = check_str("w.toml", &text, &[]).expect("a warning only");
    assert!(loaded.warnings.items.iter().any(|w| w.message.contains("capacity type `Spot` matches no instance")));
    let text = format!("{HEADER}[karpenter]\nspot = false\n[node_pools.p]\nrequirements = [{{ key = \"karpenter.sh/capacity-type\", operator = \"In\", values = [\"spot\"] }}]\n");
    let loaded = check_str("w.toml", &text, &[]).expect("a warning only");
    assert!(loaded
        .warnings
        .items
        .iter()
        .any(|w| w.hint.as_deref().is_some_and(|h| h.contains("ServiceLinkedRoleCreationNotPermitted"))));
}

#[test]
fn empty_pools_warn_and_set_floats_become_quantities() {
    let loaded = check_str("e.toml", &format!("{HEADER}[node_pools]\n"), &[]).expect("a warning only");
    assert!(loaded.warnings.items[0].message.contains("no node pools"));
    let sets = ["node_pools.default.limits.cpu=1.5".to_string()];
    let loaded = check_str("q.toml", HEADER, &sets).expect("1.5 is a quantity");
    assert_eq!(loaded.blueprint.node_pools["default"].limits["cpu"], "1.5");
}

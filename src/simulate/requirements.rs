//! A NodePool's (or a pod's) requirement against a node's labels: the node selector operators of Kubernetes
//! (`In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt`) and Karpenter's `Gte` and `Lte` (v1.9+). As in the
//! scheduler, `NotIn` and `DoesNotExist` hold for a node without the label, and the numeric operators compare
//! integers (a label or bound that is not one never matches). An operator the pinned CRDs do not know never
//! matches; `kbp validate` refuses it before any simulation.

use super::Labels;
use crate::blueprint::model::Requirement;

/// Whether `labels` satisfy `req`.
pub fn matches(req: &Requirement, labels: &Labels) -> bool {
    let value = labels.get(&req.key);
    let number = |s: &str| s.trim().parse::<i64>().ok();
    let compare = |keep: fn(i64, i64) -> bool| match (value.and_then(|v| number(v)), bound(req).and_then(number)) {
        (Some(v), Some(b)) => keep(v, b),
        _ => false,
    };
    match req.operator.as_str() {
        "In" => value.is_some_and(|v| req.values.contains(v)),
        "NotIn" => value.is_none_or(|v| !req.values.contains(v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" => compare(|v, b| v > b),
        "Lt" => compare(|v, b| v < b),
        "Gte" => compare(|v, b| v >= b),
        "Lte" => compare(|v, b| v <= b),
        _ => false,
    }
}

/// Whether `labels` satisfy every one of `reqs` (requirements are ANDed).
pub fn all_match(reqs: &[Requirement], labels: &Labels) -> bool {
    reqs.iter().all(|r| matches(r, labels))
}

/// The first of `reqs` that `labels` do not satisfy, for a reason such as `karpenter.sh/capacity-type In [spot]
/// not met`.
pub fn first_unmet<'a>(reqs: &'a [Requirement], labels: &Labels) -> Option<&'a Requirement> {
    reqs.iter().find(|r| !matches(r, labels))
}

/// The single bound of a numeric operator (`Gt`, `Lt`, `Gte`, `Lte` take exactly one value).
fn bound(req: &Requirement) -> Option<&str> {
    match req.values.as_slice() {
        [one] => Some(one.as_str()),
        _ => None,
    }
}

/// A requirement from literals, for tests.
#[cfg(test)]
pub(crate) fn req(key: &str, operator: &str, values: &[&str]) -> Requirement {
    Requirement {
        key: key.into(),
        operator: operator.into(),
        values: values.iter().map(|v| v.to_string()).collect(),
        min_values: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The labels Karpenter gives an m6i.2xlarge on-demand node in us-west-2a.
    fn m6i_2xlarge() -> Labels {
        [
            ("node.kubernetes.io/instance-type", "m6i.2xlarge"),
            ("kubernetes.io/arch", "amd64"),
            ("karpenter.sh/capacity-type", "on-demand"),
            ("karpenter.k8s.aws/instance-family", "m6i"),
            ("karpenter.k8s.aws/instance-cpu", "8"),
            ("karpenter.k8s.aws/instance-generation", "6"),
            ("topology.kubernetes.io/zone", "us-west-2a"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }

    #[test]
    fn set_operators_treat_a_missing_label_as_the_scheduler_does() {
        let node = m6i_2xlarge();
        assert!(matches(&req("karpenter.k8s.aws/instance-family", "In", &["m5", "m6i"]), &node));
        assert!(!matches(&req("karpenter.k8s.aws/instance-family", "In", &["c6i"]), &node));
        assert!(!matches(&req("karpenter.k8s.aws/instance-gpu-count", "In", &["1"]), &node), "In needs the label");
        assert!(matches(&req("karpenter.sh/capacity-type", "NotIn", &["spot"]), &node));
        assert!(!matches(&req("kubernetes.io/arch", "NotIn", &["amd64"]), &node));
        assert!(matches(&req("karpenter.k8s.aws/instance-gpu-count", "NotIn", &["1"]), &node), "absent: not in");
        assert!(matches(&req("topology.kubernetes.io/zone", "Exists", &[]), &node));
        assert!(!matches(&req("nvidia.com/gpu.present", "Exists", &[]), &node));
        assert!(matches(&req("nvidia.com/gpu.present", "DoesNotExist", &[]), &node));
        assert!(!matches(&req("kubernetes.io/arch", "DoesNotExist", &[]), &node));
    }

    #[test]
    fn numeric_operators_compare_integers_with_and_without_the_bound() {
        let node = m6i_2xlarge(); // 8 vCPUs, generation 6
        let cpu = |op: &str, bound: &str| matches(&req("karpenter.k8s.aws/instance-cpu", op, &[bound]), &node);
        assert!(cpu("Gt", "4") && !cpu("Gt", "8"), "Gt excludes the bound");
        assert!(cpu("Lt", "16") && !cpu("Lt", "8"), "Lt excludes the bound");
        assert!(cpu("Gte", "8") && !cpu("Gte", "9"), "Gte (Karpenter v1.9+) includes the bound");
        assert!(cpu("Lte", "8") && !cpu("Lte", "7"), "Lte (Karpenter v1.9+) includes the bound");
        let generation = req("karpenter.k8s.aws/instance-generation", "Gte", &["6"]);
        assert!(matches(&generation, &node));
        assert!(!matches(&req("karpenter.k8s.aws/instance-gpu-count", "Gte", &["0"]), &node), "no label, no match");
        assert!(!matches(&req("kubernetes.io/arch", "Gt", &["1"]), &node), "a label that is not an integer");
        assert!(!matches(&req("karpenter.k8s.aws/instance-cpu", "Gt", &["4", "5"]), &node), "one bound only");
        assert!(!matches(&req("karpenter.k8s.aws/instance-cpu", "Between", &["4"]), &node), "unknown operator");
    }

    #[test]
    fn requirements_are_anded_and_the_first_unmet_is_named() {
        let node = m6i_2xlarge();
        let pool = [
            req("kubernetes.io/arch", "In", &["amd64"]),
            req("karpenter.sh/capacity-type", "In", &["spot"]),
            req("karpenter.k8s.aws/instance-cpu", "Lte", &["4"]),
        ];
        assert!(!all_match(&pool, &node));
        assert_eq!(first_unmet(&pool, &node).map(|r| r.key.as_str()), Some("karpenter.sh/capacity-type"));
        assert!(all_match(&pool[..1], &node));
        assert!(all_match(&[], &node), "no requirement: any node");
    }
}

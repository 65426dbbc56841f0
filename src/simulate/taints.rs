//! Taints and tolerations, as the scheduler applies them when Karpenter decides whether a pod can go to a
//! NodePool's nodes: every `NoSchedule` and `NoExecute` taint must be tolerated; `PreferNoSchedule` only makes
//! the scheduler prefer other nodes, so it never keeps a pod off.

use crate::blueprint::model::Taint;

/// A pod's toleration, with the fields Kubernetes gives it (all optional).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Toleration {
    /// Empty with operator `Exists`: every key.
    pub key: Option<String>,
    /// `Equal` (the default) or `Exists`.
    pub operator: Option<String>,
    /// The value it tolerates with `Equal`; ignored with `Exists`. Empty or `None` matches an empty taint value.
    pub value: Option<String>,
    /// Empty: every effect.
    pub effect: Option<String>,
}

impl Toleration {
    /// Whether it tolerates `taint`.
    pub fn tolerates(&self, taint: &Taint) -> bool {
        let effect = self.effect.as_deref().is_none_or(|e| e.is_empty() || e == taint.effect);
        let exists = self.operator.as_deref() == Some("Exists");
        let key = match self.key.as_deref().filter(|k| !k.is_empty()) {
            Some(k) => k == taint.key,
            None => exists,
        };
        let value = exists || self.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or("");
        effect && key && value
    }
}

/// The first taint of `taints` that keeps a pod with `tolerations` off the node, if any.
pub fn repelling<'a>(taints: &'a [Taint], tolerations: &[Toleration]) -> Option<&'a Taint> {
    taints.iter().filter(|t| t.effect != "PreferNoSchedule").find(|t| !tolerations.iter().any(|tol| tol.tolerates(t)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taint(key: &str, value: Option<&str>, effect: &str) -> Taint {
        Taint { key: key.into(), value: value.map(str::to_string), effect: effect.into() }
    }

    fn toleration(key: Option<&str>, operator: Option<&str>, value: Option<&str>, effect: Option<&str>) -> Toleration {
        let s = |v: Option<&str>| v.map(str::to_string);
        Toleration { key: s(key), operator: s(operator), value: s(value), effect: s(effect) }
    }

    #[test]
    fn a_tainted_gpu_pool_takes_only_pods_that_tolerate_it() {
        let gpu = [taint("nvidia.com/gpu", None, "NoSchedule")];
        assert_eq!(repelling(&gpu, &[]).map(|t| t.key.as_str()), Some("nvidia.com/gpu"), "a plain pod stays off");
        let exists = toleration(Some("nvidia.com/gpu"), Some("Exists"), None, Some("NoSchedule"));
        assert!(repelling(&gpu, &[exists]).is_none());
        let any_effect = toleration(Some("nvidia.com/gpu"), Some("Exists"), None, None);
        assert!(repelling(&gpu, &[any_effect]).is_none(), "no effect: every effect");
        let other_effect = toleration(Some("nvidia.com/gpu"), Some("Exists"), None, Some("NoExecute"));
        assert!(repelling(&gpu, &[other_effect]).is_some());
        let everything = toleration(None, Some("Exists"), None, None);
        assert!(repelling(&gpu, &[everything]).is_none(), "an empty key with Exists tolerates every taint");
    }

    #[test]
    fn equal_compares_values_and_prefer_no_schedule_never_repels() {
        let dedicated = [taint("dedicated", Some("team-a"), "NoSchedule")];
        let team_a = toleration(Some("dedicated"), Some("Equal"), Some("team-a"), Some("NoSchedule"));
        let team_b = toleration(Some("dedicated"), None, Some("team-b"), Some("NoSchedule"));
        assert!(repelling(&dedicated, &[team_a]).is_none());
        assert!(repelling(&dedicated, std::slice::from_ref(&team_b)).is_some(), "Equal is the default operator");
        let keyless_equal = toleration(None, None, Some("team-a"), None);
        assert!(repelling(&dedicated, &[keyless_equal]).is_some(), "an empty key needs Exists");
        let soft = [taint("spot", None, "PreferNoSchedule")];
        assert!(repelling(&soft, &[]).is_none());
        let controller = [taint("karpenter.sh/controller", Some("true"), "NoSchedule"), soft[0].clone()];
        assert_eq!(repelling(&controller, &[team_b]).map(|t| t.key.as_str()), Some("karpenter.sh/controller"));
    }
}

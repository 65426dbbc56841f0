//! Version skew: what runs behind the control plane, read from the refreshed state, so that a plan and
//! `kbp drift` report it even when nothing else changed. Nodes may lag by as many minor versions as EKS allows
//! ([`crate::blueprint::versions::max_node_skew`]); an add-on should run a version made for the cluster's.

use serde_json::Value;

use crate::blueprint::versions::{behind, max_node_skew};
use crate::graph::kinds;
use crate::state::{ResourceState, State, Status};

/// One line (and its hint) per node group or add-on behind the cluster's Kubernetes version.
pub fn warnings(state: &State) -> Vec<String> {
    let ready = || state.resources.values().filter(|r| r.status == Status::Ready);
    let text = |r: &ResourceState, key: &str| r.attributes.get(key).and_then(Value::as_str).map(str::to_string);
    let Some(plane) = ready().filter(|r| r.kind == kinds::EKS_CLUSTER).find_map(|r| text(r, "version")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for r in ready() {
        if r.kind == kinds::EKS_NODE_GROUP {
            if let Some(nodes) = text(r, "version") {
                out.extend(node_group(r, &plane, &nodes));
            }
        } else if r.kind == kinds::EKS_ADDON {
            out.extend(addon(r, &plane));
        }
    }
    out
}

fn node_group(r: &ResourceState, plane: &str, nodes: &str) -> Option<String> {
    let lag = behind(plane, nodes).filter(|&n| n > 0)?;
    let allowed = i64::from(max_node_skew(plane));
    let within = if lag > allowed {
        format!("more than the {allowed} EKS allows: its nodes are out of support")
    } else {
        format!("EKS allows {allowed}")
    };
    Some(format!(
        "{} runs Kubernetes {nodes}, {lag} minor version{} behind the control plane ({plane}); {within}\n  \
         hint: remove node_group.version (or set it to \"{plane}\") to upgrade the nodes in the next apply",
        r.address,
        if lag == 1 { "" } else { "s" }
    ))
}

/// What an upgrade to `target` leaves to Karpenter: the nodes of each NodePool whose EC2NodeClass takes an
/// `…@latest` AMI alias move to the new version's AMI by Karpenter's drift, as fast as the pool's disruption
/// budgets allow; a pinned alias (`al2023@v20250505`) keeps its AMI until the blueprint moves it.
pub fn rolled_by_karpenter(p: &super::Plan, target: &str) -> Vec<String> {
    let manifest = |r: &crate::graph::Resource| r.attrs.get("manifest").cloned().unwrap_or(Value::Null);
    let of_kind = |kind: &'static str| p.resources.iter().filter(move |r| r.kind == kind).map(manifest);
    let latest: Vec<String> = of_kind(kinds::EC2_NODE_CLASS)
        .filter(|m| {
            let terms = m["spec"]["amiSelectorTerms"].as_array().cloned().unwrap_or_default();
            terms.iter().any(|t| t["alias"].as_str().is_some_and(|a| a.ends_with("@latest")))
        })
        .filter_map(|m| m["metadata"]["name"].as_str().map(str::to_string))
        .collect();
    of_kind(kinds::NODE_POOL)
        .filter(|m| m["spec"]["template"]["spec"]["nodeClassRef"]["name"].as_str().is_some_and(|c| latest.iter().any(|l| l == c)))
        .map(|m| {
            let name = m["metadata"]["name"].as_str().unwrap_or("?");
            let class = m["spec"]["template"]["spec"]["nodeClassRef"]["name"].as_str().unwrap_or("?");
            let budgets: Vec<String> = m["spec"]["disruption"]["budgets"]
                .as_array()
                .map(|b| b.iter().filter_map(|b| b["nodes"].as_str().map(|n| format!("{n} of the nodes at a time"))).collect())
                .unwrap_or_default();
            let bound = if budgets.is_empty() { "Karpenter's default budget (10% of the nodes at a time)".to_string() } else { budgets.join(", ") };
            format!(
                "NodePool `{name}` (EC2NodeClass `{class}`, an @latest AMI alias): Karpenter replaces its nodes with Kubernetes {target}'s AMI by drift after the upgrade, within its disruption budgets: {bound}"
            )
        })
        .collect()
}

/// kube-proxy's version names the Kubernetes version it is built for; another add-on's version was chosen for
/// the `kubernetes_version` state records, which a pinned add-on keeps while the cluster moves.
fn addon(r: &ResourceState, plane: &str) -> Option<String> {
    let name = r.attributes.get("addon_name").and_then(Value::as_str)?;
    let pinned = r.attributes.get("addon_version").and_then(Value::as_str);
    let installed = r.outputs.get("version").and_then(Value::as_str).or(pinned)?;
    let made_for = if name == "kube-proxy" {
        installed.to_string()
    } else if pinned.is_none() {
        r.attributes.get("kubernetes_version").and_then(Value::as_str)?.to_string()
    } else {
        return None;
    };
    let lag = behind(plane, &made_for).filter(|&n| n > 0)?;
    let fix = if pinned.is_some() {
        format!("pin addons.{name}.version to one EKS lists for {plane} (`aws eks describe-addon-versions --addon-name {name} --kubernetes-version {plane}`), or remove the pin for EKS's default")
    } else {
        "run kbp apply: an unpinned add-on moves to the default of the cluster's version".to_string()
    };
    Some(format!(
        "{} runs {installed}, made for Kubernetes {}, {lag} minor version{} behind the control plane ({plane})\n  hint: {fix}",
        r.address,
        crate::blueprint::versions::minor(&made_for).map_or(made_for.clone(), |(a, b)| format!("{a}.{b}")),
        if lag == 1 { "" } else { "s" }
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::graph::Address;

    fn ready(address: &str, kind: &str, attrs: Value, outputs: Value) -> ResourceState {
        ResourceState {
            address: address.parse::<Address>().unwrap(),
            kind: kind.into(),
            id: Some("id".into()),
            status: Status::Ready,
            attributes: attrs.as_object().cloned().unwrap(),
            outputs: outputs.as_object().cloned().unwrap(),
            dependencies: vec![],
            imported: false,
            address_tag: crate::state::AddressTag::Path,
        }
    }

    #[test]
    fn what_lags_the_control_plane_is_named_with_what_to_do() {
        let mut state = State::new("demo", "us-west-2");
        for r in [
            ready("eks_cluster.main", kinds::EKS_CLUSTER, json!({"version": "1.34"}), json!({})),
            ready("eks_node_group.controller", kinds::EKS_NODE_GROUP, json!({"version": "1.33"}), json!({})),
            ready(
                "eks_addon.main[\"kube-proxy\"]",
                kinds::EKS_ADDON,
                json!({"addon_name": "kube-proxy", "addon_version": "v1.32.9-eksbuild.2", "kubernetes_version": "1.34"}),
                json!({"version": "v1.32.9-eksbuild.2"}),
            ),
            ready(
                "eks_addon.main[\"coredns\"]",
                kinds::EKS_ADDON,
                json!({"addon_name": "coredns", "addon_version": null, "kubernetes_version": "1.34"}),
                json!({"version": "v1.12.4-eksbuild.1"}),
            ),
        ] {
            state.resources.insert(r.address.clone(), r);
        }
        let said = warnings(&state);
        assert_eq!(said.len(), 2, "{said:#?}");
        assert!(said.iter().any(|w| w.starts_with("eks_node_group.controller runs Kubernetes 1.33, 1 minor version behind the control plane (1.34); EKS allows 3")), "{said:#?}");
        assert!(
            said.iter().any(|w| w.contains("kube-proxy")
                && w.contains("made for Kubernetes 1.32, 2 minor versions behind")
                && w.contains("pin addons.kube-proxy.version")),
            "{said:#?}"
        );

        let at = |s: &mut State, v: &str| {
            s.resources
                .get_mut(&"eks_node_group.controller".parse().unwrap())
                .unwrap()
                .attributes
                .insert("version".into(), json!(v))
        };
        at(&mut state, "1.30");
        assert!(warnings(&state).iter().any(|w| w.contains("more than the 3 EKS allows")));
        at(&mut state, "1.34");
        assert_eq!(warnings(&state).len(), 1, "only kube-proxy lags now");
    }
}

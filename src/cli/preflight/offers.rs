//! Preflight: what the region and the account must offer the stack. EKS offers the blueprint's Kubernetes
//! version for new clusters (DescribeClusterVersions) and each add-on, at its pinned version if it has one, for
//! that Kubernetes version (DescribeAddonVersions); and the account's EC2 Spot service-linked role exists, unless
//! the stack makes it (`karpenter.spot`), since Karpenter cannot create it and its Spot launches would fail.
//!
//! A cluster or add-on that state holds with the version the blueprint wants is not asked about: nothing about
//! it is created or changed. A cluster state holds at another version must get there the way EKS upgrades:
//! one minor version up per update, never down ([`upgrade_path`]).

use futures::future::join_all;

use super::{unchanged, Problem};
use crate::blueprint::versions::minor;
use crate::blueprint::Blueprint;
use crate::graph::kinds;
use crate::graph::ResourceGraph;
use crate::providers::Context;
use crate::state::{State, Status};

const SPOT_ROLE: &str = "AWSServiceRoleForEC2Spot";
/// How many offered versions a hint names.
const SHOWN: usize = 6;

pub(super) async fn check(cx: &Context, bp: &Blueprint, graph: &ResourceGraph, state: &State) -> Vec<Problem> {
    let (mut found, spot) = tokio::join!(kubernetes(cx, bp, graph, state), spot_role(cx, bp, graph));
    found.extend(spot);
    found
}

async fn kubernetes(cx: &Context, bp: &Blueprint, graph: &ResourceGraph, state: &State) -> Vec<Problem> {
    let version = bp.cluster.version.as_str();
    let held = graph
        .resources()
        .filter(|r| r.kind == kinds::EKS_CLUSTER)
        .filter_map(|r| state.get(&r.address).filter(|s| s.status == Status::Ready))
        .find_map(|s| s.attributes.get("version").and_then(|v| v.as_str()));
    if let Some(problem) = held.and_then(|from| upgrade_path(from, version)) {
        return vec![problem];
    }
    let of_kind = |kind: &'static str| graph.resources().filter(move |r| r.kind == kind);
    let cluster_unchanged = of_kind(kinds::EKS_CLUSTER).all(|r| unchanged(state, r, "version"));
    let addons: Vec<(&str, Option<&str>)> = of_kind(kinds::EKS_ADDON)
        .filter(|r| !(cluster_unchanged && unchanged(state, r, "addon_version")))
        .filter_map(|r| {
            let name = r.attrs.get("addon_name")?.as_str()?;
            Some((name, r.attrs.get("addon_version").and_then(|v| v.as_str())))
        })
        .collect();
    // The add-ons are asked about at the same time as the cluster versions; their answers only count if EKS
    // offers the version at all.
    let (offered, addon_problems) = tokio::join!(
        async {
            if cluster_unchanged {
                Ok(None)
            } else {
                crate::providers::eks::cluster::offered_versions(cx).await.map(Some)
            }
        },
        join_all(addons.iter().map(|(name, pinned)| addon(cx, version, name, *pinned))),
    );
    match offered {
        Err(e) => {
            let region = &cx.region;
            let otherwise = format!(
                "EKS may not be offered in {region}, or eks.{region} cannot be reached from here (a proxy, a VPC \
                 endpoint, a firewall); the AWS Regional Services list says where EKS is"
            );
            vec![Problem::call(
                &format!("cannot ask EKS in region {region} which Kubernetes versions it offers"),
                e,
                &otherwise,
            )]
        }
        Ok(Some(offered)) if !offered.iter().any(|v| v == version) => vec![Problem::new(
            format!("EKS in region {} does not offer Kubernetes {version} for new clusters", cx.region),
            format!("set cluster.version to one it offers: {}", shown(&offered)),
        )],
        Ok(_) => addon_problems.into_iter().flatten().collect(),
    }
}

/// Why a cluster at Kubernetes `from` cannot be taken to `to` by one update, with the steps that can: EKS
/// updates a cluster one minor version up at a time and never down.
fn upgrade_path(from: &str, to: &str) -> Option<Problem> {
    let (f, t) = (minor(from)?, minor(to)?);
    if t == f || (t.0 == f.0 && t.1 == f.1 + 1) {
        return None;
    }
    if t < f {
        return Some(Problem::new(
            format!("the cluster runs Kubernetes {from}, and cluster.version {to} is older: EKS never takes a cluster down a version"),
            format!("set cluster.version back to \"{from}\"; to run {to}, make a new cluster (another cluster.name) and move the workloads"),
        ));
    }
    if t.0 != f.0 {
        return Some(Problem::new(
            format!("EKS updates a cluster one minor version at a time: {from} → {to} is not one"),
            format!("upgrade one minor version per apply, starting with cluster.version = \"{}.{}\"", f.0, f.1 + 1),
        ));
    }
    let steps: Vec<String> = (f.1 + 1..=t.1).map(|m| format!("{}.{m}", f.0)).collect();
    let skipped = steps[..steps.len() - 1].join(", ");
    let applies = steps.iter().map(|s| format!("cluster.version = \"{s}\"")).collect::<Vec<_>>().join(", then ");
    Some(Problem::new(
        format!("EKS updates a cluster one minor version at a time: {from} → {to} skips {skipped}"),
        format!("upgrade in steps, one apply each: {applies}"),
    ))
}

/// A problem if EKS offers add-on `name` for Kubernetes `version` not at all, or not at `pinned`.
async fn addon(cx: &Context, version: &str, name: &str, pinned: Option<&str>) -> Option<Problem> {
    let listed = crate::providers::eks::addon::offered_versions(cx, name, version).await;
    let offered = match listed {
        Ok(offered) => offered,
        Err(e) => {
            let what = format!("cannot ask EKS which versions of add-on {name} it offers for Kubernetes {version}");
            return Some(Problem::call(&what, e, "check the network path to EKS and the permissions kbp runs with"));
        }
    };
    if offered.is_empty() {
        return Some(Problem::new(
            format!("EKS in region {} offers no add-on {name} for Kubernetes {version}", cx.region),
            format!("leave the add-on out (addons.{name}.enabled = false), or choose another cluster.version"),
        ));
    }
    let pinned = pinned.filter(|p| !offered.iter().any(|o| o == p))?;
    Some(Problem::new(
        format!("EKS offers add-on {name} for Kubernetes {version}, but not at version {pinned}"),
        format!("pin one it offers ({}), or leave addons.{name}.version out for EKS's default", shown(&offered)),
    ))
}

/// Karpenter launches Spot capacity only if the account has the EC2 Spot service-linked role, and cannot make it;
/// a stack whose node pools are all on-demand does not need it.
async fn spot_role(cx: &Context, bp: &Blueprint, graph: &ResourceGraph) -> Option<Problem> {
    if !bp.node_pools.values().any(crate::blueprint::allows_spot) {
        return None;
    }
    let made_here = graph.resources().any(|r| {
        r.kind == kinds::IAM_SERVICE_LINKED_ROLE
            && crate::providers::spec::parse::<kinds::iam_service_linked_role::ServiceLinkedRole>(&r.kind, &r.attrs)
                .is_ok_and(|s| s.aws_service_name == "spot.amazonaws.com")
    });
    if made_here {
        return None;
    }
    match crate::providers::iam::service_linked_role::exists(cx, SPOT_ROLE).await {
        Ok(true) => None,
        Ok(false) => Some(Problem::new(
            format!("node pools may launch Spot capacity, but the account has no EC2 Spot service-linked role ({SPOT_ROLE}) and karpenter.spot = false does not make it"),
            "set karpenter.spot = true, or create it once for the account: \
             `aws iam create-service-linked-role --aws-service-name spot.amazonaws.com`",
        )),
        Err(e) => Some(Problem::call(
            &format!("cannot check whether the service-linked role {SPOT_ROLE} exists"),
            e,
            "check the permissions kbp runs with (iam:GetRole)",
        )),
    }
}

/// The first few of `versions`, for a hint.
fn shown(versions: &[String]) -> String {
    let mut text = versions.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
    if versions.len() > SHOWN {
        text.push_str(", …");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_moves_one_minor_version_up_at_a_time_and_never_down() {
        assert!(upgrade_path("1.33", "1.33").is_none());
        assert!(upgrade_path("1.33", "1.34").is_none());
        let said = |p: Problem| format!("{}\n  hint: {}", p.message, p.hint);
        let skip = said(upgrade_path("1.32", "1.35").expect("a skip"));
        assert!(skip.contains("1.32 → 1.35 skips 1.33, 1.34"), "{skip}");
        assert!(
            skip.contains(
                "cluster.version = \"1.33\", then cluster.version = \"1.34\", then cluster.version = \"1.35\""
            ),
            "{skip}"
        );
        let down = said(upgrade_path("1.34", "1.33").expect("a downgrade"));
        assert!(down.contains("never takes a cluster down") && down.contains("back to \"1.34\""), "{down}");
        assert!(upgrade_path("1.34", "2.0").is_some(), "a major version is no single step");
        assert!(upgrade_path("latest", "1.34").is_none(), "not a version: left to EKS's own check");
    }
}

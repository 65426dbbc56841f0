//! Moving what runs on a managed node group's nodes elsewhere before kbp deletes the group, in a
//! create-before-destroy replacement: every node of the group is cordoned, then each pod on them is evicted
//! through the Eviction API, which honours its PodDisruptionBudget (the Karpenter controller's allows one pod
//! down at a time), until none is left but DaemonSet and mirror pods. The pods' controllers recreate them on the
//! successor's nodes; the group is deleted only then, so the controller keeps an available replica throughout.
//! A budget that never allows the eviction fails the replacement with the pods it holds, the old group intact.

use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, EvictParams, ListParams};

use super::lifecycle::{Target, Tracked};
use super::vanished;
use crate::access::cluster::Cluster;
use crate::providers::kubernetes::session::{error, ObjectRef};
use crate::providers::wait::{Budget, Poll, Wait};
use crate::providers::{Context, ProviderError, Result};

/// EKS itself gives a node group update's pod evictions 15 minutes before it gives up.
const BUDGET: Budget = Budget::long_minutes(15);
const NODEGROUP_LABEL: &str = "eks.amazonaws.com/nodegroup";

/// Cordons the nodes of node group `nodegroup` of `cluster` and evicts their pods, waiting until none is left.
pub(crate) async fn drain(cx: &Context, cluster: &str, nodegroup: &str) -> Result<()> {
    let client = connect(cx, cluster).await?;
    let nodes: Api<Node> = Api::all(client.clone());
    let selector = ListParams::default().labels(&format!("{NODEGROUP_LABEL}={nodegroup}"));
    let node_ref = |name: &str| ObjectRef::new("v1", "Node", None, name);
    let listed = nodes.list(&selector).await.map_err(|e| error("kubernetes:list", &node_ref(nodegroup), e))?;
    let names: Vec<String> = listed.items.iter().filter_map(|n| n.metadata.name.clone()).collect();
    for name in &names {
        nodes.cordon(name).await.map_err(|e| error("kubernetes:cordon", &node_ref(name), e))?;
    }
    let what = format!("the pods of node group {nodegroup} to move to its successor");
    Wait::new("kubernetes:evict", &what, BUDGET)
        .reporting(cx, None)
        .until(|| async {
            // As `kubectl drain`: done when the pods are gone, not when their eviction is granted (a pod stops
            // within its grace period, and is then removed by the kubelet).
            let left = remaining(&client, &names).await?;
            if left.is_empty() {
                return Ok(Poll::Done(()));
            }
            let mut held = Vec::new();
            for pod in left.iter().filter(|p| p.metadata.deletion_timestamp.is_none()) {
                if let Some(name) = evict(&client, pod).await? {
                    held.push(name);
                }
            }
            let waiting = if held.is_empty() {
                format!("{} pods leaving", left.len())
            } else {
                format!("{} pods leaving; disruption budgets hold {}", left.len(), held.join(", "))
            };
            Ok(Poll::Pending(waiting))
        })
        .await
        .map_err(|e| {
            e.with_hint(format!(
                "the old node group {nodegroup} is kept (cordoned): let the pods that remain be evicted (check their \
                 PodDisruptionBudgets and that the new group's nodes can run them), then run kbp apply again"
            ))
        })
}

/// The cluster's endpoint and CA, from EKS, and a client for it.
async fn connect(cx: &Context, cluster: &str) -> Result<kube::Client> {
    let c = aws_sdk_eks::types::Cluster::describe(cx, Target::cluster(cluster))
        .await?
        .ok_or_else(|| vanished("eks:DescribeCluster", &format!("cluster {cluster}")))?;
    let (endpoint, ca) = (c.endpoint(), c.certificate_authority().and_then(|a| a.data()));
    let (Some(endpoint), Some(ca)) = (endpoint, ca) else {
        return Err(ProviderError::new("eks:DescribeCluster", "", format!("cluster {cluster} has no endpoint yet")));
    };
    let access =
        Cluster { name: cluster.into(), region: cx.region.clone(), endpoint: endpoint.into(), ca_data: ca.into() };
    cx.kube(&access).await
}

/// The pods on `nodes` an eviction moves, or moved and still stopping: not a DaemonSet's (it would come back on
/// the same node), not a static pod's mirror, not finished.
async fn remaining(client: &kube::Client, nodes: &[String]) -> Result<Vec<Pod>> {
    let pods: Api<Pod> = Api::all(client.clone());
    let mut out = Vec::new();
    for node in nodes {
        let on = ListParams::default().fields(&format!("spec.nodeName={node}"));
        let listed =
            pods.list(&on).await.map_err(|e| error("kubernetes:list", &ObjectRef::new("v1", "Pod", None, node), e))?;
        out.extend(listed.items.into_iter().filter(moves));
    }
    Ok(out)
}

fn moves(p: &Pod) -> bool {
    let m = &p.metadata;
    let daemon = m.owner_references.iter().flatten().any(|o| o.kind == "DaemonSet");
    let mirror = m.annotations.as_ref().is_some_and(|a| a.contains_key("kubernetes.io/config.mirror"));
    let finished =
        p.status.as_ref().and_then(|s| s.phase.as_deref()).is_some_and(|ph| ph == "Succeeded" || ph == "Failed");
    !(daemon || mirror || finished)
}

/// Asks for `pod`'s eviction: None when granted (or the pod is gone), its name when a disruption budget refuses
/// it for now (HTTP 429).
async fn evict(client: &kube::Client, pod: &Pod) -> Result<Option<String>> {
    let (Some(ns), Some(name)) = (pod.metadata.namespace.as_deref(), pod.metadata.name.as_deref()) else {
        return Ok(None);
    };
    let api: Api<Pod> = Api::namespaced(client.clone(), ns);
    match api.evict(name, &EvictParams::default()).await {
        Ok(_) => Ok(None),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(None),
        Err(kube::Error::Api(s)) if s.code == 429 => Ok(Some(format!("{ns}/{name}"))),
        Err(e) => Err(error("kubernetes:evict", &ObjectRef::new("v1", "Pod", Some(ns), name), e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(value: serde_json::Value) -> Pod {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn only_pods_an_eviction_moves_are_evicted() {
        let meta = |extra: serde_json::Value| {
            let mut m = serde_json::json!({"name": "p", "namespace": "karpenter"});
            m.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            m
        };
        assert!(moves(&pod(serde_json::json!({"metadata": meta(serde_json::json!({}))}))));
        let daemon = serde_json::json!({"ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "kube-proxy", "uid": "u"}]});
        assert!(!moves(&pod(serde_json::json!({"metadata": meta(daemon)}))));
        let mirror = serde_json::json!({"annotations": {"kubernetes.io/config.mirror": "x"}});
        assert!(!moves(&pod(serde_json::json!({"metadata": meta(mirror)}))));
        let leaving = serde_json::json!({"deletionTimestamp": "2026-12-06T00:00:00Z"});
        assert!(moves(&pod(serde_json::json!({"metadata": meta(leaving)}))), "waited for until gone");
        assert!(!moves(&pod(
            serde_json::json!({"metadata": meta(serde_json::json!({})), "status": {"phase": "Succeeded"}})
        )));
    }
}

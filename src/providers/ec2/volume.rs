//! `aws_ebs_volume`: a volume the EBS CSI driver (or the in-tree provisioner) made for a PersistentVolumeClaim.
//! Its reclaim policy would have deleted it with the claim; a cluster torn down with claims in it leaves it
//! behind, so teardown finds it by the cluster's tags and deletes it. kbp never creates one.
//!
//! AWS deletes only a volume that is `available`. One still attached to a node that is being terminated is
//! detached by EC2 within minutes, which delete waits for; one attached to an instance that stays (running or
//! stopped) is refused with what to do, never detached by kbp from under a running workload.

use std::collections::BTreeMap;

use async_trait::async_trait;
use aws_sdk_ec2::types::{Filter, InstanceStateName, Volume as AwsVolume, VolumeAttachmentState, VolumeState};
use serde_json::json;

use super::{describe, object};
use crate::graph::{kinds, Attrs};
use crate::providers::attrs::absent_if_gone;
use crate::providers::delete_only::Leftover;
use crate::providers::send::send;
use crate::providers::wait::{until, Budget, Poll};
use crate::providers::{Context, DiscoveryScope, Found, Observed, ProviderError, Result};

pub(crate) struct Volume;

/// A terminating node releases its volumes within a few minutes; a volume is gone seconds after DeleteVolume.
const DELETE_BUDGET: Budget = Budget::minutes(10);

const CSI: &str = "ebs.csi.aws.com/cluster";
const PVC_NAME: &str = "kubernetes.io/created-for/pvc/name";
const PVC_NAMESPACE: &str = "kubernetes.io/created-for/pvc/namespace";
const LEGACY_CLUSTER: &str = "KubernetesCluster";

#[async_trait]
impl Leftover for Volume {
    const KIND: &'static str = kinds::EBS_VOLUME;
    const MADE_BY: &'static str = "the EBS CSI driver (for a PersistentVolumeClaim)";

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let Some(v) = describe::one::<AwsVolume>(cx, id, &[]).await? else { return Ok(None) };
        if v.state() == Some(&VolumeState::Deleted) {
            return Ok(None);
        }
        Ok(Some(Observed { attrs: attrs(&v), outputs: super::id_output(id) }))
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        until("ec2:DescribeVolumes", &format!("volume {id} to be deleted"), DELETE_BUDGET, || async {
            let Some(v) = describe::one::<AwsVolume>(cx, id, &[]).await? else { return Ok(Poll::Done(())) };
            match v.state() {
                None | Some(VolumeState::Deleted) => Ok(Poll::Done(())),
                Some(VolumeState::Available | VolumeState::Error) => {
                    let r = send(cx, "ec2:DeleteVolume", &[], || cx.ec2().delete_volume().volume_id(id).send()).await;
                    match r {
                        // The next look sees it `deleting` or gone.
                        Ok(_) => Ok(Poll::Pending("deleting".to_string())),
                        Err(e) if e.is_not_found() => Ok(Poll::Done(())),
                        // Attached again since the look (a pod scheduled at the last moment): look again.
                        Err(e) if e.is("VolumeInUse") => Ok(Poll::Pending(e.message)),
                        Err(e) => Err(e),
                    }
                }
                Some(VolumeState::InUse) => match attached_to_a_staying_instance(cx, &v).await? {
                    Some(refusal) => Err(refusal),
                    None => Ok(Poll::Pending(format!("attached to {}, which is going", instances(&v).join(", ")))),
                },
                Some(other) => Ok(Poll::Pending(other.as_str().to_string())),
            }
        })
        .await
    }

    async fn discover(&self, cx: &Context, scope: &DiscoveryScope<'_>) -> Result<Vec<Found>> {
        let queries = [
            Filter::builder().name(format!("tag:kubernetes.io/cluster/{}", scope.cluster)).values("owned").build(),
            Filter::builder().name(format!("tag:{LEGACY_CLUSTER}")).values(scope.cluster).build(),
        ];
        let mut seen = BTreeMap::new();
        for f in queries {
            for v in describe::all::<AwsVolume>(cx, vec![f]).await? {
                if let Some(id) = v.volume_id() {
                    seen.entry(id.to_string()).or_insert(v);
                }
            }
        }
        let mut found = Vec::new();
        for (id, v) in seen {
            if scope.keep.contains(&id) || v.state() == Some(&VolumeState::Deleted) {
                continue;
            }
            let tags = tag_map(v.tags());
            // Checked again: a tag filter an implementation ignores must not widen the match.
            let Some(why) = claim(&tags, scope.cluster) else { continue };
            found.push(Found {
                kind: Self::KIND,
                id,
                name: Found::tag_name(&tags),
                detail: detail(&v, &why, &tags),
                uses: Vec::new(),
                after: instances(&v),
                attrs: attrs(&v),
            });
        }
        Ok(found)
    }
}

/// Why a volume with `tags` is a claim's volume of `cluster`, or `None`. It must name the cluster (the CSI
/// driver does with `--k8s-tag-cluster-id`, the in-tree provisioner always) and be a claim's (the CSI driver's
/// own tag, or the claim's name); a node's root volume carries the cluster tag but neither of those.
fn claim(tags: &BTreeMap<String, String>, cluster: &str) -> Option<String> {
    let cluster_key = format!("kubernetes.io/cluster/{cluster}");
    let named = if tags.get(&cluster_key).is_some_and(|v| v == "owned") {
        format!("{cluster_key}=owned")
    } else if tags.get(LEGACY_CLUSTER).is_some_and(|v| v == cluster) {
        format!("{LEGACY_CLUSTER}={cluster}")
    } else {
        return None;
    };
    if tags.get(CSI).is_some_and(|v| v == "true") {
        Some(format!("tagged {CSI}=true and {named}"))
    } else if tags.contains_key(PVC_NAME) {
        Some(format!("tagged {PVC_NAME} and {named}"))
    } else {
        None
    }
}

fn detail(v: &AwsVolume, why: &str, tags: &BTreeMap<String, String>) -> String {
    let mut parts = vec![v.state().map_or("?", |s| s.as_str()).to_string()];
    parts.push(format!(
        "{} GiB {}",
        v.size().map_or("?".to_string(), |s| s.to_string()),
        v.volume_type().map_or("?", |t| t.as_str())
    ));
    let attached = instances(v);
    if !attached.is_empty() {
        parts.push(format!("attached to {}", attached.join(", ")));
    }
    parts.push(why.to_string());
    if let Some(name) = tags.get(PVC_NAME) {
        let ns = tags.get(PVC_NAMESPACE).map_or(String::new(), |n| format!("{n}/"));
        parts.push(format!("for claim {ns}{name}"));
    }
    parts.join(", ")
}

/// The instances the volume is attached to (several with multi-attach).
fn instances(v: &AwsVolume) -> Vec<String> {
    v.attachments().iter().filter_map(|a| a.instance_id().map(str::to_string)).collect()
}

/// `None` when every attachment of `v` is on its way out (detaching, or its instance is shutting down or gone),
/// else the refusal to return: kbp does not pull a volume from an instance that stays.
async fn attached_to_a_staying_instance(cx: &Context, v: &AwsVolume) -> Result<Option<ProviderError>> {
    let id = v.volume_id().unwrap_or("?");
    for a in v.attachments() {
        if matches!(a.state(), Some(VolumeAttachmentState::Detaching | VolumeAttachmentState::Detached)) {
            continue;
        }
        let Some(instance) = a.instance_id() else { continue };
        let state = instance_state(cx, instance).await?;
        if matches!(state, None | Some(InstanceStateName::ShuttingDown | InstanceStateName::Terminated)) {
            continue;
        }
        let state = state.as_ref().map_or("?", |s| s.as_str());
        return Ok(Some(
            ProviderError::new(
                "ec2:DeleteVolume",
                "VolumeInUse",
                format!("volume {id} is attached to instance {instance}, which is {state}"),
            )
            .with_hint(format!(
                "kbp deletes a volume only once its node is gone: terminate {instance} (teardown does for the nodes it \
                 finds) or detach the volume (`aws ec2 detach-volume --volume-id {id}`), then run kbp again"
            )),
        ));
    }
    Ok(None)
}

/// The state of `instance`, `None` when EC2 no longer knows it.
async fn instance_state(cx: &Context, instance: &str) -> Result<Option<InstanceStateName>> {
    let r =
        send(cx, "ec2:DescribeInstances", &[], || cx.ec2().describe_instances().instance_ids(instance).send()).await;
    Ok(absent_if_gone(r)?.and_then(|out| {
        let found = out.reservations().iter().flat_map(|r| r.instances()).find(|i| i.instance_id() == Some(instance));
        found.and_then(|i| i.state()?.name().cloned())
    }))
}

fn tag_map(tags: &[aws_sdk_ec2::types::Tag]) -> BTreeMap<String, String> {
    tags.iter().filter_map(|t| Some((t.key()?.to_string(), t.value().unwrap_or_default().to_string()))).collect()
}

fn attrs(v: &AwsVolume) -> Attrs {
    object(json!({
        "availability_zone": v.availability_zone(),
        "size": v.size(),
        "type": v.volume_type().map(|t| t.as_str()),
        "instance_ids": instances(v),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::providers::tags::pairs as tags;

    #[test]
    fn a_csi_volume_counts_with_either_cluster_tag() {
        let owned = tags(&[(CSI, "true"), ("kubernetes.io/cluster/sbx", "owned")]);
        assert_eq!(
            claim(&owned, "sbx").as_deref(),
            Some("tagged ebs.csi.aws.com/cluster=true and kubernetes.io/cluster/sbx=owned")
        );
        let legacy = tags(&[(CSI, "true"), (LEGACY_CLUSTER, "sbx")]);
        assert_eq!(
            claim(&legacy, "sbx").as_deref(),
            Some("tagged ebs.csi.aws.com/cluster=true and KubernetesCluster=sbx")
        );
        assert_eq!(claim(&legacy, "other"), None);
    }

    #[test]
    fn the_cluster_must_be_named_and_the_volume_be_a_claims() {
        assert_eq!(claim(&tags(&[(CSI, "true")]), "sbx"), None, "no cluster identity");
        assert_eq!(claim(&tags(&[("kubernetes.io/cluster/sbx", "owned")]), "sbx"), None, "a node's root volume");
        assert_eq!(claim(&tags(&[(CSI, "true"), ("kubernetes.io/cluster/sbx", "shared")]), "sbx"), None);
        assert_eq!(claim(&tags(&[(CSI, "false"), ("kubernetes.io/cluster/sbx", "owned")]), "sbx"), None);
        let in_tree = tags(&[(PVC_NAME, "data"), ("kubernetes.io/cluster/sbx", "owned")]);
        assert!(claim(&in_tree, "sbx").is_some());
    }

    #[test]
    fn detail_says_state_size_attachment_and_claim() {
        let v = AwsVolume::builder()
            .state(VolumeState::InUse)
            .size(8)
            .volume_type(aws_sdk_ec2::types::VolumeType::Gp3)
            .attachments(aws_sdk_ec2::types::VolumeAttachment::builder().instance_id("i-1").build())
            .build();
        let t = tags(&[(PVC_NAME, "data"), (PVC_NAMESPACE, "db")]);
        assert_eq!(detail(&v, "tagged x", &t), "in-use, 8 GiB gp3, attached to i-1, tagged x, for claim db/data");
    }
}

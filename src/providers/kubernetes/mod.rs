//! In-cluster providers: Karpenter's CRDs, its controller, and the blueprint's EC2NodeClasses and NodePools,
//! applied with server-side apply over the cluster's API (`session`). One file per kind; the two Karpenter
//! custom kinds share `custom_object`.
//!
//! Every resource carries a `cluster` attribute (name, endpoint, CA of the EKS cluster) that says where it
//! lives; it is force-new, since objects of a replaced cluster are gone with it.

pub(crate) mod controller;
pub(crate) mod crds;
pub(crate) mod custom_object;
pub mod node_claims;
pub mod session;

use async_trait::async_trait;

use super::{Applied, Context, Descriptor, Desired, Observed, Provider};
use crate::graph::Attrs;
use crate::providers::Result;

pub use controller::ChartBundle;
pub use crds::CrdBundle;
pub use session::FIELD_MANAGER;

/// What every in-cluster provider does in a destroy when the cluster does not answer (deleted outside kbp,
/// its endpoint closed, kbp's access removed): its objects are as good as gone, since the cluster goes next
/// and the teardown sweep removes what Karpenter launched by its tags. A refresh reports them gone, a delete
/// succeeds with a warning. Outside a destroy, nothing changes.
pub(crate) struct InCluster<P>(pub(crate) P);

#[async_trait]
impl<P: Provider> Provider for InCluster<P> {
    /// The object's, which says it goes with the cluster it is in.
    fn descriptor(&self) -> Descriptor {
        self.0.descriptor()
    }

    async fn read(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<Option<Observed>> {
        match self.0.read(cx, id, prior).await {
            Err(e) if session::cluster_gone_in_destroy(cx, &e) => Ok(None),
            other => other,
        }
    }

    async fn read_many(&self, cx: &Context, items: &[(String, Attrs)]) -> Result<Vec<Option<Observed>>> {
        match self.0.read_many(cx, items).await {
            Err(e) if session::cluster_gone_in_destroy(cx, &e) => Ok(items.iter().map(|_| None).collect()),
            other => other,
        }
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        self.0.create(cx, desired).await
    }

    async fn update(&self, cx: &Context, id: &str, prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        self.0.update(cx, id, prior, desired).await
    }

    async fn delete(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<()> {
        match self.0.delete(cx, id, prior).await {
            Err(e) if session::cluster_gone_in_destroy(cx, &e) => {
                tracing::warn!("{} {id}: the cluster does not answer ({e}); its objects go with it", self.kind());
                Ok(())
            }
            other => other,
        }
    }
}

/// SHA-256 of `value` as JSON, in hex: what a saved plan's chart and CRD bundles record of what they carry.
fn json_digest(value: &impl serde::Serialize) -> String {
    use sha2::Digest as _;
    let bytes = serde_json::to_vec(value).expect("invariant: the bundles' maps and JSON values serialize");
    sha2::Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether what a bundle carries, of digest `now`, is still what its `recorded` digest was taken of; else
/// `mismatch` ("its chart does not match its digest") with both digests.
fn unchanged(recorded: &str, now: &str, mismatch: &str) -> std::result::Result<(), String> {
    if now == recorded {
        Ok(())
    } else {
        Err(format!("{mismatch} (sha256 {recorded} recorded, {now} found)"))
    }
}

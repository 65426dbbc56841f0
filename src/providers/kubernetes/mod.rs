//! In-cluster providers: Karpenter's CRDs, its controller, and the blueprint's EC2NodeClasses and NodePools,
//! applied with server-side apply over the cluster's API (`session`). One file per kind; the two Karpenter
//! custom kinds share `custom_object`.
//!
//! Every resource carries a `cluster` attribute (name, endpoint, CA of the EKS cluster) that says where it
//! lives; it is force-new, since objects of a replaced cluster are gone with it.

mod controller;
mod crds;
mod custom_object;
mod session;

use super::Registry;

pub use crds::load as load_crds;
pub use session::FIELD_MANAGER;

pub fn register(r: &mut Registry) {
    r.add(crds::KarpenterCrds);
    r.add(controller::Controller);
    r.add(custom_object::node_class());
    r.add(custom_object::node_pool());
}

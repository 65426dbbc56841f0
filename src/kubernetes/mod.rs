//! What kbp puts into a cluster, made and checked without one: the Karpenter controller's objects, Karpenter's
//! chart rendered with the stack's values (`manifests`, with `crate::helm`), the chart and its CRDs from the
//! release's registry or a local directory (`oci`), and every one of those objects checked the way the API server would check it (`validate`: custom
//! objects against the CRD schemas in `openapi`, built-in kinds against their API types in `builtin`, with the
//! API machinery's shared rules for names, metadata and quantities in `names`, `meta` and `quantity`).
//!
//! Talks to no cluster: authenticating to one is `access`, applying objects and waiting on them is
//! `providers::kubernetes`, which use this module. Knows nothing of plans or state.

pub mod builtin;
pub mod manifests;
pub(crate) mod meta;
pub(crate) mod names;
pub mod oci;
pub mod openapi;
pub(crate) mod quantity;
pub mod validate;
pub mod violation;

#[cfg(test)]
pub(crate) mod fixtures;

//! IAM providers: the roles, policies and instance profiles an EKS cluster and Karpenter need, the cluster's OIDC
//! provider for IRSA, and the EC2 Spot service-linked role. One file per kind. Shared: `common` (reading an
//! entity by its deterministic name or ARN, with NoSuchEntity as gone; the ID and outputs of a policy hung on a
//! role, inline or attached; removals that succeed when the target is gone), `policy_doc` (how policy documents
//! are written, read and compared), `tagging` (the tag reconcile all taggable kinds share) and `details` (the
//! account's roles and policies in one answer, which the batched reads of four kinds share).
//!
//! IAM is global and eventually consistent: what was just created may be invisible to the next call for a few
//! seconds, so calls that depend on a fresh resource retry the codes that mean "not visible yet".

pub(crate) mod common;
pub(crate) mod details;
pub mod instance_profile;
pub mod openid_connect_provider;
pub mod policy;
pub mod policy_doc;
pub mod role;
pub mod role_policy;
pub mod role_policy_attachment;
pub mod service_linked_role;
mod tagging;

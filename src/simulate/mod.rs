//! What Karpenter would do with a blueprint's NodePools for a workload, computed offline (`kbp simulate`, in
//! progress): pure functions from a catalog of instance types, the blueprint and the pods to decisions, with no
//! AWS or Kubernetes call.
//!
//! Built so far, the rules a pod and a NodePool are matched by:
//! - [`catalog`]: the labels Karpenter derives for a node of an instance type and offering (family, category,
//!   generation, size, CPUs, memory, architecture, GPUs, zone, capacity type);
//! - [`requirements`]: a requirement (`In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt`, and Karpenter
//!   v1.9's `Gte`, `Lte`) against a node's labels, as the scheduler and Karpenter read them;
//! - [`taints`]: whether a pod's tolerations let it onto a node with a pool's taints, and which taint keeps
//!   it off.

pub mod catalog;
pub mod requirements;
pub mod taints;

/// A node's labels (the well-known ones an instance type gives it, plus the pool's own), by key.
pub type Labels = std::collections::BTreeMap<String, String>;

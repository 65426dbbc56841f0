//! `aws_subnet_tags`: the attributes the compiler emits for the tags kbp puts on a subnet it does not own and
//! their provider reads ([`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Tags on the existing subnet `R` names (its ID); the subnet's other tags are left as they are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubnetTags<R> {
    /// The subnet the tags go on: the existing subnet's `id` output.
    pub subnet_id: R,
    /// Every key kbp manages on the subnet and its value: Karpenter's discovery tag, the load balancers' role
    /// tag, the cluster's `shared` tag and the blueprint's tier tags. Never a tag of kbp's own (`kbp:…`), and
    /// not `cluster.tags`: these are all destroy removes.
    pub tags: BTreeMap<String, String>,
}

//! Blueprint → [`ResourceGraph`]. One file per layer of the stack (network, IAM, EKS, interruption handling,
//! in-cluster objects); each adds its resources to a [`Builder`] and references the others' outputs by address.
//! Compiling is pure: no AWS call, the same blueprint always gives the same graph.

mod eks;
mod iam;
mod interruption;
mod karpenter_iam;
mod kubernetes;
mod network;

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::{Address, GraphError, Resource, ResourceGraph};
use crate::blueprint::Blueprint;

/// The resource kinds the compiler emits, named once.
pub mod kinds {
    pub const CALLER_IDENTITY: &str = "aws_caller_identity";
    pub const VPC: &str = "aws_vpc";
    pub const SUBNET: &str = "aws_subnet";
    pub const INTERNET_GATEWAY: &str = "aws_internet_gateway";
    pub const EIP: &str = "aws_eip";
    pub const NAT_GATEWAY: &str = "aws_nat_gateway";
    pub const ROUTE_TABLE: &str = "aws_route_table";
    pub const ROUTE: &str = "aws_route";
    pub const ROUTE_TABLE_ASSOCIATION: &str = "aws_route_table_association";
    pub const SECURITY_GROUP: &str = "aws_security_group";
    pub const IAM_ROLE: &str = "aws_iam_role";
    pub const IAM_POLICY: &str = "aws_iam_policy";
    pub const IAM_ROLE_POLICY_ATTACHMENT: &str = "aws_iam_role_policy_attachment";
    pub const IAM_SERVICE_LINKED_ROLE: &str = "aws_iam_service_linked_role";
    pub const IAM_OIDC_PROVIDER: &str = "aws_iam_openid_connect_provider";
    pub const KMS_KEY: &str = "aws_kms_key";
    pub const EKS_CLUSTER: &str = "aws_eks_cluster";
    pub const EKS_NODE_GROUP: &str = "aws_eks_node_group";
    pub const EKS_ADDON: &str = "aws_eks_addon";
    pub const EKS_ACCESS_ENTRY: &str = "aws_eks_access_entry";
    pub const EKS_POD_IDENTITY_ASSOCIATION: &str = "aws_eks_pod_identity_association";
    pub const SQS_QUEUE: &str = "aws_sqs_queue";
    pub const SQS_QUEUE_POLICY: &str = "aws_sqs_queue_policy";
    pub const EVENT_RULE: &str = "aws_eventbridge_rule";
    pub const KARPENTER_CRDS: &str = "k8s_karpenter_crds";
    pub const KARPENTER_CONTROLLER: &str = "k8s_karpenter_controller";
    pub const EC2_NODE_CLASS: &str = "k8s_ec2_node_class";
    pub const NODE_POOL: &str = "k8s_node_pool";
}

/// Compiles a validated blueprint into the graph of every resource of its stack.
pub fn compile(bp: &Blueprint) -> Result<ResourceGraph, GraphError> {
    let mut b = Builder::new(bp);
    b.add(Resource::new(b.caller(), kinds::CALLER_IDENTITY, json!({})));
    network::compile(&mut b);
    iam::compile(&mut b);
    karpenter_iam::compile(&mut b);
    eks::compile(&mut b);
    interruption::compile(&mut b);
    kubernetes::compile(&mut b);
    ResourceGraph::from_resources(b.resources)
}

/// Collects resources and knows the addresses and tags every layer shares.
pub(crate) struct Builder<'a> {
    pub bp: &'a Blueprint,
    resources: Vec<Resource>,
}

impl<'a> Builder<'a> {
    fn new(bp: &'a Blueprint) -> Self {
        Builder { bp, resources: Vec::new() }
    }

    pub fn add(&mut self, r: Resource) -> Address {
        let a = r.address.clone();
        self.resources.push(r);
        a
    }

    pub fn cluster_name(&self) -> &str {
        &self.bp.cluster.name
    }

    /// The account, partition and ARN kbp runs as.
    pub fn caller(&self) -> Address {
        Address::new("caller_identity", "current")
    }

    pub fn vpc(&self) -> Address {
        Address::new("vpc", "main")
    }

    pub fn cluster(&self) -> Address {
        Address::new("eks_cluster", "main")
    }

    /// `cluster.tags` plus `extra`, plus a `Name` tag when `name` is given.
    pub fn tags(&self, extra: &[&BTreeMap<String, String>], name: Option<&str>) -> Value {
        let mut t: BTreeMap<String, String> = self.bp.cluster.tags.clone();
        for e in extra {
            t.extend(e.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        if let Some(n) = name {
            t.insert("Name".to_string(), n.to_string());
        }
        json!(t)
    }
}

#[cfg(test)]
mod tests;

/// A hand-built blueprint for tests of the later stages, independent of the parser.
#[cfg(test)]
pub(crate) mod tests_support {
    pub(crate) use super::tests::sample;
}

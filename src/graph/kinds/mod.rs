//! The name of every resource kind kbp knows, written once: the compiler emits them, providers register under
//! them, teardown reports them. Nothing else spells a kind.
//!
//! And the typed seam between the compiler and the providers, one file per kind (`eks_cluster.rs`, …): a kind's
//! attributes as one struct both name, so a misspelt or mistyped attribute does not compile on either side. A
//! spec is generic over `R`, the type of a value that may come from another resource's output: the compiler
//! fills it with [`Input`] (a literal, or a reference the engine resolves, [`crate::graph::value::reference`]);
//! the provider reads it with the resolved type (`String`) through [`crate::providers::spec::parse`].
//! Serialized ([`attrs`]), a spec is the resource's attributes, in the order of its fields. A kind without one yet
//! emits `json!` attributes that its provider reads with its own `#[derive(Deserialize)]` struct.

pub mod ec2_node_class;
pub mod eks_access_entry;
pub mod eks_addon;
pub mod eks_cluster;
pub mod eks_node_group;
pub mod eks_pod_identity_association;
pub mod event_rule;
pub mod iam_policy;
pub mod iam_role;
pub mod in_cluster;
pub mod karpenter_controller;
pub mod karpenter_crds;
pub mod kms_key;
pub mod node_pool;
pub mod sqs_queue;
pub mod sqs_queue_policy;

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
// A network someone else owns (`[vpc] id`): kbp checks the VPC and subnets exist and never changes or deletes
// them; on the subnets it manages only the tags Karpenter and load balancers need, as resources of their own.
pub const EXISTING_VPC: &str = "aws_existing_vpc";
pub const EXISTING_SUBNET: &str = "aws_existing_subnet";
pub const SUBNET_TAGS: &str = "aws_subnet_tags";
pub const IAM_ROLE: &str = "aws_iam_role";
pub const IAM_POLICY: &str = "aws_iam_policy";
pub const IAM_ROLE_POLICY: &str = "aws_iam_role_policy";
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

// Found by teardown, never declared in a blueprint: made by Karpenter or an in-cluster controller.
pub const INSTANCE: &str = "aws_instance";
pub const LAUNCH_TEMPLATE: &str = "aws_launch_template";
pub const NETWORK_INTERFACE: &str = "aws_network_interface";
pub const IAM_INSTANCE_PROFILE: &str = "aws_iam_instance_profile";
pub const LOAD_BALANCER: &str = "aws_lb";
pub const LB_LISTENER: &str = "aws_lb_listener";
pub const LB_TARGET_GROUP: &str = "aws_lb_target_group";
pub const EBS_VOLUME: &str = "aws_ebs_volume";
pub const VPC_ENDPOINT: &str = "aws_vpc_endpoint";
pub const LOG_GROUP: &str = "aws_cloudwatch_log_group";

/// A value the compiler writes where another resource's output may go: a literal or a reference.
pub type Input = serde_json::Value;

/// An IAM path's default: the root.
fn root_path() -> String {
    "/".to_string()
}

/// A spec as a resource's attributes.
pub fn attrs(spec: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(spec).expect("invariant: a spec is plain data, and plain data serializes")
}

#[cfg(test)]
mod tests {
    use serde::de::DeserializeOwned;
    use serde::Serialize;
    use serde_json::{json, Value};

    use crate::graph::{kinds, value, Address};

    /// `attrs` (references resolved) read as the spec `T` and written back: the same attributes when the spec
    /// names every one, in the order the compiler wrote them.
    fn round_trip<T: DeserializeOwned + Serialize>(attrs: &Value) -> Result<Value, serde_json::Error> {
        serde_json::to_value(serde_json::from_value::<T>(attrs.clone())?)
    }

    /// The other half of the seam: what the compiler emits for a kind with a spec, once the engine has put in
    /// the other resources' outputs, the provider reads whole, with no attribute it would not see.
    #[test]
    fn every_shipped_blueprint_compiles_specs_their_providers_read_whole() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints");
        let outputs = |a: &Address, o: &str| Some(json!(format!("{a}.{o}")));
        let mut seen = std::collections::BTreeMap::<String, usize>::new();
        for path in std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()) {
            if path.extension().is_none_or(|e| e != "toml") {
                continue;
            }
            // Each as shipped, and with what it leaves off that makes more kinds (the secrets key).
            let with_key = ["cluster.secrets_encryption=true".to_string()];
            let graphs = [&[][..], &with_key[..]]
                .map(|sets| crate::graph::compile(&crate::blueprint::load(&path, sets).unwrap()).unwrap());
            for r in graphs.iter().flat_map(|g| g.resources()) {
                let (attrs, _) = value::resolve(&Value::Object(r.attrs.clone()), &outputs);
                let read = match r.kind.as_str() {
                    kinds::EKS_CLUSTER => round_trip::<super::eks_cluster::Cluster<String>>(&attrs),
                    kinds::EKS_ADDON => round_trip::<super::eks_addon::Addon<String>>(&attrs),
                    kinds::EKS_NODE_GROUP => round_trip::<super::eks_node_group::NodeGroup<String>>(&attrs),
                    kinds::EKS_ACCESS_ENTRY => round_trip::<super::eks_access_entry::AccessEntry<String>>(&attrs),
                    kinds::IAM_ROLE => round_trip::<super::iam_role::Role>(&attrs),
                    kinds::IAM_POLICY => round_trip::<super::iam_policy::Policy>(&attrs),
                    kinds::KMS_KEY => round_trip::<super::kms_key::Key>(&attrs),
                    kinds::SQS_QUEUE => round_trip::<super::sqs_queue::Queue>(&attrs),
                    kinds::SQS_QUEUE_POLICY => round_trip::<super::sqs_queue_policy::QueuePolicy<String>>(&attrs),
                    kinds::EVENT_RULE => round_trip::<super::event_rule::Rule<String>>(&attrs),
                    kinds::EKS_POD_IDENTITY_ASSOCIATION => {
                        round_trip::<super::eks_pod_identity_association::PodIdentityAssociation<String>>(&attrs)
                    }
                    kinds::KARPENTER_CRDS => round_trip::<super::karpenter_crds::Crds<String>>(&attrs),
                    kinds::KARPENTER_CONTROLLER => {
                        round_trip::<super::karpenter_controller::Controller<String>>(&attrs)
                    }
                    kinds::EC2_NODE_CLASS => round_trip::<super::ec2_node_class::NodeClass<String>>(&attrs),
                    kinds::NODE_POOL => round_trip::<super::node_pool::NodePool<String>>(&attrs),
                    _ => continue,
                };
                let read = read.unwrap_or_else(|e| panic!("{} {}: {e}", path.display(), r.address));
                assert_eq!(read, attrs, "{} {}", path.display(), r.address);
                *seen.entry(r.kind.clone()).or_default() += 1;
            }
        }
        assert!(seen.get(kinds::EKS_CLUSTER).is_some_and(|n| *n >= 5), "{seen:?}");
        assert!(seen.get(kinds::EKS_ADDON).is_some_and(|n| *n >= 5), "{seen:?}");
        assert!(seen.get(kinds::EKS_NODE_GROUP).is_some_and(|n| *n >= 5), "{seen:?}");
        assert!(seen.get(kinds::EKS_ACCESS_ENTRY).is_some_and(|n| *n >= 10), "{seen:?}");
        assert!(seen.get(kinds::EKS_POD_IDENTITY_ASSOCIATION).is_some_and(|n| *n >= 1), "{seen:?}");
        assert!(seen.get(kinds::IAM_ROLE).is_some_and(|n| *n >= 15), "{seen:?}");
        assert!(seen.get(kinds::IAM_POLICY).is_some_and(|n| *n >= 25), "{seen:?}");
        assert!(seen.get(kinds::KMS_KEY).is_some_and(|n| *n >= 5), "{seen:?}");
        assert!(seen.get(kinds::SQS_QUEUE).is_some_and(|n| *n >= 5), "{seen:?}");
        assert!(seen.get(kinds::SQS_QUEUE_POLICY).is_some_and(|n| *n >= 5), "{seen:?}");
        assert!(seen.get(kinds::EVENT_RULE).is_some_and(|n| *n >= 25), "{seen:?}");
        assert!(seen.get(kinds::KARPENTER_CRDS).is_some_and(|n| *n >= 5), "{seen:?}");
        assert!(seen.get(kinds::KARPENTER_CONTROLLER).is_some_and(|n| *n >= 5), "{seen:?}");
        assert!(seen.get(kinds::EC2_NODE_CLASS).is_some_and(|n| *n >= 5), "{seen:?}");
        assert!(seen.get(kinds::NODE_POOL).is_some_and(|n| *n >= 5), "{seen:?}");
    }

    #[test]
    fn an_attribute_the_spec_does_not_name_is_seen() {
        let attrs = json!({"cluster_name": "c", "addon_name": "vpc-cni", "addon_version": null,
            "configuration_values": null, "resolve_conflicts": null, "tags": {}, "kubernetes_verison": "1.36"});
        assert_ne!(round_trip::<super::eks_addon::Addon<String>>(&attrs).unwrap(), attrs);
    }
}

//! The name of every resource kind kbp knows, written once: the compiler emits them, providers register under
//! them, teardown reports them. Nothing else spells a kind.
//!
//! And the typed seam between the compiler and the providers, one file per kind (`eks_cluster.rs`, …): a kind's
//! attributes as one struct both name, so a misspelt or mistyped attribute does not compile on either side. A
//! spec is generic over `R`, the type of a value that may come from another resource's output: the compiler
//! fills it with [`Input`] (a literal, or a reference the engine resolves, [`crate::graph::value::reference`]);
//! the provider reads it with the resolved type (`String`) through [`crate::providers::spec::parse`].
//! Serialized ([`attrs`]), a spec is the resource's attributes, in the order of its fields. Every kind the
//! compiler emits has one; the kinds kbp only finds and deletes (what Karpenter launched) need none.

pub mod ec2_node_class;
pub mod eip;
pub mod eks_access_entry;
pub mod eks_addon;
pub mod eks_cluster;
pub mod eks_node_group;
pub mod eks_pod_identity_association;
pub mod event_rule;
pub mod existing_subnet;
pub mod existing_vpc;
pub mod iam_instance_profile;
pub mod iam_openid_connect_provider;
pub mod iam_policy;
pub mod iam_role;
pub mod iam_role_policy;
pub mod iam_role_policy_attachment;
pub mod iam_service_linked_role;
pub mod in_cluster;
pub mod internet_gateway;
pub mod karpenter_controller;
pub mod karpenter_crds;
pub mod kms_key;
pub mod nat_gateway;
pub mod node_pool;
pub mod route;
pub mod route_table;
pub mod route_table_association;
pub mod security_group;
pub mod sqs_queue;
pub mod sqs_queue_policy;
pub mod subnet;
pub mod subnet_tags;
pub mod vpc;

/// The AWS account, partition and caller kbp runs as (read, never made): what ARNs are built from.
pub const CALLER_IDENTITY: &str = "aws_caller_identity";
/// The stack's VPC.
pub const VPC: &str = "aws_vpc";
/// A subnet of the stack's VPC, one per zone and tier.
pub const SUBNET: &str = "aws_subnet";
/// The VPC's way to the internet, for the public subnets.
pub const INTERNET_GATEWAY: &str = "aws_internet_gateway";
/// An Elastic IP address, one per NAT gateway.
pub const EIP: &str = "aws_eip";
/// A NAT gateway: the private subnets' way out (one, or one per zone).
pub const NAT_GATEWAY: &str = "aws_nat_gateway";
/// A route table: the public subnets' one, and one per zone for the private subnets.
pub const ROUTE_TABLE: &str = "aws_route_table";
/// One route of a route table: the default route to the internet or NAT gateway.
pub const ROUTE: &str = "aws_route";
/// A subnet's tie to its route table.
pub const ROUTE_TABLE_ASSOCIATION: &str = "aws_route_table_association";
/// The nodes' security group, which Karpenter's EC2NodeClasses select by its discovery tag.
pub const SECURITY_GROUP: &str = "aws_security_group";
// A network someone else owns (`[vpc] id`): kbp checks the VPC and subnets exist and never changes or deletes
// them; on the subnets it manages only the tags Karpenter and load balancers need, as resources of their own.
/// The VPC of `[vpc] id`, looked up.
pub const EXISTING_VPC: &str = "aws_existing_vpc";
/// A subnet of `[vpc] id`, looked up.
pub const EXISTING_SUBNET: &str = "aws_existing_subnet";
/// The discovery tags kbp keeps on a subnet it does not own.
pub const SUBNET_TAGS: &str = "aws_subnet_tags";
/// An IAM role: the cluster's, the nodes', the controller's.
pub const IAM_ROLE: &str = "aws_iam_role";
/// A customer managed IAM policy (the controller's permissions).
pub const IAM_POLICY: &str = "aws_iam_policy";
/// An inline policy of a role (imported or found; the compiler makes managed policies).
pub const IAM_ROLE_POLICY: &str = "aws_iam_role_policy";
/// A managed policy attached to a role.
pub const IAM_ROLE_POLICY_ATTACHMENT: &str = "aws_iam_role_policy_attachment";
/// An account-wide service-linked role (EC2 Spot's), made if missing and never deleted.
pub const IAM_SERVICE_LINKED_ROLE: &str = "aws_iam_service_linked_role";
/// The cluster's OIDC identity provider in IAM, for a controller role assumed through IRSA.
pub const IAM_OIDC_PROVIDER: &str = "aws_iam_openid_connect_provider";
/// The KMS key that encrypts the cluster's Kubernetes secrets.
pub const KMS_KEY: &str = "aws_kms_key";
/// The EKS cluster.
pub const EKS_CLUSTER: &str = "aws_eks_cluster";
/// An EKS managed node group (the tainted one the controller runs on).
pub const EKS_NODE_GROUP: &str = "aws_eks_node_group";
/// An EKS add-on (`vpc-cni`, `coredns`, …).
pub const EKS_ADDON: &str = "aws_eks_addon";
/// An EKS access entry: an IAM principal let into the cluster.
pub const EKS_ACCESS_ENTRY: &str = "aws_eks_access_entry";
/// An EKS Pod Identity association: a service account's IAM role.
pub const EKS_POD_IDENTITY_ASSOCIATION: &str = "aws_eks_pod_identity_association";
/// The interruption queue Karpenter reads.
pub const SQS_QUEUE: &str = "aws_sqs_queue";
/// The interruption queue's policy, letting EventBridge send to it.
pub const SQS_QUEUE_POLICY: &str = "aws_sqs_queue_policy";
/// An EventBridge rule (with its one target) sending interruption events to the queue.
pub const EVENT_RULE: &str = "aws_eventbridge_rule";
/// Karpenter's CustomResourceDefinitions on the cluster.
pub const KARPENTER_CRDS: &str = "k8s_karpenter_crds";
/// The Karpenter controller: its chart, rendered and applied to the cluster.
pub const KARPENTER_CONTROLLER: &str = "k8s_karpenter_controller";
/// A Karpenter EC2NodeClass object.
pub const EC2_NODE_CLASS: &str = "k8s_ec2_node_class";
/// A Karpenter NodePool object.
pub const NODE_POOL: &str = "k8s_node_pool";

// Found by teardown, never declared in a blueprint: made by Karpenter or an in-cluster controller.
/// An EC2 instance (a node Karpenter or a node group launched).
pub const INSTANCE: &str = "aws_instance";
/// A launch template Karpenter made.
pub const LAUNCH_TEMPLATE: &str = "aws_launch_template";
/// A network interface the VPC CNI plugin or a node left in the VPC.
pub const NETWORK_INTERFACE: &str = "aws_network_interface";
/// An instance profile Karpenter made for the node role.
pub const IAM_INSTANCE_PROFILE: &str = "aws_iam_instance_profile";
/// A load balancer the AWS Load Balancer Controller (or the in-tree service controller) made.
pub const LOAD_BALANCER: &str = "aws_lb";
/// A listener of such a load balancer.
pub const LB_LISTENER: &str = "aws_lb_listener";
/// A target group of such a load balancer.
pub const LB_TARGET_GROUP: &str = "aws_lb_target_group";
/// An EBS volume a CSI driver made for a persistent volume.
pub const EBS_VOLUME: &str = "aws_ebs_volume";
/// A VPC endpoint someone other than kbp made in the stack's VPC.
pub const VPC_ENDPOINT: &str = "aws_vpc_endpoint";
/// The CloudWatch Logs group EKS writes the control plane's logs to.
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
            // Each as shipped, and with what it leaves off that makes more kinds (the secrets key; the OIDC
            // provider IRSA trusts, where the blueprints choose Pod Identity).
            let with_key = ["cluster.secrets_encryption=true".to_string()];
            let with_irsa = ["karpenter.identity=irsa".to_string()];
            let graphs = [&[][..], &with_key[..], &with_irsa[..]]
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
                    kinds::IAM_ROLE_POLICY_ATTACHMENT => {
                        round_trip::<super::iam_role_policy_attachment::RolePolicyAttachment<String>>(&attrs)
                    }
                    kinds::IAM_SERVICE_LINKED_ROLE => {
                        round_trip::<super::iam_service_linked_role::ServiceLinkedRole>(&attrs)
                    }
                    kinds::IAM_OIDC_PROVIDER => {
                        round_trip::<super::iam_openid_connect_provider::OpenIdConnectProvider<String>>(&attrs)
                    }
                    kinds::KMS_KEY => round_trip::<super::kms_key::Key>(&attrs),
                    kinds::SQS_QUEUE => round_trip::<super::sqs_queue::Queue>(&attrs),
                    kinds::SQS_QUEUE_POLICY => round_trip::<super::sqs_queue_policy::QueuePolicy<String>>(&attrs),
                    kinds::EVENT_RULE => round_trip::<super::event_rule::Rule<String>>(&attrs),
                    kinds::VPC => round_trip::<super::vpc::Vpc>(&attrs),
                    kinds::SUBNET => round_trip::<super::subnet::Subnet<String>>(&attrs),
                    kinds::INTERNET_GATEWAY => round_trip::<super::internet_gateway::InternetGateway<String>>(&attrs),
                    kinds::EIP => round_trip::<super::eip::Eip>(&attrs),
                    kinds::NAT_GATEWAY => round_trip::<super::nat_gateway::NatGateway<String>>(&attrs),
                    kinds::ROUTE_TABLE => round_trip::<super::route_table::RouteTable<String>>(&attrs),
                    kinds::ROUTE => round_trip::<super::route::Route<String>>(&attrs),
                    kinds::ROUTE_TABLE_ASSOCIATION => {
                        round_trip::<super::route_table_association::RouteTableAssociation<String>>(&attrs)
                    }
                    kinds::SECURITY_GROUP => round_trip::<super::security_group::SecurityGroup<String>>(&attrs),
                    kinds::EXISTING_VPC => round_trip::<super::existing_vpc::ExistingVpc>(&attrs),
                    kinds::EXISTING_SUBNET => round_trip::<super::existing_subnet::ExistingSubnet<String>>(&attrs),
                    kinds::SUBNET_TAGS => round_trip::<super::subnet_tags::SubnetTags<String>>(&attrs),
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
        assert!(seen.get(kinds::IAM_ROLE_POLICY_ATTACHMENT).is_some_and(|n| *n >= 75), "{seen:?}");
        assert!(seen.get(kinds::IAM_SERVICE_LINKED_ROLE).is_some_and(|n| *n >= 5), "{seen:?}");
        assert!(seen.get(kinds::IAM_OIDC_PROVIDER).is_some_and(|n| *n >= 5), "{seen:?}");
        assert!(seen.get(kinds::KMS_KEY).is_some_and(|n| *n >= 5), "{seen:?}");
        assert!(seen.get(kinds::SQS_QUEUE).is_some_and(|n| *n >= 5), "{seen:?}");
        assert!(seen.get(kinds::SQS_QUEUE_POLICY).is_some_and(|n| *n >= 5), "{seen:?}");
        assert!(seen.get(kinds::EVENT_RULE).is_some_and(|n| *n >= 25), "{seen:?}");
        assert!(seen.get(kinds::VPC).is_some_and(|n| *n >= 4), "{seen:?}");
        assert!(seen.get(kinds::SUBNET).is_some_and(|n| *n >= 24), "{seen:?}");
        assert!(seen.get(kinds::INTERNET_GATEWAY).is_some_and(|n| *n >= 4), "{seen:?}");
        assert!(seen.get(kinds::EIP).is_some_and(|n| *n >= 6), "{seen:?}");
        assert!(seen.get(kinds::NAT_GATEWAY).is_some_and(|n| *n >= 6), "{seen:?}");
        assert!(seen.get(kinds::ROUTE_TABLE).is_some_and(|n| *n >= 16), "{seen:?}");
        assert!(seen.get(kinds::ROUTE).is_some_and(|n| *n >= 16), "{seen:?}");
        assert!(seen.get(kinds::ROUTE_TABLE_ASSOCIATION).is_some_and(|n| *n >= 24), "{seen:?}");
        assert!(seen.get(kinds::SECURITY_GROUP).is_some_and(|n| *n >= 5), "{seen:?}");
        assert!(seen.get(kinds::EXISTING_VPC).is_some_and(|n| *n >= 1), "{seen:?}");
        assert!(seen.get(kinds::EXISTING_SUBNET).is_some_and(|n| *n >= 6), "{seen:?}");
        assert!(seen.get(kinds::SUBNET_TAGS).is_some_and(|n| *n >= 6), "{seen:?}");
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

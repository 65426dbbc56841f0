//! The name of every resource kind kbp knows, written once: the compiler emits them, providers register under
//! them, teardown reports them. Nothing else spells a kind.

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

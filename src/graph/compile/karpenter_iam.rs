//! The Karpenter controller's permissions: the managed policies of Karpenter's v1 getting-started stack (node
//! lifecycle, IAM integration, EKS integration, interruption, zonal shift, resource discovery), each scoped by the
//! cluster's tags and names as upstream scopes them, attached to the controller role.
//!
//! The documents are written as JSON templates with placeholders: `{cluster}` and `{region}` are filled at compile
//! time; `{partition}`, `{account}`, `{node_role_arn}` and `{queue_arn}` become references resolved at apply time.

use serde_json::{json, Value};

use super::iam::{attachment, role_address};
use super::{kinds, Builder};
use crate::graph::value::{join, reference};
use crate::graph::{Address, Resource};

const NODE_LIFECYCLE: &str = r#"{"Version": "2012-10-17", "Statement": [
  {"Sid": "AllowScopedEC2InstanceAccessActions", "Effect": "Allow",
   "Resource": ["arn:{partition}:ec2:{region}::image/*", "arn:{partition}:ec2:{region}::snapshot/*",
                "arn:{partition}:ec2:{region}:*:security-group/*", "arn:{partition}:ec2:{region}:*:subnet/*",
                "arn:{partition}:ec2:{region}:*:capacity-reservation/*", "arn:{partition}:ec2:{region}:*:placement-group/*"],
   "Action": ["ec2:RunInstances", "ec2:CreateFleet"]},
  {"Sid": "AllowScopedEC2LaunchTemplateAccessActions", "Effect": "Allow",
   "Resource": "arn:{partition}:ec2:{region}:*:launch-template/*",
   "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
   "Condition": {"StringEquals": {"aws:ResourceTag/kubernetes.io/cluster/{cluster}": "owned"},
                 "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"}}},
  {"Sid": "AllowScopedEC2InstanceActionsWithTags", "Effect": "Allow",
   "Resource": ["arn:{partition}:ec2:{region}:*:fleet/*", "arn:{partition}:ec2:{region}:*:instance/*",
                "arn:{partition}:ec2:{region}:*:volume/*", "arn:{partition}:ec2:{region}:*:network-interface/*",
                "arn:{partition}:ec2:{region}:*:launch-template/*", "arn:{partition}:ec2:{region}:*:spot-instances-request/*"],
   "Action": ["ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"],
   "Condition": {"StringEquals": {"aws:RequestTag/kubernetes.io/cluster/{cluster}": "owned",
                                  "aws:RequestTag/eks:eks-cluster-name": "{cluster}"},
                 "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"}}},
  {"Sid": "AllowScopedResourceCreationTagging", "Effect": "Allow",
   "Resource": ["arn:{partition}:ec2:{region}:*:fleet/*", "arn:{partition}:ec2:{region}:*:instance/*",
                "arn:{partition}:ec2:{region}:*:volume/*", "arn:{partition}:ec2:{region}:*:network-interface/*",
                "arn:{partition}:ec2:{region}:*:launch-template/*", "arn:{partition}:ec2:{region}:*:spot-instances-request/*"],
   "Action": "ec2:CreateTags",
   "Condition": {"StringEquals": {"aws:RequestTag/kubernetes.io/cluster/{cluster}": "owned",
                                  "aws:RequestTag/eks:eks-cluster-name": "{cluster}",
                                  "ec2:CreateAction": ["RunInstances", "CreateFleet", "CreateLaunchTemplate"]},
                 "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"}}},
  {"Sid": "AllowScopedResourceTagging", "Effect": "Allow",
   "Resource": "arn:{partition}:ec2:{region}:*:instance/*",
   "Action": "ec2:CreateTags",
   "Condition": {"StringEquals": {"aws:ResourceTag/kubernetes.io/cluster/{cluster}": "owned"},
                 "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"},
                 "StringEqualsIfExists": {"aws:RequestTag/eks:eks-cluster-name": "{cluster}"},
                 "ForAllValues:StringEquals": {"aws:TagKeys": ["eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"]}}},
  {"Sid": "AllowScopedDeletion", "Effect": "Allow",
   "Resource": ["arn:{partition}:ec2:{region}:*:instance/*", "arn:{partition}:ec2:{region}:*:launch-template/*"],
   "Action": ["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"],
   "Condition": {"StringEquals": {"aws:ResourceTag/kubernetes.io/cluster/{cluster}": "owned"},
                 "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"}}}
]}"#;

const IAM_INTEGRATION: &str = r#"{"Version": "2012-10-17", "Statement": [
  {"Sid": "AllowPassingInstanceRole", "Effect": "Allow", "Resource": "{node_role_arn}", "Action": "iam:PassRole",
   "Condition": {"StringEquals": {"iam:PassedToService": ["ec2.amazonaws.com", "ec2.amazonaws.com.cn"]}}},
  {"Sid": "AllowScopedInstanceProfileCreationActions", "Effect": "Allow",
   "Resource": "arn:{partition}:iam::{account}:instance-profile/*", "Action": ["iam:CreateInstanceProfile"],
   "Condition": {"StringEquals": {"aws:RequestTag/kubernetes.io/cluster/{cluster}": "owned",
                                  "aws:RequestTag/eks:eks-cluster-name": "{cluster}",
                                  "aws:RequestTag/topology.kubernetes.io/region": "{region}"},
                 "StringLike": {"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*"}}},
  {"Sid": "AllowScopedInstanceProfileTagActions", "Effect": "Allow",
   "Resource": "arn:{partition}:iam::{account}:instance-profile/*", "Action": ["iam:TagInstanceProfile"],
   "Condition": {"StringEquals": {"aws:ResourceTag/kubernetes.io/cluster/{cluster}": "owned",
                                  "aws:ResourceTag/topology.kubernetes.io/region": "{region}",
                                  "aws:RequestTag/kubernetes.io/cluster/{cluster}": "owned",
                                  "aws:RequestTag/eks:eks-cluster-name": "{cluster}",
                                  "aws:RequestTag/topology.kubernetes.io/region": "{region}"},
                 "StringLike": {"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*",
                                "aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*"}}},
  {"Sid": "AllowScopedInstanceProfileActions", "Effect": "Allow",
   "Resource": "arn:{partition}:iam::{account}:instance-profile/*",
   "Action": ["iam:AddRoleToInstanceProfile", "iam:RemoveRoleFromInstanceProfile", "iam:DeleteInstanceProfile"],
   "Condition": {"StringEquals": {"aws:ResourceTag/kubernetes.io/cluster/{cluster}": "owned",
                                  "aws:ResourceTag/topology.kubernetes.io/region": "{region}"},
                 "StringLike": {"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*"}}}
]}"#;

const EKS_INTEGRATION: &str = r#"{"Version": "2012-10-17", "Statement": [
  {"Sid": "AllowAPIServerEndpointDiscovery", "Effect": "Allow",
   "Resource": "arn:{partition}:eks:{region}:{account}:cluster/{cluster}", "Action": "eks:DescribeCluster"}
]}"#;

const INTERRUPTION: &str = r#"{"Version": "2012-10-17", "Statement": [
  {"Sid": "AllowInterruptionQueueActions", "Effect": "Allow", "Resource": "{queue_arn}",
   "Action": ["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"]}
]}"#;

const ZONAL_SHIFT: &str = r#"{"Version": "2012-10-17", "Statement": [
  {"Sid": "AllowZonalShiftStatusReadOnly", "Effect": "Allow", "Resource": "*",
   "Action": ["arc-zonal-shift:GetManagedResource"],
   "Condition": {"StringEquals": {"arc-zonal-shift:ResourceIdentifier": "arn:{partition}:eks:{region}:{account}:cluster/{cluster}"}}}
]}"#;

const RESOURCE_DISCOVERY: &str = r#"{"Version": "2012-10-17", "Statement": [
  {"Sid": "AllowRegionalReadActions", "Effect": "Allow", "Resource": "*",
   "Action": ["ec2:DescribeCapacityReservations", "ec2:DescribeImages", "ec2:DescribeInstances",
              "ec2:DescribeInstanceStatus", "ec2:DescribeInstanceTypeOfferings", "ec2:DescribeInstanceTypes",
              "ec2:DescribeLaunchTemplates", "ec2:DescribePlacementGroups", "ec2:DescribeSecurityGroups",
              "ec2:DescribeSpotPriceHistory", "ec2:DescribeSubnets"],
   "Condition": {"StringEquals": {"aws:RequestedRegion": "{region}"}}},
  {"Sid": "AllowSSMReadActions", "Effect": "Allow",
   "Resource": "arn:{partition}:ssm:{region}::parameter/aws/service/*", "Action": "ssm:GetParameter"},
  {"Sid": "AllowPricingReadActions", "Effect": "Allow", "Resource": "*", "Action": "pricing:GetProducts"},
  {"Sid": "AllowUnscopedInstanceProfileListAction", "Effect": "Allow", "Resource": "*",
   "Action": "iam:ListInstanceProfiles"},
  {"Sid": "AllowInstanceProfileReadActions", "Effect": "Allow",
   "Resource": "arn:{partition}:iam::{account}:instance-profile/*", "Action": "iam:GetInstanceProfile"}
]}"#;

/// (address key, policy name prefix, document)
const POLICIES: &[(&str, &str, &str)] = &[
    ("node-lifecycle", "KarpenterControllerNodeLifecyclePolicy", NODE_LIFECYCLE),
    ("iam-integration", "KarpenterControllerIAMIntegrationPolicy", IAM_INTEGRATION),
    ("eks-integration", "KarpenterControllerEKSIntegrationPolicy", EKS_INTEGRATION),
    ("interruption", "KarpenterControllerInterruptionPolicy", INTERRUPTION),
    ("zonal-shift", "KarpenterControllerZonalShiftPolicy", ZONAL_SHIFT),
    ("resource-discovery", "KarpenterControllerResourceDiscoveryPolicy", RESOURCE_DISCOVERY),
];

pub(super) fn queue_address() -> Address {
    Address::new("sqs_queue", "interruption")
}

pub(super) fn compile(b: &mut Builder) {
    let controller = role_address("karpenter_controller");
    for (key, prefix, template) in POLICIES {
        if *key == "interruption" && !b.bp.karpenter.interruption_queue {
            continue;
        }
        let policy = b.add(Resource::new(
            Address::keyed("iam_policy", "karpenter_controller", key),
            kinds::IAM_POLICY,
            kinds::attrs(&kinds::iam_policy::Policy {
                name: format!("{prefix}-{}", b.cluster_name()),
                path: "/".to_string(),
                description: Some(format!("Karpenter controller permissions ({key}) for cluster {}", b.cluster_name())),
                policy: document(b, template),
                tags: b.tags(&[], None),
            }),
        ));
        b.add(attachment(
            Address::keyed("iam_role_policy_attachment", "karpenter_controller", key),
            &controller,
            reference(&policy, "arn"),
        ));
    }
}

fn document(b: &Builder, template: &str) -> Value {
    let text = template.replace("{cluster}", b.cluster_name()).replace("{region}", &b.bp.cluster.region);
    let doc: Value = serde_json::from_str(&text).expect("invariant: the policy templates are valid JSON");
    interpolate(b, doc)
}

/// Turns the apply-time placeholders left in strings into joins of references.
fn interpolate(b: &Builder, v: Value) -> Value {
    match v {
        Value::String(s) if s.contains('{') => {
            let caller = b.caller();
            let mut parts = Vec::new();
            let mut rest = s.as_str();
            while let Some(open) = rest.find('{') {
                let close = rest[open..].find('}').map(|c| open + c).unwrap_or(rest.len() - 1);
                if open > 0 {
                    parts.push(json!(rest[..open]));
                }
                parts.push(match &rest[open + 1..close] {
                    "partition" => reference(&caller, "partition"),
                    "account" => reference(&caller, "account_id"),
                    "node_role_arn" => reference(&role_address("karpenter_node"), "arn"),
                    "queue_arn" => reference(&queue_address(), "arn"),
                    other => panic!("invariant: unknown placeholder {{{other}}} in a Karpenter policy template"),
                });
                rest = &rest[close + 1..];
            }
            if !rest.is_empty() {
                parts.push(json!(rest));
            }
            if parts.len() == 1 && !parts[0].is_string() {
                parts.pop().unwrap_or_default()
            } else {
                join(parts)
            }
        }
        Value::Array(items) => Value::Array(items.into_iter().map(|i| interpolate(b, i)).collect()),
        Value::Object(m) => Value::Object(m.into_iter().map(|(k, i)| (k, interpolate(b, i))).collect()),
        other => other,
    }
}

//! The schema of the AWS side of the stack: the cluster, its VPC, the controller's node group, EKS add-ons and
//! the Karpenter controller.

use super::Presence::{Computed, Default, Optional, Required};
use super::{field, str_rule, Field, Rule, Ty};
use crate::blueprint::rules::{aws, k8s, karpenter};

/// Kubernetes versions kbp knows: those EKS offers in standard and extended support as of December 2026, and
/// the three before, which an existing cluster may still run (preflight asks EKS what it offers now).
pub(crate) const SUPPORTED_VERSIONS: &[&str] =
    &["1.29", "1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37"];

pub(super) const TAG_VALUE: Ty = str_rule("an AWS tag value (at most 256 characters)", aws::tag_value);
const STACK_TAGS: Ty = Ty::Map {
    key: Rule { expected: "an AWS tag key (1–128 characters, not `aws:*` or `kbp:*`)", check: aws::stack_tag_key },
    value: &TAG_VALUE,
    // A first bound; what AWS allows on each resource, with kbp's own tags and what kbp adds to it (a Name,
    // discovery tags), is counted by `providers::contract`, which names the resource.
    max: 48,
    implied: &[],
};
pub(super) const LABEL_VALUE: Ty = str_rule("a label value (at most 63 characters)", k8s::label_value);

/// A taint of the controller's node group (EKS takes at most 50), checked by Kubernetes' rules for taints.
const TAINT: Ty = Ty::Table(&[
    field("key", str_rule("a taint key (`[prefix/]name`)", k8s::taint_key), Required, "Taint key."),
    field("value", str_rule("a taint value", k8s::taint_value), Optional, "Taint value."),
    field(
        "effect",
        Ty::Enum(&["NoSchedule", "PreferNoSchedule", "NoExecute"]),
        Required,
        "What the taint does to pods that do not tolerate it.",
    ),
]);
const TAINTS: Ty = Ty::List { item: &TAINT, max: 50, unique: false, non_empty: false };

pub(super) const CLUSTER: &[Field] = &[
    field(
        "name",
        str_rule("an EKS cluster name", aws::cluster_name),
        Required,
        "EKS cluster name; also prefixes the IAM role names kbp derives.",
    ),
    field(
        "region",
        str_rule("an AWS region name", aws::region),
        Required,
        "AWS region, such as `us-west-2`.",
    ),
    field(
        "version",
        Ty::Enum(SUPPORTED_VERSIONS),
        Default("\"1.36\""),
        "Kubernetes minor version. Changing it upgrades the stack in one apply: the control plane, then the unpinned add-ons to the new version's defaults, then the controller node group; one minor version per apply, never down.",
    ),
    field(
        "endpoint_public_access",
        Ty::Bool,
        Default("true"),
        "Whether the API server endpoint is reachable from the internet.",
    ),
    field(
        "endpoint_private_access",
        Ty::Bool,
        Default("true"),
        "Whether the API server endpoint is reachable from inside the VPC.",
    ),
    field(
        "public_access_cidrs",
        Ty::List {
            item: &str_rule("an IPv4 CIDR block", aws::ipv4_cidr),
            max: 40,
            unique: true,
            non_empty: true,
        },
        Default("[\"0.0.0.0/0\"]"),
        "Networks that may reach the public endpoint (only with `endpoint_public_access`).",
    ),
    field(
        "log_types",
        Ty::List { item: &Ty::Enum(LOG_TYPES), max: 5, unique: true, non_empty: false },
        Default("[\"api\", \"audit\", \"authenticator\"]"),
        "Control-plane log types EKS sends to CloudWatch Logs; `[]` turns logging off.",
    ),
    field(
        "secrets_encryption",
        Ty::Bool,
        Default("true"),
        "Envelope-encrypt Kubernetes secrets with a KMS key kbp creates for the cluster (deleted, after AWS's 7-day waiting period, by destroy).",
    ),
    field(
        "ttl",
        str_rule("a duration", k8s::duration),
        Optional,
        "Sandbox time to live, like `8h`: resources are tagged with their owner (the caller's ARN) and expiry when created, and `kbp gc` destroys the stack once it has expired. `kbp apply --ttl` overrides it.",
    ),
    field(
        "tags",
        STACK_TAGS,
        Default("{}"),
        "Tags on every taggable resource of the stack.",
    ),
    field(
        "access_entries",
        Ty::List { item: &ACCESS_ENTRY, max: 100, unique: false, non_empty: false },
        Default("[]"),
        "Who else may use the cluster (`[[cluster.access_entries]]`): IAM roles and users, each with its Kubernetes groups and EKS access policies. kbp's own entries (whoever runs kbp, Karpenter's nodes) are always made; an entry made outside kbp shows in `kbp drift` as unmanaged.",
    ),
];

const SUBJECT: Ty = str_rule("a Kubernetes user or group name", aws::access_entry_subject);

const ACCESS_ENTRY: Ty = Ty::Table(&[
    field(
        "principal_arn",
        str_rule("an IAM role or user ARN", aws::iam_principal_arn),
        Required,
        "The IAM role or user let in.",
    ),
    field(
        "type",
        Ty::Enum(&["STANDARD", "EC2_LINUX", "EC2_WINDOWS", "FARGATE_LINUX", "HYBRID_LINUX"]),
        Default("\"STANDARD\""),
        "`STANDARD` for people and tools; the others for the roles of nodes EKS does not manage (which take no groups or policies).",
    ),
    field("username", SUBJECT, Optional, "Kubernetes user name; without it, EKS's default (from the principal's ARN)."),
    field(
        "kubernetes_groups",
        Ty::List { item: &SUBJECT, max: 100, unique: true, non_empty: false },
        Default("[]"),
        "Kubernetes groups the principal is in, for your own RBAC bindings.",
    ),
    field(
        "policies",
        Ty::List { item: &ACCESS_POLICY, max: 20, unique: false, non_empty: false },
        Default("[]"),
        "EKS access policies associated with the entry (`[[cluster.access_entries.policies]]`).",
    ),
]);

const ACCESS_POLICY: Ty = Ty::Table(&[
    field(
        "policy",
        str_rule("an EKS access policy name or ARN", aws::access_policy),
        Required,
        "`AmazonEKSClusterAdminPolicy`, `AmazonEKSAdminPolicy`, `AmazonEKSEditPolicy`, `AmazonEKSViewPolicy`, … or its ARN.",
    ),
    field(
        "namespaces",
        Ty::List { item: &str_rule("a namespace name (a DNS label)", k8s::dns_label), max: 100, unique: true, non_empty: false },
        Default("[]"),
        "Namespaces it applies in; empty for the whole cluster.",
    ),
]);

/// EKS control-plane log types.
const LOG_TYPES: &[&str] = &["api", "audit", "authenticator", "controllerManager", "scheduler"];

const SUBNETS: Ty = Ty::List {
    item: &str_rule("an IPv4 CIDR block from /16 to /28", aws::subnet_cidr),
    max: 6,
    unique: false,
    non_empty: true,
};

/// At most this many IDs in a subnet list: a bound on input, well above the zones of any region.
const MAX_SUBNET_IDS: usize = 16;

const SUBNET_IDS: Ty = Ty::List {
    item: &str_rule("a subnet ID (`subnet-` and 8 or 17 hexadecimal digits)", aws::subnet_id),
    max: MAX_SUBNET_IDS,
    unique: true,
    non_empty: false,
};

/// Extra security groups a blueprint may add: EC2 allows 5 per network interface by default, and Karpenter's nodes
/// are already in two (the node group kbp creates and the EKS cluster security group).
const MAX_EXTRA_SECURITY_GROUPS: usize = 3;

pub(super) const VPC: &[Field] = &[
    field(
        "id",
        str_rule("a VPC ID (`vpc-` and 8 or 17 hexadecimal digits)", aws::vpc_id),
        Optional,
        "An existing VPC to use instead of creating one. kbp then creates no network: it checks that the VPC and the subnets of `private_subnet_ids` and `public_subnet_ids` exist, tags those subnets for Karpenter and load balancers, and never changes or deletes them (destroy removes only its tags). The fields from `cidr` to `tags` are for a VPC kbp creates and are refused with `id`.",
    ),
    field(
        "private_subnet_ids",
        SUBNET_IDS,
        Default("[]"),
        "With `id`: the existing private subnets the cluster and its nodes use, at least two, in at least two zones (EKS needs two). They need a way out (a NAT gateway, or VPC endpoints) for nodes to join. kbp tags them `karpenter.sh/discovery`, `kubernetes.io/role/internal-elb` and `kubernetes.io/cluster/<cluster.name>` = `shared`, plus `private_subnet_tags`.",
    ),
    field(
        "public_subnet_ids",
        SUBNET_IDS,
        Default("[]"),
        "With `id`: existing public subnets for internet-facing load balancers. kbp tags them `kubernetes.io/role/elb` and `kubernetes.io/cluster/<cluster.name>` = `shared`, plus `public_subnet_tags`.",
    ),
    field(
        "security_group_ids",
        Ty::List {
            item: &str_rule("a security group ID (`sg-` and 8 or 17 hexadecimal digits)", aws::security_group_id),
            max: MAX_EXTRA_SECURITY_GROUPS,
            unique: true,
            non_empty: false,
        },
        Default("[]"),
        "With `id`: existing security groups of that VPC added to the cluster's and to every Karpenter node's (the controller node group keeps EKS's). At most 3: EC2 allows 5 per network interface by default, and Karpenter's nodes are in two already.",
    ),
    field("cidr", str_rule("an IPv4 CIDR block from /16 to /24", aws::vpc_cidr), Default("\"10.0.0.0/16\""), "Address range of the VPC kbp creates."),
    field(
        "azs",
        Ty::CountOr { min: 1, max: 6, list: &Ty::List { item: &str_rule("an availability zone name", aws::az_name), max: 6, unique: true, non_empty: true } },
        Default("3"),
        "Availability zones of the VPC kbp creates: a count N (the region's zones `a`, `b`, `c`, … in order) or a list of zone names of the region.",
    ),
    field("private_subnets", SUBNETS, Computed("`cidrsubnet(cidr, 4, i)` for the i-th zone (a /20 of a /16)"), "One private subnet per zone, in the order of `azs`; nodes run here."),
    field("public_subnets", SUBNETS, Computed("`cidrsubnet(cidr, 8, 48 + i)` for the i-th zone (a /24 of a /16)"), "One public subnet per zone, in the order of `azs`; NAT gateways and internet-facing load balancers."),
    field("nat_gateway", Ty::Enum(&["none", "single", "per-az"]), Default("\"single\""), "NAT gateways for the private subnets: none, one shared, or one per zone."),
    field("enable_dns_hostnames", Ty::Bool, Default("true"), "Give instances DNS host names (EKS needs them for private endpoint access)."),
    field("tags", STACK_TAGS, Default("{}"), "Extra tags on the VPC kbp creates and its network resources."),
    field("private_subnet_tags", STACK_TAGS, Default("{}"), "Extra tags on the private subnets (`karpenter.sh/discovery` and `kubernetes.io/role/internal-elb` are implied)."),
    field("public_subnet_tags", STACK_TAGS, Default("{}"), "Extra tags on the public subnets (`kubernetes.io/role/elb` is implied)."),
];

/// EKS AMI types of Linux node groups (the Karpenter controller needs Linux, so no `WINDOWS_*`; `CUSTOM` needs a
/// launch template kbp does not write).
const AMI_TYPES: &[&str] = &[
    "AL2_x86_64",
    "AL2_x86_64_GPU",
    "AL2_ARM_64",
    "AL2023_x86_64_STANDARD",
    "AL2023_ARM_64_STANDARD",
    "AL2023_x86_64_NEURON",
    "AL2023_x86_64_NVIDIA",
    "AL2023_ARM_64_NVIDIA",
    "BOTTLEROCKET_x86_64",
    "BOTTLEROCKET_ARM_64",
    "BOTTLEROCKET_x86_64_FIPS",
    "BOTTLEROCKET_ARM_64_FIPS",
    "BOTTLEROCKET_x86_64_NVIDIA",
    "BOTTLEROCKET_ARM_64_NVIDIA",
    "BOTTLEROCKET_x86_64_NVIDIA_FIPS",
    "BOTTLEROCKET_ARM_64_NVIDIA_FIPS",
];

/// Upper bound of the node group sizes: the EKS quota of nodes per managed node group.
const MAX_NODES: i64 = 450;

pub(super) const NODE_GROUP: &[Field] = &[
    field(
        "name",
        str_rule("an EKS node group name", aws::nodegroup_name),
        Default("\"karpenter\""),
        "Name of the managed node group that runs the Karpenter controller.",
    ),
    field(
        "ami_type",
        Ty::Enum(AMI_TYPES),
        Default("\"BOTTLEROCKET_x86_64\""),
        "EKS AMI type (Linux only: the controller needs Linux).",
    ),
    field(
        "instance_types",
        Ty::List {
            item: &str_rule("an EC2 instance type", aws::instance_type),
            max: 20,
            unique: true,
            non_empty: true,
        },
        Default("[\"m5.large\"]"),
        "EC2 instance types of the node group.",
    ),
    field(
        "capacity_type",
        Ty::Enum(&["ON_DEMAND", "SPOT", "CAPACITY_BLOCK"]),
        Default("\"ON_DEMAND\""),
        "Purchase option of the node group's instances.",
    ),
    field("min_size", Ty::Int { min: 0, max: MAX_NODES }, Default("2"), "Minimum number of nodes."),
    field(
        "max_size",
        Ty::Int { min: 1, max: MAX_NODES },
        Default("3"),
        "Maximum number of nodes; at least `desired_size`.",
    ),
    field(
        "desired_size",
        Ty::Int { min: 0, max: MAX_NODES },
        Default("2"),
        "Initial number of nodes, from `min_size` to `max_size`.",
    ),
    field("disk_size", Ty::Int { min: 1, max: 16384 }, Default("20"), "Root disk size in GiB."),
    field(
        "labels",
        Ty::Map {
            key: Rule { expected: "a label key", check: karpenter::node_group_label_key },
            value: &LABEL_VALUE,
            max: 100,
            implied: &[],
        },
        Default("{}"),
        "Extra node labels; `karpenter.sh/controller=true` is always added.",
    ),
    field("taints", TAINTS, Default("[]"), "Extra taints; `karpenter.sh/controller=true:NoSchedule` is always added."),
    field(
        "version",
        Ty::Enum(SUPPORTED_VERSIONS),
        Optional,
        "Kubernetes version of the nodes. Without it, `cluster.version`: an upgrade moves the nodes after the control plane and the add-ons, in the same apply. Set it to hold the nodes back: never newer than `cluster.version`, at most three minor versions behind; plan and drift report the skew.",
    ),
    field(
        "release_version",
        str_rule("an EKS AMI release version (`1.33.0-20250704`, `1.42.0-a1b2c3d4`)", aws::ami_release_version),
        Optional,
        "AMI release version of the nodes, for their Kubernetes version. Without it, the latest release when the node group is created or its version updated.",
    ),
    field(
        "update_config",
        Ty::Table(UPDATE_CONFIG),
        Default("{}"),
        "How many nodes EKS may take out of service at once while it replaces them (a version update, a new launch configuration). Without either field, EKS's default: one node.",
    ),
];

const UPDATE_CONFIG: &[Field] = &[
    field("max_unavailable", Ty::Int { min: 1, max: 100 }, Optional, "At most this many nodes unavailable at once."),
    field(
        "max_unavailable_percentage",
        Ty::Int { min: 1, max: 100 },
        Optional,
        "At most this percentage of the nodes unavailable at once; not with `max_unavailable`.",
    ),
];

pub(super) const ADDON: Ty = Ty::Table(&[
    field("enabled", Ty::Bool, Default("true"), "Install the add-on; a disabled add-on is left out."),
    field(
        "version",
        str_rule("an EKS add-on version (`v<semver>-eksbuild.<n>`)", aws::addon_version),
        Optional,
        "Pinned version; without it, the latest version compatible with the cluster.",
    ),
    field(
        "configuration_values",
        str_rule("a JSON object", aws::json_object),
        Optional,
        "JSON configuration passed to EKS as it is.",
    ),
]);

const VALUES_FILE: Ty = str_rule("a file path", karpenter::path);
const API_VERSION: Ty = str_rule("an API group/version", karpenter::api_version);

pub(super) const KARPENTER: &[Field] = &[
    field(
        "version",
        str_rule("a Karpenter version, 1.0.0 or later", karpenter::version),
        Default("\"1.14.1\""),
        "Karpenter release (Helm chart and CRDs).",
    ),
    field(
        "namespace",
        str_rule("a DNS-1123 label", k8s::dns_label),
        Default("\"karpenter\""),
        "Namespace of the controller.",
    ),
    field(
        "identity",
        Ty::Enum(&["pod-identity", "irsa"]),
        Default("\"pod-identity\""),
        "How the controller gets its IAM role: EKS Pod Identity or IRSA.",
    ),
    field(
        "interruption_queue",
        Ty::Bool,
        Default("true"),
        "Create the SQS interruption queue and its EventBridge rules.",
    ),
    field(
        "spot",
        Ty::Bool,
        Default("true"),
        "Ensure the account's EC2 Spot service-linked role exists (Karpenter cannot create it).",
    ),
    field(
        "replicas",
        Ty::Int { min: 1, max: 10 },
        Default("2"),
        "Controller replicas (one leader, the others on standby).",
    ),
    field(
        "node_role_name",
        str_rule("an IAM role name (1–64 characters)", aws::iam_role_name),
        Computed("`KarpenterNodeRole-<cluster.name>`"),
        "IAM role of the nodes Karpenter launches.",
    ),
    field(
        "controller_role_name",
        str_rule("an IAM role name (1–64 characters)", aws::iam_role_name),
        Computed("`KarpenterController-<cluster.name>`"),
        "IAM role of the controller.",
    ),
    field(
        "chart",
        str_rule("an oci:// chart reference, or a chart directory or .tgz", karpenter::chart),
        Default("\"oci://public.ecr.aws/karpenter/karpenter\""),
        "Karpenter's Helm chart: `oci://…` for the release's published chart (anonymous pull of tag `version`, cached under `~/.cache/kbp`), or a local chart directory or `.tgz` for air-gapped installs (relative to the blueprint file). kbp renders the controller from its templates, as `helm template` does, and installs the CRDs under its `crds/`.",
    ),
    field(
        "values_files",
        Ty::List { item: &VALUES_FILE, max: 20, unique: true, non_empty: false },
        Default("[]"),
        "Helm values files for the chart, merged in order as `helm -f` merges them (maps merge, lists and other values replace), over what kbp sets. Relative to the blueprint file.",
    ),
    field(
        "values",
        Ty::Free,
        Optional,
        "The chart's values inline, with the chart's own keys (`[karpenter.values.settings.featureGates]`, `nodeSelector`, `controller.env`, …), merged last, like `helm --set`.",
    ),
    field(
        "api_versions",
        Ty::List { item: &API_VERSION, max: 100, unique: true, non_empty: false },
        Default("[]"),
        "API versions the cluster serves beyond Kubernetes' own, for the chart's `.Capabilities.APIVersions.Has` (as `helm template --api-versions`): `[\"monitoring.coreos.com/v1\"]` renders the chart's ServiceMonitor.",
    ),
    field(
        "crds_dir",
        str_rule("a directory path", karpenter::path),
        Optional,
        "Directory holding the release's CRD YAML files, read instead of the chart's `crds/`. Relative to the blueprint file. A local `chart` directory serves air-gapped installs better: it holds the CRDs and the templates.",
    ),
    field(
        "image",
        str_rule("an image repository without tag", karpenter::image_repository),
        Default("\"public.ecr.aws/karpenter/controller\""),
        "Controller image repository; the tag is `version`, and for the default version from this repository the digest the chart pins. Point it at a mirror for private registries (run by tag).",
    ),
    field("log_level", Ty::Enum(&["debug", "info", "error"]), Default("\"info\""), "Controller log level."),
    field(
        "cpu",
        str_rule("a Kubernetes quantity", k8s::quantity),
        Default("\"1\""),
        "CPU request and limit of each controller pod.",
    ),
    field(
        "memory",
        str_rule("a Kubernetes quantity", k8s::quantity),
        Default("\"1Gi\""),
        "Memory request and limit of each controller pod.",
    ),
    field(
        "rollout_timeout",
        str_rule("a duration", k8s::duration),
        Default("\"10m\""),
        "How long `kbp apply` waits for the controller Deployment to be Available before failing with a report of why not.",
    ),
];

//! The typed blueprint: what `blueprint::load` returns once the TOML text has been parsed, checked against the
//! schema, had its defaults applied and passed semantic validation. Every later stage reads only these types.

use std::collections::BTreeMap;

use ipnet::Ipv4Net;
use serde::{Deserialize, Serialize};

/// A whole stack: one EKS cluster and everything Karpenter needs around it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Blueprint {
    /// The EKS cluster: name, region, Kubernetes version, endpoint access, logging and access entries (`[cluster]`).
    pub cluster: Cluster,
    /// The VPC the cluster and its nodes run in, created by kbp or existing (`[vpc]`).
    pub vpc: Vpc,
    /// The managed node group that runs the Karpenter controller (`[node_group]`).
    pub node_group: NodeGroup,
    /// Keyed by EKS add-on name (`vpc-cni`, `kube-proxy`, `coredns`, `eks-pod-identity-agent`); disabled add-ons
    /// are absent.
    pub addons: BTreeMap<String, Addon>,
    /// The Karpenter controller release and its AWS resources: IAM roles, interruption queue (`[karpenter]`).
    pub karpenter: Karpenter,
    /// EC2NodeClasses keyed by their Kubernetes name.
    pub node_classes: BTreeMap<String, NodeClass>,
    /// NodePools keyed by their Kubernetes name.
    pub node_pools: BTreeMap<String, NodePool>,
    /// Where the stack's state lives.
    pub state: StateSettings,
    /// `[[import]]` tables: existing resources to take under management during plan and apply.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub import: Vec<Import>,
    /// `[[moved]]` tables: renamed addresses whose state entries move with them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub moved: Vec<Moved>,
}

/// One `[[moved]]` table: the state entry at `from` belongs at `to`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Moved {
    /// The address state holds the resource at, as an older blueprint compiled it (`eks_cluster.main`).
    pub from: String,
    /// The address the blueprint compiles the resource to now.
    pub to: String,
}

/// One `[[import]]` table: the resource `id` in AWS goes into state at the address `to`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Import {
    /// The state address to import into, as `kbp graph` and `kbp plan` show it.
    pub to: String,
    /// The resource's ID in AWS, in its kind's form (a VPC ID, a role name, `cluster:nodegroup`).
    pub id: String,
}

/// The blueprint's `[state]` table; `--state`/`KBP_STATE` override it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateSettings {
    /// `local` or `s3`.
    pub backend: String,
    /// `local` only: the state file, relative to the blueprint's directory (made absolute when loaded, where the
    /// default `.kbp/<cluster.name>.state.json` fills `None`).
    pub path: Option<String>,
    /// `s3` only, and required there: the bucket holding the state object and its lock.
    pub bucket: Option<String>,
    /// `s3` only: the state object's key; `None` for `kbp/<cluster.name>.state.json`. The lock is `<key>.lock`.
    pub key: Option<String>,
    /// `s3` only: the bucket's region; `None` for `cluster.region`.
    pub region: Option<String>,
    /// `s3` only: KMS key (ID, ARN or `alias/…`) for SSE-KMS on the state object; `None` for SSE-S3.
    pub kms_key_id: Option<String>,
    /// `s3` only: AWS profile used for the state bucket; the stack itself uses the usual credential chain.
    pub profile: Option<String>,
    /// `s3` only: IAM role assumed to reach the state bucket.
    pub role_arn: Option<String>,
}

/// The default state file of stack `stack`, `.kbp/<stack>.state.json`, relative to the blueprint's directory
/// (relative to the working directory where there is no blueprint).
pub fn default_state_file(stack: &str) -> String {
    format!(".kbp/{stack}.state.json")
}

/// The `[cluster]` table: the EKS control plane.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cluster {
    /// EKS cluster name; also prefixes the IAM role names kbp derives.
    pub name: String,
    /// AWS region the whole stack lives in, such as `us-west-2`.
    pub region: String,
    /// Kubernetes minor version, such as "1.33".
    pub version: String,
    /// Whether the API server endpoint is reachable from the internet (default true).
    pub endpoint_public_access: bool,
    /// Whether the API server endpoint is reachable from inside the VPC (default true).
    pub endpoint_private_access: bool,
    /// IPv4 CIDR blocks that may reach the public endpoint (default `0.0.0.0/0`).
    pub public_access_cidrs: Vec<String>,
    /// EKS control-plane log types (api, audit, authenticator, controllerManager, scheduler).
    pub log_types: Vec<String>,
    /// Envelope-encrypt Kubernetes secrets with a KMS key kbp creates.
    pub secrets_encryption: bool,
    /// Sandbox time to live (a Go-style duration); `None` for a stack `kbp gc` never touches unless named.
    pub ttl: Option<String>,
    /// Tags on every taggable resource of the stack.
    pub tags: BTreeMap<String, String>,
    /// `[[cluster.access_entries]]`: who else may use the cluster.
    #[serde(default)]
    pub access_entries: Vec<AccessEntry>,
}

/// One `[[cluster.access_entries]]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccessEntry {
    /// The IAM role or user ARN let into the cluster.
    pub principal_arn: String,
    /// EKS access entry type (`type` in the blueprint): `STANDARD` for people and tools, `EC2_LINUX` etc. for node
    /// roles.
    #[serde(rename = "type")]
    pub entry_type: String,
    /// Kubernetes user name; `None` for EKS's default, derived from the principal's ARN.
    #[serde(default)]
    pub username: Option<String>,
    /// Kubernetes groups the principal is in, for the user's own RBAC bindings.
    #[serde(default)]
    pub kubernetes_groups: Vec<String>,
    /// EKS access policies associated with the entry.
    #[serde(default)]
    pub policies: Vec<AccessPolicy>,
}

/// An EKS access policy of an access entry, cluster-wide (no namespaces) or in the namespaces named.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccessPolicy {
    /// Access policy name (`AmazonEKSClusterAdminPolicy`, …) or its full ARN; see `arn()`.
    pub policy: String,
    /// Namespaces the policy applies in; empty for the whole cluster.
    #[serde(default)]
    pub namespaces: Vec<String>,
}

impl AccessPolicy {
    /// The policy's ARN, from its name or as written.
    pub fn arn(&self) -> String {
        if self.policy.starts_with("arn:") {
            self.policy.clone()
        } else {
            format!("arn:aws:eks::aws:cluster-access-policy/{}", self.policy)
        }
    }
}

/// How the private subnets of a VPC kbp creates reach the internet (`vpc.nat_gateway`, default `single`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NatGatewayMode {
    /// No NAT gateway: the private subnets get no route to the internet (nodes need VPC endpoints to join).
    None,
    /// One NAT gateway, in the first zone, shared by every private subnet.
    Single,
    /// One NAT gateway per availability zone, each private subnet routed to its own zone's.
    PerAz,
}

/// The `[vpc]` table: the network the stack runs in, and the tags kbp adds to its subnets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Vpc {
    /// Whether kbp creates the VPC or uses an existing one, with that choice's fields.
    #[serde(flatten)]
    pub network: Network,
    /// Extra tags on the private subnets (the discovery and internal-elb tags are implied).
    pub private_subnet_tags: BTreeMap<String, String>,
    /// Extra tags on the public subnets (the elb tag is implied).
    pub public_subnet_tags: BTreeMap<String, String>,
}

/// A VPC kbp creates ("managed network"), or an existing one someone else owns ("existing network", when `vpc.id`
/// is set). Each holds only its own fields: what the blueprint writes of the other is refused by validation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Network {
    /// An existing VPC, named by `vpc.id`.
    Existing(ExistingNetwork),
    /// A VPC kbp creates (no `vpc.id`).
    Managed(ManagedNetwork),
}

/// A VPC the stack uses but does not own: kbp reads it and its subnets, and only tags the subnets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExistingNetwork {
    /// The VPC's ID.
    pub id: String,
    /// The private subnets (cluster and nodes), at least two.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub private_subnet_ids: Vec<String>,
    /// The public subnets (internet-facing load balancers).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub public_subnet_ids: Vec<String>,
    /// Extra security groups of the cluster and of Karpenter's nodes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub security_group_ids: Vec<String>,
}

/// A VPC kbp creates, with its subnets, gateways and routes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManagedNetwork {
    /// Address range of the VPC (default `10.0.0.0/16`).
    pub cidr: Ipv4Net,
    /// Availability zone names, resolved (from `azs = N` they are the region's first N letters).
    pub azs: Vec<String>,
    /// One private subnet per AZ, in the order of `azs`.
    pub private_subnets: Vec<Ipv4Net>,
    /// One public subnet per AZ, in the order of `azs`.
    pub public_subnets: Vec<Ipv4Net>,
    /// NAT gateways for the private subnets.
    pub nat_gateway: NatGatewayMode,
    /// Give instances DNS host names (default true; EKS needs them for private endpoint access).
    pub enable_dns_hostnames: bool,
    /// Tags on the VPC and its network resources (besides cluster.tags).
    pub tags: BTreeMap<String, String>,
}

/// The `[vpc]` fields that describe a VPC kbp creates, refused with `vpc.id`.
pub(crate) const MANAGED_NETWORK_ONLY: &[&str] =
    &["cidr", "azs", "private_subnets", "public_subnets", "nat_gateway", "enable_dns_hostnames", "tags"];

/// The `[vpc]` fields that name parts of an existing VPC, refused without `vpc.id`.
pub(crate) const EXISTING_NETWORK_ONLY: &[(&str, &str)] =
    &[("private_subnet_ids", "subnets"), ("public_subnet_ids", "subnets"), ("security_group_ids", "security groups")];

impl Vpc {
    /// The existing VPC the blueprint names, if kbp does not create one.
    pub fn existing(&self) -> Option<&ExistingNetwork> {
        match &self.network {
            Network::Existing(e) => Some(e),
            Network::Managed(_) => None,
        }
    }

    /// The VPC kbp creates, if the blueprint names no existing one.
    pub fn managed(&self) -> Option<&ManagedNetwork> {
        match &self.network {
            Network::Managed(m) => Some(m),
            Network::Existing(_) => None,
        }
    }

    /// Security groups the blueprint adds to the cluster's and the nodes' (an existing VPC's only).
    pub fn security_group_ids(&self) -> &[String] {
        self.existing().map_or(&[], |e| &e.security_group_ids)
    }

    /// The tags of the VPC kbp creates and its network resources (none for an existing VPC).
    pub fn tags(&self) -> &BTreeMap<String, String> {
        static NONE: BTreeMap<String, String> = BTreeMap::new();
        match &self.network {
            Network::Managed(m) => &m.tags,
            Network::Existing(_) => &NONE,
        }
    }
}

/// The managed node group that runs only the Karpenter controller (and CoreDNS).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeGroup {
    /// Name of the EKS managed node group (default `karpenter`).
    pub name: String,
    /// EKS AMI type of the nodes, Linux only (default `BOTTLEROCKET_x86_64`).
    pub ami_type: String,
    /// EC2 instance types of the node group (default `m5.large`).
    pub instance_types: Vec<String>,
    /// EKS purchase option: `ON_DEMAND` (default), `SPOT` or `CAPACITY_BLOCK`.
    pub capacity_type: String,
    /// Minimum number of nodes in the group's Auto Scaling group (default 2).
    pub min_size: u32,
    /// Maximum number of nodes (default 3); at least `desired_size`.
    pub max_size: u32,
    /// Number of nodes EKS starts with (default 2), from `min_size` to `max_size`.
    pub desired_size: u32,
    /// Root disk in GiB.
    pub disk_size: u32,
    /// Extra labels; `karpenter.sh/controller=true` is always added.
    pub labels: BTreeMap<String, String>,
    /// Extra taints; `karpenter.sh/controller=true:NoSchedule` is always added.
    pub taints: Vec<Taint>,
    /// The nodes' Kubernetes version when held back from the cluster's.
    #[serde(default)]
    pub version: Option<String>,
    /// A pinned AMI release version.
    #[serde(default)]
    pub release_version: Option<String>,
    /// How many nodes EKS may replace at once on a version or launch-configuration update.
    #[serde(default)]
    pub update_config: UpdateConfig,
}

impl NodeGroup {
    /// The nodes' Kubernetes version: the pin, else the cluster's.
    pub fn kubernetes_version<'a>(&'a self, cluster: &'a Cluster) -> &'a str {
        self.version.as_deref().unwrap_or(&cluster.version)
    }
}

/// How many nodes EKS takes out of service at once while replacing them; neither set is EKS's default (one).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UpdateConfig {
    /// At most this many nodes unavailable at once.
    #[serde(default)]
    pub max_unavailable: Option<u32>,
    /// At most this percentage of the nodes unavailable at once; exclusive with `max_unavailable`.
    #[serde(default)]
    pub max_unavailable_percentage: Option<u32>,
}

/// One `[addons.<name>]` table: an EKS add-on kbp installs, at a pinned version or the newest the cluster takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Addon {
    /// Pinned version; None means the latest version compatible with the cluster.
    pub version: Option<String>,
    /// JSON configuration values passed to EKS as they are.
    pub configuration_values: Option<String>,
}

/// How the Karpenter controller's service account gets its IAM role (`karpenter.identity`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Identity {
    /// EKS Pod Identity: a pod identity association, through the `eks-pod-identity-agent` add-on (the default).
    PodIdentity,
    /// IAM Roles for Service Accounts: an OIDC provider for the cluster and a role-arn annotation on the service
    /// account.
    Irsa,
}

/// The `[karpenter]` table: the controller release, its IAM roles and its Helm chart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Karpenter {
    /// Karpenter release (chart, CRDs and image tag), such as `1.14.1`.
    pub version: String,
    /// Kubernetes namespace of the controller (default `karpenter`).
    pub namespace: String,
    /// How the controller gets its IAM role (default Pod Identity).
    pub identity: Identity,
    /// Create the SQS interruption queue and the EventBridge rules that feed it Spot and health events (default true).
    pub interruption_queue: bool,
    /// Ensure the account's EC2 Spot service-linked role exists.
    pub spot: bool,
    /// Controller Deployment replicas: one leader, the others on standby (default 2).
    pub replicas: u32,
    /// IAM role name of the nodes Karpenter launches.
    pub node_role_name: String,
    /// IAM role name of the controller.
    pub controller_role_name: String,
    /// The release's Helm chart: an `oci://` reference, or a local chart directory or `.tgz` (made absolute).
    pub chart: String,
    /// Helm values files, merged in order over what kbp sets (made absolute).
    #[serde(default)]
    pub values_files: Vec<String>,
    /// The chart's values written inline (`[karpenter.values]`), merged last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<serde_json::Value>,
    /// API versions the cluster serves beyond Kubernetes' own (`helm template --api-versions`).
    #[serde(default)]
    pub api_versions: Vec<String>,
    /// The user's values: the values files in order, then `values`; filled in when the blueprint is loaded.
    #[serde(skip)]
    pub user_values: serde_json::Value,
    /// A local directory of CRD YAML files used instead of the chart, as written (relative to the blueprint).
    pub crds_dir: Option<String>,
    /// Controller image repository; the tag is the version.
    pub image: String,
    /// Controller log level: `debug`, `info` (default) or `error`.
    pub log_level: String,
    /// CPU request and limit of each controller pod, a Kubernetes quantity (default `1`).
    pub cpu: String,
    /// Memory request and limit of each controller pod, a Kubernetes quantity (default `1Gi`).
    pub memory: String,
    /// How long apply waits for the controller to be Available (a Go-style duration).
    pub rollout_timeout: String,
}

/// One `[node_classes.<name>]` table: an EC2NodeClass, which tells Karpenter what to launch nodes with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeClass {
    /// AMI alias, `family@version`, such as `bottlerocket@latest` or `al2023@v20250505`.
    pub ami_alias: String,
    /// The volume kubelet and containers use.
    pub root_volume: RootVolume,
    /// Tags on the instances, volumes and launch templates Karpenter creates for this class.
    pub tags: BTreeMap<String, String>,
    /// The other fields of the EC2NodeClass `spec` the blueprint writes, as written (see
    /// `blueprint::crd_fields`, which names them as the CRD does).
    #[serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")]
    pub spec: BTreeMap<String, serde_json::Value>,
}

impl NodeClass {
    /// Whether the class launches Windows nodes (`windows2019`, `windows2022`, `windows2025`).
    pub fn windows(&self) -> bool {
        self.family().starts_with("windows")
    }

    /// The AMI family the class launches, lower case (`bottlerocket`, `al2023`, `windows2022`, `custom`…): from
    /// `ami_selector_terms`' alias or `ami_family` when the blueprint writes them, else from `ami_alias`.
    pub fn family(&self) -> String {
        ami_family(&self.ami_alias, &self.spec)
    }
}

/// The AMI family of a node class whose `ami_alias` and other CRD fields (`spec`, named as written or as the CRD
/// names them) are these.
pub fn ami_family(ami_alias: &str, spec: &BTreeMap<String, serde_json::Value>) -> String {
    let field = |name: &str| spec.iter().find(|(k, _)| k.replace('_', "").eq_ignore_ascii_case(name)).map(|(_, v)| v);
    let alias = field("amiSelectorTerms")
        .and_then(|terms| terms.as_array()?.iter().find_map(|t| t.as_object()?.get("alias")?.as_str()));
    let family = match (alias, field("amiFamily").and_then(|f| f.as_str())) {
        (Some(alias), _) => alias,
        (None, Some(family)) if field("amiSelectorTerms").is_some() => family,
        _ => ami_alias,
    };
    family.split('@').next().unwrap_or_default().to_ascii_lowercase()
}

/// The EBS volume kubelet and containers use (`root_volume`); Bottlerocket also gets its own OS volume.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RootVolume {
    /// Block device the volume is attached as; the default depends on the AMI family (`/dev/xvdb` for Bottlerocket).
    pub device_name: String,
    /// Kubernetes quantity, such as "20Gi".
    pub size: String,
    /// gp3, gp2, io1, io2, sc1, st1 or standard. Written `type` in the blueprint.
    #[serde(rename = "type")]
    pub volume_type: String,
    /// Encrypt the EBS volume (default true).
    pub encrypted: bool,
    /// Provisioned IOPS, for io1, io2 and gp3 only; `None` for the volume type's default.
    pub iops: Option<i64>,
    /// Throughput in MiB/s, gp3 only; `None` for gp3's default.
    pub throughput: Option<i64>,
}

/// One `[node_pools.<name>]` table: a Karpenter NodePool, which decides which nodes may be launched and when removed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodePool {
    /// Name of the `[node_classes.<name>]` the pool launches nodes with (default `default`).
    pub node_class: String,
    /// Priority among pools, higher tried first; `None` leaves `weight` out of the NodePool (Karpenter counts it 0).
    pub weight: Option<i64>,
    /// Constraints (node label selectors) on the instances the pool may launch.
    pub requirements: Vec<Requirement>,
    /// Resource name → Kubernetes quantity ("1000", "1000Gi", "nvidia.com/gpu" = "8"), as a string; anything
    /// else as written, for the CRD to judge.
    pub limits: BTreeMap<String, serde_json::Value>,
    /// Labels of the pool's nodes.
    pub labels: BTreeMap<String, String>,
    /// Taints of the pool's nodes.
    pub taints: Vec<Taint>,
    /// Taints present at startup that a DaemonSet removes once the node is ready.
    pub startup_taints: Vec<Taint>,
    /// Duration such as "720h", or "Never".
    pub expire_after: String,
    /// How long draining may take before Karpenter deletes pods anyway; `None` to wait for them.
    pub termination_grace_period: Option<String>,
    /// Consolidation policy and disruption budgets.
    pub disruption: Disruption,
    /// The other fields of the NodePool's `spec`, `spec.template.spec` or `spec.template.metadata`, as written.
    #[serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")]
    pub spec: BTreeMap<String, serde_json::Value>,
}

/// One NodePool requirement: a node label, an operator and the values it allows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Requirement {
    /// Node label the requirement selects on, such as `karpenter.k8s.aws/instance-category`.
    pub key: String,
    /// In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte.
    pub operator: String,
    /// Values of the label; one non-negative integer for `Gt`, `Lt`, `Gte` and `Lte`, none for `Exists`.
    pub values: Vec<String>,
    /// Minimum number of distinct values Karpenter must keep flexible for this key; `None` for no minimum.
    pub min_values: Option<i64>,
}

/// A Kubernetes taint, of the controller node group or of a NodePool's nodes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Taint {
    /// Taint key (`[prefix/]name`).
    pub key: String,
    /// Taint value; `None` for a taint with a key only.
    pub value: Option<String>,
    /// NoSchedule, PreferNoSchedule or NoExecute. Always set on the node group; a NodePool's taint without one
    /// is left for its CRD to refuse.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub effect: String,
}

/// A NodePool's `disruption`: when Karpenter may consolidate nodes, and how many at once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Disruption {
    /// WhenEmpty or WhenEmptyOrUnderutilized.
    pub consolidation_policy: String,
    /// Duration such as "30s", or "Never".
    pub consolidate_after: String,
    /// Limits on how many nodes may be disrupted at once (default one budget of `10%`).
    pub budgets: Vec<Budget>,
}

/// A disruption budget: at most `nodes` disrupted at once, optionally only during a scheduled window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// A count ("10") or a percentage ("10%").
    pub nodes: String,
    /// When the budget starts to apply, in cron syntax (UTC); needs `duration`. `None` for always.
    pub schedule: Option<String>,
    /// How long the budget applies after each `schedule` hit, a duration; needs `schedule`.
    pub duration: Option<String>,
    /// Disruption reasons the budget limits (`Underutilized`, `Empty`, `Drifted`); all when empty.
    pub reasons: Vec<String>,
}

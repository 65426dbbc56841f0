//! The typed blueprint: what `blueprint::load` returns once the TOML text has been parsed, checked against the
//! schema, had its defaults applied and passed semantic validation. Every later stage reads only these types.

use std::collections::BTreeMap;

use ipnet::Ipv4Net;
use serde::{Deserialize, Serialize};

/// A whole stack: one EKS cluster and everything Karpenter needs around it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Blueprint {
    pub cluster: Cluster,
    pub vpc: Vpc,
    pub node_group: NodeGroup,
    /// Keyed by EKS add-on name (`vpc-cni`, `kube-proxy`, `coredns`, `eks-pod-identity-agent`); disabled add-ons
    /// are absent.
    pub addons: BTreeMap<String, Addon>,
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
    pub from: String,
    pub to: String,
}

/// One `[[import]]` table: the resource `id` in AWS goes into state at the address `to`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Import {
    pub to: String,
    pub id: String,
}

/// The blueprint's `[state]` table; `--state`/`KBP_STATE` override it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateSettings {
    /// `local` or `s3`.
    pub backend: String,
    pub path: Option<String>,
    pub bucket: Option<String>,
    pub key: Option<String>,
    pub region: Option<String>,
    pub kms_key_id: Option<String>,
    pub profile: Option<String>,
    pub role_arn: Option<String>,
}

/// The default state file of stack `stack`, `.kbp/<stack>.state.json`, relative to the blueprint's directory
/// (relative to the working directory where there is no blueprint).
pub fn default_state_file(stack: &str) -> String {
    format!(".kbp/{stack}.state.json")
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cluster {
    pub name: String,
    pub region: String,
    /// Kubernetes minor version, such as "1.33".
    pub version: String,
    pub endpoint_public_access: bool,
    pub endpoint_private_access: bool,
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
    pub principal_arn: String,
    #[serde(rename = "type")]
    pub entry_type: String,
    #[serde(default)]
    pub username: Option<String>,
    #[serde(default)]
    pub kubernetes_groups: Vec<String>,
    #[serde(default)]
    pub policies: Vec<AccessPolicy>,
}

/// An EKS access policy of an access entry, cluster-wide (no namespaces) or in the namespaces named.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccessPolicy {
    pub policy: String,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NatGatewayMode {
    None,
    Single,
    PerAz,
}

/// The `[vpc]` table: the network the stack runs in, and the tags kbp adds to its subnets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Vpc {
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
    Existing(ExistingNetwork),
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
    pub cidr: Ipv4Net,
    /// Availability zone names, resolved (from `azs = N` they are the region's first N letters).
    pub azs: Vec<String>,
    /// One private subnet per AZ, in the order of `azs`.
    pub private_subnets: Vec<Ipv4Net>,
    /// One public subnet per AZ, in the order of `azs`.
    pub public_subnets: Vec<Ipv4Net>,
    pub nat_gateway: NatGatewayMode,
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
    pub name: String,
    pub ami_type: String,
    pub instance_types: Vec<String>,
    pub capacity_type: String,
    pub min_size: u32,
    pub max_size: u32,
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
    #[serde(default)]
    pub max_unavailable: Option<u32>,
    #[serde(default)]
    pub max_unavailable_percentage: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Addon {
    /// Pinned version; None means the latest version compatible with the cluster.
    pub version: Option<String>,
    /// JSON configuration values passed to EKS as they are.
    pub configuration_values: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Identity {
    PodIdentity,
    Irsa,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Karpenter {
    pub version: String,
    pub namespace: String,
    pub identity: Identity,
    pub interruption_queue: bool,
    /// Ensure the account's EC2 Spot service-linked role exists.
    pub spot: bool,
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
    pub log_level: String,
    pub cpu: String,
    pub memory: String,
    /// How long apply waits for the controller to be Available (a Go-style duration).
    pub rollout_timeout: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeClass {
    /// AMI alias, `family@version`, such as `bottlerocket@latest` or `al2023@v20250505`.
    pub ami_alias: String,
    pub root_volume: RootVolume,
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RootVolume {
    pub device_name: String,
    /// Kubernetes quantity, such as "20Gi".
    pub size: String,
    /// gp3, gp2, io1, io2, sc1, st1 or standard. Written `type` in the blueprint.
    #[serde(rename = "type")]
    pub volume_type: String,
    pub encrypted: bool,
    pub iops: Option<i64>,
    pub throughput: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodePool {
    pub node_class: String,
    pub weight: Option<i64>,
    pub requirements: Vec<Requirement>,
    /// Resource name → Kubernetes quantity ("1000", "1000Gi", "nvidia.com/gpu" = "8"), as a string; anything
    /// else as written, for the CRD to judge.
    pub limits: BTreeMap<String, serde_json::Value>,
    pub labels: BTreeMap<String, String>,
    pub taints: Vec<Taint>,
    pub startup_taints: Vec<Taint>,
    /// Duration such as "720h", or "Never".
    pub expire_after: String,
    pub termination_grace_period: Option<String>,
    pub disruption: Disruption,
    /// The other fields of the NodePool's `spec`, `spec.template.spec` or `spec.template.metadata`, as written.
    #[serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")]
    pub spec: BTreeMap<String, serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Requirement {
    pub key: String,
    /// In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte.
    pub operator: String,
    pub values: Vec<String>,
    pub min_values: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Taint {
    pub key: String,
    pub value: Option<String>,
    /// NoSchedule, PreferNoSchedule or NoExecute. Always set on the node group; a NodePool's taint without one
    /// is left for its CRD to refuse.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub effect: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Disruption {
    /// WhenEmpty or WhenEmptyOrUnderutilized.
    pub consolidation_policy: String,
    /// Duration such as "30s", or "Never".
    pub consolidate_after: String,
    pub budgets: Vec<Budget>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// A count ("10") or a percentage ("10%").
    pub nodes: String,
    pub schedule: Option<String>,
    pub duration: Option<String>,
    pub reasons: Vec<String>,
}

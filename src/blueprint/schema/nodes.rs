//! The schema of what Karpenter launches: EC2NodeClasses and NodePools (fields of the v1.14.1 CRDs), and the
//! taints the controller's node group shares with them.

use super::stack::{LABEL_VALUE, TAG_VALUE};
use super::Presence::{Computed, Default, Optional, Required};
use super::{field, str_rule, Field, Rule, Ty};
use crate::blueprint::rules::{k8s, karpenter};

/// A taint, as both the node group and NodePools take it (NodePool CRD `taints[]` / `startupTaints[]`).
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
pub(super) const TAINTS: Ty = Ty::List { item: &TAINT, max: 50, unique: false, non_empty: false };

const ROOT_VOLUME: &[Field] = &[
    field(
        "size",
        str_rule("a volume size such as `20Gi` (EC2NodeClass volumeSize pattern)", karpenter::volume_size),
        Default("\"20Gi\""),
        "Volume size.",
    ),
    field(
        "type",
        Ty::Enum(&["standard", "io1", "io2", "gp2", "sc1", "st1", "gp3"]),
        Default("\"gp3\""),
        "EBS volume type.",
    ),
    field("encrypted", Ty::Bool, Default("true"), "Encrypt the volume."),
    field(
        "device_name",
        str_rule("a device name such as `/dev/xvda`", karpenter::device_name),
        Computed("`/dev/xvdb` for Bottlerocket (its data volume), `/dev/sda1` for Windows, `/dev/xvda` otherwise"),
        "Block device the volume is attached as.",
    ),
    field("iops", Ty::Int { min: 100, max: 256_000 }, Optional, "Provisioned IOPS (io1, io2 and gp3 only)."),
    field("throughput", Ty::Int { min: 125, max: 2000 }, Optional, "Throughput in MiB/s (gp3 only)."),
];

pub(super) const NODE_CLASS: Ty = Ty::Table(&[
    field(
        "ami_alias",
        str_rule("an AMI alias `family@version`", karpenter::ami_alias),
        Default("\"bottlerocket@latest\""),
        "EKS-optimized AMI to use (EC2NodeClass `amiSelectorTerms[].alias`). Windows families get the node role an EC2_WINDOWS access entry; since a role has one, the classes are all Windows or all Linux.",
    ),
    field(
        "root_volume",
        Ty::Table(ROOT_VOLUME),
        Default("{}"),
        "The volume kubelet and containers use. With Bottlerocket, which boots from a volume of its own, kbp \
         declares that one too: 4Gi, gp3, encrypted, at `/dev/xvda`.",
    ),
    field(
        "tags",
        Ty::Map {
            key: Rule {
                expected: "an AWS tag key not reserved by Karpenter or EKS",
                check: karpenter::nodeclass_tag_key,
            },
            value: &TAG_VALUE,
            max: 48,
            implied: &[],
        },
        Default("{}"),
        "Tags on the instances, volumes and launch templates Karpenter creates.",
    ),
]);

const REQUIREMENT: Ty = Ty::Table(&[
    field(
        "key",
        str_rule("a label key Karpenter allows in requirements", karpenter::requirement_key),
        Required,
        "Node label the requirement selects on.",
    ),
    field(
        "operator",
        Ty::Enum(&["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte"]),
        Required,
        "How the label relates to `values`.",
    ),
    field(
        "values",
        Ty::List { item: &Ty::Str(None), max: usize::MAX, unique: false, non_empty: false },
        Default("[]"),
        "Values; at least one for `In`, exactly one non-negative integer for `Gt`, `Lt`, `Gte` and `Lte`.",
    ),
    field(
        "min_values",
        Ty::Int { min: 1, max: 50 },
        Optional,
        "Minimum number of distinct values Karpenter must keep (at most the number of `values` with `In`).",
    ),
]);

const BUDGET: Ty = Ty::Table(&[
    field(
        "nodes",
        Ty::IntOrStr(Rule { expected: "a node count or a percentage such as `10%`", check: k8s::budget_nodes }),
        Default("\"10%\""),
        "How many nodes may be disrupted at once.",
    ),
    field(
        "schedule",
        str_rule("a cron schedule", k8s::schedule),
        Optional,
        "When the budget starts to apply (cron syntax, UTC); needs `duration`.",
    ),
    field(
        "duration",
        str_rule("hours and minutes such as `1h30m`", k8s::budget_duration),
        Optional,
        "How long the budget applies after each `schedule` hit; needs `schedule`.",
    ),
    field(
        "reasons",
        Ty::List { item: &Ty::Enum(&["Underutilized", "Empty", "Drifted"]), max: 50, unique: true, non_empty: false },
        Default("[]"),
        "Disruption reasons the budget limits; all when empty.",
    ),
]);

const DISRUPTION: &[Field] = &[
    field(
        "consolidation_policy",
        Ty::Enum(&["WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"]),
        Default("\"WhenEmptyOrUnderutilized\""),
        "Which nodes consolidation may remove or replace.",
    ),
    field(
        "consolidate_after",
        str_rule("a duration such as `30s`, or `Never`", k8s::duration_or_never),
        Default("\"0s\""),
        "How long a node must be consolidatable before Karpenter acts.",
    ),
    field(
        "budgets",
        Ty::List { item: &BUDGET, max: 50, unique: false, non_empty: false },
        Default("[{ nodes = \"10%\" }]"),
        "Limits on how many nodes may be disrupted at once.",
    ),
];

const DURATION_OR_NEVER: Ty = str_rule("a duration such as `720h`, or `Never`", k8s::duration_or_never);

pub(super) const NODE_POOL: Ty = Ty::Table(&[
    field(
        "node_class",
        str_rule("a node class name", k8s::object_name),
        Default("\"default\""),
        "Name of the `[node_classes.<name>]` the pool launches nodes with.",
    ),
    field("weight", Ty::Int { min: 1, max: 100 }, Optional, "Priority among pools; higher is tried first."),
    field(
        "requirements",
        Ty::List { item: &REQUIREMENT, max: 100, unique: false, non_empty: false },
        Default("[]"),
        "Constraints on the instances the pool may launch.",
    ),
    field(
        "limits",
        Ty::Map {
            key: Rule { expected: "a resource name", check: k8s::qualified_name },
            value: &Ty::IntOrStr(Rule { expected: "a Kubernetes quantity", check: k8s::quantity }),
            max: usize::MAX,
            implied: &[],
        },
        Default("{}"),
        "Caps on the total resources of the pool's nodes, such as `cpu = 1000` or `\"nvidia.com/gpu\" = 8`.",
    ),
    field(
        "labels",
        Ty::Map {
            key: Rule { expected: "a label key Karpenter allows on nodes", check: karpenter::nodepool_label_key },
            value: &LABEL_VALUE,
            max: 100,
            implied: &[],
        },
        Default("{}"),
        "Labels of the pool's nodes.",
    ),
    field("taints", TAINTS, Default("[]"), "Taints of the pool's nodes."),
    field("startup_taints", TAINTS, Default("[]"), "Taints a DaemonSet removes once the node is ready."),
    field("expire_after", DURATION_OR_NEVER, Default("\"720h\""), "Age at which nodes are replaced."),
    field(
        "termination_grace_period",
        str_rule("a duration such as `48h`", k8s::duration),
        Optional,
        "How long draining may take before pods are deleted anyway.",
    ),
    field("disruption", Ty::Table(DISRUPTION), Default("{}"), "Consolidation and disruption budgets."),
]);

/// The pool of the karpenter-mng pattern, created when the blueprint has no `[node_pools]`.
pub(super) const DEFAULT_NODE_POOLS: &str = r#"{ default = { requirements = [
    { key = "karpenter.k8s.aws/instance-category", operator = "In", values = ["c", "m", "r"] },
    { key = "karpenter.k8s.aws/instance-cpu", operator = "In", values = ["4", "8", "16", "32"] },
    { key = "karpenter.k8s.aws/instance-generation", operator = "Gt", values = ["2"] },
  ],
  limits = { cpu = 1000 },
  disruption = { consolidation_policy = "WhenEmpty", consolidate_after = "30s" } } }"#;

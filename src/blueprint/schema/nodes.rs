//! The schema of what Karpenter launches: EC2NodeClasses and NodePools (fields of the v1.14.1 CRDs).

use super::stack::TAG_VALUE;
use super::Presence::{Computed, Default, Optional, Required};
use super::{field, Field, Rule, Ty, CRD_JUDGED, OTHER_CRD_FIELDS};
use crate::blueprint::rules::{k8s, karpenter};

/// A NodePool's taint: the CRD judges key, value and effect.
const POOL_TAINT: Ty = Ty::Table(&[
    field("key", ANY, Required, "Taint key."),
    field("value", ANY, Optional, "Taint value."),
    field(
        "effect",
        ANY,
        Optional,
        "What the taint does to pods that do not tolerate it: `NoSchedule`, `PreferNoSchedule` or `NoExecute`.",
    ),
]);
const POOL_TAINTS: Ty = Ty::List { item: &POOL_TAINT, max: usize::MAX, unique: false, non_empty: false };

/// A string the CRD of `karpenter.version` judges (its patterns, enums and CEL rules), not kbp's schema.
const ANY: Ty = Ty::Str(None);
/// An integer the CRD judges.
const ANY_INT: Ty = Ty::Int { min: i64::MIN, max: i64::MAX };
/// Integer-or-string the CRD judges.
const ANY_INT_OR_STR: Ty = Ty::IntOrStr(Rule { expected: CRD_JUDGED, check: k8s::anything });

const ROOT_VOLUME: &[Field] = &[
    field("size", ANY, Default("\"20Gi\""), "Volume size."),
    field("type", ANY, Default("\"gp3\""), "EBS volume type."),
    field("encrypted", Ty::Bool, Default("true"), "Encrypt the volume."),
    field(
        "device_name",
        ANY,
        Computed("`/dev/xvdb` for Bottlerocket (its data volume), `/dev/sda1` for Windows, `/dev/xvda` otherwise"),
        "Block device the volume is attached as.",
    ),
    field("iops", ANY_INT, Optional, "Provisioned IOPS (io1, io2 and gp3 only)."),
    field("throughput", ANY_INT, Optional, "Throughput in MiB/s (gp3 only)."),
];

pub(super) const NODE_CLASS: Ty = Ty::Table(&[
    field(
        "ami_alias",
        ANY,
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
            key: Rule { expected: "an AWS tag key", check: k8s::anything },
            value: &TAG_VALUE,
            max: usize::MAX,
            implied: &[],
        },
        Default("{}"),
        "Tags on the instances, volumes and launch templates Karpenter creates.",
    ),
    field(
        OTHER_CRD_FIELDS,
        Ty::Str(None),
        Optional,
        "Any other field of the EC2NodeClass `spec`, by its CRD name in snake_case (`subnet_selector_terms`, \
         `kms_key_id`) or as the CRD spells it, at any depth; map keys (tags, labels) are kept as written. It \
         replaces what kbp would set there (`ami_selector_terms` replaces `ami_alias`, `block_device_mappings` \
         `root_volume`, `instance_profile` the node role); tables such as `metadata_options` are merged into \
         kbp's. The CRD of `karpenter.version` checks them.",
    ),
]);

const REQUIREMENT: Ty = Ty::Table(&[
    field("key", ANY, Required, "Node label the requirement selects on."),
    field("operator", ANY, Required, "How the label relates to `values`."),
    field(
        "values",
        Ty::List { item: &Ty::Str(None), max: usize::MAX, unique: false, non_empty: false },
        Default("[]"),
        "Values; at least one for `In`, exactly one non-negative integer for `Gt`, `Lt`, `Gte` and `Lte`.",
    ),
    field(
        "min_values",
        ANY_INT,
        Optional,
        "Minimum number of distinct values Karpenter must keep (at most the number of `values` with `In`).",
    ),
]);

const BUDGET: Ty = Ty::Table(&[
    field("nodes", ANY_INT_OR_STR, Default("\"10%\""), "How many nodes may be disrupted at once."),
    field("schedule", ANY, Optional, "When the budget starts to apply (cron syntax, UTC); needs `duration`."),
    field("duration", ANY, Optional, "How long the budget applies after each `schedule` hit; needs `schedule`."),
    field(
        "reasons",
        Ty::List { item: &ANY, max: usize::MAX, unique: false, non_empty: false },
        Default("[]"),
        "Disruption reasons the budget limits; all when empty.",
    ),
]);

const DISRUPTION: &[Field] = &[
    field(
        "consolidation_policy",
        ANY,
        Default("\"WhenEmptyOrUnderutilized\""),
        "Which nodes consolidation may remove or replace.",
    ),
    field("consolidate_after", ANY, Default("\"0s\""), "How long a node must be consolidatable before Karpenter acts."),
    field(
        "budgets",
        Ty::List { item: &BUDGET, max: usize::MAX, unique: false, non_empty: false },
        Default("[{ nodes = \"10%\" }]"),
        "Limits on how many nodes may be disrupted at once.",
    ),
];

const DURATION_OR_NEVER: Ty = ANY;

pub(super) const NODE_POOL: Ty = Ty::Table(&[
    field(
        "node_class",
        ANY,
        Default("\"default\""),
        "Name of the `[node_classes.<name>]` the pool launches nodes with.",
    ),
    field("weight", ANY_INT, Optional, "Priority among pools; higher is tried first."),
    field(
        "requirements",
        Ty::List { item: &REQUIREMENT, max: usize::MAX, unique: false, non_empty: false },
        Default("[]"),
        "Constraints on the instances the pool may launch.",
    ),
    field(
        "limits",
        Ty::Map {
            key: Rule { expected: "a resource name", check: k8s::anything },
            value: &ANY_INT_OR_STR,
            max: usize::MAX,
            implied: &[],
        },
        Default("{}"),
        "Caps on the total resources of the pool's nodes, such as `cpu = 1000` or `\"nvidia.com/gpu\" = 8`.",
    ),
    field(
        "labels",
        Ty::Map {
            key: Rule { expected: "a label key", check: karpenter::nodepool_label_key },
            value: &ANY,
            max: usize::MAX,
            implied: &[],
        },
        Default("{}"),
        "Labels of the pool's nodes.",
    ),
    field("taints", POOL_TAINTS, Default("[]"), "Taints of the pool's nodes."),
    field("startup_taints", POOL_TAINTS, Default("[]"), "Taints a DaemonSet removes once the node is ready."),
    field("expire_after", DURATION_OR_NEVER, Default("\"720h\""), "Age at which nodes are replaced."),
    field("termination_grace_period", ANY, Optional, "How long draining may take before pods are deleted anyway."),
    field("disruption", Ty::Table(DISRUPTION), Default("{}"), "Consolidation and disruption budgets."),
    field(
        OTHER_CRD_FIELDS,
        Ty::Str(None),
        Optional,
        "Any other field of the NodePool's `spec`, `spec.template.spec` or `spec.template.metadata` \
         (`annotations`, `replicas`, …), named and checked as for node classes.",
    ),
]);

/// The pool of the karpenter-mng pattern, created when the blueprint has no `[node_pools]`.
pub(super) const DEFAULT_NODE_POOLS: &str = r#"{ default = { requirements = [
    { key = "karpenter.k8s.aws/instance-category", operator = "In", values = ["c", "m", "r"] },
    { key = "karpenter.k8s.aws/instance-cpu", operator = "In", values = ["4", "8", "16", "32"] },
    { key = "karpenter.k8s.aws/instance-generation", operator = "Gt", values = ["2"] },
  ],
  limits = { cpu = 1000 },
  disruption = { consolidation_policy = "WhenEmpty", consolidate_after = "30s" } } }"#;

//! The blueprint schema, written once as data: every table, field, type, default, constraint and one-line doc.
//! The walker checks documents against it, the reference in docs/blueprint.md is rendered from it, `--set` consults
//! it for the defaults of tables it has to create, and `kbp schema` prints it as a JSON Schema (`json_schema`).

use super::rules::{aws, k8s, Check};

mod import;
pub(super) mod json_schema;
mod nodes;
mod stack;
mod state;

use nodes::{DEFAULT_NODE_POOLS, NODE_CLASS, NODE_POOL};
use stack::{ADDON, CLUSTER, KARPENTER, NODE_GROUP, VPC};
use state::STATE;

/// A string rule with the wording used for it in messages ("expected …") and in the reference.
#[derive(Clone, Copy)]
pub(crate) struct Rule {
    pub expected: &'static str,
    pub check: Check,
}

pub(crate) enum Ty {
    Bool,
    Int {
        min: i64,
        max: i64,
    },
    Str(Option<Rule>),
    Enum(&'static [&'static str]),
    /// An integer or a string (Kubernetes int-or-string), stored as a string.
    IntOrStr(Rule),
    List {
        item: &'static Ty,
        max: usize,
        unique: bool,
        non_empty: bool,
    },
    Table(&'static [Field]),
    /// A table with user-chosen keys. `implied` keys are present even when not written (the default add-ons).
    Map {
        key: Rule,
        value: &'static Ty,
        max: usize,
        implied: &'static [&'static str],
    },
    /// Any table, kept as written: another program's settings kbp passes on (a Helm chart's values), judged
    /// against what that program accepts, not against this schema.
    Free,
    /// An integer count, or the list it stands for (`azs = 3` or `azs = ["us-west-2a", …]`).
    CountOr {
        min: i64,
        max: i64,
        list: &'static Ty,
    },
}

pub(crate) enum Presence {
    Required,
    /// Absent means None.
    Optional,
    /// The default, as a TOML value; it is checked against the schema like anything the user writes.
    Default(&'static str),
    /// Computed from other fields when absent; the text says how.
    Computed(&'static str),
}

/// The name of the pseudo-field of a table that also takes every other field of a CRD object's spec (node
/// classes and pools): those are kept as written, mapped onto the CRD by name and judged by the CRD.
pub(crate) const OTHER_CRD_FIELDS: &str = "*";

/// What an integer-or-string field the CRD judges is said to expect; such a field passes any value on to it.
pub(crate) const CRD_JUDGED: &str = "an integer or a string";

pub(crate) struct Field {
    pub name: &'static str,
    pub ty: Ty,
    pub presence: Presence,
    pub doc: &'static str,
}

pub(super) const fn field(name: &'static str, ty: Ty, presence: Presence, doc: &'static str) -> Field {
    Field { name, ty, presence, doc }
}

pub(super) const fn rule(expected: &'static str, check: Check) -> Option<Rule> {
    Some(Rule { expected, check })
}

pub(super) const fn str_rule(expected: &'static str, check: Check) -> Ty {
    Ty::Str(rule(expected, check))
}

use Presence::{Default, Required};

pub(crate) const DEFAULT_ADDONS: &[&str] = &["vpc-cni", "kube-proxy", "coredns", "eks-pod-identity-agent"];

pub(crate) const BLUEPRINT: &[Field] = &[
    field("cluster", Ty::Table(CLUSTER), Required, "The EKS cluster."),
    field("vpc", Ty::Table(VPC), Default("{}"), "The VPC the cluster and its nodes live in: one kbp creates (the default), or an existing one named by `id`."),
    field("node_group", Ty::Table(NODE_GROUP), Default("{}"), "The managed node group that runs only the Karpenter controller."),
    field(
        "addons",
        Ty::Map { key: Rule { expected: "an EKS add-on name", check: aws::addon_name }, value: &ADDON, max: usize::MAX, implied: DEFAULT_ADDONS },
        Default("{}"),
        "EKS add-ons by name; `vpc-cni`, `kube-proxy`, `coredns` and `eks-pod-identity-agent` are always present unless disabled.",
    ),
    field("karpenter", Ty::Table(KARPENTER), Default("{}"), "The Karpenter controller and its AWS resources."),
    field(
        "node_classes",
        Ty::Map { key: Rule { expected: "a Kubernetes object name of at most 63 characters", check: k8s::object_name }, value: &NODE_CLASS, max: usize::MAX, implied: &[] },
        Default("{ default = {} }"),
        "EC2NodeClasses by name.",
    ),
    field(
        "node_pools",
        Ty::Map { key: Rule { expected: "a Kubernetes object name of at most 63 characters", check: k8s::object_name }, value: &NODE_POOL, max: usize::MAX, implied: &[] },
        Default(DEFAULT_NODE_POOLS),
        "NodePools by name.",
    ),
    field("state", Ty::Table(STATE), Default("{}"), "Where kbp keeps the stack's state: a local file, or S3 for teams and CI."),
    field("import", import::IMPORTS, Default("[]"), "Existing AWS resources to take under management during plan and apply, as `kbp import` does: each is read by `id` and written into state at `to` unless state already holds that address."),
    field("moved", import::MOVES, Default("[]"), "Renamed addresses (a node pool, a node class, an add-on key): the state entry at `from` moves to `to` in the next plan and apply, with no change in AWS, instead of a destroy and a create. A plan refuses a move whose `to` state already holds."),
];

const ROOT: Ty = Ty::Table(BLUEPRINT);

/// The literal default of the field at `path` (keys from the root; any key names a map entry, which has none).
pub(crate) fn default_at(path: &[&str]) -> Option<&'static str> {
    let mut ty: &'static Ty = &ROOT;
    let mut presence = None;
    for key in path {
        match ty {
            Ty::Table(fields) => {
                let f = fields.iter().find(|f| f.name == *key)?;
                (ty, presence) = (&f.ty, Some(&f.presence));
            }
            Ty::Map { value, .. } => (ty, presence) = (value, None),
            _ => return None,
        }
    }
    match presence? {
        Presence::Default(text) => Some(text),
        _ => None,
    }
}

impl Ty {
    /// The kind of TOML value the type takes, for "expected an integer, found a string".
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Ty::Bool => "a boolean",
            Ty::Int { .. } => "an integer",
            Ty::Str(_) | Ty::Enum(_) => "a string",
            Ty::IntOrStr(_) => "an integer or a string",
            Ty::List { .. } => "an array",
            Ty::Table(_) | Ty::Map { .. } | Ty::Free => "a table",
            Ty::CountOr { .. } => "an integer or an array",
        }
    }

    /// What values the type accepts, in full ("an integer from 1 to 100", "one of `In`, `NotIn`").
    pub(crate) fn expected(&self) -> String {
        match self {
            Ty::Int { min, max } => format!("an integer from {min} to {max}"),
            Ty::Str(Some(r)) | Ty::IntOrStr(r) => r.expected.to_string(),
            Ty::Enum(values) => format!("one of {}", code_list(values)),
            Ty::List { item, max, unique, non_empty } => {
                let limits = list_limits(*max, *unique, *non_empty);
                let limits: String = limits.iter().map(|l| format!(", {l}")).collect();
                format!("an array of {}{limits}", item.expected())
            }
            Ty::CountOr { min, max, list } => {
                format!("a count from {min} to {max}, or {}", list.expected())
            }
            _ => self.kind().to_string(),
        }
    }
}

/// The limits of an array type, such as "not empty" and "at most 6 items".
pub(crate) fn list_limits(max: usize, unique: bool, non_empty: bool) -> Vec<String> {
    let mut limits = Vec::new();
    if non_empty {
        limits.push("not empty".to_string());
    }
    if max != usize::MAX {
        limits.push(format!("at most {max} items"));
    }
    if unique {
        limits.push("no duplicates".to_string());
    }
    limits
}

/// "`a`, `b`, `c`"
pub(crate) fn code_list(items: &[&str]) -> String {
    items.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ")
}

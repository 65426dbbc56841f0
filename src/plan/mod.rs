//! Plans: what must change to bring AWS to the blueprint, and why. Owns the change actions (create, update,
//! replace, delete, forget) with their reasons and attribute diffs, the refresh that reads what exists now, and
//! the saved-plan file. It decides; it does not act (that is [`crate::exec`]).

pub mod diff;
pub mod drift;
pub mod import;
pub mod inputs;
pub mod make;
pub mod markdown;
pub mod notes;
pub mod objects;
pub mod refresh;
pub mod render;
pub mod shape;
pub mod skew;

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::graph::{Address, Resource};

pub use diff::{diff, diff_destroy, diff_replacing};
pub use make::{make, Made, Mode, Request};
pub use refresh::{refresh, Refreshed};

/// The version of a saved plan's format, written in each plan (`format_version`).
pub const FORMAT_VERSION: u32 = 1;

/// What applying a plan does to one resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Create what does not exist.
    Create,
    /// Change attributes AWS can change in place.
    Update,
    /// Delete, then create again: an attribute changed that AWS cannot change in place.
    Replace,
    /// Create the new one (under another name where names are unique), move what runs on the old one over, then
    /// delete it: a replacement that must not cut service (the controller's node group).
    ReplaceCreateFirst,
    /// Delete what the blueprint no longer describes (or everything, in a destroy).
    Delete,
    /// Drop from state but leave in AWS (account-wide resources such as the Spot service-linked role, and the VPC
    /// and subnets of `[vpc] id`, which are not the stack's).
    Forget,
}

impl Action {
    /// The action's sign in a plan (`+`, `~`, `-/+`, `+/-`, `-`), as Terraform prints them.
    pub fn symbol(self) -> &'static str {
        match self {
            Action::Create => "+",
            Action::Update => "~",
            Action::Replace => "-/+",
            Action::ReplaceCreateFirst => "+/-",
            Action::Delete => "-",
            Action::Forget => "-",
        }
    }

    /// Whether it makes a new object in place of the old one, either way round.
    pub fn replaces(self) -> bool {
        matches!(self, Action::Replace | Action::ReplaceCreateFirst)
    }

    /// The action in words (`replace, the new one first`), as the Markdown changes table shows it.
    pub fn verb(self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Update => "update in place",
            Action::Replace => "replace",
            Action::ReplaceCreateFirst => "replace, the new one first",
            Action::Delete => "destroy",
            Action::Forget => "forget (kept in AWS)",
        }
    }
}

/// One attribute that differs, by its path inside the attributes (`tags.team`, `scaling.max_size`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttrChange {
    /// Where in the attributes: dot-separated keys.
    pub path: String,
    /// The value now (state's); `None` for a create or an attribute that was absent.
    pub before: Option<Value>,
    /// The value after applying; `None` for a delete or an attribute that goes away.
    pub after: Option<Value>,
    /// Whether changing it makes AWS replace the resource (the kind's force-new attributes).
    pub forces_replacement: bool,
}

/// What applying a plan does to one resource, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// The resource's address in the graph.
    pub address: Address,
    /// The resource's kind (`aws_eks_node_group`).
    pub kind: String,
    /// What is done to it.
    pub action: Action,
    /// Why, in words: "not in state", "deleted outside kbp", "cidr_block forces replacement", …
    pub reason: String,
    /// The resource's provider ID, for changes to something that exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Attribute differences (update and replace); for a create, every attribute with `before` empty.
    pub attributes: Vec<AttrChange>,
    /// For a change of the Karpenter controller, the objects of its chart it creates, updates and deletes
    /// ([`objects`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objects: Vec<objects::ObjectChange>,
}

/// A state entry renamed by a `[[moved]]` block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Moved {
    /// The address state held the entry under.
    pub from: Address,
    /// The address the blueprint compiles the resource to now.
    pub to: Address,
}

/// Carries out the blueprint's `[[moved]]` blocks on `state`, in order, and returns those that moved an entry:
/// a block whose `from` state does not hold has nothing to do (it moved in an earlier apply). A block whose
/// `to` state already holds, or that would give an entry another kind, is refused.
pub fn moves(
    state: &mut crate::state::State,
    blocks: &[crate::blueprint::Moved],
    kind_at: impl Fn(&Address) -> Option<String>,
) -> Result<Vec<Moved>, String> {
    let mut done = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        let parse = |a: &str| a.parse::<Address>().map_err(|e| format!("moved[{i}]: {e}"));
        let (from, to) = (parse(&b.from)?, parse(&b.to)?);
        let Some(entry) = state.get(&from) else { continue };
        if state.get(&to).is_some() {
            return Err(format!(
                "moved[{i}]: state holds both {from} and {to}\n  hint: the move was already made by hand, or {to} is \
                 another resource: remove the [[moved]] block, or `kbp state rm` the entry that should not be there"
            ));
        }
        if let Some(kind) = kind_at(&to).filter(|k| *k != entry.kind) {
            return Err(format!(
                "moved[{i}]: {from} is a {} and {to} a {kind}: a move keeps the resource, so both must be of one kind\n  \
                 hint: name the address the same resource compiles to now (`kbp graph --format json` lists them)",
                entry.kind
            ));
        }
        crate::state::edit::rename(state, &from, &to).map_err(|e| format!("moved[{i}]: {e}"))?;
        done.push(Moved { from, to });
    }
    Ok(done)
}

/// A resource the blueprint describes but this build of kbp has no provider for yet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Deferred {
    /// The resource's address in the graph.
    pub address: Address,
    /// The resource's kind.
    pub kind: String,
    /// Why it is deferred, in words.
    pub reason: String,
}

/// How many resources a plan adds, changes, destroys, adopts and imports: its last line.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Resources created (replacements count here and in `destroy`).
    pub add: usize,
    /// Resources updated in place.
    pub change: usize,
    /// Resources deleted or forgotten.
    pub destroy: usize,
    /// Resources found in AWS by their kbp tags that state did not hold as created (see [`Plan::adopted`]).
    #[serde(default)]
    pub adopt: usize,
    /// Resources the blueprint's `[[import]]` blocks take under management (see [`Plan::imported`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub import: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Summary {
    /// `Plan: 1 to add, 2 to change, 0 to destroy.`, led by `N to adopt, ` when there is something to adopt.
    pub fn line(&self) -> String {
        let adopt = if self.adopt > 0 { format!("{} to adopt, ", self.adopt) } else { String::new() };
        let import = if self.import > 0 { format!("{} to import, ", self.import) } else { String::new() };
        format!("Plan: {import}{adopt}{} to add, {} to change, {} to destroy.", self.add, self.change, self.destroy)
    }
}

/// What kbp will do to a stack, as `kbp plan` shows it and `kbp plan --out` saves it for `kbp apply PLAN`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// [`FORMAT_VERSION`] when written.
    pub format_version: u32,
    /// The kbp that made the plan.
    pub kbp_version: String,
    /// The stack: the cluster's name.
    pub stack: String,
    /// The AWS region of the stack.
    pub region: String,
    /// The AWS account and partition the plan was made as (from preflight; absent in plans of older kbp).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// The partition (`aws`, `aws-cn`, `aws-us-gov`) the plan was made in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// Whether this is a destroy plan.
    pub destroy: bool,
    /// The state this plan was made against: a saved plan is applied only onto that exact state.
    pub state_lineage: Option<String>,
    /// The serial of that state: a write since the plan was made makes the plan stale.
    pub state_serial: u64,
    /// Where that state lives; `kbp apply PLAN` writes back there (absent in plans of older kbp: the default
    /// local file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_location: Option<crate::state::Location>,
    /// What applying does, in order of the graph.
    pub changes: Vec<Change>,
    /// Resources left out: no provider for them yet.
    pub deferred: Vec<Deferred>,
    /// How many resources need nothing.
    pub unchanged: usize,
    /// The counts of `changes`.
    pub summary: Summary,
    /// The desired resources, so a saved plan can be applied without the blueprint.
    pub resources: Vec<Resource>,
    /// Resources found in AWS by this stack's tags that state did not hold as created (an interrupted create, a
    /// state lost or reset), as they are read now: applying the plan writes them into state, then changes them
    /// like any other.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adopted: Vec<crate::state::ResourceState>,
    /// Resources the blueprint's `[[import]]` blocks name that state did not hold, as read by their IDs (with the
    /// lookups they use): applying the plan writes them into state first, then updates them like any other
    /// (adding kbp's tags).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub imported: Vec<crate::state::ResourceState>,
    /// The `[[moved]]` blocks this plan carries out in state (its entries were at `from`): applying it renames
    /// them first. No change in AWS.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub moved: Vec<Moved>,
    /// What the blueprint should reconsider (see `blueprint::advisories`), each with its hint.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// What changed outside kbp since it last wrote state, attribute by attribute (see [`drift`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drift: Vec<drift::Drift>,
    /// A `--refresh-only` plan: it changes nothing in AWS and holds only the drift, which applying it accepts
    /// into state.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refresh_only: bool,
    /// What the stack costs a month: its fixed items and each NodePool's worst case at its limits (see
    /// [`crate::simulate::cost`]). Absent in destroy and `--refresh-only` plans, and in plans of older kbp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<crate::simulate::cost::StackCost>,
    /// What applying the plan reads besides it (see [`inputs`]); filled when the plan is saved.
    #[serde(default, skip_serializing_if = "inputs::Inputs::is_empty")]
    pub inputs: inputs::Inputs,
}

impl Plan {
    /// Whether applying the plan changes AWS or state (adopting what AWS holds, or accepting drift, changes
    /// state).
    pub fn has_changes(&self) -> bool {
        if self.refresh_only {
            return !self.drift.is_empty();
        }
        !self.changes.is_empty() || !self.adopted.is_empty() || !self.imported.is_empty() || !self.moved.is_empty()
    }

    /// Records what `[[import]]` blocks read (see [`import::blocks`]), so that applying the plan writes it.
    pub fn importing(&mut self, imported: Vec<crate::state::ResourceState>) {
        self.summary.import = imported.len();
        self.imported = imported;
    }

    /// Makes this a `--refresh-only` plan: the drift alone, nothing to change in AWS and nothing to adopt.
    pub fn refreshing_only(&mut self) {
        self.refresh_only = true;
        self.changes.clear();
        self.adopted.clear();
        self.imported.clear();
        self.summary = Summary::default();
        self.cost = None;
    }

    /// Records what refresh adopted, so that applying the plan (now or from a file) writes it into state.
    pub fn adopting(&mut self, refreshed: &Refreshed) {
        self.adopted = refreshed.adopted.iter().filter_map(|a| refreshed.state.get(a).cloned()).collect();
        self.summary.adopt = self.adopted.len();
    }

    /// The change to the resource at `address`, if the plan has one.
    pub fn change(&self, address: &Address) -> Option<&Change> {
        self.changes.iter().find(|c| &c.address == address)
    }

    /// Writes the plan whole, mode 0600: it holds what state holds (ARNs, endpoints), and `kbp apply PLAN`
    /// must never read half of one.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let text = serde_json::to_vec_pretty(self).expect("invariant: a plan serializes to JSON");
        crate::private_file::write_atomically(path, &text)
    }

    /// Reads a saved plan; `Ok(None)` if the file is not a kbp plan (a blueprint, say).
    pub fn load(path: &Path) -> Result<Option<Plan>, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let Ok(v) = serde_json::from_str::<Value>(&text) else { return Ok(None) };
        if v.get("format_version").is_none() || v.get("changes").is_none() {
            return Ok(None);
        }
        serde_json::from_value(v).map(Some).map_err(|e| format!("{} is not a valid kbp plan: {e}", path.display()))
    }
}

pub(crate) fn summarize(changes: &[Change]) -> Summary {
    let mut s = Summary::default();
    for c in changes {
        match c.action {
            Action::Create => s.add += 1,
            Action::Update => s.change += 1,
            Action::Replace | Action::ReplaceCreateFirst => {
                s.add += 1;
                s.destroy += 1
            }
            Action::Delete | Action::Forget => s.destroy += 1,
        }
    }
    s
}

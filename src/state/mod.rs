//! State: what kbp made, as last seen. Owns the state document (format version, serial, lineage, one entry per
//! resource), where it lives ([`location`]: a local file or an S3 object, each a [`Backend`]: [`local`], [`s3`]),
//! how one run changes it ([`handle`]) and how users edit it by hand ([`edit`]). It knows nothing of plans or
//! providers.

pub mod backend;
pub mod edit;
pub mod handle;
pub mod local;
pub mod location;
mod real_path;
pub mod s3;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::graph::{Address, Attrs};

pub use backend::{release_held_locks, Backend, LockGuard, LockInfo, StateError};
pub use handle::StateHandle;
pub use local::LocalBackend;
pub use location::Location;

/// The state document format this kbp reads and writes; a document with another is refused.
pub const FORMAT_VERSION: u32 = 1;

/// The backend for `location`: the only place that knows every kind of backend.
pub async fn open(location: &Location) -> Result<Box<dyn Backend>, StateError> {
    Ok(match location {
        Location::Local { path } => Box::new(LocalBackend::new(path)),
        Location::S3(s3) => Box::new(s3::S3Backend::connect(s3).await),
    })
}

/// The state document of one stack: every resource kbp made for it, as last applied or refreshed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// The document's format version, [`FORMAT_VERSION`] when written by this kbp.
    pub format_version: u32,
    /// Bumped on every write; a saved plan records it to refuse applying onto a state that moved on.
    pub serial: u64,
    /// Fixed when the state is first created; tells two unrelated states of the same name apart.
    pub lineage: String,
    /// The stack's name (its `cluster.name`).
    pub stack: String,
    /// The AWS region of the stack, so state alone is enough to find what it holds.
    #[serde(default)]
    pub region: String,
    /// The kbp version that last wrote the state.
    pub kbp_version: String,
    /// One entry per resource, by address; written as a list.
    #[serde(with = "resource_list")]
    pub resources: BTreeMap<Address, ResourceState>,
    /// The blueprint file (absolute) whose own `cluster.name` names this stack, when it was applied without
    /// `--set cluster.name`: how a plan tells a cluster renamed in that file from a second stack made on purpose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blueprint: Option<String>,
}

impl Status {
    /// A new intent to create, with a fresh client token, recorded now.
    pub fn creating(client_token: String) -> Status {
        Status::Creating { client_token, started: Some(backend::now_rfc3339()) }
    }

    /// When an earlier run recorded its intent to create, if this is one.
    pub fn intent_started(&self) -> Option<std::time::SystemTime> {
        let Status::Creating { started: Some(at), .. } = self else { return None };
        let at = time::OffsetDateTime::parse(at, &time::format_description::well_known::Rfc3339).ok()?;
        Some(at.into())
    }
}

impl State {
    /// An empty state for stack `stack` in `region`, with a new lineage and serial 0.
    pub fn new(stack: &str, region: &str) -> Self {
        State {
            format_version: FORMAT_VERSION,
            serial: 0,
            lineage: uuid::Uuid::new_v4().to_string(),
            stack: stack.to_string(),
            region: region.to_string(),
            kbp_version: env!("CARGO_PKG_VERSION").to_string(),
            resources: BTreeMap::new(),
            blueprint: None,
        }
    }

    /// The resource recorded at `address`, whatever its status.
    pub fn get(&self, address: &Address) -> Option<&ResourceState> {
        self.resources.get(address)
    }

    /// The output `name` of the resource at `address`, if it exists.
    pub fn output(&self, address: &Address, name: &str) -> Option<serde_json::Value> {
        let r = self.resources.get(address)?;
        if r.status != Status::Ready {
            return None;
        }
        r.outputs.get(name).cloned()
    }
}

/// Whether a resource recorded in state exists in AWS or may still be coming into existence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case", tag = "phase")]
pub enum Status {
    /// The resource exists with `id`.
    #[default]
    Ready,
    /// kbp was about to create it (intent recorded before the call); on the next run it is looked up by its
    /// kbp tags or name and adopted, or created again with the same client token.
    Creating {
        /// The idempotency token sent with the create call, reused when the create is retried.
        client_token: String,
        /// When the intent was recorded (RFC 3339), so a resumed run knows how long the request may still be on
        /// its way to AWS.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        started: Option<String>,
    },
}

/// What state records of one resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceState {
    /// Where the resource sits in the stack's graph, such as `subnet.private["us-west-2a"]`.
    pub address: Address,
    /// The provider kind that manages it, such as `aws_subnet`.
    pub kind: String,
    /// Its ID in AWS (a VPC ID, a role name, an ARN); `None` while its create is in flight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Whether it exists or its create is still in flight.
    #[serde(default)]
    pub status: Status,
    /// Attributes as last applied (references resolved), refreshed from AWS where it reports them.
    pub attributes: Attrs,
    /// Values AWS assigned that other resources refer to (an ARN, an endpoint), read at create or refresh.
    pub outputs: Attrs,
    /// The addresses it depended on when applied, so destroy can delete in reverse order without the blueprint.
    pub dependencies: Vec<Address>,
    /// Taken under management by `kbp import` (or an `[[import]]` block) and not yet applied: it does not carry
    /// kbp's `kbp:stack`/`kbp:address` tags, so the next apply updates it to add them (and then clears this).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub imported: bool,
    /// How the `kbp:address` tag on it is spelt. State written before this field existed says nothing, and its
    /// resources carry the address's own spelling (`subnet.private["a"]`), which IAM refuses: the next plan
    /// updates keyed resources in place to the current one (the address tag `providers::tags` derives).
    #[serde(default = "AddressTag::before_path")]
    pub address_tag: AddressTag,
}

/// The spelling of a resource's `kbp:address` tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AddressTag {
    /// `type.name["key"]`, as kbp wrote it before tag values were kept to every service's character set.
    Bracketed,
    /// `type.name/key`, what kbp writes now.
    Path,
}

impl AddressTag {
    fn before_path() -> Self {
        AddressTag::Bracketed
    }
}

/// Resources are a map in memory and a list sorted by address on disk (diffable, one entry per resource).
mod resource_list {
    use super::*;
    use serde::{Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(m: &BTreeMap<Address, ResourceState>, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(m.values())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<Address, ResourceState>, D::Error> {
        let v: Vec<ResourceState> = Vec::deserialize(d)?;
        Ok(v.into_iter().map(|r| (r.address.clone(), r)).collect())
    }
}

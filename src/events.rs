//! What the engine reports while it works. The ui layer renders these as text or JSON; the engine never prints.
//! They live apart from `exec`, which emits most of them, because providers report progress (`Waiting`) too and
//! must not import the layer above them.

use std::time::Duration;

use serde::Serialize;

use crate::graph::Address;

/// One step on one resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Create,
    Update,
    Delete,
    Forget,
}

impl Op {
    pub fn doing(self) -> &'static str {
        match self {
            Op::Create => "creating",
            Op::Update => "updating",
            Op::Delete => "destroying",
            Op::Forget => "forgetting",
        }
    }

    pub fn done(self) -> &'static str {
        match self {
            Op::Create => "created",
            Op::Update => "updated",
            Op::Delete => "destroyed",
            Op::Forget => "forgotten (left in AWS)",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    Started {
        address: Address,
        op: Op,
        /// How long the operation usually takes in AWS, in seconds, when that is more than a few (a cluster's
        /// create: 600), so progress can say what to expect.
        #[serde(skip_serializing_if = "Option::is_none")]
        typical_s: Option<u64>,
    },
    Finished {
        address: Address,
        op: Op,
        #[serde(serialize_with = "secs")]
        elapsed: Duration,
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<String>,
    },
    Failed {
        address: Address,
        op: Op,
        #[serde(serialize_with = "secs")]
        elapsed: Duration,
        error: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        hint: Option<String>,
    },
    /// A long-running operation is still waiting on AWS (`status` as AWS reports it).
    Waiting {
        address: Address,
        status: String,
        #[serde(serialize_with = "secs")]
        waited: Duration,
    },
    /// Not attempted because something it needs failed.
    Skipped { address: Address, op: Op, because: Address },
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64((d.as_secs_f64() * 1000.0).round() / 1000.0)
}

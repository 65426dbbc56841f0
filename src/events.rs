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
    /// Create the resource in AWS or Kubernetes and record it in state.
    Create,
    /// Change the resource in place.
    Update,
    /// Delete the resource and drop it from state.
    Delete,
    /// Drop the resource from state but leave it in AWS (account-wide resources, a VPC the stack only uses).
    Forget,
}

impl Op {
    /// The present participle progress lines show while the step runs ("creating").
    pub fn doing(self) -> &'static str {
        match self {
            Op::Create => "creating",
            Op::Update => "updating",
            Op::Delete => "destroying",
            Op::Forget => "forgetting",
        }
    }

    /// The past participle the line shows once the step succeeded ("created").
    pub fn done(self) -> &'static str {
        match self {
            Op::Create => "created",
            Op::Update => "updated",
            Op::Delete => "destroyed",
            Op::Forget => "forgotten (left in AWS)",
        }
    }
}

/// One thing the executor or a provider reports; the JSON stream's `type` is the variant name in snake_case.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The step began.
    Started {
        /// The resource's state address, such as `eks_cluster.main`.
        address: Address,
        /// What is being done to it.
        op: Op,
        /// How long the operation usually takes in AWS, in seconds, when that is more than a few (a cluster's
        /// create: 600), so progress can say what to expect.
        #[serde(skip_serializing_if = "Option::is_none")]
        typical_s: Option<u64>,
    },
    /// The step succeeded and state was updated.
    Finished {
        /// The resource's state address.
        address: Address,
        /// What was done to it.
        op: Op,
        /// Wall time the step took; serialized in seconds.
        #[serde(serialize_with = "secs")]
        elapsed: Duration,
        /// The resource's ID in AWS, where it has one (a VPC ID, a role name); `None` for a forget.
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<String>,
    },
    /// The step failed; the steps that depend on it are skipped.
    Failed {
        /// The resource's state address.
        address: Address,
        /// What was being done to it.
        op: Op,
        /// Wall time until the failure; serialized in seconds.
        #[serde(serialize_with = "secs")]
        elapsed: Duration,
        /// The error as text; for an AWS failure, the call and AWS's message.
        error: String,
        /// What the user can do about it, where kbp knows.
        #[serde(skip_serializing_if = "Option::is_none")]
        hint: Option<String>,
    },
    /// A long-running operation is still waiting on AWS (`status` as AWS reports it).
    Waiting {
        /// The resource's state address.
        address: Address,
        /// The resource's status as AWS reports it, such as `CREATING`.
        status: String,
        /// How long the step has waited so far; serialized in seconds.
        #[serde(serialize_with = "secs")]
        waited: Duration,
    },
    /// Not attempted because something it needs failed.
    Skipped {
        /// The resource's state address.
        address: Address,
        /// What would have been done to it.
        op: Op,
        /// The address whose failure it depends on.
        because: Address,
    },
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64((d.as_secs_f64() * 1000.0).round() / 1000.0)
}

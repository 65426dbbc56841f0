//! `aws_sqs_queue_policy`: the access policy of a queue (who may send to it), set as the queue's `Policy`
//! attribute. It is not a resource of its own in SQS, so its ID is the queue's URL; moving it to another queue
//! is a replacement.
//!
//! Documents are compared after [`policy_doc::normalize`], the same rules as IAM's: a blueprint may spell one
//! policy several ways, and the text SQS hands back need not be the text it was given.

use std::collections::HashMap;

use async_trait::async_trait;
use aws_sdk_sqs::types::QueueAttributeName as Name;
use serde_json::{json, Value};

use super::{absent_if_gone, all_attributes, attributes, set_attributes, QUEUE_GONE};
use crate::graph::{kinds, Attrs};
use crate::providers::contract::{Constraint, Rule};
use crate::providers::iam::policy_doc;
use crate::providers::{
    spec, Applied, Context, Descriptor, Desired, Observed, Provider, ProviderError, Result, WithoutState,
};

pub(crate) struct QueuePolicy;

const KIND: &str = kinds::SQS_QUEUE_POLICY;
const OP_SET: &str = "sqs:SetQueueAttributes";

/// The attributes the compiler emits, references resolved ([`crate::graph::kinds`]).
type Spec = crate::graph::kinds::sqs_queue_policy::QueuePolicy<String>;

/// What AWS accepts of what this kind sends ([`crate::providers::contract`]).
const SENDS: &[Constraint] = &[
    // SQS: the Policy attribute is at most 20,480 bytes (<https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SetQueueAttributes.html>).
    Constraint::new("policy", Rule::Policy { api: "SQS queue policy", max: 20480, whitespace: true }),
];

#[async_trait]
impl Provider for QueuePolicy {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(KIND, WithoutState::GoesWith(kinds::SQS_QUEUE), SENDS)
            .force_new(&["queue_url"])
            .imported_by("its queue's URL")
    }

    fn canonical(&self, desired: Attrs) -> Attrs {
        policy_doc::canonical_in(desired, "policy")
    }

    async fn read(&self, cx: &Context, url: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let found = attributes(cx, url, &[Name::Policy], &[]).await?;
        observe(url, found.as_ref())
    }

    /// The queue's one GetQueueAttributes of the refresh, shared with the queue.
    async fn read_many(&self, cx: &Context, items: &[(String, Attrs)]) -> Result<Vec<Option<Observed>>> {
        futures::future::try_join_all(items.iter().map(|(url, _)| async move {
            let found = all_attributes(cx, url).await?;
            observe(url, found.as_ref().as_ref())
        }))
        .await
    }

    /// The policy has no tags; it is this stack's if the queue already carries the desired document.
    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        let spec: Spec = spec::parse(KIND, desired.attrs)?;
        let found = current(cx, &spec.queue_url).await?;
        Ok(found.filter(|p| policy_doc::equivalent(p, &spec.policy)).map(|_| spec.queue_url))
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        put(cx, desired).await
    }

    async fn update(&self, cx: &Context, _url: &str, _prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        put(cx, desired).await
    }

    /// An empty `Policy` removes it; a queue already gone has no policy to remove.
    async fn delete(&self, cx: &Context, url: &str, _prior: &Attrs) -> Result<()> {
        let r = set_attributes(cx, url, HashMap::from([(Name::Policy, String::new())]), &[]).await;
        absent_if_gone(r).map(drop)
    }
}

/// Sets the document; the queue may have been created a moment ago, so "no such queue" is retried.
async fn put(cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
    let spec: Spec = spec::parse(KIND, desired.attrs)?;
    let document = policy_doc::to_aws(OP_SET, &spec.policy)?;
    set_attributes(cx, &spec.queue_url, HashMap::from([(Name::Policy, document)]), QUEUE_GONE).await?;
    Ok(Applied { id: spec.queue_url.clone(), outputs: outputs(&spec.queue_url) })
}

/// What `read` reports of the policy of the queue at `url`, whose attributes are `found` (`None`: it is gone).
fn observe(url: &str, found: Option<&HashMap<Name, String>>) -> Result<Option<Observed>> {
    let Some(policy) = document(url, found)? else { return Ok(None) };
    let mut attrs = Attrs::new();
    attrs.insert("queue_url".into(), json!(url));
    attrs.insert("policy".into(), policy_doc::normalize(policy));
    Ok(Some(Observed { attrs, outputs: outputs(url) }))
}

/// The queue's policy document; `None` when the queue is gone or has no policy.
async fn current(cx: &Context, url: &str) -> Result<Option<Value>> {
    let found = attributes(cx, url, &[Name::Policy], &[]).await?;
    document(url, found.as_ref())
}

/// The policy document among a queue's attributes `found`; `None` when the queue is gone or has no policy.
fn document(url: &str, found: Option<&HashMap<Name, String>>) -> Result<Option<Value>> {
    let Some(found) = found else { return Ok(None) };
    match found.get(&Name::Policy).filter(|p| !p.trim().is_empty()) {
        None => Ok(None),
        Some(text) => serde_json::from_str(text).map(Some).map_err(|e| {
            ProviderError::new("sqs:GetQueueAttributes", "", format!("the Policy of queue {url} is not JSON: {e}"))
                .with_hint("set a valid policy on the queue (or remove it), then run kbp again")
        }),
    }
}

fn outputs(url: &str) -> Attrs {
    Attrs::from_iter([("id".to_string(), json!(url))])
}

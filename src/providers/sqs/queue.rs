//! `aws_sqs_queue`: the standard queue Karpenter reads interruption notices from. Its name cannot change in
//! place; retention, SSE and tags can.
//!
//! Creating is guarded: CreateQueue returns an existing queue of the same name and attributes instead of
//! failing, which would silently hand another stack's queue to this one, so a queue of that name not tagged
//! for this stack is refused first.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use aws_sdk_sqs::types::QueueAttributeName as Name;
use serde_json::{json, Value};

use super::{absent_if_gone, all_attributes, attributes, name_of, set_attributes, QUEUE_GONE};
use crate::graph::{kinds, Address, Attrs};
// The generic wait loop; it is moving to `providers::wait` (ec2::wait re-exports it from there).
use crate::providers::ec2::wait::{until, Budget, Poll};
use crate::providers::preflight::{quick, read, Holder};
use crate::providers::send::send;
use crate::providers::send::send_pages;
use crate::providers::tagged::{found, owned_by_tags, Listed, Search, PARALLEL_LOOKUPS};
use crate::providers::Found;
use crate::providers::{contract, contract::Constraint, contract::Rule};
use crate::providers::{
    spec, stack_tags, tags, Applied, Context, Descriptor, Desired, Observed, Provider, ProviderError, Result,
    WithoutState,
};
use futures::{StreamExt, TryStreamExt};

pub(crate) struct Queue;

const KIND: &str = kinds::SQS_QUEUE;

/// After DeleteQueue, AWS refuses a new queue of the same name for 60 seconds, which `kbp destroy` followed by
/// `kbp apply` (the queue is named after the cluster) runs into.
const NAME_RELEASE: Budget = Budget {
    timeout: Duration::from_secs(75),
    first_interval: Duration::from_secs(2),
    max_interval: Duration::from_secs(10),
    expected: None,
};

/// The attributes kbp manages, as the compiler emits them (`tags` are read through [`Desired::tags`]).
/// The attributes the compiler emits, references resolved ([`crate::graph::kinds`]).
type Spec = crate::graph::kinds::sqs_queue::Queue;

impl Spec {
    /// The spec as SQS attributes, spelled as GetQueueAttributes reports them so they compare as strings.
    fn attributes(&self) -> HashMap<Name, String> {
        HashMap::from([
            (Name::MessageRetentionPeriod, self.message_retention_seconds.to_string()),
            (Name::SqsManagedSseEnabled, self.sqs_managed_sse_enabled.to_string()),
        ])
    }
}

/// What AWS accepts of what this kind sends ([`contract`]).
const SENDS: &[Constraint] = &[
    Constraint::new(
        "name",
        Rule::Name {
            api: "SQS queue name",
            max: 80,
            chars: contract::SQS_NAME,
            unique: contract::Unique::InAccount("SQS queue"),
        },
    ),
    contract::tags_of("SQS queue"),
];

#[async_trait]
impl Provider for Queue {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(KIND, WithoutState::Tags, SENDS)
            .force_new(&["name"])
            .imported_by("its queue URL, `https://sqs.<region>.amazonaws.com/<account>/<name>`")
    }

    async fn name_holder(&self, cx: &Context, name: &str, _attrs: &Attrs) -> Result<Holder> {
        let r = cx.sqs().get_queue_url().queue_name(name).customize().config_override(quick!(aws_sdk_sqs));
        let Some(url) = read("sqs:GetQueueUrl", r.send().await)?.and_then(|out| out.queue_url) else {
            return Ok(Holder::Nobody);
        };
        let r = cx.sqs().list_queue_tags().queue_url(url).customize().config_override(quick!(aws_sdk_sqs));
        let found = read("sqs:ListQueueTags", r.send().await)?;
        Ok(found.map_or(Holder::Nobody, |out| Holder::tagged(out.tags.unwrap_or_default())))
    }

    /// The queues tagged for the stack (kbp names them after it): from the stack's tag query, each asked for its
    /// URL (it is gone if SQS knows none), or else every queue named after the stack, its tags read on its own.
    async fn tagged(&self, cx: &Context, search: &Search<'_>) -> Result<Vec<Found>> {
        if let Some(tagged) = search.in_tag_query(cx, "sqs").await {
            let lookups = tagged.into_iter().map(|(name, address)| async move {
                let r = send(cx, "sqs:GetQueueUrl", &[], || cx.sqs().get_queue_url().queue_name(&name).send()).await;
                let url = absent_if_gone(r)?.and_then(|o| o.queue_url);
                let address = address.or(Some(name));
                Ok::<_, ProviderError>(url.map(|url| found(KIND, &url, address, String::new(), Vec::new())))
            });
            let found: Vec<Option<Found>> =
                futures::stream::iter(lookups).buffer_unordered(PARALLEL_LOOKUPS).try_collect().await?;
            return Ok(found.into_iter().flatten().collect());
        }
        let urls = send_pages(
            cx,
            "sqs:ListQueues",
            |token| cx.sqs().list_queues().queue_name_prefix(search.stack()).set_next_token(token).send(),
            |page| (page.queue_urls().to_vec(), page.next_token().map(str::to_string)),
        );
        let listed = urls.await?.into_iter().map(|url| {
            let name = url.rsplit('/').next().map(str::to_string);
            Listed { id: url.clone(), tags_at: url, name }
        });
        owned_by_tags(search.owner, KIND, listed, |url| async move { list_tags(cx, &url).await }).await
    }

    async fn read(&self, cx: &Context, url: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let names = [Name::QueueArn, Name::MessageRetentionPeriod, Name::SqsManagedSseEnabled];
        let Some(found) = attributes(cx, url, &names, &[]).await? else { return Ok(None) };
        observe(cx, url, &found, None).await
    }

    /// One GetQueueAttributes per queue, shared with its policy; tags the stack's tag query confirms are not
    /// read again ([`stack_tags`]).
    async fn read_many(&self, cx: &Context, items: &[(String, Attrs)]) -> Result<Vec<Option<Observed>>> {
        futures::future::try_join_all(items.iter().map(|(url, prior)| async move {
            let found = all_attributes(cx, url).await?;
            let Some(found) = found.as_ref() else { return Ok(None) };
            let tags = match found.get(&Name::QueueArn) {
                Some(arn) => stack_tags::confirmed(cx, arn, prior).await,
                None => None,
            };
            observe(cx, url, found, tags).await
        }))
        .await
    }

    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        let spec: Spec = spec::parse(KIND, desired.attrs)?;
        let Some(url) = url_of(cx, &spec.name).await? else { return Ok(None) };
        Ok(owned(cx, &url).await?.then_some(url))
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        let spec: Spec = spec::parse(KIND, desired.attrs)?;
        let existed = match url_of(cx, &spec.name).await? {
            Some(url) if !owned(cx, &url).await? => return Err(taken(cx, &spec.name, &url)),
            found => found.is_some(),
        };
        // CreateQueue even when this stack's queue exists (a create retried after kbp died mid-call): during
        // the minute after a delete GetQueueUrl may still answer, and only CreateQueue says the name is held.
        let tags: HashMap<String, String> = desired.tags().into_iter().collect();
        let url = match create_queue(cx, desired.address, &spec, tags).await {
            Ok(url) => url,
            Err(e) if existed && name_taken(&e) => url_of(cx, &spec.name).await?.ok_or(e)?,
            Err(e) => return Err(e),
        };
        if existed {
            // CreateQueue hands back an existing queue as it is (tags and all): bring it to the spec.
            return self.update(cx, &url, desired.attrs, desired).await;
        }
        applied(cx, &url).await
    }

    async fn update(&self, cx: &Context, url: &str, _prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        let spec: Spec = spec::parse(KIND, desired.attrs)?;
        let want = spec.attributes();
        let names: Vec<Name> = want.keys().cloned().collect();
        let current = attributes(cx, url, &names, &[]).await?.ok_or_else(|| vanished(url))?;
        let changed: HashMap<Name, String> = want.into_iter().filter(|(k, v)| current.get(k) != Some(v)).collect();
        if !changed.is_empty() {
            set_attributes(cx, url, changed, &[]).await?;
        }
        retag(cx, url, &desired.tags()).await?;
        applied(cx, url).await
    }

    async fn delete(&self, cx: &Context, url: &str, _prior: &Attrs) -> Result<()> {
        let r = send(cx, "sqs:DeleteQueue", &[], || cx.sqs().delete_queue().queue_url(url).send()).await;
        absent_if_gone(r).map(drop)
    }
}

/// What `read` reports of the queue at `url` from its attributes `found`, with its tags (read unless `known`);
/// `None` when it is gone meanwhile.
async fn observe(
    cx: &Context,
    url: &str,
    found: &HashMap<Name, String>,
    known: Option<BTreeMap<String, String>>,
) -> Result<Option<Observed>> {
    let tags = match known {
        Some(tags) => tags,
        None => match list_tags(cx, url).await? {
            Some(tags) => tags,
            None => return Ok(None),
        },
    };
    let mut attrs = Attrs::new();
    attrs.insert("name".into(), json!(name_of(url)));
    // A key SQS does not report is left out, so the diff trusts the last applied value for it.
    if let Some(seconds) = found.get(&Name::MessageRetentionPeriod).and_then(|s| s.parse::<i64>().ok()) {
        attrs.insert("message_retention_seconds".into(), json!(seconds));
    }
    if let Some(sse) = found.get(&Name::SqsManagedSseEnabled) {
        attrs.insert("sqs_managed_sse_enabled".into(), json!(sse == "true"));
    }
    attrs.insert("tags".into(), Value::Object(tags::user_tags(tags)));
    Ok(Some(Observed { attrs, outputs: outputs(url, found.get(&Name::QueueArn)) }))
}

/// Creates the queue, waiting out `QueueDeletedRecently` within [`NAME_RELEASE`]. Returns its URL.
async fn create_queue(cx: &Context, address: &Address, spec: &Spec, tags: HashMap<String, String>) -> Result<String> {
    let op = "sqs:CreateQueue";
    let (values, tags) = (Some(spec.attributes()), Some(tags));
    let what = format!("AWS to release the name `{}` of a queue deleted less than a minute ago", spec.name);
    let started = Instant::now();
    let created = until(op, &what, NAME_RELEASE, || async {
        let r = send(cx, op, &[], || {
            let call = cx.sqs().create_queue().queue_name(&spec.name).set_attributes(values.clone());
            call.set_tags(tags.clone()).send()
        })
        .await;
        match r {
            Ok(out) => Ok(Poll::Done(out)),
            Err(e) if name_held(&e) => {
                let seen = format!("{}: {}", e.code, e.message);
                cx.progress(address, &seen, started.elapsed());
                Ok(Poll::Pending(seen))
            }
            Err(e) => Err(e),
        }
    })
    .await?;
    created.queue_url.ok_or_else(|| {
        ProviderError::new(op, "", "AWS's response has no queue URL")
            .with_hint("retry; if it persists, the endpoint (AWS_ENDPOINT_URL?) may not be a real SQS API")
    })
}

/// Whether CreateQueue failed because the name belongs to a queue deleted in the last 60 seconds (both
/// spellings of the code, as for [`QUEUE_GONE`]).
fn name_held(e: &ProviderError) -> bool {
    e.is("AWS.SimpleQueueService.QueueDeletedRecently") || e.is("QueueDeletedRecently")
}

/// Whether CreateQueue failed because a queue of that name exists with other attributes.
fn name_taken(e: &ProviderError) -> bool {
    e.is("QueueAlreadyExists") || e.is("QueueNameExists")
}

/// The URL of the queue named `name` in this account and region, if there is one.
async fn url_of(cx: &Context, name: &str) -> Result<Option<String>> {
    let r = send(cx, "sqs:GetQueueUrl", &[], || cx.sqs().get_queue_url().queue_name(name).send()).await;
    Ok(absent_if_gone(r)?.and_then(|out| out.queue_url))
}

/// Whether the queue carries this stack's `kbp:stack` tag, so kbp may adopt it.
async fn owned(cx: &Context, url: &str) -> Result<bool> {
    Ok(list_tags(cx, url).await?.is_some_and(|t| t.get(tags::STACK) == Some(&cx.stack)))
}

/// All tags on the queue, kbp's included; `None` when the queue is gone.
async fn list_tags(cx: &Context, url: &str) -> Result<Option<BTreeMap<String, String>>> {
    let r = send(cx, "sqs:ListQueueTags", &[], || cx.sqs().list_queue_tags().queue_url(url).send()).await;
    Ok(absent_if_gone(r)?.map(|out| out.tags.unwrap_or_default().into_iter().collect()))
}

/// Makes the queue's tags exactly `want`: UntagQueue for keys no longer wanted, TagQueue for the rest.
async fn retag(cx: &Context, url: &str, want: &BTreeMap<String, String>) -> Result<()> {
    let current = list_tags(cx, url).await?.ok_or_else(|| vanished(url))?;
    if &current == want {
        return Ok(());
    }
    let stale: Vec<String> = current.keys().filter(|k| !want.contains_key(*k)).cloned().collect();
    if !stale.is_empty() {
        let stale = Some(stale);
        send(cx, "sqs:UntagQueue", &[], || cx.sqs().untag_queue().queue_url(url).set_tag_keys(stale.clone()).send())
            .await?;
    }
    let set: HashMap<String, String> =
        want.iter().filter(|(k, v)| current.get(*k) != Some(*v)).map(|(k, v)| (k.clone(), v.clone())).collect();
    if !set.is_empty() {
        let set = Some(set);
        send(cx, "sqs:TagQueue", &[], || cx.sqs().tag_queue().queue_url(url).set_tags(set.clone()).send()).await?;
    }
    Ok(())
}

/// The outputs after a create or update; the ARN is read back, retrying while a new queue is not yet visible.
async fn applied(cx: &Context, url: &str) -> Result<Applied> {
    let found = attributes(cx, url, &[Name::QueueArn], QUEUE_GONE).await?.ok_or_else(|| vanished(url))?;
    Ok(Applied { id: url.to_string(), outputs: outputs(url, found.get(&Name::QueueArn)) })
}

fn outputs(url: &str, arn: Option<&String>) -> Attrs {
    let mut out = Attrs::new();
    out.insert("id".into(), json!(url));
    out.insert("url".into(), json!(url));
    out.insert("name".into(), json!(name_of(url)));
    if let Some(arn) = arn {
        out.insert("arn".into(), json!(arn));
    }
    out
}

fn taken(cx: &Context, name: &str, url: &str) -> ProviderError {
    ProviderError::new(
        "sqs:CreateQueue",
        "QueueAlreadyExists",
        format!("an SQS queue named `{name}` already exists ({url}) and is not tagged kbp:stack={}", cx.stack),
    )
    .with_hint(
        "it belongs to another stack or tool; delete it (`aws sqs delete-queue --queue-url URL`) or give the \
         cluster another name",
    )
}

fn vanished(url: &str) -> ProviderError {
    ProviderError::new("sqs:GetQueueAttributes", QUEUE_GONE[0], format!("queue {url} no longer exists"))
        .with_hint("run `kbp plan` again: the queue will be planned for creation")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_attributes_are_spelled_as_sqs_reports_them() {
        let spec = Spec {
            name: "q".into(),
            message_retention_seconds: 300,
            sqs_managed_sse_enabled: true,
            tags: Default::default(),
        };
        let a = spec.attributes();
        assert_eq!(a[&Name::MessageRetentionPeriod], "300");
        assert_eq!(a[&Name::SqsManagedSseEnabled], "true");
    }

    #[test]
    fn a_recently_deleted_name_is_waited_out_under_either_code() {
        assert!(name_held(&ProviderError::new("sqs:CreateQueue", "AWS.SimpleQueueService.QueueDeletedRecently", "")));
        assert!(name_held(&ProviderError::new("sqs:CreateQueue", "QueueDeletedRecently", "")));
        assert!(!name_held(&ProviderError::new("sqs:CreateQueue", "QueueAlreadyExists", "")));
        assert!(name_taken(&ProviderError::new("sqs:CreateQueue", "QueueAlreadyExists", "")));
        assert!(name_taken(&ProviderError::new("sqs:CreateQueue", "QueueNameExists", "")));
    }

    #[test]
    fn outputs_name_the_queue_by_url_and_arn() {
        let arn = "arn:aws:sqs:us-west-2:1:q".to_string();
        let out = outputs("https://sqs.us-west-2.amazonaws.com/1/q", Some(&arn));
        assert_eq!(out["id"], out["url"]);
        assert_eq!(out["name"], "q");
        assert_eq!(out["arn"], json!(arn));
    }
}

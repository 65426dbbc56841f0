//! SQS providers: the queue Karpenter polls for interruption notices, and the queue policy that lets
//! EventBridge deliver to it. One file per kind; shared here: reading and writing queue attributes, and what
//! "no such queue" looks like.
//!
//! A queue's provider ID is its URL, since every SQS call after CreateQueue addresses the queue by URL. Not
//! here: dead-letter queues, FIFO queues and KMS keys (no blueprint needs them).

pub(crate) mod queue;
pub(crate) mod queue_policy;

use std::collections::HashMap;

use aws_sdk_sqs::types::QueueAttributeName;

use super::attrs::absent_if_gone;
use super::send::send;
use super::Context;
use crate::providers::Result;

/// "No such queue": the query-compatible code AWS sends in the `x-amzn-query-error` header (which the SDK
/// reports when present), and the JSON protocol's error type (when it is not). Both count as gone for
/// [`absent_if_gone`] ([`crate::providers::ProviderError::is_not_found`]).
const QUEUE_GONE: &[&str] = &["AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist"];

/// The queue's attributes `names` (those it has), or `None` when the queue is gone. `transient` lists codes
/// to retry, such as [`QUEUE_GONE`] right after CreateQueue: AWS asks callers to allow a second before a new
/// queue answers.
async fn attributes(
    cx: &Context,
    url: &str,
    names: &[QueueAttributeName],
    transient: &[&str],
) -> Result<Option<HashMap<QueueAttributeName, String>>> {
    let names = Some(names.to_vec());
    let r = send(cx, "sqs:GetQueueAttributes", transient, || {
        cx.sqs().get_queue_attributes().queue_url(url).set_attribute_names(names.clone()).send()
    })
    .await;
    Ok(absent_if_gone(r)?.map(|out| out.attributes.unwrap_or_default()))
}

/// Every attribute of the queue, or `None` when it is gone: the one GetQueueAttributes a refresh sends per
/// queue, shared by the queue and its policy ([`super::answers`]).
async fn all_attributes(
    cx: &Context,
    url: &str,
) -> Result<std::sync::Arc<Option<HashMap<QueueAttributeName, String>>>> {
    let key = format!("sqs:GetQueueAttributes All {url}");
    cx.answers.get(&key, || attributes(cx, url, &[QueueAttributeName::All], &[])).await
}

/// Sets `values` on the queue in one SetQueueAttributes call.
async fn set_attributes(
    cx: &Context,
    url: &str,
    values: HashMap<QueueAttributeName, String>,
    transient: &[&str],
) -> Result<()> {
    let values = Some(values);
    send(cx, "sqs:SetQueueAttributes", transient, || {
        cx.sqs().set_queue_attributes().queue_url(url).set_attributes(values.clone()).send()
    })
    .await
    .map(drop)
}

/// The queue's name: the last segment of its URL (`https://sqs.<region>.amazonaws.com/<account>/<name>`).
fn name_of(url: &str) -> &str {
    url.trim_end_matches('/').rsplit('/').next().unwrap_or(url)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::ProviderError;

    #[test]
    fn both_spellings_of_a_missing_queue_mean_gone() {
        for code in QUEUE_GONE {
            let r: Result<(), _> = Err(ProviderError::new("sqs:GetQueueAttributes", code, "gone"));
            assert_eq!(absent_if_gone(r).unwrap(), None);
        }
        let r: Result<(), _> = Err(ProviderError::new("sqs:GetQueueAttributes", "AccessDenied", "no"));
        assert!(absent_if_gone(r).is_err());
    }

    #[test]
    fn the_name_is_the_last_url_segment() {
        assert_eq!(name_of("https://sqs.us-west-2.amazonaws.com/123456789012/prod"), "prod");
        assert_eq!(name_of("http://127.0.0.1:4566/123456789012/dev/"), "dev");
    }
}

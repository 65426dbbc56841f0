//! One tag query for a whole stack during refresh. The Resource Groups Tagging API's GetResources with
//! `kbp:stack = <stack>` answers the tags of every resource of the stack it covers in one paginated call, where
//! the services themselves answer one resource per call (an EventBridge rule's ListTagsForResource, a queue's
//! ListQueueTags, a key's ListResourceTags).
//!
//! The answer only ever confirms. A resource whose tags in it are the ones kbp saw last time (its prior
//! `tags`) is taken as unchanged; any other is read from its own service as before: absent from the answer (a
//! resource type the API does not cover, its `kbp:stack` tag removed by hand, a caller without
//! `tag:GetResources`) or different there (changed by hand, or the API's index not caught up with a recent
//! change yet). So the query saves calls and can never report drift that is not there; at worst, a change made
//! by hand in the last moments before a plan shows at the next one.
//!
//! Like every shared answer ([`super::answers`]), it is asked for by `read_many` only, once per refresh.

use std::collections::{BTreeMap, HashMap};

use aws_sdk_resourcegroupstagging::types::TagFilter;
use serde_json::Value;

use super::send::send_pages;
use super::{tags, Context, Result};
use crate::graph::Attrs;

/// The resource types whose refresh asks here: those whose own service reads tags one resource per call.
/// (EC2's and EKS's describes carry tags already.)
const ASKED_BY: &[&str] = &["events:rule", "sqs", "kms:key"];
/// The most GetResources answers per page.
const PAGE: i32 = 100;

/// All tags (kbp's included) by resource ARN.
pub type ByArn = HashMap<String, BTreeMap<String, String>>;

/// The tags of `arn` if the stack's tag query shows it with the user tags `prior` holds (all its tags, kbp's
/// included); `None` when the caller must read them from the resource's own service.
pub async fn confirmed(cx: &Context, arn: &str, prior: &Attrs) -> Option<BTreeMap<String, String>> {
    // A failed query (most often a caller without `tag:GetResources`) is kept as `None` for the refresh: it
    // only means every resource is read on its own.
    let key = format!("tag:GetResources {}={}", tags::STACK, cx.stack);
    let answer = cx.answers.get(&key, || async { Ok(send_query(cx).await) }).await.ok()?;
    let found = answer.as_ref().as_ref()?.get(arn)?;
    let seen = Value::Object(tags::user_tags(found.clone()));
    let last = prior.get("tags").filter(|t| !t.is_null()).cloned().unwrap_or_else(|| Value::Object(Default::default()));
    (seen == last).then(|| found.clone())
}

/// Every resource of the types refresh asks about (rules, queues, keys) tagged `kbp:stack = stack` now, with
/// all its tags, by ARN: for discovery, which must see the moment it looks (so never a refresh's answer).
/// `None` when the query failed (a caller without `tag:GetResources`): the caller then scans each service.
pub async fn find(cx: &Context, stack: &str) -> Option<ByArn> {
    send_query_for(cx, stack).await
}

async fn send_query(cx: &Context) -> Option<ByArn> {
    send_query_for(cx, &cx.stack).await
}

async fn send_query_for(cx: &Context, stack: &str) -> Option<ByArn> {
    match tagged(cx, Some(stack), ASKED_BY).await {
        Ok(found) => Some(found),
        Err(e) => {
            tracing::debug!(error = %e, "the stack's tag query failed; reading each resource's tags on its own");
            None
        }
    }
}

/// Every resource of `types` (`ec2:vpc`, `sqs`…) tagged `kbp:stack` — with the value `stack` when given, any
/// value otherwise — with all its tags, by ARN: one paginated GetResources, 100 resources a page. Refresh,
/// discovery and `kbp gc` all ask through here.
pub async fn tagged(cx: &Context, stack: Option<&str>, types: &[&str]) -> Result<ByArn> {
    let filter = TagFilter::builder().key(tags::STACK).set_values(stack.map(|s| vec![s.to_string()])).build();
    let types: Vec<String> = types.iter().map(|t| t.to_string()).collect();
    let mappings = send_pages(
        cx,
        "tag:GetResources",
        |token| {
            let call = cx.tagging().get_resources().tag_filters(filter.clone()).resources_per_page(PAGE);
            call.set_resource_type_filters(Some(types.clone())).set_pagination_token(token).send()
        },
        |page| (page.resource_tag_mapping_list.unwrap_or_default(), page.pagination_token),
    )
    .await?;
    Ok(by_arn(mappings))
}

fn by_arn(mappings: Vec<aws_sdk_resourcegroupstagging::types::ResourceTagMapping>) -> ByArn {
    mappings
        .into_iter()
        .filter_map(|m| {
            let tags = m.tags().iter().map(|t| (t.key().to_string(), t.value().to_string())).collect();
            Some((m.resource_arn?, tags))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use aws_sdk_resourcegroupstagging::types::{ResourceTagMapping, Tag};
    use serde_json::json;

    use super::*;

    fn mapping(arn: &str, pairs: &[(&str, &str)]) -> ResourceTagMapping {
        let tags = pairs.iter().map(|(k, v)| Tag::builder().key(*k).value(*v).build().unwrap());
        ResourceTagMapping::builder().resource_arn(arn).set_tags(Some(tags.collect())).build()
    }

    #[test]
    fn mappings_are_indexed_by_arn_with_every_tag() {
        let answer = by_arn(vec![mapping("arn:a", &[("kbp:stack", "s"), ("team", "x")]), mapping("arn:b", &[])]);
        assert_eq!(answer["arn:a"], tags::pairs(&[("kbp:stack", "s"), ("team", "x")]));
        assert!(answer["arn:b"].is_empty());
    }

    #[tokio::test]
    async fn only_tags_equal_to_the_prior_ones_are_confirmed() {
        let cx = Context::from_sdk(aws_config::SdkConfig::builder().build(), "s", "us-west-2");
        let answer: Option<ByArn> =
            Some(by_arn(vec![mapping("arn:a", &[("kbp:stack", "s"), ("team", "x")]), mapping("arn:b", &[])]));
        let key = format!("tag:GetResources {}=s", tags::STACK);
        cx.answers.get(&key, || async { Ok(answer) }).await.unwrap();
        let prior = |tags: Value| Attrs::from_iter([("tags".to_string(), tags)]);

        let same = confirmed(&cx, "arn:a", &prior(json!({"team": "x"}))).await;
        assert_eq!(same, Some(tags::pairs(&[("kbp:stack", "s"), ("team", "x")])), "kbp's tags are not compared");
        assert_eq!(confirmed(&cx, "arn:a", &prior(json!({"team": "y"}))).await, None, "a changed value");
        assert_eq!(confirmed(&cx, "arn:a", &prior(json!({}))).await, None, "a tag added by hand");
        assert_eq!(confirmed(&cx, "arn:b", &Attrs::new()).await, Some(BTreeMap::new()), "no tags, none before");
        assert_eq!(confirmed(&cx, "arn:gone", &prior(json!({}))).await, None, "not in the answer");
    }

    #[tokio::test]
    async fn a_failed_query_confirms_nothing() {
        let cx = Context::from_sdk(aws_config::SdkConfig::builder().build(), "s", "us-west-2");
        let key = format!("tag:GetResources {}=s", tags::STACK);
        cx.answers.get(&key, || async { Ok(None::<ByArn>) }).await.unwrap();
        assert_eq!(confirmed(&cx, "arn:a", &Attrs::new()).await, None);
    }
}

//! Karpenter's interruption handling providers (SQS queue, queue policy, EventBridge rule with its target)
//! against a private emulator: create, read back with the raw SDK, provider read equals desired, update, find,
//! delete, gone in the emulator, delete again.

use std::collections::{BTreeMap, HashMap};

use aws_sdk_sqs::types::QueueAttributeName;
use kbp::graph::{Address, Attrs};
use kbp::providers::iam::policy_doc;
use kbp::providers::{Applied, Context};
use serde_json::{json, Value};

use crate::support::provider::*;
use crate::support::*;

const QUEUE: &str = "aws_sqs_queue";
const POLICY: &str = "aws_sqs_queue_policy";
const RULE: &str = "aws_eventbridge_rule";
const TARGET_ID: &str = "KarpenterInterruptionQueueTarget";

/// The queue other kinds point at, and SQS read back.
impl Harness {
    /// A queue for the policy and rule tests to point at: (url, arn).
    async fn queue(&self, name: &str) -> (String, String) {
        let Applied { id: url, outputs } =
            self.create(QUEUE, &format!("sqs_queue.{name}"), &queue_attrs(name, 300, json!({}))).await;
        (url, outputs["arn"].as_str().unwrap().to_string())
    }

    async fn queue_attributes(&self, url: &str) -> HashMap<QueueAttributeName, String> {
        let out = self.sqs.get_queue_attributes().queue_url(url).attribute_names(QueueAttributeName::All).send();
        out.await.expect("GetQueueAttributes").attributes.unwrap_or_default()
    }
}

fn queue_attrs(name: &str, retention: i64, tags: Value) -> Attrs {
    obj(json!({"name": name, "message_retention_seconds": retention, "sqs_managed_sse_enabled": true, "tags": tags}))
}

/// The document the compiler emits for the interruption queue, with the queue's ARN resolved.
fn policy_attrs(url: &str, arn: &str, services: &[&str]) -> Attrs {
    obj(json!({"queue_url": url, "policy": {
        "Version": "2012-10-17",
        "Id": "EC2InterruptionPolicy",
        "Statement": [
            {"Effect": "Allow", "Principal": {"Service": services}, "Action": "sqs:SendMessage", "Resource": arn},
            {"Sid": "DenyHTTP", "Effect": "Deny", "Principal": "*", "Action": "sqs:*", "Resource": arn,
             "Condition": {"Bool": {"aws:SecureTransport": false}}},
        ],
    }}))
}

fn rule_attrs(name: &str, detail_type: &str, target_arn: &str, tags: Value) -> Attrs {
    obj(json!({
        "name": name,
        "description": format!("Karpenter interruption handling: {detail_type}"),
        "event_pattern": {"source": ["aws.ec2"], "detail-type": [detail_type]},
        "state": "ENABLED",
        "target_id": TARGET_ID,
        "target_arn": target_arn,
        "tags": tags,
    }))
}

#[tokio::test]
async fn queue_lifecycle() {
    let h = Harness::start().await;
    let addr = "sqs_queue.interruption";
    let want = queue_attrs("kbp-test", 300, json!({"team": "platform"}));
    let Applied { id: url, outputs } = h.create(QUEUE, addr, &want).await;
    let arn = format!("arn:aws:sqs:{REGION}:{ACCOUNT_ID}:kbp-test");
    assert_eq!(outputs["arn"], arn.as_str());
    assert_eq!(outputs["url"], url.as_str());
    assert_eq!(outputs["name"], "kbp-test");

    let raw = h.queue_attributes(&url).await;
    assert_eq!(raw[&QueueAttributeName::MessageRetentionPeriod], "300");
    assert_eq!(raw[&QueueAttributeName::SqsManagedSseEnabled], "true");
    assert_eq!(raw[&QueueAttributeName::QueueArn], arn);
    let raw_tags = h.sqs.list_queue_tags().queue_url(&url).send().await.unwrap().tags.unwrap_or_default();
    assert_eq!(raw_tags.into_iter().collect::<BTreeMap<_, _>>(), expected_tags(&[("team", "platform")], addr));
    assert_eq!(h.assert_reads(QUEUE, &url, &want).await["arn"], arn.as_str());
    assert_eq!(h.find(QUEUE, addr, &want).await.as_deref(), Some(url.as_str()));

    // Retention, SSE and tags change in place: one tag changed, one dropped, one added.
    let mut changed = queue_attrs("kbp-test", 600, json!({"team": "infra", "env": "dev"}));
    changed.insert("sqs_managed_sse_enabled".into(), json!(false));
    h.provider(QUEUE).update(&h.cx, &url, &want, &desired(&addr.parse().unwrap(), &changed)).await.unwrap();
    let raw = h.queue_attributes(&url).await;
    assert_eq!(raw[&QueueAttributeName::MessageRetentionPeriod], "600");
    assert_eq!(raw[&QueueAttributeName::SqsManagedSseEnabled], "false");
    let raw_tags = h.sqs.list_queue_tags().queue_url(&url).send().await.unwrap().tags.unwrap_or_default();
    let want_tags = expected_tags(&[("team", "infra"), ("env", "dev")], addr);
    assert_eq!(raw_tags.into_iter().collect::<BTreeMap<_, _>>(), want_tags);
    h.assert_reads(QUEUE, &url, &changed).await;

    // A create retried after kbp died mid-call adopts this stack's queue and brings it to the spec.
    let Applied { id: again, .. } = h.create(QUEUE, addr, &want).await;
    assert_eq!(again, url);
    h.assert_reads(QUEUE, &url, &want).await;
    // Another stack's queue of the same name is refused, not silently shared.
    let other = Context::from_sdk(h.em.sdk_config().await, "other-stack", REGION);
    let address: Address = addr.parse().unwrap();
    let e = h.provider(QUEUE).create(&other, &desired(&address, &want)).await.unwrap_err();
    assert_eq!(e.code, "QueueAlreadyExists", "{e}");
    assert!(e.hint.is_some());
    assert_eq!(h.provider(QUEUE).find(&other, &desired(&address, &want)).await.unwrap(), None);

    h.delete(QUEUE, &url).await;
    let gone = h.sqs.get_queue_url().queue_name("kbp-test").send().await.unwrap_err();
    assert!(gone.as_service_error().is_some_and(|e| e.is_queue_does_not_exist()), "{gone:?}");
    assert_eq!(h.find(QUEUE, addr, &want).await, None);
}

#[tokio::test]
async fn queue_policy_lifecycle() {
    let h = Harness::start().await;
    let (url, arn) = h.queue("kbp-policy").await;
    let addr = "sqs_queue_policy.interruption";
    let want = policy_attrs(&url, &arn, &["events.amazonaws.com", "sqs.amazonaws.com"]);
    assert_eq!(h.find(POLICY, addr, &want).await, None, "no policy yet");
    let Applied { id, .. } = h.create(POLICY, addr, &want).await;
    assert_eq!(id, url);

    let raw = h.queue_attributes(&url).await;
    let doc: Value = serde_json::from_str(&raw[&QueueAttributeName::Policy]).expect("the policy is JSON");
    let allow = &doc["Statement"][0];
    assert_eq!(allow["Effect"], "Allow");
    assert_eq!(allow["Action"], "sqs:SendMessage");
    assert_eq!(allow["Resource"], arn.as_str());
    assert_eq!(allow["Principal"]["Service"], json!(["events.amazonaws.com", "sqs.amazonaws.com"]));
    assert!(policy_doc::equivalent(&doc, &want["policy"]));
    h.assert_reads(POLICY, &url, &want).await;
    assert_eq!(h.find(POLICY, addr, &want).await.as_deref(), Some(url.as_str()));
    // A queue update that changes no queue attribute sends no SetQueueAttributes. (The emulator drops the
    // policy on any SetQueueAttributes call without one; AWS keeps it.)
    let retagged = queue_attrs("kbp-policy", 300, json!({"env": "dev"}));
    h.update_in_place(QUEUE, "sqs_queue.kbp-policy", &url, &retagged).await;
    h.assert_reads(POLICY, &url, &want).await;

    let changed = policy_attrs(&url, &arn, &["events.amazonaws.com"]);
    h.update_in_place(POLICY, addr, &url, &changed).await;
    let raw = h.queue_attributes(&url).await;
    let doc: Value = serde_json::from_str(&raw[&QueueAttributeName::Policy]).unwrap();
    assert_eq!(doc["Statement"][0]["Principal"]["Service"], json!(["events.amazonaws.com"]));
    h.assert_reads(POLICY, &url, &changed).await;
    assert_eq!(h.find(POLICY, addr, &want).await, None, "a different document is not this resource");

    h.delete(POLICY, &url).await;
    assert!(!h.queue_attributes(&url).await.contains_key(&QueueAttributeName::Policy), "the policy is removed");
    // Its queue gone, the policy reads as gone and deleting it still succeeds.
    h.delete(QUEUE, &url).await;
    h.delete(POLICY, &url).await;
}

#[tokio::test]
async fn rule_lifecycle() {
    let h = Harness::start().await;
    let (url, queue_arn) = h.queue("kbp-rule").await;
    let addr = "event_rule.spot_interruption";
    let want = rule_attrs(
        "kbp-test-SpotInterruption",
        "EC2 Spot Instance Interruption Warning",
        &queue_arn,
        json!({"team": "platform"}),
    );
    let Applied { id: name, outputs } = h.create(RULE, addr, &want).await;
    assert_eq!(name, "kbp-test-SpotInterruption");
    let rule_arn = format!("arn:aws:events:{REGION}:{ACCOUNT_ID}:rule/kbp-test-SpotInterruption");
    assert_eq!(outputs["arn"], rule_arn.as_str());

    let raw = h.events.describe_rule().name(&name).send().await.expect("DescribeRule");
    assert_eq!(raw.state().map(|s| s.as_str()), Some("ENABLED"));
    assert_eq!(raw.description(), want["description"].as_str());
    let pattern: Value = serde_json::from_str(raw.event_pattern().unwrap()).unwrap();
    assert_eq!(pattern, want["event_pattern"]);
    let targets = h.events.list_targets_by_rule().rule(&name).send().await.unwrap();
    let targets: Vec<(&str, &str)> = targets.targets().iter().map(|t| (t.id(), t.arn())).collect();
    assert_eq!(targets, [(TARGET_ID, queue_arn.as_str())]);
    let raw_tags = h.events.list_tags_for_resource().resource_arn(&rule_arn).send().await.unwrap();
    let raw_tags: BTreeMap<String, String> =
        raw_tags.tags().iter().map(|t| (t.key().to_string(), t.value().to_string())).collect();
    assert_eq!(raw_tags, expected_tags(&[("team", "platform")], addr));
    h.assert_reads(RULE, &name, &want).await;
    assert_eq!(h.find(RULE, addr, &want).await.as_deref(), Some(name.as_str()));

    // The emulator delivers a matching event to the target queue.
    let sent = h.events.put_events().entries(
        aws_sdk_eventbridge::types::PutEventsRequestEntry::builder()
            .source("aws.ec2")
            .detail_type("EC2 Spot Instance Interruption Warning")
            .detail(r#"{"instance-id": "i-0123456789abcdef0"}"#)
            .build(),
    );
    assert_eq!(sent.send().await.unwrap().failed_entry_count(), 0);
    let received = h.sqs.receive_message().queue_url(&url).send().await.unwrap();
    assert_eq!(received.messages().len(), 1, "the rule forwards the event to the queue");

    // Pattern, description, state, target and tags change in place; the old target is removed.
    let (_, other_arn) = h.queue("kbp-rule-2").await;
    let mut changed = rule_attrs(
        "kbp-test-SpotInterruption",
        "EC2 Instance Rebalance Recommendation",
        &other_arn,
        json!({"env": "dev"}),
    );
    changed.insert("target_id".into(), json!("Other"));
    changed.insert("state".into(), json!("DISABLED"));
    h.update_in_place(RULE, addr, &name, &changed).await;
    let raw = h.events.describe_rule().name(&name).send().await.unwrap();
    assert_eq!(raw.state().map(|s| s.as_str()), Some("DISABLED"));
    let pattern: Value = serde_json::from_str(raw.event_pattern().unwrap()).unwrap();
    assert_eq!(pattern["detail-type"], json!(["EC2 Instance Rebalance Recommendation"]));
    let targets = h.events.list_targets_by_rule().rule(&name).send().await.unwrap();
    let targets: Vec<(&str, &str)> = targets.targets().iter().map(|t| (t.id(), t.arn())).collect();
    assert_eq!(targets, [("Other", other_arn.as_str())]);
    h.assert_reads(RULE, &name, &changed).await;

    // Another stack's rule of the same name is refused: PutRule would overwrite it.
    let other = Context::from_sdk(h.em.sdk_config().await, "other-stack", REGION);
    let address: Address = addr.parse().unwrap();
    let e = h.provider(RULE).create(&other, &desired(&address, &want)).await.unwrap_err();
    assert_eq!(e.code, "ResourceAlreadyExistsException", "{e}");

    h.delete(RULE, &name).await;
    let gone = h.events.describe_rule().name(&name).send().await.unwrap_err();
    assert!(gone.as_service_error().is_some_and(|e| e.is_resource_not_found_exception()), "{gone:?}");
    assert_eq!(h.find(RULE, addr, &want).await, None);
}

#[tokio::test]
async fn unknown_ids_read_as_gone_and_delete_fine() {
    let h = Harness::start().await;
    let url = format!("{}/{ACCOUNT_ID}/never-made", h.em.endpoint);
    for (kind, id) in [(QUEUE, url.as_str()), (POLICY, url.as_str()), (RULE, "never-made")] {
        h.delete(kind, id).await;
    }
}

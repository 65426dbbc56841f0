//! Karpenter's interruption handling providers (SQS queue, queue policy, EventBridge rule with its target)
//! against a private emulator: create, read back with the raw SDK, provider read equals desired, update, find,
//! delete, gone in the emulator, delete again.

mod support;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use aws_sdk_sqs::types::QueueAttributeName;
use kbp::graph::{Address, Attrs};
use kbp::providers::iam::policy_doc;
use kbp::providers::{tags, Context, Desired, Provider, Registry};
use serde_json::{json, Value};
use support::*;

const STACK: &str = "test-stack";
const QUEUE: &str = "aws_sqs_queue";
const POLICY: &str = "aws_sqs_queue_policy";
const RULE: &str = "aws_eventbridge_rule";
const TARGET_ID: &str = "KarpenterInterruptionQueueTarget";

struct Harness {
    // Dropping the emulator stops it, so it lives as long as the test.
    em: Emulator,
    cx: Context,
    sqs: aws_sdk_sqs::Client,
    events: aws_sdk_eventbridge::Client,
    registry: Registry,
}

impl Harness {
    async fn start() -> Harness {
        let em = Emulator::start();
        let cx = Context::from_sdk(em.sdk_config().await, STACK, REGION);
        let (sqs, events) = (em.sqs().await, em.eventbridge().await);
        Harness { em, cx, sqs, events, registry: Registry::aws() }
    }

    fn provider(&self, kind: &str) -> Arc<dyn Provider> {
        self.registry.get(kind).unwrap_or_else(|| panic!("{kind} is registered"))
    }

    async fn create(&self, kind: &str, address: &str, attrs: &Attrs) -> (String, Attrs) {
        let address: Address = address.parse().unwrap();
        let applied = self
            .provider(kind)
            .create(&self.cx, &desired(&address, attrs))
            .await
            .unwrap_or_else(|e| panic!("create {kind}: {e}"));
        assert_eq!(applied.outputs["id"], applied.id.as_str(), "{kind} outputs include id");
        (applied.id, applied.outputs)
    }

    async fn update(&self, kind: &str, address: &str, id: &str, attrs: &Attrs) {
        let address: Address = address.parse().unwrap();
        let applied = self
            .provider(kind)
            .update(&self.cx, id, &Attrs::new(), &desired(&address, attrs))
            .await
            .unwrap_or_else(|e| panic!("update {kind}: {e}"));
        assert_eq!(applied.id, id, "{kind}: an update keeps the ID");
    }

    /// What the diff checks: the desired attributes, in the provider's canonical form, are what `read` reports.
    async fn assert_reads(&self, kind: &str, id: &str, want: &Attrs) -> Attrs {
        let p = self.provider(kind);
        let seen = p.read(&self.cx, id, want).await.unwrap().unwrap_or_else(|| panic!("{kind} {id} exists"));
        assert_eq!(seen.attrs, p.canonical(want.clone()), "{kind} {id} reads back as desired");
        assert_eq!(seen.outputs["id"], id);
        seen.outputs
    }

    async fn find(&self, kind: &str, address: &str, attrs: &Attrs) -> Option<String> {
        let address: Address = address.parse().unwrap();
        self.provider(kind).find(&self.cx, &desired(&address, attrs)).await.unwrap()
    }

    /// Deletes twice (the second finds it gone and succeeds) and checks that `read` says gone.
    async fn delete(&self, kind: &str, id: &str) {
        let p = self.provider(kind);
        p.delete(&self.cx, id, &Attrs::new()).await.unwrap_or_else(|e| panic!("delete {kind}: {e}"));
        p.delete(&self.cx, id, &Attrs::new()).await.unwrap_or_else(|e| panic!("delete {kind} again: {e}"));
        assert!(p.read(&self.cx, id, &Attrs::new()).await.unwrap().is_none(), "{kind} {id} reads as gone");
    }

    /// A queue for the policy and rule tests to point at: (url, arn).
    async fn queue(&self, name: &str) -> (String, String) {
        let (url, outputs) = self.create(QUEUE, &format!("sqs_queue.{name}"), &queue_attrs(name, 300, json!({}))).await;
        (url, outputs["arn"].as_str().unwrap().to_string())
    }

    async fn queue_attributes(&self, url: &str) -> HashMap<QueueAttributeName, String> {
        let out = self.sqs.get_queue_attributes().queue_url(url).attribute_names(QueueAttributeName::All).send();
        out.await.expect("GetQueueAttributes").attributes.unwrap_or_default()
    }
}

fn obj(v: Value) -> Attrs {
    v.as_object().cloned().expect("attributes are a JSON object")
}

fn desired<'a>(address: &'a Address, attrs: &'a Attrs) -> Desired<'a> {
    Desired { address, attrs, kbp_tags: tags::kbp_tags(STACK, address), client_token: "test-token" }
}

fn expected_tags(user: &[(&str, &str)], address: &str) -> BTreeMap<String, String> {
    let mut t: BTreeMap<String, String> = user.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    t.insert(tags::STACK.into(), STACK.into());
    t.insert(tags::ADDRESS.into(), address.into());
    t
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
    let (url, outputs) = h.create(QUEUE, addr, &want).await;
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
    let (again, _) = h.create(QUEUE, addr, &want).await;
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
    let (id, _) = h.create(POLICY, addr, &want).await;
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
    h.update(QUEUE, "sqs_queue.kbp-policy", &url, &retagged).await;
    h.assert_reads(POLICY, &url, &want).await;

    let changed = policy_attrs(&url, &arn, &["events.amazonaws.com"]);
    h.update(POLICY, addr, &url, &changed).await;
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
    let (name, outputs) = h.create(RULE, addr, &want).await;
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

    // Pattern, description, target and tags change in place; the old target is removed.
    let (_, other_arn) = h.queue("kbp-rule-2").await;
    let mut changed = rule_attrs(
        "kbp-test-SpotInterruption",
        "EC2 Instance Rebalance Recommendation",
        &other_arn,
        json!({"env": "dev"}),
    );
    changed.insert("target_id".into(), json!("Other"));
    h.update(RULE, addr, &name, &changed).await;
    let raw = h.events.describe_rule().name(&name).send().await.unwrap();
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

//! Interruption handling: the SQS queue Karpenter reads (SSE on, five-minute retention, since a stale
//! interruption notice is useless), the EventBridge rules of Karpenter's getting-started stack, each targeting
//! the queue, and the queue's policy letting only those rules deliver.
//!
//! Upstream's queue policy lets `events.amazonaws.com` and `sqs.amazonaws.com` send with no condition, so any
//! EventBridge rule or SQS feature of any account could write to the queue. Here EventBridge may send only on
//! behalf of this stack's own rules (`aws:SourceArn`, as EventBridge documents for SQS targets), and
//! `sqs.amazonaws.com` gets nothing: every message comes from those rules, and nothing in the stack (no
//! dead-letter redrive, no SNS subscription) sends as that principal.

use serde_json::{json, Value};

use super::karpenter_iam::queue_address;
use super::{kinds, Builder};
use crate::graph::kinds::{event_rule::Rule, sqs_queue::Queue, sqs_queue_policy::QueuePolicy};
use crate::graph::value::reference;
use crate::graph::{Address, Resource};

/// (address name, rule name suffix, event source, detail type)
const RULES: &[(&str, &str, &str, &str)] = &[
    ("health", "HealthEvent", "aws.health", "AWS Health Event"),
    ("spot_interruption", "SpotInterruption", "aws.ec2", "EC2 Spot Instance Interruption Warning"),
    ("rebalance", "Rebalance", "aws.ec2", "EC2 Instance Rebalance Recommendation"),
    ("instance_state_change", "InstanceStateChange", "aws.ec2", "EC2 Instance State-change Notification"),
    (
        "capacity_reservation_interruption",
        "CapacityReservationInterruption",
        "aws.ec2",
        "EC2 Capacity Reservation Instance Interruption Warning",
    ),
];

pub(super) fn compile(b: &mut Builder) {
    if !b.bp.karpenter.interruption_queue {
        return;
    }
    let name = b.cluster_name().to_string();
    let queue = b.add(Resource::new(
        queue_address(),
        kinds::SQS_QUEUE,
        kinds::attrs(&Queue {
            name: name.clone(),
            message_retention_seconds: 300,
            sqs_managed_sse_enabled: true,
            tags: b.tags(&[], None),
        }),
    ));
    let queue_arn = reference(&queue, "arn");
    let mut rule_arns = Vec::new();
    for (address_name, suffix, source, detail_type) in RULES {
        // EventBridge rule names are at most 64 characters; cut alike, the five would be one rule.
        let rule_name = super::fit_name(&format!("{name}-{suffix}"), 64);
        let rule = b.add(Resource::new(
            Address::new("event_rule", address_name),
            kinds::EVENT_RULE,
            kinds::attrs(&Rule {
                name: rule_name,
                description: Some(format!("Karpenter interruption handling for cluster {name}: {detail_type}")),
                event_pattern: json!({ "source": [source], "detail-type": [detail_type] }),
                state: "ENABLED".to_string(),
                target_id: "KarpenterInterruptionQueueTarget".to_string(),
                target_arn: queue_arn.clone(),
                tags: b.tags(&[], None),
            }),
        ));
        rule_arns.push(reference(&rule, "arn"));
    }
    b.add(Resource::new(
        Address::new("sqs_queue_policy", "interruption"),
        kinds::SQS_QUEUE_POLICY,
        kinds::attrs(&QueuePolicy { queue_url: reference(&queue, "url"), policy: queue_policy(queue_arn, rule_arns) }),
    ));
}

fn queue_policy(queue_arn: Value, rule_arns: Vec<Value>) -> Value {
    json!({
        "Version": "2012-10-17",
        "Id": "EC2InterruptionPolicy",
        "Statement": [
            {
                "Sid": "AllowEventBridgeRules",
                "Effect": "Allow",
                "Principal": { "Service": "events.amazonaws.com" },
                "Action": "sqs:SendMessage",
                "Resource": queue_arn,
                "Condition": { "ArnEquals": { "aws:SourceArn": rule_arns } },
            },
            {
                "Sid": "DenyHTTP",
                "Effect": "Deny",
                "Principal": "*",
                "Action": "sqs:*",
                "Resource": queue_arn,
                "Condition": { "Bool": { "aws:SecureTransport": false } },
            },
        ],
    })
}

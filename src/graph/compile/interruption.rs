//! Interruption handling: the SQS queue Karpenter reads (SSE on, five-minute retention, since a stale
//! interruption notice is useless), its policy letting EventBridge deliver, and the EventBridge rules of
//! Karpenter's getting-started stack, each targeting the queue.

use serde_json::json;

use super::karpenter_iam::queue_address;
use super::{kinds, Builder};
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

pub fn compile(b: &mut Builder) {
    if !b.bp.karpenter.interruption_queue {
        return;
    }
    let name = b.cluster_name().to_string();
    let queue = b.add(Resource::new(
        queue_address(),
        kinds::SQS_QUEUE,
        json!({
            "name": name,
            "message_retention_seconds": 300,
            "sqs_managed_sse_enabled": true,
            "tags": b.tags(&[], None),
        }),
    ));
    let queue_arn = reference(&queue, "arn");
    b.add(Resource::new(
        Address::new("sqs_queue_policy", "interruption"),
        kinds::SQS_QUEUE_POLICY,
        json!({
            "queue_url": reference(&queue, "url"),
            "policy": {
                "Version": "2012-10-17",
                "Id": "EC2InterruptionPolicy",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": { "Service": ["events.amazonaws.com", "sqs.amazonaws.com"] },
                        "Action": "sqs:SendMessage",
                        "Resource": queue_arn,
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
            },
        }),
    ));
    for (address_name, suffix, source, detail_type) in RULES {
        // EventBridge rule names are at most 64 characters.
        let mut rule_name = format!("{name}-{suffix}");
        rule_name.truncate(64);
        b.add(Resource::new(
            Address::new("event_rule", address_name),
            kinds::EVENT_RULE,
            json!({
                "name": rule_name,
                "description": format!("Karpenter interruption handling for cluster {name}: {detail_type}"),
                "event_pattern": { "source": [source], "detail-type": [detail_type] },
                "target_id": "KarpenterInterruptionQueueTarget",
                "target_arn": queue_arn,
                "tags": b.tags(&[], None),
            }),
        ));
    }
}

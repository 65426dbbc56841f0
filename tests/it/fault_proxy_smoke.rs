//! kbp and the AWS SDK for Rust through the fault proxy (tests/it/support/fault_proxy.rs): every service's injected
//! throttling and 5xx answers read as AWS's to the SDK and are retried, and `kbp plan` succeeds under seeded
//! throttling on every call.

use std::time::{Duration, Instant};

use crate::support::fault_proxy::FaultProxy;
use crate::support::*;
use aws_config::retry::RetryConfig;
use aws_config::SdkConfig;
use aws_sdk_sts::error::{ProvideErrorMetadata, SdkError};
use serde_json::{json, Value};

/// Each service kbp calls, with one cheap read, and its throttling error as the SDK reports it (status, code).
const SERVICES: &[(&str, &str, u16, &str)] = &[
    ("ec2", "DescribeVpcs", 503, "RequestLimitExceeded"),
    ("iam", "ListRoles", 400, "Throttling"),
    ("sts", "GetCallerIdentity", 400, "Throttling"),
    ("kms", "ListKeys", 400, "ThrottlingException"),
    ("events", "ListRules", 400, "ThrottlingException"),
    ("sqs", "ListQueues", 400, "RequestThrottled"),
    ("eks", "ListClusters", 429, "ThrottlingException"),
    ("s3", "ListBuckets", 503, "SlowDown"),
];

/// `Ok` or "STATUS CODE" of a failed call.
fn outcome<T, E: ProvideErrorMetadata>(result: Result<T, SdkError<E>>) -> Result<(), String> {
    result.map(|_| ()).map_err(|e| {
        let status = e.raw_response().map(|r| r.status().as_u16()).unwrap_or(0);
        format!("{status} {}", e.code().unwrap_or("(no code)"))
    })
}

/// Calls each service in [`SERVICES`] once, in its order.
async fn call_each(config: &SdkConfig) -> Vec<Result<(), String>> {
    let s3 = aws_sdk_s3::config::Builder::from(config).force_path_style(true).build();
    vec![
        outcome(aws_sdk_ec2::Client::new(config).describe_vpcs().send().await),
        outcome(aws_sdk_iam::Client::new(config).list_roles().send().await),
        outcome(aws_sdk_sts::Client::new(config).get_caller_identity().send().await),
        outcome(aws_sdk_kms::Client::new(config).list_keys().send().await),
        outcome(aws_sdk_eventbridge::Client::new(config).list_rules().send().await),
        outcome(aws_sdk_sqs::Client::new(config).list_queues().send().await),
        outcome(aws_sdk_eks::Client::new(config).list_clusters().send().await),
        outcome(aws_sdk_s3::Client::from_conf(s3).list_buckets().send().await),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn every_services_injected_faults_read_as_aws_errors_and_are_retried() {
    let em = Emulator::start();
    let proxy = FaultProxy::start(&em, json!({"rules": [{"action": "throttle"}]}));
    let base = em.sdk_config().await;
    let once = base.to_builder().endpoint_url(proxy.endpoint()).retry_config(RetryConfig::disabled()).build();
    for ((service, operation, status, code), got) in SERVICES.iter().zip(call_each(&once).await) {
        assert_eq!(got, Err(format!("{status} {code}")), "{service}:{operation} throttled, no retries");
    }

    let retrying = base
        .into_builder()
        .endpoint_url(proxy.endpoint())
        .retry_config(RetryConfig::standard().with_max_attempts(2).with_initial_backoff(Duration::from_millis(10)))
        .build();
    for kind in ["throttle", "server_error"] {
        let rules: Vec<Value> =
            SERVICES.iter().map(|(service, ..)| json!({"service": service, "action": kind, "count": 1})).collect();
        proxy.set_config(json!({ "rules": rules }));
        proxy.reset();
        for ((service, operation, ..), got) in SERVICES.iter().zip(call_each(&retrying).await) {
            assert_eq!(got, Ok(()), "{service}:{operation} retried past one {kind}\n{}", proxy.log());
        }
        let stats = proxy.stats();
        for (service, operation, ..) in SERVICES {
            let key = format!("{service}:{operation}");
            assert_eq!(stats["operations"][&key], 2, "{key}: one {kind}, one retry\n{stats:#}");
            assert_eq!(stats["faults_by_operation"][&key][kind], 1, "{key}\n{stats:#}");
        }
    }
}

/// `kbp plan` refreshes every resource in state, so the stack is applied first, straight to the emulator: a plan
/// with no state makes no AWS call at all.
#[test]
fn plan_succeeds_under_seeded_throttling() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    let args = ["plan", ws.blueprint_arg(), "--set", "cluster.name=throttled", "--detailed-exitcode"];
    kbp_ok(&em, &["apply", ws.blueprint_arg(), "--set", "cluster.name=throttled", "--auto-approve"], ws.path());

    let proxy = FaultProxy::start(&em, json!({"seed": 7, "throttle_rate": 0.3}));
    let started = Instant::now();
    let out = kbp_command(&em, &args, ws.path()).envs(proxy.env()).output().expect("run kbp plan");
    eprintln!("kbp plan through 30 % throttling took {:.1?}", started.elapsed());
    if out.status.code() != Some(0) {
        panic!(
            "kbp plan under throttling: {}\n{}\n--- proxy log ---\n{}",
            out.status,
            describe_output(&out),
            proxy.log()
        );
    }

    let stats = proxy.stats();
    let throttled = stats["faults"]["throttle"].as_u64().expect("a throttle count");
    assert!(throttled > 0, "the proxy throttled some of kbp's calls\n{stats:#}");
    // Every throttled operation was answered in the end: kbp (its SDK) retried past each throttle.
    for (operation, faults) in stats["faults_by_operation"].as_object().expect("faults by operation") {
        let requests = stats["operations"][operation].as_u64().unwrap_or(0);
        let faulted = faults["throttle"].as_u64().unwrap_or(0);
        assert!(
            requests > faulted,
            "{operation}: {faulted} of {requests} requests throttled, none answered\n{stats:#}"
        );
    }
}

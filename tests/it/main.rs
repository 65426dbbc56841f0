//! kbp's integration tests: one test binary (`cargo nextest run --test it`), one module per area, all sharing
//! [`support`]. Most run the real `kbp` binary or a provider against a private AWS emulator per test and read
//! what exists back with the AWS SDK; the first group needs no emulator.
//!
//! One binary rather than one per file: the crate and its dependencies are linked once, not thirty times, and
//! helpers live in `support` instead of being copied between files. nextest still runs every test in its own
//! process, so tests stay isolated and parallel.

// Test code: unwrapping is how a test fails with its message, and a test may print what it measured.
#![allow(clippy::unwrap_used, clippy::print_stdout)]

mod simulate;
mod simulate_kwok;
mod support;

// The command line without AWS.
mod chart_fidelity;
mod chart_values_apply;
mod cli_conventions;
mod crd_corpus;
mod day_two;
mod docs_links;
mod fmt_and_schema;
mod layers;
mod render_cli;
mod seed_patterns;
mod token_cli;
mod validate_cli;

// The project's own CI and release workflows, and the one docs/ci.md recommends.
mod workflows;

// The test harness itself: the emulator, its extension and the fault proxy.
mod emulator_extension;
mod emulator_smoke;
mod fault_proxy_smoke;

// One provider module per AWS service, each kind's lifecycle against the emulator.
mod provider_ec2;
mod provider_eks;
mod provider_existing_network;
mod provider_iam;
mod provider_kms;
mod provider_sqs_eventbridge;
// A kind added through the providers alone, handled by every stage that asks the registry.
mod add_a_kind;

// What `kbp simulate` reads from AWS: the instance-type catalog and its cache.
mod catalog;

// Whole runs of the binary: plan, apply, destroy, and what a user or a CI job sees of them.
mod aws_contract;
mod aws_stack;
mod ci_recipe;
mod ci_stage;
mod drift;
mod existing_network;
mod import;
mod json_contract;
mod karpenter_deploy;
mod lifecycle;
mod oci_chart;
mod output_snapshots;
mod plan_cost;
mod preflight;
mod refresh_calls;

// State: local and in S3, locking, recovery, files and secrets.
mod files_and_secrets;
mod state_and_recovery;
mod state_s3;

// Teardown: what a stack owns outside state, found and deleted.
mod gc_discovery;
mod teardown;
mod teardown_cli;
mod teardown_in_cluster;
mod teardown_kinds;

// The cluster's own API, served by a real kube-apiserver: who may call it.
mod cluster_auth;

// What real AWS does to a run: lost answers, throttling, kbp killed at any moment.
mod faults;
mod kill_matrix;

//! Figures, not a test: what a wait costs in calls and how late it sees what it waits for, with the schedule
//! of `providers::wait` before waits knew typical durations ("before": a budget with no expected time, which is
//! how such waits still look) and now ("now": the same budget expecting the kind's typical time, read from its
//! `Descriptor` as the provider does). An EKS cluster create, ACTIVE after 6 s (an emulator scaling AWS's
//! times by 0.01) to 1,200 s (twice the usual); each long-running kind done at its typical time; and twenty
//! cluster creates started at once, as twenty sandbox pipelines in one account make them.
//!
//! The clock is virtual: a wait is followed through `Budget::next_look`, which is what `Wait::until` asks
//! between two looks (look; if not done, sleep what `next_look` says, or give up when it says the budget is
//! spent), so a twenty-minute wait is followed in microseconds. Tokio's paused clock would run `Wait::until`
//! itself, but needs tokio's `test-util` feature, and turning it on rebuilds tokio and every crate above it
//! (the AWS SDK, kube, hyper) for every test build.
//!
//! The budgets are shaped as the providers' are (`long_minutes` for EKS, `minutes` for EC2); only their floor
//! and ceiling matter here, as every wait below ends well within its timeout.
//!
//! `cargo bench --bench waits` prints the tables.

// A benchmark prints its figures on stdout; its setup unwraps, as a test does.
#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::time::Duration;

use kbp::graph::kinds;
use kbp::providers::wait::Budget;
use kbp::providers::{Registry, Typical};

/// The moments a wait looks, from its start, until it sees what is done at `done`.
fn looks(budget: Budget, done: Duration) -> Vec<Duration> {
    let mut at = vec![Duration::ZERO];
    let mut t = Duration::ZERO;
    while t < done {
        t += budget.next_look(t).expect("every wait here ends within its budget");
        at.push(t);
    }
    at
}

/// Calls; how late the last one saw what was done at `done`; and at most how late, were it done just after the
/// look before (the interval `done` fell in).
fn cost(budget: Budget, done: Duration) -> (usize, Duration, Duration) {
    let at = looks(budget, done);
    let (last, before) = (at[at.len() - 1], at[at.len().saturating_sub(2)]);
    (at.len(), last - done, last - before)
}

/// The most looks of one wait within any `window`.
fn busiest(at: &[Duration], window: Duration) -> usize {
    (0..at.len()).map(|i| at[i..].iter().take_while(|t| **t - at[i] < window).count()).max().unwrap_or(0)
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn main() {
    // Test runners list every target's tests (`--list`, as cargo-nextest does with --all-targets): a benchmark
    // that prints figures has none, so it says nothing then.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let registry = Registry::builtin();
    let typical = |kind: &str| -> Typical { registry.get(kind).expect("a built-in kind").descriptor().typical };
    let cluster = Budget::long_minutes(30);
    let expected = typical(kinds::EKS_CLUSTER).create;
    let now = cluster.expecting(expected);

    println!("an EKS cluster create (typical {expected} s, budget 30 min): DescribeCluster calls, how late ACTIVE is");
    println!("seen, and at most how late it would be seen if done just after the look before");
    println!(
        "  {:>9}  {:>13} {:>8} {:>8}  {:>10} {:>8} {:>8} {:>9}",
        "ACTIVE at", "before: calls", "lag", "at most", "now: calls", "lag", "at most", "% of wait"
    );
    for done in [6, 30, 60, 300, 600, 900, 1200] {
        let done = Duration::from_secs(done);
        let ((calls_before, lag_before, most_before), (calls, lag, most)) = (cost(cluster, done), cost(now, done));
        println!(
            "  {:>9}  {calls_before:>13} {:>8} {:>8}  {calls:>10} {:>8} {:>8} {:>8.1}%",
            format!("{} s", done.as_secs()),
            secs(lag_before),
            secs(most_before),
            secs(lag),
            secs(most),
            100.0 * most.as_secs_f64() / done.as_secs_f64(),
        );
    }

    println!();
    println!("each long wait done at its kind's typical time: calls, and at most how late it is seen");
    let kinds = [
        ("cluster delete", kinds::EKS_CLUSTER, Budget::long_minutes(20), typical(kinds::EKS_CLUSTER).delete),
        ("node group create", kinds::EKS_NODE_GROUP, Budget::long_minutes(20), typical(kinds::EKS_NODE_GROUP).create),
        ("node group delete", kinds::EKS_NODE_GROUP, Budget::long_minutes(20), typical(kinds::EKS_NODE_GROUP).delete),
        ("add-on create", kinds::EKS_ADDON, Budget::long_minutes(20), typical(kinds::EKS_ADDON).create),
        ("NAT gateway create", kinds::NAT_GATEWAY, Budget::minutes(10), typical(kinds::NAT_GATEWAY).create),
        ("NAT gateway delete", kinds::NAT_GATEWAY, Budget::minutes(10), typical(kinds::NAT_GATEWAY).delete),
    ];
    for (what, kind, budget, expected) in kinds {
        let done = Duration::from_secs(u64::from(expected));
        let ((calls_before, _, most_before), (calls, _, most)) =
            (cost(budget, done), cost(budget.expecting(expected), done));
        println!(
            "  {what:<18} {kind:<18} {expected:>3} s   before {calls_before:>3} calls, {:>7}   now {calls:>3} calls, {:>7}",
            secs(most_before),
            secs(most)
        );
    }

    println!();
    let (pipelines, window, done) = (20, Duration::from_secs(10), Duration::from_secs(u64::from(expected)));
    println!(
        "{pipelines} cluster creates started at once, each ACTIVE after {} s: DescribeCluster calls",
        done.as_secs()
    );
    for (name, budget) in [("before", cluster), ("now", now)] {
        let at = looks(budget, done);
        println!(
            "  {name:<6} {:>5} in all, {:>5.1} a second on average, {:>4} in the busiest {} s",
            pipelines * at.len(),
            (pipelines * at.len()) as f64 / done.as_secs_f64(),
            pipelines * busiest(&at, window),
            window.as_secs()
        );
    }
}

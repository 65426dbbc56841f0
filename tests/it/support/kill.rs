//! Killing kbp (SIGKILL: no handler runs, nothing is flushed) at a chosen moment of a run, the moment told by
//! what the fault proxy has seen: the n-th call that changes something, or a given call having gone through.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::fault_proxy::FaultProxy;

/// When to kill a run.
#[derive(Clone, Copy, Debug)]
pub(crate) enum When {
    /// Once the proxy has seen `n` calls that change something (anything but Describe*, List*, Get*).
    Changes(u64),
    /// `after` once the proxy has seen `operation` (`"eks:CreateCluster"`), e.g. while the cluster is CREATING.
    After(&'static str, Duration),
    /// `after` once the proxy has held back a request (a `delay_forward` rule fired): the requests sent
    /// meanwhile are held too if rules match them.
    Held(Duration),
}

/// How a run ended: killed at the moment (with the changes seen by then), or finished before it came.
#[derive(Debug)]
pub(crate) struct Killed {
    pub killed: bool,
    pub changes: u64,
    /// The operations whose requests the proxy held back (`delay_forward`), with their service.
    pub held: Vec<String>,
    /// The end of what the run wrote on stderr, to tell why it finished early.
    pub stderr_tail: String,
}

/// How long a run may take to reach its moment.
const REACH_TIMEOUT: Duration = Duration::from_secs(300);

/// Calls that change something, of those the proxy counted since its last reset.
pub(crate) fn changes(stats: &Value) -> u64 {
    let read_only = ["Describe", "List", "Get"];
    stats["operations"]
        .as_object()
        .map(|ops| {
            ops.iter()
                .filter(|(op, _)| {
                    let name = op.rsplit(':').next().unwrap_or(op);
                    !read_only.iter().any(|p| name.starts_with(p))
                })
                .filter_map(|(_, n)| n.as_u64())
                .sum()
        })
        .unwrap_or(0)
}

fn reached(stats: &Value, when: When) -> Option<Duration> {
    match when {
        When::Changes(n) => (changes(stats) >= n).then_some(Duration::ZERO),
        When::After(op, after) => (stats["operations"][op].as_u64().unwrap_or(0) > 0).then_some(after),
        When::Held(after) => (stats["faults"]["delay_forward"].as_u64().unwrap_or(0) > 0).then_some(after),
    }
}

fn held_operations(stats: &Value) -> Vec<String> {
    let ops = stats["faults_by_operation"].as_object();
    ops.map(|o| {
        o.iter().filter(|(_, f)| f["delay_forward"].as_u64().unwrap_or(0) > 0).map(|(k, _)| k.clone()).collect()
    })
    .unwrap_or_default()
}

/// Runs `cmd` (its output discarded) and SIGKILLs it at `when`, counted from a reset of the proxy's counters.
pub(crate) fn run_and_kill(mut cmd: Command, proxy: &FaultProxy, when: When) -> Killed {
    proxy.reset();
    let log = tempfile::NamedTempFile::new().expect("a file for the run's stderr");
    let stderr = log.reopen().expect("reopen the stderr file");
    let tail = || {
        let text = std::fs::read_to_string(log.path()).unwrap_or_default();
        text.lines().rev().take(15).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n")
    };
    let mut child = cmd.stdout(Stdio::piped()).stderr(stderr).spawn().expect("start kbp");
    let out = child.stdout.take().unwrap();
    let drain = std::thread::spawn(move || BufReader::new(out).lines().map_while(Result::ok).for_each(drop));
    let started = Instant::now();
    let after = loop {
        if let Ok(Some(_)) = child.try_wait() {
            let _ = drain.join();
            return Killed {
                killed: false,
                changes: changes(&proxy.stats()),
                held: held_operations(&proxy.stats()),
                stderr_tail: tail(),
            };
        }
        if let Some(after) = reached(&proxy.stats(), when) {
            break after;
        }
        assert!(started.elapsed() < REACH_TIMEOUT, "kbp did not reach {when:?} within {REACH_TIMEOUT:?}");
        std::thread::sleep(Duration::from_millis(10));
    };
    std::thread::sleep(after);
    let killed = matches!(child.try_wait(), Ok(None));
    let _ = child.kill();
    let _ = child.wait();
    let _ = drain.join();
    let stats = proxy.stats();
    Killed { killed, changes: changes(&stats), held: held_operations(&stats), stderr_tail: tail() }
}

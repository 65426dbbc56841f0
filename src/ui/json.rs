//! The `--json` contract of `validate`, `plan`, `apply`, `destroy` and `gc`: stdout carries nothing but events,
//! one JSON object per line, each with its `type`, a timestamp `ts` and the contract's [`FORMAT_VERSION`], and a
//! run ends with exactly one `summary` (also when it fails). Human text goes to stderr meanwhile.
//!
//! Every event type is documented in `docs/json.md`, whose JSON Schema (`docs/json-events.schema.json`) the
//! test suite holds every line to. A field added is compatible; a field removed or changed in meaning bumps
//! [`FORMAT_VERSION`].

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use serde::Serialize;
use serde_json::{json, Map, Value};

use super::timestamp_now;

/// The version of the event contract, in every line.
pub const FORMAT_VERSION: u32 = 1;

static ON: AtomicBool = AtomicBool::new(false);
static RUN: Mutex<Option<Run>> = Mutex::new(None);

/// The run being reported: its command, and what its summary will say besides the common fields.
struct Run {
    command: String,
    summary: Map<String, Value>,
    summarized: bool,
}

/// Events other than the engine's progress ([`crate::exec::Event`], which is emitted as it is).
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Line<'a> {
    /// Who kbp calls AWS as (the preflight's answer).
    Identity {
        /// The 12-digit AWS account ID.
        account: &'a str,
        /// The caller's ARN (user, or assumed role session).
        arn: &'a str,
        /// `aws`, `aws-cn` or `aws-us-gov`.
        partition: &'a str,
        /// The region kbp works in.
        region: &'a str,
    },
    /// The plan document, as `kbp plan --out` saves it.
    Plan {
        /// The plan, with its changes, their reasons and the cost block.
        plan: &'a crate::plan::Plan,
    },
    /// A problem in the blueprint, found while loading it (file, line, column, field, hint).
    Diagnostic(&'a crate::diag::Diagnostic),
    /// Any other error or warning: one line of what happened, and what to do.
    Problem {
        /// Error or warning.
        severity: crate::diag::Severity,
        /// What happened, without the hint.
        message: &'a str,
        /// What to do, taken from the text's `hint:` lines.
        #[serde(skip_serializing_if = "Option::is_none")]
        hint: Option<&'a str>,
    },
    /// Resources outside state that destroy (or apply, for duplicates) deletes.
    /// Each item: `kind`, `id`, `name`, `detail` and the `address` its deletion events carry.
    Leftovers {
        /// Why they are listed.
        what: &'a str,
        /// The resources, one JSON object each.
        items: &'a [Value],
    },
    /// What of the stack is still in the region after a destroy (empty when nothing is).
    FinalScan {
        /// The region scanned.
        region: &'a str,
        /// The resources still there, as `leftovers` lists them.
        left: &'a [Value],
    },
    /// `kbp gc`: the region's stacks and what happens to each.
    Stacks {
        /// The region scanned.
        region: &'a str,
        /// Each stack: `name`, `id`, `owner`, `age`, `expires` and `action`.
        stacks: &'a [Value],
    },
    /// `kbp simulate`: what Karpenter would launch, and the catalog it chose from (`region`, `fetched_at`,
    /// `from_cache`).
    Simulation {
        /// The nodes, NodePool and pod-group outcomes and the cost.
        simulation: &'a crate::simulate::Simulation,
        /// The catalog chosen from: `region`, `fetched_at`, `from_cache`.
        catalog: &'a Value,
    },
}

/// Turns the contract on for this process (the command was given `--json`).
pub fn start(command: &str) {
    ON.store(true, Ordering::SeqCst);
    let mut run = RUN.lock().unwrap_or_else(|p| p.into_inner());
    *run = Some(Run { command: command.to_string(), summary: Map::new(), summarized: false });
}

/// Whether stdout is the event stream.
pub fn on() -> bool {
    ON.load(Ordering::SeqCst)
}

/// Writes one event line: `event` serialized (an object with a `type`), with `ts` and `format_version` added.
/// Nothing is written unless the contract is on.
pub fn emit<T: Serialize>(event: &T) {
    if !on() {
        return;
    }
    let mut value = serde_json::to_value(event).expect("invariant: events serialize to JSON");
    let Value::Object(map) = &mut value else { unreachable!("invariant: every event is a JSON object") };
    map.insert("ts".into(), json!(timestamp_now()));
    map.insert("format_version".into(), json!(FORMAT_VERSION));
    write_line(&value);
}

/// Adds `fields` (an object) to what the run's summary will say.
pub fn summarize(fields: Value) {
    let Value::Object(fields) = fields else { return };
    let mut run = RUN.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(run) = run.as_mut() {
        run.summary.extend(fields);
    }
}

/// Emits the run's one `summary`: the command, whether it succeeded, its exit code, the AWS calls it made and
/// retried, and what the command added with [`summarize`].
pub fn finish(exit_code: u8) {
    let mut guard = RUN.lock().unwrap_or_else(|p| p.into_inner());
    let Some(run) = guard.as_mut().filter(|r| !r.summarized) else { return };
    run.summarized = true;
    let (calls, retries) = crate::aws::call_totals();
    let mut summary = Map::new();
    summary.insert("type".into(), json!("summary"));
    summary.insert("command".into(), json!(run.command));
    // Exit code 2 is `plan --detailed-exitcode`'s "changes present" and `drift`'s "drift found": a success.
    let two_is_ok = ["plan", "drift"].contains(&run.command.as_str());
    summary.insert("ok".into(), json!(exit_code == 0 || (exit_code == 2 && two_is_ok)));
    summary.insert("exit_code".into(), json!(exit_code));
    summary.insert("aws".into(), json!({ "calls": calls, "retries": retries }));
    summary.extend(std::mem::take(&mut run.summary));
    drop(guard);
    emit(&Value::Object(summary));
}

/// An error as the stream reports it: each line of its text that starts with `hint:` becomes the hint.
pub fn problem(severity: crate::diag::Severity, text: &str) {
    let (message, hint) = split_hint(text);
    emit(&Line::Problem { severity, message: &message, hint: hint.as_deref() });
}

/// `"what happened\n  hint: what to do"` → (what happened, what to do).
fn split_hint(text: &str) -> (String, Option<String>) {
    let mut message = Vec::new();
    let mut hints = Vec::new();
    for line in text.lines() {
        match line.trim_start().strip_prefix("hint:") {
            Some(hint) => hints.push(hint.trim().to_string()),
            None => message.push(line.trim_end()),
        }
    }
    let hint = (!hints.is_empty()).then(|| hints.join(" "));
    (message.join("\n").trim().to_string(), hint)
}

fn write_line(value: &Value) {
    let mut out = std::io::stdout().lock();
    // A closed stdout ends kbp quietly, as `println!` does (see `cli::quiet_on_closed_stdout`).
    if let Err(e) = writeln!(out, "{value}").and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(super::CLOSED_STDOUT.into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::split_hint;

    #[test]
    fn hints_are_split_from_the_message() {
        let (m, h) = split_hint("cannot call AWS: no credentials\n  hint: set AWS_PROFILE");
        assert_eq!((m.as_str(), h.as_deref()), ("cannot call AWS: no credentials", Some("set AWS_PROFILE")));
        let (m, h) = split_hint("one\ntwo");
        assert_eq!((m.as_str(), h), ("one\ntwo", None));
    }
}

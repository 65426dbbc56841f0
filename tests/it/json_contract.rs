//! The `--json` contract a CI stage relies on, end to end against the emulator: validate, plan, apply, plan
//! again, destroy and gc each print only schema-valid events (docs/json-events.schema.json), ending with one
//! summary that agrees with the exit code and with what the emulator holds; `jq` reads every stream; a failure
//! is a `problem` event, not text on stdout.

use std::io::Write as _;
use std::process::{Output, Stdio};

use crate::support::inventory::Inventory;
use crate::support::*;
use events::{self, of_type};
use serde_json::Value;

/// `jq -c .` reads the whole stream and gives back as many objects as there were lines.
fn assert_jq_parses(out: &Output, what: &str) {
    let mut jq = std::process::Command::new("jq")
        .args(["-c", "."])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("jq is installed (scripts/test.sh installs it)");
    jq.stdin.take().unwrap().write_all(&out.stdout).unwrap();
    let parsed = jq.wait_with_output().unwrap();
    assert!(parsed.status.success(), "jq parses {what}: {}", String::from_utf8_lossy(&parsed.stderr));
    assert_eq!(parsed.stdout.iter().filter(|b| **b == b'\n').count(), stdout(out).lines().count(), "{what}");
}

/// Runs a `--json` command, checks its stream, and returns its events.
fn run_json(em: &Emulator, ws: &Workspace, args: &[&str], code: i32) -> Vec<Value> {
    let out = kbp(em, args, ws.path());
    assert_exit_code(&out, code, &args.join(" "));
    assert_jq_parses(&out, &args.join(" "));
    events::events(&out)
}

#[tokio::test(flavor = "multi_thread")]
async fn plan_apply_destroy_and_gc_print_only_documented_events() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    let empty = Inventory::take(&em).await;

    let lines = run_json(&em, &ws, &["validate", ws.blueprint_arg(), "--json"], 0);
    assert_eq!(lines.last().unwrap()["valid"], true);

    let lines = run_json(&em, &ws, &["plan", ws.blueprint_arg(), "--json", "--detailed-exitcode"], 2);
    let summary = lines.last().unwrap();
    let plan = &of_type(&lines, "plan")[0]["plan"];
    let to_add = plan["summary"]["add"].as_u64().unwrap();
    assert!(to_add > 10, "a new stack creates its resources: {summary}");
    assert_eq!(
        (&summary["command"], &summary["ok"], &summary["has_changes"]),
        (&"plan".into(), &true.into(), &true.into())
    );
    assert_eq!(summary["changes"]["add"].as_u64(), Some(to_add));
    assert!(summary["aws"]["calls"].as_u64().unwrap() >= 1, "preflight called STS at least: {summary}");
    let identity = of_type(&lines, "identity");
    assert_eq!(identity.len(), 1, "preflight says who kbp calls AWS as");
    assert_eq!((&identity[0]["partition"], &identity[0]["region"]), (&"aws".into(), &plan["region"]));
    assert_eq!(plan["account"], identity[0]["account"], "the plan names the account it was made as");

    let lines = run_json(&em, &ws, &["apply", ws.blueprint_arg(), "--json", "--auto-approve"], 0);
    assert_eq!(of_type(&lines, "plan").len(), 1, "the plan once, as an event");
    let finished = of_type(&lines, "finished");
    assert_eq!(of_type(&lines, "started").len(), finished.len(), "every operation started finishes");
    assert!(finished.iter().all(|e| e["op"] == "create"));
    let summary = lines.last().unwrap();
    assert_eq!((&summary["command"], &summary["ok"]), (&"apply".into(), &true.into()), "{summary}");
    assert_eq!(summary["done"].as_u64(), Some(finished.len() as u64));
    assert!(summary["failed"].as_array().unwrap().is_empty());
    let applied = Inventory::take(&em).await;
    assert!(!applied.diff(&empty).is_empty(), "apply made the stack");

    let lines = run_json(&em, &ws, &["plan", ws.blueprint_arg(), "--json", "--detailed-exitcode"], 0);
    assert_eq!(lines.last().unwrap()["has_changes"], false);

    let out = kbp(&em, &["destroy", ws.blueprint_arg(), "--json", "--auto-approve"], ws.path());
    assert_success(&out, "destroy --json");
    assert!(!stdout(&out).contains("Destroy complete"), "human text stays off stdout: {}", stdout(&out));
    assert!(stderr(&out).contains("Destroy complete"), "and goes to stderr: {}", stderr(&out));
    assert_jq_parses(&out, "destroy --json");
    let lines = events::events(&out);
    let scan = of_type(&lines, "final_scan");
    assert_eq!(scan.len(), 1);
    assert!(scan[0]["left"].as_array().unwrap().is_empty(), "{}", scan[0]);
    let summary = lines.last().unwrap();
    assert_eq!((&summary["command"], &summary["ok"], &summary["left"]), (&"destroy".into(), &true.into(), &0.into()));
    assert!(of_type(&lines, "finished").iter().all(|e| e["op"] == "delete" || e["op"] == "forget"));
    Inventory::take(&em).await.assert_eq(&empty, "after destroy --json");

    // A sandbox past its TTL, collected by gc.
    let sandbox = ["apply", ws.blueprint_arg(), "--auto-approve", "--ttl", "1s", "--set", "cluster.name=sbx-gc"];
    assert_success(&kbp(&em, &sandbox, ws.path()), "apply --ttl");
    std::thread::sleep(std::time::Duration::from_secs(2));
    let lines = run_json(&em, &ws, &["gc", "--json", "--dry-run"], 0);
    let stacks = of_type(&lines, "stacks");
    let row = stacks[0]["stacks"].as_array().unwrap().iter().find(|s| s["name"] == "sbx-gc").cloned();
    assert_eq!(row.map(|r| r["action"].clone()), Some("destroy (expired)".into()), "{}", stacks[0]);
    let lines = run_json(&em, &ws, &["gc", "--json", "--auto-approve"], 0);
    let summary = lines.last().unwrap();
    assert_eq!(summary["destroyed"], serde_json::json!(["sbx-gc"]), "{summary}");
    let deletes = of_type(&lines, "finished");
    assert!(deletes.iter().any(|e| e["op"] == "delete"), "each deletion is an event of the one walk");
    Inventory::take(&em).await.assert_eq(&empty, "after gc --json");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failure_is_a_problem_event_and_a_failed_summary() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    let out = kbp_command(&em, &["apply", ws.blueprint_arg(), "--json", "--auto-approve"], ws.path())
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .output()
        .unwrap();
    assert_exit_code(&out, 1, "apply --json without credentials");
    let lines = events::events(&out);
    let problems = of_type(&lines, "problem");
    assert_eq!(problems.len(), 1, "one problem: {lines:?}");
    assert!(problems[0]["message"].as_str().unwrap().contains("cannot call AWS"), "{}", problems[0]);
    assert!(problems[0]["hint"].as_str().unwrap().contains("credentials"), "{}", problems[0]);
    assert_eq!((&lines.last().unwrap()["ok"], &lines.last().unwrap()["command"]), (&false.into(), &"apply".into()));

    // A blueprint error is a diagnostic with its place.
    std::fs::write(ws.path().join("bad.toml"), "[cluster]\nname = \"x\"\nregion = 7\n").unwrap();
    let out = kbp(&em, &["plan", "bad.toml", "--json"], ws.path());
    assert_exit_code(&out, 1, "plan --json of a bad blueprint");
    let lines = events::events(&out);
    let diagnostics = of_type(&lines, "diagnostic");
    assert!(!diagnostics.is_empty());
    assert!(diagnostics.iter().any(|d| d["file"] == "bad.toml" && d["line"] == 3), "{diagnostics:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn verbose_shows_each_aws_call_without_colour_when_piped() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    let quiet = kbp(&em, &["plan", ws.blueprint_arg()], ws.path());
    assert!(!stderr(&quiet).contains("aws call"), "no call log without -v");
    let out = kbp(&em, &["-v", "plan", ws.blueprint_arg()], ws.path());
    assert_success(&out, "plan -v");
    let err = stderr(&out);
    let calls: Vec<&str> = err.lines().filter(|l| l.contains("aws call")).collect();
    assert!(calls.iter().any(|l| l.contains("sts:GetCallerIdentity")), "{err}");
    assert!(calls.iter().all(|l| l.contains("elapsed=") && l.contains("attempts=")), "{calls:#?}");
    assert!(!err.contains('\u{1b}'), "no colour codes when stderr is not a terminal");
}

#[test]
fn the_schema_refuses_what_the_contract_forbids() {
    let good =
        r#"{"type":"started","ts":"2026-12-03T16:04:05.123Z","format_version":1,"address":"vpc.main","op":"create"}"#;
    events::check_line(good);
    let bad = [
        r#"{"type":"started","format_version":1,"address":"vpc.main","op":"create"}"#,
        r#"{"type":"started","ts":"2026-12-03T16:04:05.123Z","format_version":1,"address":"vpc.main","op":"make"}"#,
        r#"{"type":"started","ts":"2026-12-03T16:04:05.123Z","format_version":2,"address":"vpc.main","op":"create"}"#,
        r#"{"type":"shrug","ts":"2026-12-03T16:04:05.123Z","format_version":1}"#,
        r#"{"type":"summary","ts":"2026-12-03T16:04:05.123Z","format_version":1,"command":"apply","ok":true,"exit_code":0,"aws":{"calls":1,"retries":0},"surprise":1}"#,
        "Destroy complete!",
    ];
    for line in bad {
        assert!(std::panic::catch_unwind(|| events::check_line(line)).is_err(), "refused: {line}");
    }
}

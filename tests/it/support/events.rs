//! The `--json` contract, as tests read it: every stdout line of `kbp … --json` is parsed and validated against
//! docs/json-events.schema.json (the documented schema, read from the repository, never a copy), and the run
//! must end with exactly one `summary`. Every test that reads a `--json` stream goes through [`events`], so the
//! whole suite holds kbp's output to the schema.

use std::process::Output;
use std::sync::OnceLock;

use serde_json::Value;

fn validator() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/json-events.schema.json");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let schema: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path} is not JSON: {e}"));
        jsonschema::draft202012::new(&schema).unwrap_or_else(|e| panic!("{path} is not a valid JSON Schema: {e}"))
    })
}

/// One line checked against the schema; panics with every violation and the line.
pub(crate) fn check_line(line: &str) -> Value {
    let event: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}"));
    let errors: Vec<String> =
        validator().iter_errors(&event).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "line breaks docs/json-events.schema.json:\n  {}\n{line}", errors.join("\n  "));
    event
}

/// Every event a finished `--json` run printed, each valid, the last and only the last a `summary` whose
/// `exit_code` is the process's.
pub(crate) fn events(out: &Output) -> Vec<Value> {
    let text = String::from_utf8_lossy(&out.stdout);
    let events: Vec<Value> = text.lines().map(check_line).collect();
    let summaries = events.iter().filter(|e| e["type"] == "summary").count();
    assert_eq!(summaries, 1, "exactly one summary, last:\n{text}");
    let last = events.last().unwrap();
    assert_eq!(last["type"], "summary", "the summary comes last:\n{text}");
    assert_eq!(last["exit_code"].as_i64(), out.status.code().map(i64::from), "the summary's exit code:\n{text}");
    events
}

/// The summary of a finished `--json` run.
pub(crate) fn summary(out: &Output) -> Value {
    events(out).pop().unwrap()
}

/// The plan document of a `plan --json` (or `apply`/`destroy --json`) run.
pub(crate) fn plan(out: &Output) -> Value {
    let mut plans: Vec<Value> = events(out).into_iter().filter(|e| e["type"] == "plan").collect();
    assert_eq!(plans.len(), 1, "one plan event: {}", String::from_utf8_lossy(&out.stdout));
    plans.pop().unwrap()["plan"].take()
}

/// The events of one type.
pub(crate) fn of_type<'e>(events: &'e [Value], kind: &str) -> Vec<&'e Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

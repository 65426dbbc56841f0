//! What a reviewer reads, pinned as insta snapshots (tests/it/snapshots/): the plan of a shipped blueprint
//! against an empty account, as text and as `--json` events, and the NodePools and EC2NodeClasses `kbp render`
//! prints for one. A change to any of them shows up as a snapshot diff to review (`cargo insta review`), not as a
//! passing test. What differs from run to run (the emulator's port, temp paths, times) is filtered out.

use serde_json::Value;

use crate::support::*;

/// Replaces what one run prints and the next would not, so a snapshot holds only what kbp decided.
fn stable<R>(ws: &Workspace, em: &Emulator, body: impl FnOnce() -> R) -> R {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(&regex::escape(&reference_chart_dir().display().to_string()), "[chart]");
    settings.add_filter(&regex::escape(&reference_crds_dir().display().to_string()), "[crds_dir]");
    settings.add_filter(&regex::escape(&ws.path().display().to_string()), "[workspace]");
    settings.add_filter(&regex::escape(&em.endpoint), "[endpoint]");
    settings.add_filter(ACCOUNT_ID, "[account]");
    settings.add_filter(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", "[timestamp]");
    // How many calls a run made depends on the SDK's retries, which a loaded machine can cause.
    settings.add_filter(r#""(calls|retries)": \d+"#, r#""$1": "[n]""#);
    settings.bind(body)
}

#[tokio::test(flavor = "multi_thread")]
async fn plan_of_the_minimal_blueprint_against_an_empty_account() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    // An empty cache: the cost block prices no instance, whatever this machine has cached.
    let cache = tempfile::tempdir().expect("an empty cache dir");
    let plan = |extra: &[&str]| {
        let args: Vec<&str> = ["plan", ws.blueprint_arg()].iter().chain(extra).copied().collect();
        let out = kbp_command(&em, &args, ws.path()).env("KBP_CACHE_DIR", cache.path()).output().expect("run kbp");
        assert_success(&out, &args.join(" "));
        out
    };
    let text = plan(&[]);
    let json = plan(&["--json"]);
    // Every line is schema-valid and the stream ends in its one summary.
    let events: Vec<Value> = events::events(&json);
    stable(&ws, &em, || {
        insta::assert_snapshot!("plan_minimal_text", stdout(&text));
        insta::assert_json_snapshot!("plan_minimal_json", events);
    });
}

#[test]
fn render_of_the_spot_fallback_blueprint_node_pools_and_classes() {
    let ws = Workspace::with_blueprint("spot-fallback");
    let out = kbp_offline(&["render", ws.blueprint_arg()], ws.path());
    assert_success(&out, "kbp render spot-fallback.toml");
    let karpenter_objects: Vec<String> = stdout(&out)
        .split("\n---\n")
        .filter(|doc| doc.contains("\nkind: NodePool\n") || doc.contains("\nkind: EC2NodeClass\n"))
        .map(|doc| doc.trim_start_matches("---\n").trim().to_string())
        .collect();
    assert_eq!(karpenter_objects.len(), 3, "one EC2NodeClass and two NodePools:\n{}", stdout(&out));
    let objects = karpenter_objects.join("\n---\n");
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(&regex::escape(&ws.path().display().to_string()), "[workspace]");
    settings.bind(|| insta::assert_snapshot!("render_spot_fallback_karpenter_objects", objects));
}

//! docs/ci.md's recipe, run as written: the `kbp` commands of its GitHub Actions workflow (the same, in the same
//! order, as its GitLab CI pipeline) run through a shell against the emulator with state in S3, in a checkout
//! that never holds a local state file. The pull-request comment (`plan --format markdown`) is snapshot-tested.

use std::path::Path;

use crate::support::*;

const BUCKET: &str = "acme-kbp-state";

/// The `kbp …` command lines of the YAML blocks under the heading `section` of docs/ci.md.
fn commands(doc: &str, section: &str) -> Vec<String> {
    let body = doc.split(&format!("\n## {section}\n")).nth(1).unwrap_or_else(|| panic!("docs/ci.md has ## {section}"));
    let body = body.split("\n## ").next().unwrap();
    let mut in_yaml = false;
    let mut found = Vec::new();
    for line in body.lines() {
        match line.trim() {
            "```yaml" => in_yaml = true,
            "```" => in_yaml = false,
            l if in_yaml => {
                let l = l.trim_start_matches("- ").trim_start_matches("run: ");
                if l.starts_with("kbp ") {
                    found.push(l.to_string());
                }
            }
            _ => {}
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread")]
async fn the_documented_ci_recipe_runs_as_written_with_state_in_s3() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ci.md")).unwrap();
    let github = commands(&doc, "GitHub Actions");
    let gitlab = commands(&doc, "GitLab CI");
    assert_eq!(github, gitlab, "both recipes run the same kbp commands");
    assert!(github.len() >= 5, "validate, plan, apply, gc and drift: {github:?}");
    for parses in &github {
        let words: Vec<&str> = parses.split_whitespace().take_while(|w| *w != ">" && *w != "||").collect();
        let words: Vec<String> = words.iter().map(|w| w.trim_matches('"').to_string()).collect();
        assert!(
            <kbp::cli::Cli as clap::Parser>::try_parse_from(&words).is_ok(),
            "docs/ci.md's `{parses}` is a valid kbp command line"
        );
    }

    let em = Emulator::start();
    em.bucket(BUCKET, true).await;
    let ws = Workspace::with_blueprint("minimal");
    let bin = Path::new(env!("CARGO_BIN_EXE_kbp")).parent().unwrap().display().to_string();
    let path = format!("{bin}:{}", std::env::var("PATH").unwrap_or_default());
    for line in &github {
        let out = kbp_command(&em, &[], ws.path())
            .env("PATH", &path)
            .env("BLUEPRINT", ws.blueprint_arg())
            .env("KBP_STATE", format!("s3://{BUCKET}/kbp/prod.state.json"))
            .env("AWS_REGION", REGION)
            .output_of_shell(line);
        assert_success(&out, line);
    }

    // The stack exists once, its state only in the bucket, its plan applied as reviewed.
    assert_eq!(stack_vpcs(&em, "sbx").await.len(), 1);
    assert!(!ws.path().join(".kbp").exists(), "no local state in the checkout");
    let apply_log = std::fs::read_to_string(ws.path().join("apply.jsonl")).unwrap();
    let last: serde_json::Value = serde_json::from_str(apply_log.lines().last().unwrap()).unwrap();
    assert_eq!((last["type"].as_str(), last["ok"].as_bool()), (Some("summary"), Some(true)), "{apply_log}");
    // The nightly drift job ran after the apply: nothing changed outside kbp.
    let drift_log = std::fs::read_to_string(ws.path().join("drift.jsonl")).unwrap();
    let last: serde_json::Value = serde_json::from_str(drift_log.lines().last().unwrap()).unwrap();
    assert_eq!((&last["command"], &last["exit_code"], &last["drift"]), (&"drift".into(), &0.into(), &0.into()));

    let comment = std::fs::read_to_string(ws.path().join("plan.md")).unwrap();
    let crds = reference_crds_dir().display().to_string();
    insta::assert_snapshot!("plan_comment_for_a_new_stack", comment.replace(&crds, "[crds_dir]"));

    kbp_ok(
        &em,
        &["destroy", ws.blueprint_arg(), "--auto-approve", "--state", &format!("s3://{BUCKET}/kbp/prod.state.json")],
        ws.path(),
    );
}

/// Runs one line of a CI script the way a runner does.
trait ShellLine {
    fn output_of_shell(self, line: &str) -> std::process::Output;
}

impl ShellLine for &mut std::process::Command {
    fn output_of_shell(self, line: &str) -> std::process::Output {
        let mut shell = std::process::Command::new("bash");
        shell.args(["-eo", "pipefail", "-c", line]);
        for (k, v) in self.get_envs() {
            match v {
                Some(v) => shell.env(k, v),
                None => shell.env_remove(k),
            };
        }
        if let Some(dir) = self.get_current_dir() {
            shell.current_dir(dir);
        }
        shell.stdin(std::process::Stdio::null()).output().unwrap_or_else(|e| panic!("run `{line}`: {e}"))
    }
}

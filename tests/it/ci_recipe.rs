//! docs/ci.md's recipe, run as written: the `kbp` commands of each job of its GitHub Actions workflow (the same,
//! in the same order, as its GitLab CI pipeline) run through a shell against the emulator with state in S3, each
//! job in a fresh directory as a runner gives it: the plan job in a checkout, its plan file carried as an
//! artifact to the apply job, which has no checkout, then the nightly drift job (a checkout) and gc job
//! (nothing). No job leaves a local state file. The pull-request comment (`plan --format markdown`) is
//! snapshot-tested.

use std::collections::BTreeMap;
use std::path::Path;

use crate::support::*;

const BUCKET: &str = "acme-kbp-state";

/// The `kbp …` command lines of the YAML blocks under the heading `section` of docs/ci.md, by job (the
/// workflow's `jobs:` keys, or the pipeline's top-level jobs), in the order they appear.
fn commands(doc: &str, section: &str) -> Vec<(String, String)> {
    let body = doc.split(&format!("\n## {section}\n")).nth(1).unwrap_or_else(|| panic!("docs/ci.md has ## {section}"));
    let body = body.split("\n## ").next().unwrap();
    let mut in_yaml = false;
    let mut job = String::new();
    let mut found = Vec::new();
    for line in body.lines() {
        match line.trim() {
            "```yaml" => in_yaml = true,
            "```" => in_yaml = false,
            l if in_yaml => {
                // A job is a key at the jobs' indent: two spaces in a workflow, none in a GitLab pipeline.
                let indent = line.len() - line.trim_start().len();
                let jobs_indent = if section == "GitHub Actions" { 2 } else { 0 };
                if indent == jobs_indent && l.ends_with(':') && !l.starts_with('-') && !l.contains(' ') {
                    job = l.trim_end_matches(':').to_string();
                }
                let l = l.trim_start_matches("- ").trim_start_matches("run: ");
                if l.starts_with("kbp ") {
                    found.push((job.clone(), l.to_string()));
                }
            }
            _ => {}
        }
    }
    found
}

/// The lines of `job`.
fn job<'a>(commands: &'a [(String, String)], name: &str) -> Vec<&'a str> {
    commands.iter().filter(|(j, _)| j == name).map(|(_, l)| l.as_str()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_documented_ci_recipe_runs_job_by_job_in_fresh_directories_with_state_in_s3() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ci.md")).unwrap();
    let github = commands(&doc, "GitHub Actions");
    let gitlab = commands(&doc, "GitLab CI");
    assert_eq!(github, gitlab, "both recipes run the same kbp commands in the same jobs");
    let jobs: BTreeMap<&str, usize> = github.iter().fold(BTreeMap::new(), |mut m, (j, _)| {
        *m.entry(j.as_str()).or_default() += 1;
        m
    });
    assert_eq!(jobs.keys().copied().collect::<Vec<_>>(), ["apply", "drift", "gc", "plan"], "{github:?}");
    for (_, parses) in &github {
        let words: Vec<&str> = parses.split_whitespace().take_while(|w| *w != ">" && *w != "||").collect();
        let words: Vec<String> = words.iter().map(|w| w.trim_matches('"').to_string()).collect();
        assert!(
            <kbp::cli::Cli as clap::Parser>::try_parse_from(&words).is_ok(),
            "docs/ci.md's `{parses}` is a valid kbp command line"
        );
    }
    let apply = job(&github, "apply");
    assert!(apply.iter().any(|l| l.starts_with("kbp show ")), "the apply job prints the plan it applies: {apply:?}");
    assert!(apply.iter().all(|l| !l.contains("$BLUEPRINT")), "the apply job has no checkout: {apply:?}");

    let em = Emulator::start();
    em.bucket(BUCKET, true).await;
    let bin = Path::new(env!("CARGO_BIN_EXE_kbp")).parent().unwrap().display().to_string();
    let path = format!("{bin}:{}", std::env::var("PATH").unwrap_or_default());
    let run_job = |name: &str, dir: &Path| {
        for line in job(&github, name) {
            let out = kbp_command(&em, &[], dir)
                .env("PATH", &path)
                .env("BLUEPRINT", "blueprints/minimal.toml")
                .env("KBP_STATE", format!("s3://{BUCKET}/kbp/prod.state.json"))
                .env("AWS_REGION", REGION)
                .output_of_shell(line);
            assert_success(&out, &format!("{name} job: {line}"));
        }
    };
    let checkout = || {
        let dir = tempfile::Builder::new().prefix("kbp-ci-checkout-").tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("blueprints")).unwrap();
        let text = std::fs::read_to_string(repo().join("blueprints/minimal.toml")).unwrap();
        std::fs::write(dir.path().join("blueprints/minimal.toml"), with_local_crds(&text)).unwrap();
        dir
    };

    let plan_job = checkout();
    run_job("plan", plan_job.path());
    let comment = std::fs::read_to_string(plan_job.path().join("plan.md")).unwrap();
    // The artifact: the plan file alone, into a directory with nothing else.
    let apply_job = tempfile::tempdir().unwrap();
    std::fs::copy(plan_job.path().join("kbp.plan"), apply_job.path().join("kbp.plan")).unwrap();
    drop(plan_job);
    run_job("apply", apply_job.path());

    // The stack exists once, its state only in the bucket, its plan applied as reviewed.
    assert_eq!(stack_vpcs(&em, "sbx").await.len(), 1);
    assert!(!apply_job.path().join(".kbp").exists(), "no local state in the apply job");
    let apply_log = std::fs::read_to_string(apply_job.path().join("apply.jsonl")).unwrap();
    let last: serde_json::Value = serde_json::from_str(apply_log.lines().last().unwrap()).unwrap();
    assert_eq!((last["type"].as_str(), last["ok"].as_bool()), (Some("summary"), Some(true)), "{apply_log}");

    // The nightly jobs: drift in a fresh checkout finds nothing changed outside kbp; gc finds no expired sandbox.
    let drift_job = checkout();
    run_job("drift", drift_job.path());
    let drift_log = std::fs::read_to_string(drift_job.path().join("drift.jsonl")).unwrap();
    let last: serde_json::Value = serde_json::from_str(drift_log.lines().last().unwrap()).unwrap();
    assert_eq!((&last["command"], &last["exit_code"], &last["drift"]), (&"drift".into(), &0.into(), &0.into()));
    assert!(!drift_job.path().join("blueprints/.kbp").exists(), "no local state in the drift job");
    let gc_job = tempfile::tempdir().unwrap();
    run_job("gc", gc_job.path());
    assert_eq!(stack_vpcs(&em, "sbx").await.len(), 1, "gc keeps a stack without a TTL");

    let crds = reference_crds_dir().display().to_string();
    let chart = reference_chart_dir().display().to_string();
    insta::assert_snapshot!(
        "plan_comment_for_a_new_stack",
        comment.replace(&chart, "[chart]").replace(&crds, "[crds_dir]")
    );

    let out = kbp_command(&em, &["destroy", "blueprints/minimal.toml", "--auto-approve"], drift_job.path())
        .env("KBP_STATE", format!("s3://{BUCKET}/kbp/prod.state.json"))
        .output()
        .unwrap();
    assert_success(&out, "destroy");
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

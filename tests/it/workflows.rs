//! The GitHub Actions workflows, the project's own (`.github/workflows`) and the one docs/ci.md tells users to
//! copy, checked by actionlint (built from its pinned Go module by `scripts/actionlint.sh install`): expressions
//! and the contexts each key may use, action inputs, runner labels, job dependencies, YAML anchors.
//! shellcheck is not installed on the test machines, and it is switched off here even where it is, so the result
//! does not depend on the machine: the `run:` scripts are not linted as shell.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::*;

/// The actionlint binary, built into the control plane's cache on first use (a no-op after that).
fn actionlint() -> PathBuf {
    let out = Command::new("bash").arg(repo().join("scripts/actionlint.sh")).arg("install").output().unwrap();
    assert!(
        out.status.success(),
        "actionlint is missing and could not be built; build it with `scripts/actionlint.sh install` (Go 1.26.6+ and \
         the Go module proxy are needed once):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// actionlint's findings on `files`, run from `dir`, with its exit code: `0` none, `1` some.
fn lint(dir: &Path, files: &[PathBuf]) -> (Option<i32>, String) {
    let out = Command::new(actionlint())
        .args(["-no-color", "-shellcheck=", "-pyflakes="])
        .args(files)
        .current_dir(dir)
        .output()
        .unwrap();
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code(), report)
}

/// The YAML blocks of a Markdown file that are GitHub Actions workflows (they have a top-level `jobs:`).
fn workflow_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```yaml") => current = Some(String::new()),
            (Some(_), "```") => blocks.extend(current.take()),
            (Some(block), _) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks.retain(|block| block.lines().any(|l| l == "jobs:"));
    blocks
}

/// Writes each workflow as `.github/workflows/<n>.yml` of a scratch repository, as a user would add it.
fn as_repository(workflows: &[String]) -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".github/workflows")).unwrap();
    let files = workflows
        .iter()
        .enumerate()
        .map(|(n, workflow)| {
            let file = PathBuf::from(format!(".github/workflows/{n}.yml"));
            std::fs::write(dir.path().join(&file), workflow).unwrap();
            file
        })
        .collect();
    (dir, files)
}

#[test]
fn the_projects_own_workflows_pass_actionlint() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join(".github/workflows"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "yml" || ext == "yaml"))
        .map(|path| path.strip_prefix(repo()).unwrap().to_path_buf())
        .collect();
    files.sort();
    let names: Vec<String> = files.iter().map(|f| f.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["ci.yml", "release.yml"]);
    let (code, report) = lint(repo(), &files);
    assert_eq!((code, report.as_str()), (Some(0), ""), "actionlint on {files:?}");
}

#[test]
fn the_workflow_docs_ci_md_recommends_passes_actionlint() {
    let doc = std::fs::read_to_string(repo().join("docs/ci.md")).unwrap();
    let workflows = workflow_blocks(&doc);
    assert_eq!(workflows.len(), 1, "docs/ci.md shows one GitHub Actions workflow");
    assert!(workflows[0].contains("kbp apply kbp.plan"), "the block found is the recipe:\n{}", workflows[0]);
    let (dir, files) = as_repository(&workflows);
    let (code, report) = lint(dir.path(), &files);
    assert_eq!((code, report.as_str()), (Some(0), ""), "actionlint on docs/ci.md's workflow:\n{}", workflows[0]);
}

/// The check above can fail: the same run of actionlint reports what GitHub would refuse, here the `env`
/// context in a top-level `concurrency:` (GitHub evaluates it before any `env` exists).
#[test]
fn actionlint_as_run_here_reports_a_workflow_github_would_refuse() {
    let broken = "on: push\nenv:\n  STACK: prod\nconcurrency: kbp-${{ env.STACK }}\njobs:\n  plan:\n    \
                  runs-on: ubuntu-latest\n    steps:\n      - run: echo plan\n";
    let (dir, files) = as_repository(&[broken.to_string()]);
    let (code, report) = lint(dir.path(), &files);
    assert_eq!(code, Some(1), "{report}");
    assert!(report.contains("context \"env\" is not allowed here"), "{report}");
}

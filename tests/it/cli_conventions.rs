//! What a command line tool is expected to do beside its job: usage errors that never look like "changes
//! present", a quiet end when the reader of stdout goes away, completion scripts and manual pages generated
//! from the same definition as `--help`.

use std::io::Read;
use std::process::{Command, Stdio};

use crate::support::{kbp_offline, repo};

fn kbp(args: &[&str]) -> std::process::Output {
    kbp_offline(args, repo())
}

#[test]
fn usage_errors_exit_1_not_2_and_help_exits_0() {
    for args in [&["plan", "--no-such-flag", "x.toml"][..], &["plan"], &["aply"], &[], &["output", "--raw"]] {
        let out = kbp(args);
        assert_eq!(out.status.code(), Some(1), "kbp {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(!out.stderr.is_empty(), "kbp {args:?} says what is wrong");
    }
    for args in [&["--help"][..], &["plan", "--help"], &["--version"]] {
        let out = kbp(args);
        assert_eq!(out.status.code(), Some(0), "kbp {args:?}");
        assert!(!out.stdout.is_empty(), "kbp {args:?} prints on stdout");
    }
}

#[test]
fn a_closed_stdout_ends_kbp_quietly() {
    let blueprint = concat!(env!("CARGO_MANIFEST_DIR"), "/blueprints/karpenter-mng.toml");
    // With the CRDs at hand, so that validate has no warning to print either.
    let crds = format!("karpenter.crds_dir={}", crate::support::reference_crds_dir().display());
    for args in [&["completions", "bash"][..], &["validate", blueprint, "--set", &crds, "--print"], &["man"]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kbp"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run kbp");
        drop(child.stdout.take()); // the reader is gone before kbp writes
        let mut stderr = String::new();
        child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
        let status = child.wait().unwrap();
        assert_eq!(
            status.code(),
            Some(141),
            "kbp {args:?}: the status of a process ended by SIGPIPE; stderr: {stderr}"
        );
        assert!(stderr.is_empty(), "kbp {args:?} ends quietly: {stderr}");
    }
}

#[test]
fn completion_scripts_know_every_command() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = kbp(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "completions {shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        for word in ["apply", "destroy", "force-unlock", "detailed-exitcode"] {
            assert!(script.contains(word), "the {shell} script completes {word}");
        }
    }
    assert_eq!(kbp(&["completions", "tcsh"]).status.code(), Some(1), "an unknown shell is a usage error");
}

#[test]
fn manual_pages_cover_every_command() {
    let page = String::from_utf8(kbp(&["man"]).stdout).unwrap();
    assert!(
        page.starts_with(".ie") || page.contains(".TH kbp"),
        "a roff page titled kbp: {}",
        &page[..200.min(page.len())]
    );
    assert!(page.contains("force\\-unlock"), "it lists the commands");

    let dir = tempfile::tempdir().unwrap();
    let out = kbp(&["man", "--dir", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    for name in ["kbp.1", "kbp-apply.1", "kbp-state.1", "kbp-state-list.1", "kbp-completions.1"] {
        let text = std::fs::read_to_string(dir.path().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(text.contains(".TH"), "{name} is a manual page");
    }
    let apply = std::fs::read_to_string(dir.path().join("kbp-apply.1")).unwrap();
    assert!(apply.contains("auto\\-approve"), "kbp-apply.1 documents its flags");

    let missing = kbp(&["man", "--dir", dir.path().join("nowhere").to_str().unwrap()]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("hint:"), "the error says what to do");
}

#[test]
fn version_names_the_commit_and_the_default_versions() {
    let out = kbp(&["--version"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let blueprint = concat!(env!("CARGO_MANIFEST_DIR"), "/blueprints/minimal.toml");
    let effective = String::from_utf8(kbp(&["validate", blueprint, "--print"]).stdout).unwrap();
    let effective: toml::Table = toml::from_str(&effective).expect("--print is TOML");
    let kubernetes = effective["cluster"]["version"].as_str().unwrap();
    let karpenter = effective["karpenter"]["version"].as_str().unwrap();
    assert!(
        text.contains(&format!("defaults: Kubernetes {kubernetes}, Karpenter {karpenter}")),
        "the defaults a blueprint gets: {text}"
    );
    let head =
        Command::new("git").args(["rev-parse", "--short=12", "HEAD"]).output().ok().filter(|o| o.status.success());
    let expected = head.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()).unwrap_or("unknown".into());
    assert!(text.contains(&format!("(commit {expected}")), "built from {expected}: {text}");
}

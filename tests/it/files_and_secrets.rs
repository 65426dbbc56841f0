//! Files and secrets: a symlinked state path is locked and written at its real file (and refused when it leads
//! out of its directory), kbp's files are private whatever the umask, a run keeps the state it replaced as
//! `.backup`, and logs at trace level never show a credential.
#![cfg(unix)]

use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::support::*;
use kbp::state::{Backend, LocalBackend};

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).permissions().mode() & 0o777
}

/// `kbp ARGS` as [`kbp_command`] runs it, but under `umask 000`; the shell also creates `umask-control` in
/// `cwd`, which shows the umask was in effect.
fn kbp_under_umask_000(em: &Emulator, args: &[&str], cwd: &Path) -> Output {
    let kbp = kbp_command(em, args, cwd);
    let mut sh = Command::new("sh");
    sh.arg("-c")
        .arg(r#"umask 000 && : > umask-control && exec "$0" "$@""#)
        .arg(kbp.get_program())
        .args(kbp.get_args())
        .current_dir(cwd)
        .stdin(Stdio::null());
    for (key, value) in kbp.get_envs() {
        match value {
            Some(v) => sh.env(key, v),
            None => sh.env_remove(key),
        };
    }
    sh.output().unwrap_or_else(|e| panic!("run kbp {args:?} under sh: {e}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_state_link_and_its_real_path_lock_each_other_out_and_an_apply_keeps_the_link() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    let name = "cluster.name=linked";
    std::fs::create_dir(ws.path().join(".kbp")).unwrap();
    let real = ws.path().join(".kbp/linked.state.json");
    let link = ws.path().join("linked.json");
    symlink(".kbp/linked.state.json", &link).unwrap();

    let held = LocalBackend::new(&link).lock("apply", Duration::ZERO).await.unwrap();
    let out = kbp(&em, &args("plan", &ws, name, &["--state", ".kbp/linked.state.json"]), ws.path());
    assert_exit_code(&out, 1, "plan on the real path while a run through the link holds the lock");
    assert!(stderr(&out).contains("locked by `kbp apply`"), "{}", describe_output(&out));
    drop(held);
    let held = LocalBackend::new(&real).lock("apply", Duration::ZERO).await.unwrap();
    let out = kbp(&em, &args("plan", &ws, name, &["--state", "linked.json"]), ws.path());
    assert_exit_code(&out, 1, "plan through the link while a run on the real path holds the lock");
    assert!(stderr(&out).contains("locked by `kbp apply`"), "{}", describe_output(&out));
    drop(held);

    kbp_ok(&em, &args("apply", &ws, name, &["--state", "linked.json", "--auto-approve"]), ws.path());
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link is still a link");
    let state = LocalBackend::new(&real).load().await.unwrap().expect("the apply wrote the real file");
    let vpc = state.get(&"vpc.main".parse().unwrap()).and_then(|r| r.id.clone());
    assert_eq!(stack_vpcs(&em, "linked").await, vpc.into_iter().collect::<Vec<_>>(), "state names the VPC made");
    assert!(!ws.path().join("linked.json.lock").exists(), "one lock, beside the real file");
    let converged =
        kbp(&em, &args("plan", &ws, name, &["--state", ".kbp/linked.state.json", "--detailed-exitcode"]), ws.path());
    assert_exit_code(&converged, 0, "the real path sees what the run through the link wrote");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_state_link_that_leads_out_of_its_directory_is_refused() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join(".kbp")).unwrap();
    symlink(elsewhere.path().join("victim.json"), ws.path().join(".kbp/outward.state.json")).unwrap();

    let out = kbp(&em, &args("apply", &ws, "cluster.name=outward", &["--auto-approve"]), ws.path());
    assert_exit_code(&out, 1, "apply through a link that leads out of .kbp/");
    let err = stderr(&out);
    assert!(err.contains("is a symbolic link to") && err.contains("outside the directory"), "{err}");
    assert!(err.contains("hint: ") && err.contains("--state"), "{err}");
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0, "nothing written where the link leads");
    assert!(stack_vpcs(&em, "outward").await.is_empty(), "refused before anything was created");
}

#[test]
fn plan_files_and_the_state_directory_are_private_under_umask_000() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    let out = kbp_under_umask_000(&em, &args("plan", &ws, "cluster.name=umask", &["--out", "saved.plan"]), ws.path());
    assert_success(&out, "kbp plan --out under umask 000");
    assert_eq!(mode(&ws.path().join("umask-control")), 0o666, "the umask was 000");
    assert_eq!(mode(&ws.path().join("saved.plan")), 0o600);
    assert_eq!(mode(&ws.path().join(".kbp")), 0o700);
    assert_eq!(mode(&ws.path().join(".kbp/umask.state.json.lock")), 0o600);

    let out = kbp_under_umask_000(&em, &["apply", "saved.plan"], ws.path());
    assert_success(&out, "kbp apply saved.plan under umask 000");
    assert_eq!(mode(&ws.path().join(".kbp/umask.state.json")), 0o600);
    let names: Vec<_> = std::fs::read_dir(ws.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(names.iter().all(|n| !n.to_string_lossy().contains(".tmp.")), "no temp file left: {names:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_keeps_the_state_it_replaced_as_backup_and_the_corrupt_hint_names_it() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    let name = "cluster.name=backed";
    let state = ws.path().join(".kbp/backed.state.json");
    let backup = ws.path().join(".kbp/backed.state.json.backup");
    kbp_ok(&em, &args("apply", &ws, name, &["--auto-approve"]), ws.path());
    assert!(!backup.exists(), "the first run made the state: there was none before to keep");
    let after_first = std::fs::read(&state).unwrap();

    // Every resource's tags change: the second run writes the state many times.
    let out =
        kbp_ok(&em, &args("apply", &ws, name, &["--set", "cluster.tags.team=platform", "--auto-approve"]), ws.path());
    assert!(stdout(&out).contains("changed"), "{}", describe_output(&out));
    assert_ne!(std::fs::read(&state).unwrap(), after_first);
    assert_eq!(std::fs::read(&backup).unwrap(), after_first, "the backup is the state from before the run");
    assert_eq!(mode(&backup), 0o600);

    std::fs::write(&state, "{\"format_version\": 1, \"serial\": 4").unwrap();
    let out = kbp(&em, &args("plan", &ws, name, &[]), ws.path());
    assert_exit_code(&out, 1, "plan of a truncated state");
    let real_backup = ws.path().canonicalize().unwrap().join(".kbp/backed.state.json.backup");
    let err = stderr(&out);
    assert!(err.contains(&format!("{} holds the state as it was before", real_backup.display())), "{err}");
    // Following the hint works.
    std::fs::copy(&backup, &state).unwrap();
    kbp_ok(&em, &args("plan", &ws, name, &[]), ws.path());
}

/// Alphanumeric, so it reads the same in a query string (URL-encoded) as anywhere else.
const SESSION_TOKEN: &str = "KbpSentinelSessionToken7f3a9c01e5d24b68";
const SECRET_KEY: &str = "KbpSentinelSecretKey0d9e8f7a6b5c4d3e";

#[test]
fn logs_at_trace_level_never_show_a_credential() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    let eks_token = regex::Regex::new(r"k8s-aws-v1\.[A-Za-z0-9_-]{8,}").unwrap();
    // The apply talks to the cluster's API with an EKS token; the plan then refreshes with a new one.
    for (cmd, extra) in [("apply", &["--auto-approve"][..]), ("plan", &[])] {
        let mut c = kbp_command(&em, &args(cmd, &ws, "cluster.name=traced", extra), ws.path());
        c.env("RUST_LOG", "trace").env("AWS_SESSION_TOKEN", SESSION_TOKEN).env("AWS_SECRET_ACCESS_KEY", SECRET_KEY);
        let out = c.output().unwrap();
        assert_success(&out, &format!("kbp {cmd} with RUST_LOG=trace"));
        let log = stderr(&out);
        let start = &log[..log.len().min(2000)];
        assert!(log.contains(" TRACE ") && log.contains("aws_sigv4"), "kbp {cmd} logged at trace: {start}");
        assert!(!log.contains(SESSION_TOKEN), "kbp {cmd} logged the session token");
        assert!(!log.contains(SECRET_KEY), "kbp {cmd} logged the secret key");
        assert!(eks_token.find(&log).is_none(), "kbp {cmd} logged an EKS token");
        assert!(!log.contains('\x1b'), "kbp {cmd} coloured a log that is not on a terminal: {start}");
        // The SDK logs the canonical request of the token's presigned URL at trace, query string and all: the
        // redactor was in its path.
        assert!(
            log.contains("X-Amz-Security-Token=[redacted]"),
            "kbp {cmd} presigned an EKS token and logged it redacted"
        );
    }
}

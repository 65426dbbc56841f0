//! Before anything is planned or changed, kbp asks AWS who is calling, once and quickly: no credentials, an
//! endpoint that refuses connections and one that accepts them and never answers each fail in seconds with one
//! line and a hint, never a debug dump, and an apply that fails so has created nothing.

mod support;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use support::inventory::Inventory;
use support::*;

/// Runs `kbp ARGS` against the emulator with `env` changed (an empty value removes the variable), and how long
/// it took.
fn timed(em: &Emulator, ws: &Workspace, args: &[&str], env: &[(&str, &str)]) -> (std::process::Output, Duration) {
    let mut cmd = kbp_command(em, args, ws.path());
    for (k, v) in env {
        if v.is_empty() {
            cmd.env_remove(k);
        } else {
            cmd.env(k, v);
        }
    }
    let started = Instant::now();
    let out = cmd.output().unwrap();
    (out, started.elapsed())
}

fn assert_one_clear_line(out: &std::process::Output, what: &str, says: &str, hint: &str) {
    assert_exit_code(out, 1, what);
    let err = stderr(out);
    assert!(err.contains(says), "{what} says {says:?}:\n{err}");
    assert!(err.contains(&format!("hint: {hint}")), "{what} hints {hint:?}:\n{err}");
    assert!(!err.contains("DispatchFailure") && !err.contains("ConnectorError {"), "no debug dump:\n{err}");
    assert_eq!(err.matches("error:").count(), 1, "said once:\n{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn no_credentials_fail_plan_and_apply_before_anything_is_made() {
    let em = Emulator::start();
    let before = Inventory::take(&em).await;
    let ws = Workspace::with_blueprint("minimal");
    let no_credentials = [("AWS_ACCESS_KEY_ID", ""), ("AWS_SECRET_ACCESS_KEY", "")];
    for args in [&["plan", ws.blueprint_arg()][..], &["apply", ws.blueprint_arg(), "--auto-approve"]] {
        let (out, took) = timed(&em, &ws, args, &no_credentials);
        assert_one_clear_line(&out, args[0], "cannot call AWS", "no AWS credentials were found");
        assert!(took < Duration::from_secs(20), "{} failed in {took:?}", args[0]);
    }
    Inventory::take(&em).await.assert_eq(&before, "after the refused apply");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_endpoint_that_refuses_connections_fails_in_seconds() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap(); // freed again: nobody listens
    let endpoint = format!("http://{closed}");
    let env = [("AWS_ENDPOINT_URL", endpoint.as_str()), ("KBP_AWS_PREFLIGHT_TIMEOUT", "5s")];
    let (out, took) = timed(&em, &ws, &["plan", ws.blueprint_arg()], &env);
    assert_one_clear_line(&out, "plan", "cannot call AWS", "AWS could not be reached (AWS_ENDPOINT_URL is");
    assert!(took < Duration::from_secs(12), "plan failed within the 5 s preflight timeout: {took:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_endpoint_that_never_answers_fails_within_the_preflight_timeout() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", silent.local_addr().unwrap());
    // Accepts every connection and reads nothing, answers nothing.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in silent.incoming().flatten() {
            held.push(stream);
        }
    });
    let env = [
        ("AWS_ENDPOINT_URL", endpoint.as_str()),
        ("KBP_AWS_ATTEMPT_TIMEOUT", "2s"),
        ("KBP_AWS_PREFLIGHT_TIMEOUT", "6s"),
    ];
    let (out, took) = timed(&em, &ws, &["plan", ws.blueprint_arg()], &env);
    assert_one_clear_line(&out, "plan", "timed out", "AWS could not be reached");
    assert!(took < Duration::from_secs(12), "failed within the 6 s preflight timeout: took {took:?}");
}

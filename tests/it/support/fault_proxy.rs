//! A fault-injecting proxy in front of a test's emulator (emulator/kbp_emulator/fault_proxy.py, described in
//! emulator/README.md): kbp's `AWS_ENDPOINT_URL` points at the proxy, which forwards to the emulator except where
//! its configuration injects throttling, 5xx answers, lost answers or late requests, each in the service's own
//! error shape.
//!
//! ```ignore
//! let proxy = FaultProxy::start(&em, json!({"seed": 7, "throttle_rate": 0.3}));
//! kbp_command(&em, &["plan", ...], dir).envs(proxy.env()).output();
//! assert!(proxy.stats()["faults"]["throttle"].as_u64().unwrap() > 0);
//! ```
//!
//! The proxy runs with the emulator's virtualenv (scripts/emulator.sh made it when the emulator started) on a
//! port it picks itself, so there is no race for a free port. It is stopped with SIGTERM when dropped; if the test
//! process dies first, its watchdog (`KBP_EMULATOR_WATCH_PID`) stops it. The admin calls are plain HTTP/1.1 over
//! a loopback `TcpStream`: small, blocking, and usable from sync and async tests alike.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

use super::Emulator;

const READY_TIMEOUT: Duration = Duration::from_secs(30);
const ADMIN_TIMEOUT: Duration = Duration::from_secs(10);
const STOP_TIMEOUT: Duration = Duration::from_secs(5);

/// A running proxy in front of one emulator; stopped when dropped.
pub(crate) struct FaultProxy {
    child: Child,
    /// `http://127.0.0.1:PORT`
    endpoint: String,
    /// `127.0.0.1:PORT`
    address: String,
    /// The emulator's environment for kbp, with the proxy as its endpoint.
    env: Vec<(String, String)>,
    /// Holds the configuration file, the request log and the proxy's stderr.
    dir: TempDir,
}

impl FaultProxy {
    /// Starts a proxy in front of `em` with `config` (rates, seed and rules: see emulator/README.md) and waits
    /// until it listens. Panics with its stderr if it cannot start (a bad config is refused at start).
    pub(crate) fn start(em: &Emulator, config: Value) -> FaultProxy {
        let dir =
            tempfile::Builder::new().prefix("kbp-fault-proxy-").tempdir().expect("create a tempdir for the proxy");
        let config_path = dir.path().join("faults.json");
        std::fs::write(&config_path, serde_json::to_vec_pretty(&config).expect("a JSON value serializes"))
            .expect("write the proxy's config");
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let venv =
            std::env::var_os("KBP_EMULATOR_VENV").map(PathBuf::from).unwrap_or_else(|| repo.join(".venv-emulator"));
        let python = venv.join("bin/python");
        let mut pythonpath = repo.join("emulator").into_os_string();
        if let Some(existing) = std::env::var_os("PYTHONPATH") {
            pythonpath.push(":");
            pythonpath.push(existing);
        }
        let stderr = File::create(dir.path().join("stderr.log")).expect("create the proxy's stderr file");
        let mut child = Command::new(&python)
            .args(["-m", "kbp_emulator.fault_proxy", "--listen", "127.0.0.1:0", "--upstream", &em.endpoint])
            .arg("--config")
            .arg(&config_path)
            .arg("--log")
            .arg(dir.path().join("proxy.log"))
            .env("PYTHONPATH", pythonpath)
            // If this test process is killed before Drop runs, the proxy exits by itself.
            .env("KBP_EMULATOR_WATCH_PID", std::process::id().to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("start the fault proxy with {}: {e}", python.display()));

        // The first line says where it listens; the rest of stdout is drained so the proxy never blocks on it.
        let stdout = child.stdout.take().expect("stdout is piped");
        let (ready_tx, ready_rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(line)) = lines.next() {
                let _ = ready_tx.send(line);
            }
            lines.for_each(drop);
        });
        let ready = ready_rx.recv_timeout(READY_TIMEOUT);
        let endpoint = ready.as_deref().ok().and_then(|line| {
            let rest = line.strip_prefix("fault_proxy: listening on ")?;
            Some(rest.split([',', ' ']).next()?.to_string())
        });
        let Some(endpoint) = endpoint else {
            let _ = child.kill();
            let _ = child.wait();
            let stderr = std::fs::read_to_string(dir.path().join("stderr.log")).unwrap_or_default();
            panic!("the fault proxy did not start (first line: {ready:?}):\n{stderr}");
        };
        let address = endpoint.trim_start_matches("http://").to_string();
        let env = em
            .env()
            .into_iter()
            .map(|(k, v)| if k == "AWS_ENDPOINT_URL" { (k, endpoint.clone()) } else { (k, v) })
            .collect();
        FaultProxy { child, endpoint, address, env, dir }
    }

    /// `http://127.0.0.1:PORT`, to use as an AWS endpoint.
    pub(crate) fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The emulator's AWS_* variables with `AWS_ENDPOINT_URL` pointing at the proxy, for `Command::envs`.
    pub(crate) fn env(&self) -> Vec<(String, String)> {
        self.env.clone()
    }

    /// Replaces the rates and rules at run time; the counters stay (see [`FaultProxy::reset`]).
    pub(crate) fn set_config(&self, config: Value) {
        self.admin("POST", "config", Some(&config));
    }

    /// The counters: `requests`, `forwarded`, `operations` (`{"ec2:CreateVpc": 2}`), `faults` per kind,
    /// `faults_by_operation`, `statuses` answered, and each rule's `matched`/`fired`.
    pub(crate) fn stats(&self) -> Value {
        self.admin("GET", "stats", None)
    }

    /// Zeroes the counters (and the rules' counts), keeping the configuration.
    pub(crate) fn reset(&self) {
        self.admin("POST", "reset", None);
    }

    /// The proxy's request log so far (one line per request: operation, fault, status), for failure messages.
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("proxy.log")).unwrap_or_default()
    }

    /// One admin call; panics unless it answers 200 with JSON.
    fn admin(&self, method: &str, what: &str, body: Option<&Value>) -> Value {
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let request = format!(
            "{method} /__fault_proxy/{what} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            self.address,
            body.len()
        );
        let answer = super::loopback_http(&self.address, &request, ADMIN_TIMEOUT)
            .unwrap_or_else(|e| panic!("fault proxy {method} {what}: {e}"));
        let (head, json) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
        if !head.starts_with("HTTP/1.1 200") {
            panic!("fault proxy {method} {what} refused:\n{answer}");
        }
        serde_json::from_str(json)
            .unwrap_or_else(|e| panic!("fault proxy {method} {what} answered non-JSON ({e}): {json}"))
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        // SIGTERM lets it finish its log; SIGKILL if it does not exit in time.
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).stderr(Stdio::null()).status();
        let deadline = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

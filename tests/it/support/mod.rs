//! Shared helpers for the integration tests (tests/it): a private AWS emulator per test, SDK clients that read
//! the emulator back, a runner for the real `kbp` binary, and a scratch workspace holding a copy of a shipped
//! blueprint. A test module takes them with `use crate::support::*;`.
//!
//! Each `Emulator` is its own moto server (with kbp's extension, emulator/kbp_emulator) on a free loopback port
//! with its own state directory, so nextest's parallel test processes never see each other's resources. The
//! server is started and stopped by scripts/emulator.sh, the same script developers use by hand.
//! `Emulator::start()` makes every long operation instant; `Emulator::start_with` gives them the delays of a
//! latency profile (emulator/profiles/), scaled; `Emulator::start_without_kubernetes` leaves clusters without a
//! control plane.

pub(crate) mod control_plane;
pub(crate) mod credentials;
pub(crate) mod events;
pub(crate) mod fault_proxy;
pub(crate) mod inventory;
pub(crate) mod kill;
pub(crate) mod provider;
pub(crate) mod sdk;
pub(crate) mod terminal;

pub(crate) use sdk::{filter, lb_tags, of_stack, tag_spec};

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_sdk_sts::config::Credentials;
use tempfile::TempDir;

pub(crate) const REGION: &str = "us-west-2";
/// The account moto reports for any credentials.
pub(crate) const ACCOUNT_ID: &str = "123456789012";
const ACCESS_KEY_ID: &str = "testing";
const SECRET_ACCESS_KEY: &str = "testing";
const START_ATTEMPTS: usize = 5;

fn emulator_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/emulator.sh")
}

/// A private moto server for one test; stopped when dropped.
pub(crate) struct Emulator {
    pub endpoint: String,
    pub port: u16,
    /// Holds the server's pid file and log, and the decoy AWS config paths.
    dir: TempDir,
    /// KBP_EMULATOR_PROFILE and KBP_EMULATOR_TIME_SCALE for the server.
    profile: String,
    time_scale: f64,
    /// Whether each EKS cluster gets a control plane of its own (`KBP_EMULATOR_KUBE`).
    kubernetes: bool,
    /// Whether the test sends on purpose what AWS refuses ([`Emulator::expect_refusals`]); otherwise dropping
    /// the emulator fails the test if its front door refused any request (see emulator/README.md, "AWS's
    /// input contract"): kbp must send only what AWS accepts.
    refusals_expected: std::sync::atomic::AtomicBool,
}

impl Emulator {
    /// Starts a moto server on a free loopback port, with every long operation instant (the `instant` profile:
    /// a create still answers CREATING or pending, and the next read sees it done). Panics with the script's
    /// output if it cannot.
    pub(crate) fn start() -> Emulator {
        Emulator::start_with("instant", 1.0)
    }

    /// Starts a server whose clusters, node groups, add-ons and NAT gateways take the delays of latency
    /// `profile` (a name in emulator/profiles/ or a path) times `time_scale`: `start_with("realistic", 0.01)`
    /// makes a cluster CREATING for 6 s. Each EKS cluster is served by a real control plane (kube-apiserver,
    /// kube-controller-manager, kube-scheduler and etcd, `scripts/kube.sh`) that authenticates kbp's EKS tokens
    /// through the emulator's TokenReview webhook, RBAC on; node groups register Nodes whose pods run.
    pub(crate) fn start_with(profile: &str, time_scale: f64) -> Emulator {
        Emulator::launch(profile, time_scale, true)
    }

    /// An instant emulator whose EKS clusters have no Kubernetes API (`KBP_EMULATOR_KUBE=none`: an endpoint where
    /// nothing listens), for tests of the AWS side that make many clusters: each control plane costs about 4 s
    /// and a few hundred MB.
    pub(crate) fn start_without_kubernetes() -> Emulator {
        Emulator::launch("instant", 1.0, false)
    }

    fn launch(profile: &str, time_scale: f64, kubernetes: bool) -> Emulator {
        let mut failures = Vec::new();
        for _ in 0..START_ATTEMPTS {
            let port = free_loopback_port();
            let em = Emulator {
                endpoint: format!("http://127.0.0.1:{port}"),
                port,
                dir: tempfile::Builder::new()
                    .prefix("kbp-emulator-")
                    .tempdir()
                    .expect("create a tempdir for the emulator"),
                profile: profile.to_string(),
                time_scale,
                kubernetes,
                refusals_expected: std::sync::atomic::AtomicBool::new(false),
            };
            let out = em.script("start");
            // No pid file means the port already answered (another test's server took it between our probe
            // and the start), so this server would not be private: try another port. Dropping `em` stops only
            // a server whose pid is in its own directory, so it never stops the other test's server.
            if out.status.success() && em.pid_file().exists() {
                return em;
            }
            failures.push(format!(
                "port {port}: {}\n{}\nlog:\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr),
                em.log()
            ));
        }
        panic!(
            "could not start the AWS emulator with {} in {START_ATTEMPTS} attempts:\n{}",
            emulator_script().display(),
            failures.join("\n---\n")
        );
    }

    /// The AWS_* variables that point the SDK (and so kbp) at this emulator and nowhere else, and kbp's preflight
    /// timeout for it.
    pub(crate) fn env(&self) -> Vec<(String, String)> {
        let missing = |name: &str| self.dir.path().join(name).display().to_string();
        [
            ("AWS_ENDPOINT_URL", self.endpoint.clone()),
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY_ID.to_string()),
            ("AWS_SECRET_ACCESS_KEY", SECRET_ACCESS_KEY.to_string()),
            ("AWS_REGION", REGION.to_string()),
            ("AWS_DEFAULT_REGION", REGION.to_string()),
            ("AWS_EC2_METADATA_DISABLED", "true".to_string()),
            // Nonexistent files: no profile from the machine running the tests can leak in.
            ("AWS_CONFIG_FILE", missing("no-aws-config")),
            ("AWS_SHARED_CREDENTIALS_FILE", missing("no-aws-credentials")),
            // A fresh emulator imports each service on its first request: under parallel tests, a preflight of
            // several stacks at once can take longer than the 15 s AWS never needs. Tests of that timeout set it.
            ("KBP_AWS_PREFLIGHT_TIMEOUT", "60s".to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    /// SDK configuration for reading the emulator back from a test.
    pub(crate) async fn sdk_config(&self) -> SdkConfig {
        aws_config::defaults(BehaviorVersion::latest())
            .endpoint_url(&self.endpoint)
            .region(Region::new(REGION))
            .credentials_provider(Credentials::new(ACCESS_KEY_ID, SECRET_ACCESS_KEY, None, None, "kbp-test"))
            .load()
            .await
    }

    pub(crate) async fn ec2(&self) -> aws_sdk_ec2::Client {
        aws_sdk_ec2::Client::new(&self.sdk_config().await)
    }

    pub(crate) async fn iam(&self) -> aws_sdk_iam::Client {
        aws_sdk_iam::Client::new(&self.sdk_config().await)
    }

    pub(crate) async fn eks(&self) -> aws_sdk_eks::Client {
        aws_sdk_eks::Client::new(&self.sdk_config().await)
    }

    pub(crate) async fn sqs(&self) -> aws_sdk_sqs::Client {
        aws_sdk_sqs::Client::new(&self.sdk_config().await)
    }

    pub(crate) async fn eventbridge(&self) -> aws_sdk_eventbridge::Client {
        aws_sdk_eventbridge::Client::new(&self.sdk_config().await)
    }

    pub(crate) async fn s3(&self) -> aws_sdk_s3::Client {
        let config = aws_sdk_s3::config::Builder::from(&self.sdk_config().await).force_path_style(true).build();
        aws_sdk_s3::Client::from_conf(config)
    }

    /// Creates bucket `name` (with versioning when `versioned`), as a team would once for its state.
    pub(crate) async fn bucket(&self, name: &str, versioned: bool) {
        let s3 = self.s3().await;
        let location = aws_sdk_s3::types::CreateBucketConfiguration::builder()
            .location_constraint(aws_sdk_s3::types::BucketLocationConstraint::from(REGION))
            .build();
        s3.create_bucket().bucket(name).create_bucket_configuration(location).send().await.unwrap();
        if versioned {
            let on = aws_sdk_s3::types::VersioningConfiguration::builder()
                .status(aws_sdk_s3::types::BucketVersioningStatus::Enabled)
                .build();
            s3.put_bucket_versioning().bucket(name).versioning_configuration(on).send().await.unwrap();
        }
    }

    pub(crate) async fn sts(&self) -> aws_sdk_sts::Client {
        aws_sdk_sts::Client::new(&self.sdk_config().await)
    }

    /// The server's log so far, for failure messages.
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.state_dir().join("moto.log")).unwrap_or_default()
    }

    /// Every request kbp (or anyone outside system:masters and the control plane) made to this emulator's
    /// clusters' API servers, from their audit logs (scripts/kube.sh), oldest first per cluster; waits until the
    /// log stops growing, since the server writes an entry just after it answers.
    pub(crate) fn kube_audit(&self) -> Vec<serde_json::Value> {
        let read = || -> Vec<serde_json::Value> {
            let logs = std::fs::read_dir(self.state_dir().join("kube")).into_iter().flatten().flatten();
            logs.flat_map(|d| {
                std::fs::read_to_string(d.path().join("plane/audit.log"))
                    .unwrap_or_default()
                    .lines()
                    .filter_map(|l| serde_json::from_str(l).ok())
                    .collect::<Vec<_>>()
            })
            .collect()
        };
        let mut seen = read();
        loop {
            std::thread::sleep(std::time::Duration::from_millis(300));
            let now = read();
            if now.len() == seen.len() {
                return now;
            }
            seen = now;
        }
    }

    fn state_dir(&self) -> PathBuf {
        self.dir.path().join("emulator")
    }

    fn pid_file(&self) -> PathBuf {
        self.state_dir().join("moto.pid")
    }

    fn script(&self, command: &str) -> Output {
        let mut script = Command::new("bash");
        if !self.kubernetes {
            script.env("KBP_EMULATOR_KUBE", "none");
        }
        script
            .arg(emulator_script())
            .arg(command)
            .env("KBP_EMULATOR_PORT", self.port.to_string())
            .env("KBP_EMULATOR_DIR", self.state_dir())
            .env("KBP_EMULATOR_PROFILE", &self.profile)
            .env("KBP_EMULATOR_TIME_SCALE", self.time_scale.to_string())
            // If this test process is killed before Drop runs, the script's watchdog stops the server.
            .env("KBP_EMULATOR_WATCH_PID", std::process::id().to_string())
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("run {}: {e}", emulator_script().display()))
    }
}

impl Emulator {
    /// The requests the emulator refused as AWS would (its input contract), as recorded by its front door:
    /// `{time, service, operation, status, code, message, rule}` each.
    pub(crate) fn refusals(&self) -> Vec<serde_json::Value> {
        let answer = self.admin_get("/moto-api/kbp/refusals");
        serde_json::from_str(&answer).unwrap_or_else(|e| panic!("refusal log is not JSON ({e}): {answer}"))
    }

    /// For a test that sends what AWS refuses on purpose: dropping this emulator will not fail it.
    pub(crate) fn expect_refusals(&self) {
        self.refusals_expected.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// The body of a GET of `path` on the emulator.
    fn admin_get(&self, path: &str) -> String {
        let address = format!("127.0.0.1:{}", self.port);
        let request = format!("GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
        let answer = loopback_http(&address, &request, std::time::Duration::from_secs(30))
            .unwrap_or_else(|e| panic!("GET {path} on the emulator: {e}"));
        let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
        assert!(head.starts_with("HTTP/1.1 200") || head.starts_with("HTTP/1.0 200"), "GET {path}: {answer}");
        // Chunked answers are not expected from moto's server; a body is the JSON itself.
        body.to_string()
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        // Every emulator-backed test holds kbp to AWS's input contract: a refused request fails it.
        let refused = if std::thread::panicking() || self.refusals_expected.load(std::sync::atomic::Ordering::Relaxed) {
            Vec::new()
        } else {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.refusals())).unwrap_or_default()
        };
        let out = self.script("stop");
        if !out.status.success() {
            eprintln!("stopping the emulator on port {} failed:\n{}", self.port, String::from_utf8_lossy(&out.stderr));
        }
        if !refused.is_empty() {
            let lines: Vec<String> = refused.iter().map(|r| r.to_string()).collect();
            panic!("the emulator refused {} request(s) as AWS would:\n{}", refused.len(), lines.join("\n"));
        }
    }
}

fn free_loopback_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("bind a free port on 127.0.0.1")
}

/// A `kbp` command with the emulator's environment: inherited AWS_* variables are removed so nothing from
/// the machine leaks in, the rest of the environment is kept. stdin is null so a prompt cannot hang a test.
pub(crate) fn kbp_command(em: &Emulator, args: &[&str], cwd: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kbp"));
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("AWS_") {
            cmd.env_remove(&key);
        }
    }
    cmd.envs(em.env()).env("NO_COLOR", "1").args(args).current_dir(cwd).stdin(Stdio::null());
    cmd
}

/// Runs `kbp ARGS` in `cwd` against the emulator and returns its output, whatever the exit status.
pub(crate) fn kbp(em: &Emulator, args: &[&str], cwd: &Path) -> Output {
    kbp_command(em, args, cwd).output().unwrap_or_else(|e| panic!("run kbp {args:?}: {e}"))
}

/// Runs `kbp ARGS` and panics, showing its stdout and stderr, unless it exits 0.
pub(crate) fn kbp_ok(em: &Emulator, args: &[&str], cwd: &Path) -> Output {
    let out = kbp(em, args, cwd);
    assert_success(&out, &format!("kbp {}", args.join(" ")));
    out
}

/// Panics with the command's stdout and stderr unless it exited 0.
pub(crate) fn assert_success(out: &Output, what: &str) {
    if !out.status.success() {
        panic!("{what} failed: {}\n{}", out.status, describe_output(out));
    }
}

/// Panics with the command's stdout and stderr unless it exited with `code`.
pub(crate) fn assert_exit_code(out: &Output, code: i32, what: &str) {
    if out.status.code() != Some(code) {
        panic!("{what}: expected exit code {code}, got {}\n{}", out.status, describe_output(out));
    }
}

pub(crate) fn describe_output(out: &Output) -> String {
    format!(
        "--- stdout ---\n{}\n--- stderr ---\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

pub(crate) fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs `kbp ARGS` in `cwd` with no emulator, for what needs no AWS (validate, fmt, schema, render, help).
pub(crate) fn kbp_offline(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kbp"))
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run kbp")
}

/// The repository's root: where the shipped blueprints, docs and fixtures are.
pub(crate) fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// kbp's waits and retries, logged through tracing, shown for a failing test (`RUST_LOG=kbp=debug` for more).
pub(crate) fn init_tracing() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "kbp=info".into()))
        .with_test_writer()
        .try_init();
}

/// A Kubernetes client for the emulator's EKS cluster `name`, made as kbp makes it: endpoint and CA from EKS,
/// kbp's own EKS token.
pub(crate) async fn cluster_client(em: &Emulator, name: &str) -> kube::Client {
    use kbp::access::cluster::{Access, Clients, Cluster};
    let c = em.eks().await.describe_cluster().name(name).send().await.unwrap().cluster.unwrap();
    let cluster = Cluster {
        name: name.into(),
        region: REGION.into(),
        endpoint: c.endpoint().unwrap().to_string(),
        ca_data: c.certificate_authority().and_then(|ca| ca.data()).unwrap().to_string(),
    };
    Clients::new(Access::Eks, em.sdk_config().await).client(&cluster).await.unwrap()
}

/// The IDs of the VPCs kbp tagged as stack `stack`'s: one while the stack exists, none once destroyed.
pub(crate) async fn stack_vpcs(em: &Emulator, stack: &str) -> Vec<String> {
    let out = em.ec2().await.describe_vpcs().filters(sdk::of_stack(stack)).send().await.unwrap();
    out.vpcs().iter().filter_map(|v| v.vpc_id().map(str::to_string)).collect()
}

pub(crate) fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// A scratch directory holding a copy of a shipped blueprint, for tests that run kbp and edit its input.
pub(crate) struct Workspace {
    dir: TempDir,
    /// The copied blueprint, `<dir>/<NAME>.toml`.
    pub blueprint: PathBuf,
}

impl Workspace {
    /// Copies `blueprints/NAME.toml` from the repository into a fresh tempdir.
    pub(crate) fn with_blueprint(name: &str) -> Workspace {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints").join(format!("{name}.toml"));
        let dir = tempfile::Builder::new().prefix("kbp-workspace-").tempdir().expect("create a workspace tempdir");
        let blueprint = dir.path().join(format!("{name}.toml"));
        let text = std::fs::read_to_string(&source).unwrap_or_else(|e| panic!("read {}: {e}", source.display()));
        std::fs::write(&blueprint, with_local_crds(&text)).expect("write the workspace blueprint");
        Workspace { dir, blueprint }
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The blueprint's file name, as passed to kbp when it runs in `path()`.
    pub(crate) fn blueprint_arg(&self) -> &str {
        self.blueprint.file_name().and_then(|n| n.to_str()).expect("blueprint names are UTF-8")
    }

    pub(crate) fn read_blueprint(&self) -> String {
        std::fs::read_to_string(&self.blueprint).expect("read the workspace blueprint")
    }

    pub(crate) fn write_blueprint(&self, text: &str) {
        std::fs::write(&self.blueprint, text).expect("write the workspace blueprint");
    }
}

/// `kbp CMD <blueprint> --set SET EXTRA…` for the workspace's blueprint, `SET` typically naming the stack
/// (`cluster.name=…`) so that tests sharing a blueprint do not share a stack.
pub(crate) fn args<'a>(cmd: &'a str, ws: &'a Workspace, set: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![cmd, ws.blueprint_arg(), "--set", set];
    v.extend_from_slice(extra);
    v
}

/// The official Karpenter v1.14.1 CRDs (the project's reference data, not part of the repository):
/// `KBP_KARPENTER_CRDS_DIR`, else `../shared/reference/karpenter-v1.14.1/crds` beside the repository, else
/// under `/work/shared`. Panics with where they are expected: tests that need them fail rather than skip.
pub(crate) fn reference_crds_dir() -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let candidates = [
        std::env::var_os("KBP_KARPENTER_CRDS_DIR").map(PathBuf::from),
        Some(repo.join("../shared/reference/karpenter-v1.14.1/crds")),
        Some(PathBuf::from("/work/shared/reference/karpenter-v1.14.1/crds")),
    ];
    candidates.into_iter().flatten().find(|p| p.join("karpenter.sh_nodepools.yaml").is_file()).unwrap_or_else(|| {
        panic!(
            "the Karpenter v1.14.1 CRDs are not found: set KBP_KARPENTER_CRDS_DIR to a directory holding \
             karpenter.sh_nodepools.yaml, karpenter.sh_nodeclaims.yaml and karpenter.k8s.aws_ec2nodeclasses.yaml"
        )
    })
}

/// Karpenter's published v1.14.1 chart, beside [`reference_crds_dir`] in the reference data.
pub(crate) fn reference_chart_dir() -> PathBuf {
    let dir = reference_crds_dir().join("../chart/karpenter");
    assert!(dir.join("Chart.yaml").is_file(), "the published Karpenter chart is not at {}", dir.display());
    dir
}

/// Copies the directory tree `from` to `to`.
pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The blueprint with `karpenter.chart` pointing at [`reference_chart_dir`], so applies in tests read the
/// chart (its CRDs and the controller's templates) from disk instead of pulling it from the internet.
pub(crate) fn with_local_crds(text: &str) -> String {
    let line = format!("chart = {:?}\n", reference_chart_dir().display().to_string());
    match text.find("\n[karpenter]\n") {
        Some(i) => {
            let at = i + "\n[karpenter]\n".len();
            format!("{}{line}{}", &text[..at], &text[at..])
        }
        None => format!("{text}\n[karpenter]\n{line}"),
    }
}

/// When each `<address>: <what>` line of apply's or destroy's plain output whose `what` starts with `verb`
/// (`creating`, `created`, `destroying`, `destroyed`) was printed, as its `HH:MM:SS.mmm` timestamp.
pub(crate) fn stamps(stderr: &str, verb: &str) -> std::collections::BTreeMap<String, String> {
    stderr
        .lines()
        .filter_map(|l| {
            let (ts, rest) = l.split_once(' ')?;
            let (address, what) = rest.split_once(": ")?;
            what.starts_with(verb).then(|| (address.to_string(), ts.to_string()))
        })
        .collect()
}

/// Sends one raw HTTP/1.1 `request` (with `Connection: close`) to `address` on loopback and returns the whole
/// answer: small, blocking, for the admin calls of the emulator and the fault proxy.
pub(crate) fn loopback_http(address: &str, request: &str, timeout: std::time::Duration) -> std::io::Result<String> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(address)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.write_all(request.as_bytes())?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer)?;
    Ok(String::from_utf8_lossy(&answer).into_owned())
}

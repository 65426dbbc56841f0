//! State shared through S3, against the emulator: two runs from two checkouts lock each other out, a third
//! finds the stack and destroys it; a killed run's lock is removed with `kbp force-unlock`; the object is
//! encrypted and versioned and never overwritten over another writer's change; state moves between a local
//! file and S3 and is edited by hand (`rm`, `mv`, `push`) only in ways that lose nothing.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::*;
use kbp::state::location::S3Location;
use kbp::state::s3::S3Backend;
use kbp::state::{Backend, State, StateError};
use serde_json::Value;

const BUCKET: &str = "team-kbp-state";

/// A workspace with the minimal blueprint (cluster `sbx`) keeping its state in `BUCKET` via its [state] table.
fn s3_workspace() -> Workspace {
    let ws = Workspace::with_blueprint("minimal");
    ws.write_blueprint(&format!("{}\n[state]\nbackend = \"s3\"\nbucket = \"{BUCKET}\"\n", ws.read_blueprint()));
    ws
}

async fn clusters(em: &Emulator) -> Vec<String> {
    em.eks().await.list_clusters().send().await.unwrap().clusters().to_vec()
}

async fn object_exists(em: &Emulator, key: &str) -> bool {
    em.s3().await.head_object().bucket(BUCKET).key(key).send().await.is_ok()
}

/// The lock ID a "locked by" error names in its `kbp force-unlock ID` hint.
fn lock_id_in(err: &str) -> String {
    let after = err.split("kbp force-unlock ").nth(1).unwrap_or_else(|| panic!("no force-unlock hint in: {err}"));
    after.split_whitespace().next().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn two_checkouts_apply_one_stack_once_and_a_third_plans_outputs_and_destroys_it() {
    let em = Emulator::start();
    em.bucket(BUCKET, true).await;
    let checkouts = [s3_workspace(), s3_workspace(), s3_workspace()];
    // Two plain applies and one that waits for the lock, started together.
    let runs: Vec<_> = checkouts
        .iter()
        .enumerate()
        .map(|(i, ws)| {
            let mut args = vec!["apply", ws.blueprint_arg(), "--auto-approve"];
            if i == 2 {
                args.extend(["--lock-timeout", "10m"]);
            }
            let mut cmd = kbp_command(&em, &args, ws.path());
            std::thread::spawn(move || {
                let started = Instant::now();
                let out = cmd.output().unwrap();
                (out, started.elapsed())
            })
        })
        .collect();
    let results: Vec<_> = runs.into_iter().map(|r| r.join().unwrap()).collect();
    let applied: Vec<usize> =
        (0..3).filter(|&i| stdout(&results[i].0).contains("Apply complete! Resources: ")).collect();
    let everything = results.iter().map(|(o, _)| describe_output(o)).collect::<Vec<_>>().join("\n=====\n");
    assert_eq!(applied.len(), 1, "exactly one run applies:\n{everything}");
    let winner = applied[0];
    for (i, (out, took)) in results.iter().enumerate().take(2) {
        if i == winner {
            continue;
        }
        assert_exit_code(out, 1, "an apply while another holds the lock");
        let err = stderr(out);
        assert!(err.contains("is locked by `kbp apply`") && err.contains("kbp force-unlock"), "{err}");
        assert!(err.contains(&format!("s3://{BUCKET}/kbp/sbx.state.json")), "{err}");
        assert!(*took < results[winner].1 && *took < Duration::from_secs(15), "fails at once, took {took:?}");
    }
    let (waiter, _) = &results[2];
    assert_success(waiter, "the apply waiting with --lock-timeout");
    if winner != 2 {
        assert!(
            stdout(waiter).contains("No changes"),
            "the waiting run finds the stack made: {}",
            describe_output(waiter)
        );
    }
    // The stack exists once, its state only in the bucket, and no lock is left.
    assert_eq!(stack_vpcs(&em, "sbx").await.len(), 1);
    assert_eq!(clusters(&em).await, vec!["sbx".to_string()]);
    assert!(checkouts.iter().all(|ws| !ws.path().join(".kbp/sbx.state.json").exists()));
    assert!(object_exists(&em, "kbp/sbx.state.json").await);
    assert!(!object_exists(&em, "kbp/sbx.state.json.lock").await, "every run released its lock");
    let head = em.s3().await.head_object().bucket(BUCKET).key("kbp/sbx.state.json").send().await.unwrap();
    assert_eq!(head.server_side_encryption().map(|e| e.as_str()), Some("AES256"), "SSE-S3 without a KMS key");
    let versions =
        em.s3().await.list_object_versions().bucket(BUCKET).prefix("kbp/sbx.state.json").send().await.unwrap();
    let history = versions.versions().iter().filter(|v| v.key() == Some("kbp/sbx.state.json")).count();
    assert!(history > 10, "every write is a version of the object ({history})");

    // A clean checkout with the state named by KBP_STATE alone (its blueprint has no [state]).
    let third = Workspace::with_blueprint("minimal");
    let url = format!("s3://{BUCKET}/kbp/sbx.state.json");
    let run = |args: &[&str]| kbp_command(&em, args, third.path()).env("KBP_STATE", &url).output().unwrap();
    assert_exit_code(&run(&["plan", third.blueprint_arg(), "--detailed-exitcode"]), 0, "no-op plan from S3 state");
    let out = run(&["output", "--json"]);
    assert_success(&out, "kbp output");
    let outputs: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(outputs["cluster_name"], "sbx");
    let endpoint = outputs["cluster_endpoint"].as_str().unwrap_or_default().to_string();
    assert!(endpoint.starts_with("https://"), "{outputs}");
    let out = run(&["kubeconfig", "--file", "kubeconfig"]);
    assert_success(&out, "kbp kubeconfig");
    let kubeconfig = std::fs::read_to_string(third.path().join("kubeconfig")).unwrap();
    assert!(kubeconfig.contains(&endpoint), "{kubeconfig}");
    // kbp is not on this test's PATH: the kubeconfig names this binary, and says why.
    let binary = std::fs::canonicalize(env!("CARGO_BIN_EXE_kbp")).unwrap();
    assert!(kubeconfig.contains(&format!("command: {}", binary.display())), "{kubeconfig}");
    assert!(stderr(&out).contains("put kbp on PATH"), "{}", stderr(&out));
    // With kbp on PATH, the kubeconfig runs plain `kbp`: it survives an upgrade or a move, and can be shared.
    let path = format!("{}:{}", binary.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    let out = kbp_command(&em, &["kubeconfig", "--file", "portable"], third.path())
        .env("KBP_STATE", &url)
        .env("PATH", path)
        .output()
        .unwrap();
    assert_success(&out, "kbp kubeconfig with kbp on PATH");
    let portable = std::fs::read_to_string(third.path().join("portable")).unwrap();
    assert!(portable.contains("command: kbp\n") && !portable.contains(&binary.display().to_string()), "{portable}");
    let out = run(&["render", third.blueprint_arg(), "--skip-crds"]);
    assert_success(&out, "kbp render");
    assert!(!stdout(&out).contains("known after apply"), "render takes AWS's values from the S3 state");
    let out = run(&["destroy", third.blueprint_arg(), "--auto-approve"]);
    assert_success(&out, "destroy from the third checkout");
    assert!(stdout(&out).contains("Final scan: nothing of stack sbx is left"), "{}", describe_output(&out));
    assert_eq!(stack_vpcs(&em, "sbx").await.len(), 0);
    assert!(clusters(&em).await.is_empty());
    let pulled: State = serde_json::from_slice(&run(&["state", "pull"]).stdout).unwrap();
    assert!(pulled.resources.is_empty(), "state records the destroy");
}

/// Starts `kbp apply --json` in `ws` and returns it once `finished` resource operations are done.
fn apply_until(em: &Emulator, ws: &Workspace, finished: usize) -> std::process::Child {
    apply_reading(em, ws, |l| l.contains("\"finished\""), finished).0
}

/// Starts `kbp apply --json` in `ws`, returns it once `count` event lines matched `mark`, with the thread that
/// reads the rest of its stdout (and returns the last line) and the file its stderr goes to.
fn apply_reading(
    em: &Emulator,
    ws: &Workspace,
    mark: impl Fn(&str) -> bool,
    count: usize,
) -> (std::process::Child, std::thread::JoinHandle<String>, tempfile::NamedTempFile) {
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut child = kbp_command(em, &["apply", ws.blueprint_arg(), "--auto-approve", "--json"], ws.path())
        .stdout(Stdio::piped())
        .stderr(log.reopen().unwrap())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines().map_while(Result::ok);
    let seen = lines.by_ref().filter(|l| mark(l)).take(count).count();
    assert_eq!(seen, count, "apply got far enough to be stopped mid-way");
    // Keep reading, so the child never blocks on a full pipe.
    let rest = std::thread::spawn(move || lines.last().unwrap_or_default());
    (child, rest, log)
}

fn signal(child: &std::process::Child, name: &str) {
    let sent =
        std::process::Command::new("kill").args([&format!("-{name}"), &child.id().to_string()]).status().unwrap();
    assert!(sent.success(), "kill -{name}");
}

/// A CI runner cancelling a job sends SIGTERM (a closed session SIGHUP): kbp finishes what is running, writes
/// it to state, lets go of the S3 lock and ends its `--json` stream with the summary, exiting as the shell
/// reports the signal. A second signal stops it at once, the lock still released. A rerun converges.
#[tokio::test(flavor = "multi_thread")]
async fn sigterm_and_sighup_mid_apply_release_the_lock_end_with_a_summary_and_a_rerun_converges() {
    // Long enough waits (a cluster of 6 s) that a second signal lands while an operation still runs.
    let em = Emulator::start_with("realistic", 0.01);
    em.bucket(BUCKET, true).await;
    let ws = s3_workspace();
    let lock = "kbp/sbx.state.json.lock";

    for (name, code) in [("TERM", 143), ("HUP", 129)] {
        let (mut child, rest, log) = apply_reading(&em, &ws, |l| l.contains("\"finished\""), 3);
        signal(&child, name);
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(code), "SIG{name} ends kbp with the shell's status for it");
        let last: Value = serde_json::from_str(&rest.join().unwrap()).unwrap();
        assert_eq!(
            (&last["type"], &last["interrupted"], &last["signal"], &last["exit_code"]),
            (&"summary".into(), &true.into(), &format!("SIG{name}").into(), &code.into()),
            "the stream ends with the summary: {last}"
        );
        assert!(!object_exists(&em, lock).await, "SIG{name} releases the lock");
        let err = std::fs::read_to_string(log.path()).unwrap();
        assert!(
            err.contains(&format!("Interrupted (SIG{name})"))
                && err.contains("not started")
                && err.contains("run `kbp apply` again to continue"),
            "says what finished and how to go on: {err}"
        );
        assert!(!err.contains("fix the error"), "an interrupt is no error: {err}");
    }

    // Twice, while the cluster is being created: kbp stops at once and still lets go of the lock.
    let creating = |l: &str| l.contains("\"started\"") && l.contains("eks_cluster.main");
    let (mut child, rest, log) = apply_reading(&em, &ws, creating, 1);
    signal(&child, "TERM");
    std::thread::sleep(Duration::from_millis(300));
    let stopped = Instant::now();
    signal(&child, "TERM");
    let status = child.wait().unwrap();
    assert!(stopped.elapsed() < Duration::from_secs(10), "the second signal stops kbp at once");
    assert_eq!(status.code(), Some(143));
    let last: Value = serde_json::from_str(&rest.join().unwrap()).unwrap();
    assert_eq!((&last["type"], &last["interrupted"]), (&"summary".into(), &true.into()), "{last}");
    assert!(!object_exists(&em, lock).await, "a second SIGTERM releases the lock too");
    let err = std::fs::read_to_string(log.path()).unwrap();
    assert!(err.contains("stopped at once"), "{err}");

    kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());
    assert_eq!(stack_vpcs(&em, "sbx").await.len(), 1, "no duplicate VPC");
    assert_eq!(clusters(&em).await, ["sbx"], "one cluster");
    assert_exit_code(&kbp(&em, &["plan", ws.blueprint_arg(), "--detailed-exitcode"], ws.path()), 0, "converged");
    kbp_ok(&em, &["destroy", ws.blueprint_arg(), "--auto-approve"], ws.path());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_apply_leaves_its_lock_and_force_unlock_lets_a_rerun_converge() {
    let em = Emulator::start();
    em.bucket(BUCKET, true).await;
    let ws = s3_workspace();

    // Ctrl-C: the run stops starting operations, lets the running ones finish, and lets go of the lock.
    let mut child = apply_until(&em, &ws, 4);
    let interrupt = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(interrupt.success());
    let status = child.wait().unwrap();
    assert!(!status.success(), "an interrupted apply reports it did not finish: {status}");
    assert!(!object_exists(&em, "kbp/sbx.state.json.lock").await, "Ctrl-C releases the lock");

    let mut child = apply_until(&em, &ws, 8);
    child.kill().unwrap(); // SIGKILL: no chance to release anything
    let _ = child.wait();
    assert!(object_exists(&em, "kbp/sbx.state.json.lock").await, "the killed run's lock is left");

    let out = kbp(&em, &["plan", ws.blueprint_arg()], ws.path());
    assert_exit_code(&out, 1, "plan while a dead run's lock is left");
    let err = stderr(&out);
    assert!(err.contains("is locked by `kbp apply`") && err.contains(" ago"), "names the holder and its age: {err}");
    let id = lock_id_in(&err);

    let wrong = kbp(&em, &["force-unlock", "not-the-id", "-f", ws.blueprint_arg(), "--auto-approve"], ws.path());
    assert_exit_code(&wrong, 1, "force-unlock with another ID");
    assert!(stderr(&wrong).contains("not by lock ID not-the-id"), "{}", describe_output(&wrong));
    let asked = kbp(&em, &["force-unlock", &id, "-f", ws.blueprint_arg()], ws.path());
    assert_exit_code(&asked, 1, "force-unlock without a terminal to ask on");
    assert!(object_exists(&em, "kbp/sbx.state.json.lock").await, "nothing removed without approval");
    let out = kbp_ok(&em, &["force-unlock", &id, "-f", ws.blueprint_arg(), "--auto-approve"], ws.path());
    assert!(stdout(&out).contains(&format!("Removed lock {id}")), "{}", describe_output(&out));
    assert!(!object_exists(&em, "kbp/sbx.state.json.lock").await);

    kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());
    assert_eq!(stack_vpcs(&em, "sbx").await.len(), 1, "no duplicate VPC");
    let ec2 = em.ec2().await;
    let tagged = of_stack("sbx");
    let subnets = ec2.describe_subnets().filters(tagged.clone()).send().await.unwrap();
    assert_eq!(subnets.subnets().len(), 6, "no duplicate subnets");
    let igws = ec2.describe_internet_gateways().filters(tagged).send().await.unwrap();
    assert_eq!(igws.internet_gateways().len(), 1, "no duplicate internet gateway");
    assert_exit_code(&kbp(&em, &["plan", ws.blueprint_arg(), "--detailed-exitcode"], ws.path()), 0, "converged");
    kbp_ok(&em, &["destroy", ws.blueprint_arg(), "--auto-approve"], ws.path());
}

fn location(key: &str) -> S3Location {
    S3Location { bucket: BUCKET.into(), key: key.into(), region: None, kms_key_id: None, profile: None, role_arn: None }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_state_object_is_kms_encrypted_versioned_and_never_written_over_another_writer() {
    let em = Emulator::start();
    em.bucket(BUCKET, true).await;
    let sdk = em.sdk_config().await;
    let kms = aws_sdk_kms::Client::new(&sdk);
    let key = kms.create_key().send().await.unwrap().key_metadata().unwrap().key_id().to_string();
    let at = S3Location { kms_key_id: Some(key.clone()), ..location("teams/a/sbx.json") };

    let mine = S3Backend::with_config(&at, &sdk);
    assert!(mine.load().await.unwrap().is_none());
    let mut state = State::new("sbx", REGION);
    mine.persist(&state).await.unwrap();
    let head = em.s3().await.head_object().bucket(BUCKET).key("teams/a/sbx.json").send().await.unwrap();
    assert_eq!(head.server_side_encryption().map(|e| e.as_str()), Some("aws:kms"));
    assert!(head.ssekms_key_id().is_some_and(|k| k.contains(&key)), "{:?}", head.ssekms_key_id());

    // Someone else reads and writes in between (a forged concurrent writer, holding no lock).
    let theirs = S3Backend::with_config(&at, &sdk);
    let mut their_state = theirs.load().await.unwrap().unwrap();
    their_state.serial = 41;
    theirs.persist(&their_state).await.unwrap();

    state.serial = 1;
    let refused = mine.persist(&state).await.unwrap_err();
    assert!(matches!(refused, StateError::Conflict { .. }), "{refused}");
    assert!(refused.to_string().contains("was not written"), "{refused}");
    let now = S3Backend::with_config(&at, &sdk).load().await.unwrap().unwrap();
    assert_eq!(now.serial, 41, "their write stands");
    let versions = em.s3().await.list_object_versions().bucket(BUCKET).prefix("teams/a/").send().await.unwrap();
    assert_eq!(versions.versions().len(), 2, "both writes are in the bucket's history");
    assert!(mine.advice().await.is_empty(), "a versioned bucket needs no advice");

    // A first write never lands on an object that appeared meanwhile either.
    let late = S3Backend::with_config(&location("teams/b/sbx.json"), &sdk);
    assert!(late.load().await.unwrap().is_none());
    S3Backend::with_config(&location("teams/b/sbx.json"), &sdk).persist(&state).await.unwrap();
    assert!(matches!(late.persist(&state).await, Err(StateError::Conflict { .. })));
}

#[tokio::test(flavor = "multi_thread")]
async fn locks_name_their_holder_wait_and_are_removed_only_by_their_id() {
    let em = Emulator::start();
    em.bucket(BUCKET, false).await;
    let sdk = em.sdk_config().await;
    let at = location("kbp/sbx.state.json");
    let first = S3Backend::with_config(&at, &sdk);
    let second = S3Backend::with_config(&at, &sdk);
    let held = first.lock("apply", Duration::ZERO).await.unwrap();
    assert_eq!(held.info.who.as_deref(), Some(format!("arn:aws:iam::{ACCOUNT_ID}:user/moto").as_str()));

    let started = Instant::now();
    let err = second.lock("plan", Duration::ZERO).await.err().expect("locked").to_string();
    assert!(started.elapsed() < Duration::from_secs(3), "fails at once");
    assert!(err.contains("`kbp apply`") && err.contains(&held.info.id) && err.contains("user/moto"), "{err}");
    assert!(
        err.contains(&format!("kbp force-unlock {} --state s3://{BUCKET}/kbp/sbx.state.json", held.info.id)),
        "{err}"
    );
    let e = second.force_unlock("someone-else").await.unwrap_err().to_string();
    assert!(e.contains("not by lock ID someone-else"), "{e}");

    // A waiting run gets the lock once the holder lets go.
    let waiting = tokio::spawn(async move { second.lock("plan", Duration::from_secs(20)).await.map(|g| g.info) });
    tokio::time::sleep(Duration::from_millis(1500)).await;
    held.release().await.unwrap();
    let got = waiting.await.unwrap().unwrap();
    assert_eq!(got.operation, "plan");
    assert!(first.force_unlock(&got.id).await.is_ok(), "the right ID removes it");
    assert!(!object_exists(&em, "kbp/sbx.state.json.lock").await);
    let e = first.force_unlock(&got.id).await.unwrap_err().to_string();
    assert!(e.contains("is not locked"), "{e}");

    // An unversioned bucket is worth a warning.
    let advice = first.advice().await.join("\n");
    assert!(advice.contains("versioning off") && advice.contains("put-bucket-versioning"), "{advice}");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_remote_state_fails_clearly_and_overwrites_nothing() {
    let em = Emulator::start();
    em.bucket(BUCKET, true).await;
    let ws = s3_workspace();
    let s3 = em.s3().await;

    // No bucket.
    let out = kbp(&em, &["plan", ws.blueprint_arg(), "--state", "s3://no-such-bucket-here/k.json"], ws.path());
    assert_exit_code(&out, 1, "plan against a missing bucket");
    let err = stderr(&out);
    assert!(err.contains("NoSuchBucket") && err.contains("create-bucket"), "{err}");
    assert!(!err.contains("ServiceError") && !err.contains("{ "), "no debug dump: {err}");

    // A truncated object.
    let whole = serde_json::to_vec_pretty(&State::new("sbx", REGION)).unwrap();
    let put = |bytes: Vec<u8>| s3.put_object().bucket(BUCKET).key("kbp/sbx.state.json").body(bytes.into()).send();
    put(whole[..whole.len() / 2].to_vec()).await.unwrap();
    let out = kbp(&em, &["plan", ws.blueprint_arg()], ws.path());
    assert_exit_code(&out, 1, "plan on a truncated state");
    let err = stderr(&out);
    assert!(err.contains("truncated") && err.contains("list-object-versions"), "{err}");

    // Another stack's state at the key.
    put(serde_json::to_vec(&State::new("other", REGION)).unwrap()).await.unwrap();
    let out = kbp(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());
    assert_exit_code(&out, 1, "apply onto another stack's state");
    assert!(stderr(&out).contains("belongs to stack `other`"), "{}", describe_output(&out));
    let kept = s3.get_object().bucket(BUCKET).key("kbp/sbx.state.json").send().await.unwrap();
    let kept: State = serde_json::from_slice(&kept.body.collect().await.unwrap().into_bytes()).unwrap();
    assert_eq!(kept.stack, "other", "nothing overwritten");
    assert_eq!(stack_vpcs(&em, "sbx").await.len(), 0, "nothing created");
    assert!(!object_exists(&em, "kbp/sbx.state.json.lock").await, "the failed run let go of its lock");
}

#[tokio::test(flavor = "multi_thread")]
async fn state_migrates_local_to_s3_and_back_and_hand_edits_refuse_to_lose_state() {
    let em = Emulator::start();
    em.bucket(BUCKET, true).await;
    let ws = Workspace::with_blueprint("minimal");
    let bp = ws.blueprint_arg();
    kbp_ok(&em, &["apply", bp, "--auto-approve"], ws.path());
    let pull = |extra: &[&str]| -> State {
        let mut args = vec!["state", "pull"];
        args.extend_from_slice(extra);
        serde_json::from_slice(&kbp_ok(&em, &args, ws.path()).stdout).unwrap()
    };
    let before = pull(&[]);
    let url = format!("s3://{BUCKET}/moved/sbx.json");

    kbp_ok(&em, &["state", "migrate", "--to", &url], ws.path());
    let remote = pull(&["--state", &url]);
    assert_eq!((remote.serial, &remote.lineage), (before.serial, &before.lineage));
    assert_eq!(remote.resources, before.resources);
    let out = kbp(&em, &["plan", bp], ws.path());
    assert_exit_code(&out, 1, "plan against the local state that moved");
    assert!(stderr(&out).contains(&format!("was moved to {url}")), "{}", describe_output(&out));
    assert_exit_code(&kbp(&em, &["plan", bp, "--state", &url, "--detailed-exitcode"], ws.path()), 0, "plan on S3");

    kbp_ok(&em, &["state", "migrate", "--state", &url, "--to", ".kbp/sbx.state.json"], ws.path());
    let back = pull(&[]);
    assert_eq!((back.serial, &back.lineage), (before.serial, &before.lineage));
    assert_exit_code(&kbp(&em, &["plan", bp, "--detailed-exitcode"], ws.path()), 0, "plan on the local state again");
    let out = kbp(&em, &["state", "list", "--state", &url], ws.path());
    assert_exit_code(&out, 1, "the S3 copy now points back");
    assert!(stderr(&out).contains("was moved to .kbp/sbx.state.json"), "{}", describe_output(&out));

    // rm and mv refuse what they cannot do, and change nothing then.
    let out = kbp(&em, &["state", "rm", "vpc.main", "vpc.nope"], ws.path());
    assert_exit_code(&out, 1, "rm of an address not in state");
    assert!(stderr(&out).contains("vpc.nope is not in state"), "{}", describe_output(&out));
    let out = kbp(&em, &["state", "mv", "vpc.main", "internet_gateway.main"], ws.path());
    assert_exit_code(&out, 1, "mv onto an address in state");
    assert!(stderr(&out).contains("internet_gateway.main is already in state"), "{}", describe_output(&out));
    assert_eq!(pull(&[]).serial, before.serial, "refusals write nothing");

    // mv there and back: a renamed address is planned as the resource it was, once moved back.
    kbp_ok(&em, &["state", "mv", "vpc.main", "vpc.renamed"], ws.path());
    assert_exit_code(&kbp(&em, &["plan", bp, "--detailed-exitcode"], ws.path()), 2, "renamed: changes");
    kbp_ok(&em, &["state", "mv", "vpc.renamed", "vpc.main"], ws.path());
    assert_exit_code(&kbp(&em, &["plan", bp, "--detailed-exitcode"], ws.path()), 0, "moved back");

    // rm forgets without deleting; pushing the old copy back is refused as older, then forced.
    let vpc_id = before.resources.values().find(|r| r.address.to_string() == "vpc.main").unwrap().id.clone().unwrap();
    kbp_ok(&em, &["state", "rm", "vpc.main"], ws.path());
    assert!(pull(&[]).resources.keys().all(|a| a.to_string() != "vpc.main"));
    let vpcs = em.ec2().await.describe_vpcs().vpc_ids(&vpc_id).send().await.unwrap();
    assert_eq!(vpcs.vpcs().len(), 1, "the VPC itself is still there");
    std::fs::write(ws.path().join("old.json"), serde_json::to_vec_pretty(&before).unwrap()).unwrap();
    let out = kbp(&em, &["state", "push", "old.json"], ws.path());
    assert_exit_code(&out, 1, "push of an older serial");
    assert!(stderr(&out).contains("older (serial") && stderr(&out).contains("--force"), "{}", describe_output(&out));
    let other_lineage = State { lineage: "another".into(), serial: 999, ..before.clone() };
    std::fs::write(ws.path().join("other.json"), serde_json::to_vec_pretty(&other_lineage).unwrap()).unwrap();
    let out = kbp(&em, &["state", "push", "other.json"], ws.path());
    assert_exit_code(&out, 1, "push of another lineage");
    assert!(stderr(&out).contains("another lineage"), "{}", describe_output(&out));
    kbp_ok(&em, &["state", "push", "old.json", "--force"], ws.path());
    assert_eq!(pull(&[]), before);
    assert_exit_code(&kbp(&em, &["plan", bp, "--detailed-exitcode"], ws.path()), 0, "the pushed state is whole");
    kbp_ok(&em, &["destroy", bp, "--auto-approve"], ws.path());
    assert_eq!(stack_vpcs(&em, "sbx").await.len(), 0);
}

#[test]
fn state_in_s3_without_credentials_fails_in_one_line_naming_them_never_a_debug_dump() {
    let ws = Workspace::with_blueprint("minimal");
    let state = format!("s3://{BUCKET}/kbp/sbx.state.json");
    for args in [vec!["plan", ws.blueprint_arg(), "--state", &state], vec!["state", "list", "--state", &state]] {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_kbp"));
        credentials::without_aws_credentials(&mut cmd);
        let out = cmd
            .args(&args)
            .current_dir(ws.path())
            .env("NO_COLOR", "1")
            .env("KBP_CACHE_DIR", ws.path())
            .output()
            .unwrap();
        assert_exit_code(&out, 1, &format!("kbp {}", args.join(" ")));
        let err = stderr(&out);
        let at = err.find("error: ").unwrap_or_else(|| panic!("an error: {err}"));
        let lines: Vec<&str> = err[at..].lines().collect();
        assert_eq!(lines.len(), 2, "one line and a hint: {err}");
        assert!(lines[0].contains(&format!("on {state}: no AWS credentials were found")), "what failed, where: {err}");
        assert!(lines[0].starts_with("error: s3:"), "the S3 operation: {err}");
        assert!(lines[1].starts_with("  hint: ") && lines[1].contains("AWS_PROFILE"), "{err}");
        for dump in ["{", "Error {", "source:", "DispatchFailure", "ConnectorError", "Attempted"] {
            assert!(!err[at..].contains(dump), "no `{dump}` of a Debug dump: {err}");
        }
    }
    // Without a region S3 has no endpoint: that is what the hint says, not the network.
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_kbp"));
    credentials::without_aws_credentials(&mut cmd).env_remove("AWS_REGION");
    let out = cmd.args(["state", "list", "--state", &state]).current_dir(ws.path()).output().unwrap();
    assert_exit_code(&out, 1, "kbp state list of a bucket without a region");
    let err = stderr(&out);
    assert!(err.contains("  hint: S3 has no endpoint for the bucket without its region"), "{err}");
    assert!(!err.contains("ResolveEndpointError"), "{err}");
}

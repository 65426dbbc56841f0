//! Before anything is planned or changed, kbp asks AWS who is calling, once and quickly: no credentials, an
//! endpoint that refuses connections and one that accepts them and never answers each fail in seconds with one
//! line and a hint, never a debug dump, and an apply that fails so has created nothing.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use crate::support::inventory::Inventory;
use crate::support::*;

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

/// `kbp plan` and `kbp apply --auto-approve` with `sets` both fail preflight with the one problem `says` and its
/// hint, and the apply leaves the emulator as it was.
async fn plan_and_apply_refused(em: &Emulator, ws: &Workspace, sets: &[&str], says: &str, hint: &str) {
    let before = Inventory::take(em).await;
    for verb in [&["plan"][..], &["apply", "--auto-approve"]] {
        let mut args = vec![verb[0], ws.blueprint_arg()];
        args.extend(&verb[1..]);
        for set in sets {
            args.extend(["--set", set]);
        }
        let (out, took) = timed(em, ws, &args, &[]);
        assert_one_clear_line(&out, verb[0], says, hint);
        assert!(took < Duration::from_secs(10), "{} failed preflight in {took:?}", verb[0]);
    }
    Inventory::take(em).await.assert_eq(&before, "after the refused apply");
}

fn trust() -> String {
    let statement = r#"{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}"#;
    format!(r#"{{"Version": "2012-10-17", "Statement": [{statement}]}}"#)
}

/// The role `minimal` names its Karpenter nodes' role (`KarpenterNodeRole-<cluster.name>`), made beforehand with
/// `tags`.
async fn make_node_role(em: &Emulator, tags: &[(&str, &str)]) {
    let tags = tags.iter().map(|(k, v)| aws_sdk_iam::types::Tag::builder().key(*k).value(*v).build().unwrap());
    let made = em.iam().await.create_role().role_name("KarpenterNodeRole-sbx").assume_role_policy_document(trust());
    made.set_tags(Some(tags.collect())).send().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_role_name_someone_else_holds_fails_plan_and_apply_before_anything_is_made() {
    let em = Emulator::start();
    make_node_role(&em, &[("team", "data")]).await;
    let ws = Workspace::with_blueprint("minimal");
    let says = "IAM role KarpenterNodeRole-sbx already exists and does not belong to stack sbx";
    plan_and_apply_refused(&em, &ws, &[], says, "set karpenter.node_role_name to another name").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_role_name_this_stack_holds_passes_preflight_and_the_plan_names_the_account() {
    let em = Emulator::start();
    make_node_role(&em, &[("kbp:stack", "sbx"), ("kbp:address", "iam_role.karpenter_node")]).await;
    let ws = Workspace::with_blueprint("minimal");
    let (out, _) = timed(&em, &ws, &["plan", ws.blueprint_arg()], &[]);
    assert_exit_code(&out, 0, "plan");
    let header =
        "kbp will perform the following actions on stack sbx (us-west-2, account 123456789012, partition aws):";
    assert!(stdout(&out).contains(header), "{}", describe_output(&out));
    assert!(!stderr(&out).contains("error:"), "{}", describe_output(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_region_fails_plan_and_apply_before_anything_is_made() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    let says = "region us-west-9 does not exist";
    plan_and_apply_refused(&em, &ws, &["cluster.region=us-west-9"], says, "set cluster.region to an AWS region").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crds_dir_without_crds_fails_plan_and_apply_before_anything_is_made() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    let says = "the Karpenter CRDs cannot be read from karpenter.crds_dir: cannot read";
    let hint = "check karpenter.crds_dir";
    plan_and_apply_refused(&em, &ws, &["karpenter.crds_dir=no-such-dir"], says, hint).await;
    std::fs::create_dir(ws.path().join("empty")).unwrap();
    let (out, _) = timed(&em, &ws, &["plan", ws.blueprint_arg(), "--set", "karpenter.crds_dir=empty"], &[]);
    assert_one_clear_line(&out, "plan", "no CustomResourceDefinition in", "put the release's CRD files");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_kubernetes_version_eks_no_longer_offers_fails_plan_and_apply_before_anything_is_made() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    let says = "EKS in region us-west-2 does not offer Kubernetes 1.31 for new clusters";
    let hint = "set cluster.version to one it offers: 1.37, 1.36, 1.35, 1.34, 1.33, 1.32";
    plan_and_apply_refused(&em, &ws, &["cluster.version=1.31"], says, hint).await;
}

/// Every shipped blueprint (and the default it falls back on) names a Kubernetes version the emulator's
/// catalogue has in standard support: when the catalogue moves past one, this fails first.
#[tokio::test(flavor = "multi_thread")]
async fn every_shipped_blueprint_names_a_version_in_standard_support() {
    use aws_sdk_eks::types::VersionStatus;
    let em = Emulator::start();
    let listed = em.eks().await.describe_cluster_versions().send().await.expect("DescribeClusterVersions");
    let standard: Vec<&str> = listed
        .cluster_versions()
        .iter()
        .filter(|v| v.version_status() == Some(&VersionStatus::StandardSupport))
        .filter_map(|v| v.cluster_version())
        .collect();
    assert!(standard.len() >= 2, "the catalogue offers versions in standard support: {standard:?}");
    let mut files: Vec<_> = std::fs::read_dir(repo().join("blueprints"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 4, "{files:?}");
    for file in files {
        let bp = kbp::blueprint::load(&file, &[]).unwrap_or_else(|e| panic!("{}: {e:?}", file.display()));
        let version = bp.cluster.version.as_str();
        assert!(
            standard.contains(&version),
            "{} names Kubernetes {version}, not in standard support: {standard:?}",
            file.display()
        );
    }
}

//! kbp as a CI stage, against the emulator with state in S3: a saved plan is a self-contained artifact that one
//! job makes in a checkout and another applies in an empty directory.

use std::path::Path;

use serde_json::Value;

use crate::support::*;

const BUCKET: &str = "ci-kbp-state";

/// A checkout as a repository holds a stack: `blueprints/minimal.toml` reading Karpenter's chart (CRDs and
/// templates) from `../chart`, a directory of the checkout, relative to the blueprint as blueprints say paths.
fn checkout() -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix("kbp-checkout-").tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("blueprints")).unwrap();
    copy_dir(&reference_chart_dir(), &dir.path().join("chart"));
    let text = std::fs::read_to_string(repo().join("blueprints/minimal.toml")).unwrap();
    let text = match text.find("\n[karpenter]\n") {
        Some(i) => format!(
            "{}chart = \"../chart\"\n{}",
            &text[..i + "\n[karpenter]\n".len()],
            &text[i + "\n[karpenter]\n".len()..]
        ),
        None => format!("{text}\n[karpenter]\nchart = \"../chart\"\n"),
    };
    std::fs::write(dir.path().join("blueprints/minimal.toml"), text).unwrap();
    dir
}

fn in_ci(em: &Emulator, args: &[&str], cwd: &Path) -> std::process::Command {
    let mut cmd = kbp_command(em, args, cwd);
    cmd.env("KBP_STATE", format!("s3://{BUCKET}/kbp/sbx.state.json"));
    cmd
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plan_made_in_a_checkout_applies_completely_from_a_directory_holding_only_the_plan() {
    let em = Emulator::start();
    em.bucket(BUCKET, true).await;
    let plan_job = checkout();
    let plan = in_ci(&em, &["plan", "blueprints/minimal.toml", "--out", "kbp.plan"], plan_job.path()).output().unwrap();
    assert_success(&plan, "the plan job");
    let saved = std::fs::read_to_string(plan_job.path().join("kbp.plan")).unwrap();
    drop(plan_job); // the checkout is gone: nothing of it may be read again

    // A copy whose CRDs were edited after the plan was reviewed is refused before anything is made.
    let tampered_job = tempfile::tempdir().unwrap();
    let mut doc: Value = serde_json::from_str(&saved).unwrap();
    doc["inputs"]["crds"]["documents"][0]["spec"]["group"] = "evil.example.com".into();
    std::fs::write(tampered_job.path().join("kbp.plan"), doc.to_string()).unwrap();
    let out = kbp(&em, &["apply", "kbp.plan"], tampered_job.path());
    assert_exit_code(&out, 1, "a plan whose CRDs do not match their digest");
    assert!(stderr(&out).contains("do not match their digest"), "{}", describe_output(&out));
    assert!(stack_vpcs(&em, "sbx").await.is_empty(), "nothing was made");
    // So is one whose chart was: the controller renders from exactly the chart that was reviewed.
    let mut doc: Value = serde_json::from_str(&saved).unwrap();
    let template = &mut doc["inputs"]["chart"]["files"]["templates/deployment.yaml"];
    assert!(template.is_string(), "the plan carries the chart's templates");
    *template = template.as_str().unwrap().replace("replicas:", "replicas: 9 #").into();
    std::fs::write(tampered_job.path().join("kbp.plan"), doc.to_string()).unwrap();
    let out = kbp(&em, &["apply", "kbp.plan"], tampered_job.path());
    assert_exit_code(&out, 1, "a plan whose chart does not match its digest");
    assert!(stderr(&out).contains("its chart does not match its digest"), "{}", describe_output(&out));
    assert!(stack_vpcs(&em, "sbx").await.is_empty(), "nothing was made");

    let apply_job = tempfile::tempdir().unwrap();
    std::fs::write(apply_job.path().join("kbp.plan"), &saved).unwrap();
    // No KBP_STATE: the plan says where its state is.
    let out = kbp(&em, &["apply", "kbp.plan", "--json"], apply_job.path());
    assert_success(&out, "the apply job, without the checkout");
    let last: Value = serde_json::from_str(stdout(&out).lines().last().unwrap()).unwrap();
    assert_eq!(
        (&last["ok"], &last["failed"], &last["skipped"]),
        (&true.into(), &Value::Array(vec![]), &Value::Array(vec![])),
        "{last}"
    );
    let names: Vec<String> =
        std::fs::read_dir(apply_job.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
    assert_eq!(names, ["kbp.plan"], "the apply job wrote nothing beside the plan");

    // The CRDs the plan carried are installed, from the release the blueprint pins.
    let client = cluster_client(&em, "sbx").await;
    let crds: kube::Api<kube::api::DynamicObject> = kube::Api::all_with(
        client,
        &kube::api::ApiResource::from_gvk_with_plural(
            &kube::api::GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            "customresourcedefinitions",
        ),
    );
    let pools = crds.get("nodepools.karpenter.sh").await.expect("the NodePool CRD is installed");
    assert_eq!(pools.metadata.annotations.unwrap_or_default()["kbp.dev/karpenter-version"], "1.14.1");

    // Another checkout, elsewhere on disk: the same stack, no changes (where the CRDs are read is no change).
    let drift_job = checkout();
    let out =
        in_ci(&em, &["plan", "blueprints/minimal.toml", "--detailed-exitcode"], drift_job.path()).output().unwrap();
    assert_exit_code(&out, 0, "a plan from another checkout of the applied stack");
    let out = in_ci(&em, &["destroy", "blueprints/minimal.toml", "--auto-approve"], drift_job.path()).output().unwrap();
    assert_success(&out, "destroy");
}

/// Local state lives beside the blueprint, so kbp run from another directory (or with `--chdir`) finds the
/// stack's state and plans nothing; a copy of the blueprint where no state is would plan a second stack of the
/// same name, and is refused, saying where kbp looked.
#[tokio::test(flavor = "multi_thread")]
async fn one_state_per_stack_wherever_kbp_runs() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());
    let elsewhere = tempfile::tempdir().unwrap();
    let blueprint = ws.blueprint.display().to_string();

    let out = kbp(&em, &["plan", &blueprint, "--detailed-exitcode"], elsewhere.path());
    assert_exit_code(&out, 0, "a plan from another working directory");
    let dir = ws.path().display().to_string();
    let out = kbp(&em, &["--chdir", &dir, "plan", ws.blueprint_arg(), "--detailed-exitcode"], elsewhere.path());
    assert_exit_code(&out, 0, "a plan with --chdir");
    let out = kbp(&em, &["plan", "-C", &dir, ws.blueprint_arg(), "--detailed-exitcode"], elsewhere.path());
    assert_exit_code(&out, 0, "a plan with -C after the command");
    assert!(!elsewhere.path().join(".kbp").exists(), "no second state file");

    std::fs::copy(&ws.blueprint, elsewhere.path().join("copy.toml")).unwrap();
    let out = kbp(&em, &["plan", "copy.toml"], elsewhere.path());
    assert_exit_code(&out, 1, "a plan that would make a second copy of the stack");
    let err = stderr(&out);
    let looked = elsewhere.path().join(".kbp/sbx.state.json");
    assert!(
        err.contains("stack `sbx` already exists in AWS")
            && err.contains(&looked.display().to_string())
            && err.contains("--chdir"),
        "{err}"
    );
    let out = kbp(&em, &["apply", "copy.toml", "--auto-approve"], elsewhere.path());
    assert_exit_code(&out, 1, "an apply that would make a second copy of the stack");
    assert_eq!(stack_vpcs(&em, "sbx").await.len(), 1, "one VPC");
    kbp_ok(&em, &["destroy", ws.blueprint_arg(), "--auto-approve"], ws.path());
}

/// What Terraform users reach for: `-f` overlays (later files win, problems reported in the file that set the
/// value), `--target` (the resource and what it depends on), `--replace`, `kbp show PLANFILE` and
/// `--refresh=false`.
#[tokio::test(flavor = "multi_thread")]
async fn overlays_target_replace_show_and_no_refresh() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    let bp = ws.blueprint_arg();
    kbp_ok(&em, &["apply", bp, "--auto-approve"], ws.path());

    // An overlay tags every resource: targeted, only the queue changes, the rest is said to be left out.
    std::fs::write(ws.path().join("prod.toml"), "[cluster.tags]\nteam = \"prod\"\n").unwrap();
    let all = events::plan(&kbp_ok(&em, &["plan", bp, "-f", "prod.toml", "--json"], ws.path()));
    assert!(all["changes"].as_array().unwrap().len() > 5, "the overlay's tag reaches every resource: {all}");
    let queue = "sqs_queue.interruption";
    let out = kbp_ok(&em, &["plan", bp, "--overlay", "prod.toml", "--target", queue, "--json"], ws.path());
    let targeted = events::plan(&out);
    let changed: Vec<&str> =
        targeted["changes"].as_array().unwrap().iter().map(|c| c["address"].as_str().unwrap()).collect();
    assert_eq!(changed, [queue], "{targeted}");
    assert!(stderr(&out).contains("a targeted plan (--target sqs_queue.interruption)"), "{}", describe_output(&out));
    kbp_ok(&em, &["apply", bp, "-f", "prod.toml", "--target", queue, "--auto-approve"], ws.path());
    let sqs = em.sqs().await;
    let url = sqs.get_queue_url().queue_name("sbx").send().await.unwrap().queue_url().unwrap().to_string();
    let tags = sqs.list_queue_tags().queue_url(&url).send().await.unwrap();
    assert_eq!(tags.tags().and_then(|t| t.get("team")).map(String::as_str), Some("prod"), "the queue is tagged");
    let vpc = &stack_vpcs(&em, "sbx").await[0];
    let vpcs = em.ec2().await.describe_vpcs().vpc_ids(vpc).send().await.unwrap();
    assert!(!vpcs.vpcs()[0].tags().iter().any(|t| t.key() == Some("team")), "the VPC was not targeted");

    // A later file's value wins, and a wrong one is reported in that file.
    std::fs::write(ws.path().join("bad.toml"), "[cluster]\nversion = 42\n").unwrap();
    let out = kbp(&em, &["validate", bp, "-f", "prod.toml", "-f", "bad.toml"], ws.path());
    assert_exit_code(&out, 1, "an overlay with a wrong type");
    assert!(stderr(&out).contains("bad.toml:2:"), "{}", describe_output(&out));

    // --replace plans a replacement of an unchanged resource; the saved plan shows it, and applying recreates it.
    let out = kbp_ok(
        &em,
        &["plan", bp, "-f", "prod.toml", "--target", queue, "--replace", queue, "--out", "r.plan"],
        ws.path(),
    );
    assert!(stdout(&out).contains(queue), "{}", describe_output(&out));
    let shown = kbp_ok(&em, &["show", "r.plan"], ws.path());
    let text = stdout(&shown);
    assert!(text.contains("Saved plan r.plan") && text.contains("replacement requested with --replace"), "{text}");
    let doc: serde_json::Value =
        serde_json::from_slice(&kbp_ok(&em, &["show", "r.plan", "--json"], ws.path()).stdout).unwrap();
    assert_eq!(
        (doc["changes"][0]["address"].as_str(), doc["changes"][0]["action"].as_str()),
        (Some(queue), Some("replace"))
    );
    assert!(doc.get("inputs").is_none(), "show leaves out what the plan carries for applying");
    let out = kbp_ok(&em, &["apply", "r.plan"], ws.path());
    let err = stderr(&out);
    assert!(stamps(&err, "destroyed").contains_key(queue) && stamps(&err, "created").contains_key(queue), "{err}");

    // Deleted outside kbp: a plan without refresh does not see it, a refreshed one does.
    let url = sqs.get_queue_url().queue_name("sbx").send().await.unwrap().queue_url().unwrap().to_string();
    sqs.delete_queue().queue_url(&url).send().await.unwrap();
    let args = ["plan", bp, "-f", "prod.toml", "--target", queue, "--detailed-exitcode"];
    assert_exit_code(&kbp(&em, &[&args[..], &["--refresh=false"]].concat(), ws.path()), 0, "--refresh=false is blind");
    assert_exit_code(&kbp(&em, &args, ws.path()), 2, "a refreshed plan sees the queue gone");
    kbp_ok(&em, &["destroy", bp, "--auto-approve"], ws.path());
}

/// In a CI log (no terminal) a long wait is never silent: each operation still running gets a line every
/// `--progress-interval`, with what is typical for it; under `--json` these lines go to stderr and stdout holds
/// nothing but events.
#[tokio::test(flavor = "multi_thread")]
async fn a_long_wait_shows_progress_lines_in_a_log_and_json_stays_on_stdout() {
    // A cluster takes 60 s to create.
    let em = Emulator::start_with("realistic", 0.1);
    let ws = Workspace::with_blueprint("minimal");
    let args = ["apply", ws.blueprint_arg(), "--auto-approve", "--json", "--progress-interval", "20s"];
    let out = kbp_ok(&em, &args, ws.path());
    for line in stdout(&out).lines() {
        let event: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert!(event["type"].is_string(), "{line}");
    }
    let err = stderr(&out);
    let still: Vec<&str> = err.lines().filter(|l| l.contains("still creating eks_cluster.main — ")).collect();
    assert!(still.len() >= 2, "a line every 20 s of the 60 s wait: {err}");
    assert!(still.iter().all(|l| l.contains(" elapsed, typically 10 min")), "{still:?}");
    assert!(err.contains("eks_cluster.main: creating…") && err.contains("eks_cluster.main: created in "), "{err}");
    assert!(err.contains(" of "), "finished lines count the operations: {err}");
}

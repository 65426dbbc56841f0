//! `kbp render` for every shipped blueprint: the manifests it prints (CRDs, controller objects, EC2NodeClasses,
//! NodePools) validate against the official Karpenter v1.14.1 CRD schemas and the Kubernetes API types, checked
//! here again independently of the command's own check; and a schema the objects break fails the command.

use std::path::Path;
use std::process::Command;

use crate::support::{reference_chart_dir, reference_crds_dir};
use kbp::graph::value::UNKNOWN;
use kbp::kubernetes::{manifests, oci, validate};
use serde_json::Value;

/// `kbp render` of a shipped blueprint with Karpenter's chart (CRDs and templates) read from `chart`.
fn render(blueprint: &str, chart: &Path, extra: &[&str]) -> std::process::Output {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints").join(format!("{blueprint}.toml"));
    let dir = tempfile::tempdir().unwrap();
    let crds = format!("karpenter.chart={}", chart.display());
    Command::new(env!("CARGO_BIN_EXE_kbp"))
        .arg("render")
        .arg(&path)
        .args(["--set", &crds])
        .args(extra)
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn kinds(docs: &[Value], kind: &str) -> usize {
    docs.iter().filter(|d| d["kind"] == kind).count()
}

#[test]
fn every_shipped_blueprint_renders_manifests_the_official_crds_accept() {
    let crds_dir = reference_crds_dir();
    let crds = oci::crds_from_dir(&crds_dir).unwrap();
    assert_eq!(crds.len(), 5, "the release's NodePool, NodeClaim, EC2NodeClass, NodeOverlay and CapacityBuffer CRDs");
    for (blueprint, classes, pools) in
        [("minimal", 1, 1), ("karpenter-mng", 1, 1), ("spot-fallback", 1, 2), ("gpu", 2, 2), ("existing-vpc", 1, 1)]
    {
        let out = render(blueprint, &reference_chart_dir(), &[]);
        assert!(out.status.success(), "{blueprint}: {}", String::from_utf8_lossy(&out.stderr));
        let docs = manifests::documents(&String::from_utf8(out.stdout).unwrap()).unwrap();
        assert_eq!(kinds(&docs, "CustomResourceDefinition"), 5, "{blueprint}: every CRD of the release");
        assert_eq!(kinds(&docs, "Deployment"), 1, "{blueprint}");
        assert_eq!(kinds(&docs, "PodDisruptionBudget"), 1, "{blueprint}");
        assert_eq!(kinds(&docs, "EC2NodeClass"), classes, "{blueprint}");
        assert_eq!(kinds(&docs, "NodePool"), pools, "{blueprint}");
        let problems = validate::all(Some(&crds), &docs, UNKNOWN);
        assert!(problems.is_empty(), "{blueprint}:\n{}", problems.join("\n"));
        // Without a state, only the AWS-assigned values are unknown, and only where AWS assigns them.
        for doc in docs.iter().filter(|d| d["kind"] == "EC2NodeClass") {
            let terms = doc["spec"]["securityGroupSelectorTerms"].as_array().unwrap();
            assert!(terms.iter().any(|t| t["id"] == UNKNOWN), "the cluster security group is known after apply");
            assert!(doc["spec"]["role"].as_str().is_some_and(|r| r != UNKNOWN));
        }
    }
}

#[test]
fn an_object_the_crd_schema_refuses_fails_render_with_its_field_path() {
    // The official NodePool CRD with the weight bound lowered below the blueprint's 80.
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(reference_crds_dir()).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let text = if path.ends_with("karpenter.sh_nodepools.yaml") {
            assert!(text.contains("maximum: 100"), "the NodePool CRD bounds weight at 100");
            text.replace("maximum: 100", "maximum: 50")
        } else {
            text
        };
        std::fs::write(dir.path().join(path.file_name().unwrap()), text).unwrap();
    }
    let crds_dir = format!("karpenter.crds_dir={}", dir.path().display());
    let out = render("spot-fallback", &reference_chart_dir(), &["--set", &crds_dir]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    // Refused where the blueprint is loaded, at the field that wrote it, with the CRD's own words.
    assert!(err.contains("NodePool `spot`: spec.weight: must be less than or equal to 50, got 80"), "{err}");
    assert!(err.contains("spot-fallback.toml:16:10") && err.contains("node_pools.spot.weight"), "{err}");
    assert!(out.stdout.is_empty(), "nothing is printed when something is invalid");
}

#[test]
fn skip_crds_prints_the_rest_without_the_crds() {
    let out = render("minimal", &reference_chart_dir(), &["--skip-crds"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let docs = manifests::documents(&String::from_utf8(out.stdout).unwrap()).unwrap();
    assert_eq!(kinds(&docs, "CustomResourceDefinition"), 0);
    assert_eq!(kinds(&docs, "Deployment"), 1, "the controller, from the chart's templates");
    assert_eq!(kinds(&docs, "NodePool"), 1);
}

/// What an id selector term says when AWS has yet to assign the id (the crd corpus uses the same stand-in).
const KNOWN_LATER_SG: &str = "sg-0123456789abcdef0";

/// Replaces the unknown security group id (the cluster's, known after apply) by a well-formed one; any other
/// unknown value is left, for the server to refuse.
fn with_known_ids(mut doc: Value) -> Value {
    let terms = doc.pointer_mut("/spec/securityGroupSelectorTerms").and_then(Value::as_array_mut);
    for term in terms.into_iter().flatten() {
        if term["id"] == UNKNOWN {
            term["id"] = Value::from(KNOWN_LATER_SG);
        }
    }
    doc
}

/// The API of a document's kind, from the server's discovery.
async fn api_of(client: &kube::Client, doc: &Value) -> kube::Api<kube::api::DynamicObject> {
    let (group, version) = doc["apiVersion"].as_str().unwrap().split_once('/').unwrap_or(("", "v1"));
    let gvk = kube::api::GroupVersionKind::gvk(group, version, doc["kind"].as_str().unwrap());
    let (resource, caps) = kube::discovery::pinned_kind(client, &gvk).await.unwrap_or_else(|e| panic!("{gvk:?}: {e}"));
    match (caps.scope, doc["metadata"]["namespace"].as_str()) {
        (kube::discovery::Scope::Namespaced, Some(ns)) => kube::Api::namespaced_with(client.clone(), ns, &resource),
        _ => kube::Api::all_with(client.clone(), &resource),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_manifest_render_prints_is_accepted_by_a_real_apiservers_dry_run() {
    let plane = crate::support::control_plane::ControlPlane::start();
    let client = plane.client().await;
    let apply = |dry_run: bool| kube::api::PatchParams {
        dry_run,
        field_manager: Some("kbp".into()),
        force: true,
        field_validation: Some(kube::api::ValidationDirective::Strict),
    };
    let mut checked = 0;
    for blueprint in ["minimal", "karpenter-mng", "spot-fallback", "gpu", "existing-vpc"] {
        let out = render(blueprint, &reference_chart_dir(), &[]);
        assert!(out.status.success(), "{blueprint}: {}", String::from_utf8_lossy(&out.stderr));
        let docs = manifests::documents(&String::from_utf8(out.stdout).unwrap()).unwrap();
        // What later objects need stored for real: the CRDs (Established) and the namespaces.
        for doc in docs.iter().filter(|d| d["kind"] == "CustomResourceDefinition" || d["kind"] == "Namespace") {
            let name = doc["metadata"]["name"].as_str().unwrap();
            let api = api_of(&client, doc).await;
            api.patch(name, &apply(false), &kube::api::Patch::Apply(doc))
                .await
                .unwrap_or_else(|e| panic!("{blueprint}: the server refuses {} {name}: {e}", doc["kind"]));
        }
        for doc in docs.iter().filter(|d| d["kind"] == "CustomResourceDefinition") {
            let name = doc["metadata"]["name"].as_str().unwrap();
            let api = api_of(&client, doc).await;
            let established = |o: &kube::api::DynamicObject| {
                o.data["status"]["conditions"]
                    .as_array()
                    .is_some_and(|cs| cs.iter().any(|c| c["type"] == "Established" && c["status"] == "True"))
            };
            let mut tries = 0;
            while !established(&api.get(name).await.unwrap()) {
                tries += 1;
                assert!(tries < 100, "{name} is not Established");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
        for doc in docs.iter().filter(|d| d["kind"] != "CustomResourceDefinition" && d["kind"] != "Namespace") {
            let doc = with_known_ids(doc.clone());
            let name = doc["metadata"]["name"].as_str().unwrap();
            let api = api_of(&client, &doc).await;
            api.patch(name, &apply(true), &kube::api::Patch::Apply(&doc)).await.unwrap_or_else(|e| {
                panic!("{blueprint}: the server's dry run refuses {} {name}: {e}\n{doc:#}", doc["kind"])
            });
            checked += 1;
        }
    }
    assert!(checked >= 5 * 8, "every object of the five blueprints was sent: {checked}");
}

/// `kbp render` of a blueprint with a misspelt key, on a terminal, with `env` and `args` added.
fn render_invalid_on_terminal(env: &[(&str, &str)], args: &[&str]) -> (std::process::ExitStatus, String) {
    let dir = tempfile::tempdir().unwrap();
    let bp = dir.path().join("bp.toml");
    std::fs::write(&bp, "[cluster]\nname = \"c\"\nregion = \"us-west-2\"\nverison = \"1.33\"\n").unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kbp"));
    cmd.arg("render").arg(&bp).args(args).current_dir(dir.path()).env_remove("NO_COLOR").envs(env.iter().copied());
    crate::support::terminal::output_on_terminal(cmd)
}

#[test]
fn render_errors_are_coloured_on_a_terminal_unless_no_color_or_the_flag_says_not() {
    let (status, coloured) = render_invalid_on_terminal(&[], &[]);
    assert_eq!(status.code(), Some(1), "{coloured}");
    assert!(coloured.contains("unknown field `verison`"), "{coloured}");
    assert!(coloured.contains('\u{1b}'), "on a terminal the diagnostics are coloured: {coloured}");
    for (env, args) in [(&[("NO_COLOR", "1")][..], &[][..]), (&[], &["--no-color"])] {
        let (status, plain) = render_invalid_on_terminal(env, args);
        assert_eq!(status.code(), Some(1), "{plain}");
        assert!(plain.contains("unknown field `verison`"), "{plain}");
        assert!(!plain.contains('\u{1b}'), "no escape code with {env:?} {args:?}: {plain:?}");
    }
    // Not on a terminal (a CI log): no colour, NO_COLOR or not.
    let dir = tempfile::tempdir().unwrap();
    let bp = dir.path().join("bp.toml");
    std::fs::write(&bp, "[cluster]\nname = \"c\"\nregion = \"us-west-2\"\nverison = \"1.33\"\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kbp")).arg("render").arg(&bp).env_remove("NO_COLOR").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(!out.stderr.contains(&0x1b), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn render_of_karpenter_mng_equals_helm_template_of_the_published_chart_with_the_values_kbp_prints() {
    use crate::chart_fidelity::{assert_same, helm, keyed};
    let chart = reference_chart_dir();
    let out = render("karpenter-mng", &chart, &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let docs = manifests::documents(&String::from_utf8(out.stdout).unwrap()).unwrap();

    // The values kbp gives the chart, headed by the helm command that renders the same objects.
    let out = render("karpenter-mng", &chart, &["--chart-values"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let values = String::from_utf8(out.stdout).unwrap();
    let values_doc = kbp::helm::goyaml::document(&values).unwrap();
    assert_eq!(values_doc["replicas"], 2, "the blueprint's replicas: {values}");
    assert_eq!(values_doc["nodeSelector"]["karpenter.sh/controller"], "true", "{values}");
    let command = values.lines().find_map(|l| l.strip_prefix("#   helm template ")).expect("the helm command");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("values.yaml");
    std::fs::write(&file, &values).unwrap();
    let args: Vec<String> = command
        .split_whitespace()
        .map(|a| if a == "THIS_FILE" { file.display().to_string() } else { a.to_string() })
        .collect();
    assert!(args.iter().any(|a| a == "--kube-version") && args.contains(&"1.35".to_string()), "{command}");
    let helm_out = Command::new(helm()).arg("template").args(&args).output().unwrap();
    assert!(helm_out.status.success(), "helm template {command}: {}", String::from_utf8_lossy(&helm_out.stderr));
    let helm_docs = kbp::helm::goyaml::documents(&String::from_utf8_lossy(&helm_out.stdout)).unwrap();
    let helm_docs: Vec<Value> = helm_docs.into_iter().filter(|d| !d.is_null()).collect();

    // kbp's render is helm's, plus the namespace kbp creates and the stack's node classes and pools.
    let kbp_docs: Vec<Value> = docs
        .iter()
        .filter(|d| !["Namespace", "EC2NodeClass", "NodePool"].contains(&d["kind"].as_str().unwrap_or("")))
        .cloned()
        .collect();
    assert_eq!(kinds(&docs, "Namespace"), 1, "kbp creates the karpenter namespace");
    let (kbp_objects, helm_objects) = (keyed(kbp_docs), keyed(helm_docs));
    assert_same("karpenter-mng", &kbp_objects, &helm_objects);

    // What the comparison covers, named: all five CRDs, the chart's image digest, the pod's security settings,
    // its environment and the RBAC rules.
    let helm_kinds = |kind: &str| helm_objects.values().filter(|o| o["kind"] == kind).count();
    assert_eq!(helm_kinds("CustomResourceDefinition"), 5);
    for kind in ["ClusterRole", "Role", "ServiceAccount", "Deployment", "PodDisruptionBudget", "Service"] {
        assert!(helm_kinds(kind) >= 1, "helm renders a {kind}");
    }
    let deployment = docs.iter().find(|d| d["kind"] == "Deployment").unwrap();
    let pod = &deployment["spec"]["template"]["spec"];
    let image = pod["containers"][0]["image"].as_str().unwrap();
    assert!(image.starts_with("public.ecr.aws/karpenter/controller:1.14.1@sha256:"), "{image}");
    assert_eq!(pod["automountServiceAccountToken"], true);
    assert_eq!(pod["containers"][0]["securityContext"]["privileged"], false);
    let env = pod["containers"][0]["env"].as_array().unwrap();
    let gates = env.iter().find(|e| e["name"] == "FEATURE_GATES").expect("FEATURE_GATES");
    assert!(gates["value"].as_str().unwrap().contains("CapacityBuffer"), "{gates}");
}

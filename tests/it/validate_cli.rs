//! `kbp validate` and `kbp graph` as a user runs them: no AWS, exit codes, every diagnostic at once.

use std::path::Path;
use std::process::Output;

use crate::support::{events, kbp_offline, repo};

/// Paths in these tests are relative to the repository, as a user in a checkout types them.
fn kbp(args: &[&str]) -> Output {
    kbp_offline(args, repo())
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[test]
fn every_shipped_blueprint_is_valid_and_compiles() {
    for (name, vpc, subnets) in [
        ("karpenter-mng", "vpc.main", "subnet.private["),
        ("spot-fallback", "vpc.main", "subnet.private["),
        ("gpu", "vpc.main", "subnet.private["),
        ("minimal", "vpc.main", "subnet.private["),
        ("existing-vpc", "existing_vpc.main", "existing_subnet.private["),
    ] {
        let path = format!("blueprints/{name}.toml");
        let out = kbp(&["validate", &path]);
        assert_eq!(out.status.code(), Some(0), "{path}: {}", text(&out));
        let graph = kbp(&["graph", &path, "--format", "json"]);
        assert_eq!(graph.status.code(), Some(0), "{}", text(&graph));
        let g: serde_json::Value = serde_json::from_slice(&graph.stdout).unwrap();
        assert!(g["resources"].as_array().unwrap().len() > 40, "{name} compiles to the whole stack");
        let first_private = g["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["address"].as_str().unwrap().to_string())
            .find(|a| a.starts_with(subnets))
            .unwrap();
        let dot = String::from_utf8_lossy(&kbp(&["graph", &path]).stdout).into_owned();
        let edge = format!("\"{vpc}\" -> \"{}\"", first_private.replace('"', "\\\""));
        assert!(dot.contains(&edge), "{edge} in\n{dot}");
    }
}

#[test]
fn a_broken_blueprint_reports_every_error_with_its_place_and_exits_1() {
    let out = kbp(&["validate", "tests/fixtures/blueprints/broken.toml"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let t = text(&out);
    assert!(!t.contains("panicked"), "{t}");
    let f = "tests/fixtures/blueprints/broken.toml";
    // One per kind of mistake, each at its line:column.
    for (place, what) in [
        (format!("{f}:8:35"), "overlaps"),
        (format!("{f}:11:12"), "min_size (4) is greater than max_size (3)"),
        (format!("{f}:13:1"), "did you mean `desired_size`?"),
        (format!("{f}:16:12"), "expected an integer, found a string"),
        (format!("{f}:19:14"), "node class `gpus`, which does not exist"),
        (format!("{f}:26:1"), "missing required field `operator`"),
    ] {
        assert!(t.contains(&place), "no diagnostic at {place}:\n{t}");
        assert!(t.contains(what), "no `{what}`:\n{t}");
    }

    let json = kbp(&["validate", "tests/fixtures/blueprints/broken.toml", "--json"]);
    assert_eq!(json.status.code(), Some(1));
    let lines = events::events(&json);
    let v = lines.last().unwrap();
    assert_eq!(v["valid"], false);
    let diagnostics = events::of_type(&lines, "diagnostic");
    assert!(diagnostics.len() >= 6, "{diagnostics:?}");
    assert!(diagnostics.iter().all(|d| d["file"] == "tests/fixtures/blueprints/broken.toml" && d["line"].is_u64()));
}

#[test]
fn set_overrides_are_validated_and_shown_in_the_effective_blueprint() {
    let out = kbp(&[
        "validate",
        "blueprints/minimal.toml",
        "--print",
        "--set",
        "cluster.name=sbx-42",
        "--set",
        "vpc.nat_gateway=per-az",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(t.contains("sbx-42") && t.contains("per-az"), "{t}");
    // Defaults are spelled out.
    assert!(t.contains("BOTTLEROCKET_x86_64") && t.contains("10.0.0.0/20"), "{t}");

    let bad = kbp(&["validate", "blueprints/minimal.toml", "--set", "vpc.nat_gateway=sometimes"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(text(&bad).contains("--set"), "{}", text(&bad));
}

#[test]
fn unreadable_or_garbage_input_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage.toml");
    std::fs::write(&garbage, [0xff, 0xfe, b'[', b'[', b'x', 0x00]).unwrap();
    for args in [
        vec!["validate".to_string(), garbage.display().to_string()],
        vec!["validate".to_string(), dir.path().join("missing.toml").display().to_string()],
        vec!["plan".to_string(), dir.path().join("missing.toml").display().to_string()],
        vec![
            "state".to_string(),
            "show".to_string(),
            "not an address".to_string(),
            "--state".to_string(),
            "x.json".to_string(),
        ],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = kbp(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", text(&out));
        assert!(!text(&out).contains("panicked"), "{}", text(&out));
        assert!(text(&out).contains("error"), "{}", text(&out));
    }
    assert!(Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints").exists());
}

#[test]
fn many_errors_show_the_first_fifty_and_a_count_and_json_has_them_all_with_counts() {
    let dir = tempfile::tempdir().unwrap();
    let bp = dir.path().join("many.toml");
    let pools: String = (0..60).map(|i| format!("[node_pools.p{i}]\nweight = \"x\"\n")).collect();
    // With the CRDs at hand, as the pools' own errors leave their CRD checks out whether or not kbp's cache
    // holds the chart.
    let crds = format!("[karpenter]\ncrds_dir = {:?}\n", crate::support::reference_crds_dir());
    std::fs::write(&bp, format!("[cluster]\nname = \"t\"\nregion = \"us-west-2\"\n{crds}{pools}")).unwrap();
    let bp = bp.display().to_string();

    let out = kbp(&["validate", &bp]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let t = text(&out);
    assert_eq!(t.matches("error: expected an integer, found a string").count(), 50, "{t}");
    assert!(t.contains("… and 10 more errors, not shown"), "{t}");

    let json = kbp(&["validate", &bp, "--json"]);
    let lines = events::events(&json);
    let v = lines.last().unwrap();
    assert_eq!((v["valid"].as_bool(), v["errors"].as_u64(), v["warnings"].as_u64()), (Some(false), Some(60), Some(0)));
    assert_eq!(v["listed"], 60);
    assert_eq!(events::of_type(&lines, "diagnostic").len(), 60);
}

#[test]
fn a_blueprint_over_one_mib_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let bp = dir.path().join("big.toml");
    std::fs::write(&bp, "#".repeat((1 << 20) + 1)).unwrap();
    let out = kbp(&["validate", &bp.display().to_string()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let t = text(&out);
    assert!(t.contains("has 1048577 bytes; a blueprint has at most 1048576 (1 MiB)"), "{t}");
    assert_eq!(t.matches("error").count(), 1, "{t}");
}

#[test]
fn schema_errors_and_what_the_crds_refuse_are_reported_in_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let crds = crate::support::reference_crds_dir();
    // A misspelt key in [vpc], a NodePool requirement the NodePool CRD's CEL rules refuse, and a pool whose own
    // value the schema refuses (its CRD check is left out: the schema error is the one to fix first).
    let blueprint = format!(
        "[cluster]\nname = \"one-pass\"\nregion = \"us-west-2\"\n\n[vpc]\ncidr_blok = \"10.0.0.0/16\"\n\n\
         [karpenter]\ncrds_dir = {crds:?}\n\n[node_classes.default]\nami_alias = \"al2023@latest\"\n\n\
         [node_pools.default]\nnode_class = \"default\"\n\n[[node_pools.default.requirements]]\n\
         key = \"karpenter.sh/nodepool\"\noperator = \"In\"\nvalues = [\"other\"]\n\n\
         [node_pools.heavy]\nnode_class = \"default\"\nweight = \"max\"\n\n[[node_pools.heavy.requirements]]\n\
         key = \"karpenter.sh/nodepool\"\noperator = \"In\"\nvalues = [\"other\"]\n"
    );
    std::fs::write(dir.path().join("bp.toml"), blueprint).unwrap();
    let out = kbp_offline(&["validate", "bp.toml"], dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let t = text(&out);
    assert!(t.contains("error: unknown field `cidr_blok` in `vpc`") && t.contains("bp.toml:6:1"), "{t}");
    assert!(t.contains("error: expected an integer, found a string") && t.contains("bp.toml:24:10"), "{t}");
    let refused =
        "NodePool `default`: spec.template.spec.requirements[0].key: label \"karpenter.sh/nodepool\" is restricted";
    assert!(t.contains(&format!("error: {refused}")) && t.contains("bp.toml:18:7"), "{t}");
    assert!(!t.contains("NodePool `heavy`"), "the pool with a schema error is not checked by the CRD: {t}");

    let json = kbp_offline(&["validate", "bp.toml", "--json"], dir.path());
    let lines = events::events(&json);
    let places: Vec<(u64, u64)> = events::of_type(&lines, "diagnostic")
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| (d["line"].as_u64().unwrap(), d["column"].as_u64().unwrap()))
        .collect();
    assert_eq!(places, [(6, 1), (18, 7), (24, 10)], "{lines:?}");
    assert_eq!(lines.last().unwrap()["errors"], 3);
}

/// karpenter-mng with the published chart, a values file `v.yaml` beside it, and `extra` appended.
fn with_values(dir: &Path, values: &str, extra: &str) -> Output {
    let text = std::fs::read_to_string(repo().join("blueprints/karpenter-mng.toml")).unwrap();
    let chart = crate::support::reference_chart_dir().display().to_string();
    let text = text.replace("[karpenter]\n", &format!("[karpenter]\nchart = {chart:?}\nvalues_files = [\"v.yaml\"]\n"));
    std::fs::write(dir.join("bp.toml"), format!("{text}{extra}")).unwrap();
    std::fs::write(dir.join("v.yaml"), values).unwrap();
    kbp(&["validate", dir.join("bp.toml").to_str().unwrap()])
}

#[test]
fn validate_knows_the_chart_unknown_values_a_renamed_service_account_and_an_untolerated_taint() {
    let dir = tempfile::tempdir().unwrap();
    // A misspelt key in the file and inline: warnings with the key meant, at the line that wrote each.
    let out = with_values(
        dir.path(),
        "settings:\n  featureGates:\n    spotToSpotConsolidaton: true\n",
        "\n[karpenter.values]\nreplcas = 3\n",
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "a key the chart ignores is a warning:\n{said}");
    assert!(
        said.contains("`settings.featureGates.spotToSpotConsolidaton` is not a value of the chart karpenter 1.14.1"),
        "{said}"
    );
    assert!(said.contains("v.yaml:3:5") && said.contains("did you mean `spotToSpotConsolidation`?"), "{said}");
    assert!(said.contains("bp.toml:") && said.contains("did you mean `replicas`?"), "{said}");
    // Keys under what the chart passes on whole (a Kubernetes type) are not second-guessed.
    let out =
        with_values(dir.path(), "nodeSelector:\n  kubernetes.io/arch: amd64\npodAnnotations:\n  a.example/b: c\n", "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(!text(&out).contains("is not a value"), "{}", text(&out));

    // A service account the Pod Identity association does not name: an error naming the value and the identity.
    let out = with_values(dir.path(), "serviceAccount:\n  name: kp\n", "");
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("service account `karpenter/kp` (set by `serviceAccount.name`)"), "{said}");
    assert!(said.contains("karpenter.identity = \"pod-identity\"") && said.contains("v.yaml:2:3"), "{said}");

    // A node group taint the controller does not tolerate is refused at the taint; tolerations cover it.
    let taint = "\n[[node_group.taints]]\nkey = \"dedicated\"\nvalue = \"platform\"\neffect = \"NoSchedule\"\n";
    let out = with_values(dir.path(), "{}\n", taint);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("does not tolerate the controller node group's taint `dedicated=platform:NoSchedule`"),
        "{said}"
    );
    assert!(said.contains("node_group.taints[0]"), "{said}");
    let tolerated =
        "tolerations:\n  - {key: karpenter.sh/controller, operator: Exists}\n  - {key: dedicated, operator: Exists}\n";
    let out = with_values(dir.path(), tolerated, taint);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

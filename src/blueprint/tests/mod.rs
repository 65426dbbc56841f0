//! Tests of the whole stage: the shipped blueprints, defaults, error collection with places, `--set`, the
//! effective-blueprint output and the reference in docs/blueprint.md. CRD rules and robustness have files of their own.

mod chart_values;
mod existing_network;
mod fuzz;
mod imports;
mod robustness;

use std::path::{Path, PathBuf};

use super::*;
use crate::diag::Severity;

pub(super) const HEADER: &str = "[cluster]\nname = \"t\"\nregion = \"us-west-2\"\n";

pub(super) fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints").join(name)
}

pub(super) const SHIPPED: [&str; 5] =
    ["karpenter-mng.toml", "spot-fallback.toml", "gpu.toml", "minimal.toml", "existing-vpc.toml"];

/// (line, column, message) of every error.
pub(super) fn errors(d: &Diagnostics) -> Vec<(usize, usize, String)> {
    d.items()
        .iter()
        .filter(|i| i.severity == Severity::Error)
        .map(|i| {
            let p = i.position.as_ref().expect("blueprint errors have a position");
            (p.line, p.column, i.message.clone())
        })
        .collect()
}

fn sets(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

#[test]
fn every_shipped_blueprint_loads_without_warnings() {
    for name in SHIPPED {
        let loaded = check(&shipped(name), &[]).unwrap_or_else(|d| panic!("{name}:\n{}", d.render(false)));
        assert!(loaded.warnings.is_empty(), "{name}:\n{}", loaded.warnings.render(false));
    }
}

#[test]
fn minimal_blueprint_gets_the_documented_defaults() {
    let bp = load(&shipped("minimal.toml"), &[]).expect("minimal.toml loads");
    assert_eq!(bp.cluster.version, "1.36");
    assert!(bp.cluster.endpoint_public_access && bp.cluster.endpoint_private_access);
    assert_eq!(bp.cluster.public_access_cidrs, ["0.0.0.0/0"]);
    let v = bp.vpc.managed().expect("a VPC kbp creates");
    assert_eq!(v.azs, ["us-west-2a", "us-west-2b", "us-west-2c"]);
    let nets = |v: &[ipnet::Ipv4Net]| v.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    assert_eq!(nets(&v.private_subnets), ["10.0.0.0/20", "10.0.16.0/20", "10.0.32.0/20"]);
    assert_eq!(nets(&v.public_subnets), ["10.0.48.0/24", "10.0.49.0/24", "10.0.50.0/24"]);
    assert_eq!(v.nat_gateway, NatGatewayMode::Single);
    assert_eq!(bp.node_group.name, "karpenter");
    assert_eq!((bp.node_group.min_size, bp.node_group.desired_size, bp.node_group.max_size), (2, 2, 3));
    assert_eq!(bp.node_group.ami_type, "BOTTLEROCKET_x86_64");
    let addons: Vec<_> = bp.addons.keys().map(String::as_str).collect();
    assert_eq!(addons, ["coredns", "eks-pod-identity-agent", "kube-proxy", "vpc-cni"]);
    assert_eq!(bp.karpenter.version, "1.14.1");
    assert_eq!(bp.karpenter.identity, Identity::PodIdentity);
    assert_eq!(bp.karpenter.node_role_name, "KarpenterNodeRole-sbx");
    assert_eq!(bp.karpenter.controller_role_name, "KarpenterController-sbx");
    assert_eq!(bp.node_classes.keys().collect::<Vec<_>>(), ["default"]);
    let class = &bp.node_classes["default"];
    assert_eq!(class.ami_alias, "bottlerocket@latest");
    assert_eq!(class.root_volume.device_name, "/dev/xvdb");
    assert_eq!((class.root_volume.size.as_str(), class.root_volume.volume_type.as_str()), ("20Gi", "gp3"));
    assert_eq!(bp.node_pools.keys().collect::<Vec<_>>(), ["default"]);
    let pool = &bp.node_pools["default"];
    assert_eq!(pool.node_class, "default");
    assert_eq!(pool.requirements.len(), 3);
    assert_eq!(pool.requirements[2].operator, "Gt");
    assert_eq!(pool.limits["cpu"], "1000");
    assert_eq!(pool.expire_after, "720h");
    assert_eq!(pool.disruption.consolidation_policy, "WhenEmpty");
    assert_eq!(pool.disruption.consolidate_after, "30s");
    assert_eq!(pool.disruption.budgets.len(), 1);
    assert_eq!(pool.disruption.budgets[0].nodes, "10%");
}

#[test]
fn karpenter_mng_is_the_seed_stack() {
    let bp = load(&shipped("karpenter-mng.toml"), &[]).expect("loads");
    let minimal =
        load_str("m.toml", "[cluster]\nname = \"ex-karpenter-mng\"\nregion = \"us-west-2\"\n", &[]).expect("loads");
    assert_eq!(bp.cluster.version, "1.35");
    // Derived from the cluster name, so stacks made with `--set cluster.name=…` never share it.
    assert_eq!(bp.karpenter.node_role_name, "KarpenterNodeRole-ex-karpenter-mng");
    // The default pool is the seed's pool, so the explicit one equals it.
    assert_eq!(bp.node_pools, minimal.node_pools);
    assert_eq!(bp.vpc, minimal.vpc);
    assert_eq!(bp.node_group, minimal.node_group);
}

#[test]
fn shipped_patterns_have_their_pools() {
    let spot = load(&shipped("spot-fallback.toml"), &[]).expect("loads");
    assert_eq!(spot.node_pools["spot"].weight, Some(80));
    assert_eq!(spot.node_pools["on-demand-fallback"].weight, Some(20));
    assert_eq!(spot.node_classes["default"].root_volume.device_name, "/dev/xvda");
    let gpu = load(&shipped("gpu.toml"), &[]).expect("loads");
    let pool = &gpu.node_pools["gpu"];
    assert_eq!(pool.taints[0].key, "nvidia.com/gpu");
    assert_eq!(pool.taints[0].effect, "NoSchedule");
    assert_eq!(pool.limits["nvidia.com/gpu"], "8");
    assert_eq!(pool.node_class, "gpu");
    let gpu_vpc = gpu.vpc.managed().expect("a VPC kbp creates");
    assert_eq!(gpu_vpc.nat_gateway, NatGatewayMode::PerAz);
    assert_eq!(gpu_vpc.private_subnets[1].to_string(), "10.20.16.0/20");
}

#[test]
fn broken_blueprint_reports_every_error_with_its_place() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/blueprints/broken.toml");
    let d = load(&path, &[]).expect_err("broken.toml must not load");
    let found = errors(&d);
    let expect = [
        (8, 35, "subnet `10.0.8.0/21` overlaps `10.0.0.0/20`"),
        (11, 12, "min_size (4) is greater than max_size (3)"),
        (13, 1, "unknown field `desried_size` in `node_group`"),
        (16, 12, "expected an integer, found a string"),
        (19, 14, "node pool `gpu` uses node class `gpus`, which does not exist"),
        (26, 1, "missing required field `operator`"),
    ];
    for (line, col, msg) in expect {
        assert!(
            found.iter().any(|(l, c, m)| (*l, *c) == (line, col) && m.contains(msg)),
            "no error {line}:{col} {msg:?} in\n{}",
            d.render(false)
        );
    }
    assert_eq!(found.len(), expect.len(), "unexpected extra errors:\n{}", d.render(false));
    let by_msg = |m: &str| d.items().iter().find(|i| i.message.contains(m)).expect("present");
    assert_eq!(by_msg("desried_size").hint.as_deref(), Some("did you mean `desired_size`?"));
    assert_eq!(by_msg("overlaps").related[0].position.line, 8);
    assert_eq!(by_msg("overlaps").path.as_deref(), Some("vpc.private_subnets[1]"));
    assert_eq!(by_msg("gpus").expected.as_deref(), Some("one of `default`"));
    assert_eq!(by_msg("operator").path.as_deref(), Some("node_pools.gpu.requirements[1].operator"));
    let rendered = d.render(false);
    assert!(rendered.contains("broken.toml:26:1"), "{rendered}");
    assert!(d
        .to_string()
        .lines()
        .any(|l| l.ends_with("broken.toml:13:1: error: unknown field `desried_size` in `node_group`")));
}

#[test]
fn unreadable_file_is_one_error_without_position() {
    let d = load(Path::new("/nonexistent/kbp/bp.toml"), &[]).expect_err("missing file");
    assert_eq!(d.items().len(), 1);
    assert!(d.items()[0].position.is_none());
    assert!(d.to_string().starts_with("/nonexistent/kbp/bp.toml: error: cannot read"));
}

#[test]
fn syntax_errors_are_reported_with_places_and_stop_the_load() {
    let d = load_str("s.toml", "[cluster]\nname = \nregion = \"us-west-2\"\nfoo = [1,\n", &[]).expect_err("syntax");
    let found = errors(&d);
    assert!(found.len() >= 2, "{}", d.render(false));
    assert_eq!((found[0].0, found[0].1), (2, 8));
    assert!(found.iter().all(|(_, _, m)| m.starts_with("TOML syntax")));
}

#[test]
fn sets_override_create_and_point_at_their_argument() {
    let text = std::fs::read_to_string(shipped("karpenter-mng.toml")).expect("readable");
    let args = sets(&[
        "cluster.name=sbx-42",
        "vpc.nat_gateway=per-az",
        "node_pools.default.limits.cpu=200",
        "addons.coredns.version=v1.11.4-eksbuild.2",
        "cluster.version=1.33",
        "node_pools.default.weight=7",
        "node_pools.default.limits.\"nvidia.com/gpu\"=4",
        "node_pools.extra.node_class=default",
        "vpc.azs=[\"us-west-2a\", \"us-west-2b\"]",
    ]);
    let bp = load_str("k.toml", &text, &args).unwrap_or_else(|d| panic!("{}", d.render(false)));
    assert_eq!(bp.cluster.name, "sbx-42");
    assert_eq!(bp.cluster.version, "1.33");
    let v = bp.vpc.managed().expect("a VPC kbp creates");
    assert_eq!(v.nat_gateway, NatGatewayMode::PerAz);
    assert_eq!(v.private_subnets.len(), 2);
    assert_eq!(bp.addons["coredns"].version.as_deref(), Some("v1.11.4-eksbuild.2"));
    let pool = &bp.node_pools["default"];
    assert_eq!((pool.limits["cpu"].as_str(), pool.limits["nvidia.com/gpu"].as_str()), (Some("200"), Some("4")));
    assert_eq!(pool.weight, Some(7));
    assert_eq!(pool.requirements.len(), 3, "the rest of the pool is kept");
    assert_eq!(bp.node_pools["extra"].expire_after, "720h");

    // On a blueprint without pools, --set edits the default pool instead of replacing it.
    let minimal = std::fs::read_to_string(shipped("minimal.toml")).expect("readable");
    let bp = load_str("m.toml", &minimal, &sets(&["node_pools.default.limits.cpu=200"])).expect("loads");
    assert_eq!(bp.node_pools["default"].requirements.len(), 3);
    assert_eq!(bp.node_pools["default"].limits["cpu"], "200");

    let d = load_str("m.toml", &minimal, &sets(&["node_group.min_size=abc", "cluster.nmae=x"])).expect_err("bad");
    let first = &d.items()[0];
    assert_eq!((first.file.as_str(), first.message.as_str()), ("--set", "expected an integer, found a string"));
    assert_eq!(first.position.as_ref().map(|p| (p.span.clone(), p.column)), Some((20..23, 21)));
    assert_eq!(d.items()[1].hint.as_deref(), Some("did you mean `name`?"));
    assert!(d.render(false).contains("node_group.min_size=abc"));

    for (bad, msg) in
        [("novalue", "is not an override"), ("a..b=1", "is not a field path"), ("cluster.name.x=1", "is a string")]
    {
        let d = load_str("m.toml", &minimal, &sets(&[bad])).expect_err(bad);
        assert_eq!(d.items()[0].file, "--set");
        assert!(d.items()[0].message.contains(msg), "{bad}: {}", d.items()[0].message);
    }
}

#[test]
fn effective_toml_loads_back_to_the_same_blueprint() {
    for name in SHIPPED {
        let bp = load(&shipped(name), &[]).expect("loads");
        let text = to_toml(&bp);
        let again =
            load_str("print.toml", &text, &[]).unwrap_or_else(|d| panic!("{name}:\n{text}\n{}", d.render(false)));
        assert_eq!(bp, again, "{name}:\n{text}");
    }
    let bp = load_str("a.toml", &format!("{HEADER}[addons.kube-proxy]\nenabled = false\n"), &[]).expect("loads");
    assert!(!bp.addons.contains_key("kube-proxy"));
    let text = to_toml(&bp);
    assert!(text.contains("[addons.kube-proxy]\nenabled = false"), "{text}");
    assert_eq!(load_str("p.toml", &text, &[]).expect("loads"), bp);
}

#[test]
fn diagnostics_serialize_for_json_output() {
    let d = load_str("j.toml", &format!("{HEADER}[node_group]\nmax_size = 0\n"), &[]).expect_err("range");
    let json = serde_json::to_value(&d).expect("serializable");
    let item = &json["items"][0];
    assert_eq!(item["file"], "j.toml");
    assert_eq!(item["line"], 5);
    assert_eq!(item["path"], "node_group.max_size");
    assert_eq!(item["expected"], "an integer from 1 to 450");
}

const START: &str = "<!-- blueprint-reference:start -->";
const END: &str = "<!-- blueprint-reference:end -->";

#[test]
fn docs_blueprint_md_holds_the_generated_reference() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/blueprint.md");
    let doc = std::fs::read_to_string(&path).expect("docs/blueprint.md exists");
    let (before, rest) = doc.split_once(START).expect("docs/blueprint.md has the start marker");
    let (current, after) = rest.split_once(END).expect("docs/blueprint.md has the end marker");
    let wanted = format!("\n{}\n", reference_markdown().trim_end());
    if current == wanted {
        return;
    }
    if std::env::var("KBP_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, format!("{before}{START}{wanted}{END}{after}")).expect("docs/blueprint.md is writable");
        return;
    }
    panic!(
        "docs/blueprint.md is out of date: update it between the markers with the output of \
         `kbp::blueprint::reference_markdown()` (or run this test with KBP_BLESS=1 to rewrite it)"
    );
}

#[test]
fn reference_documents_every_table_and_default() {
    let md = reference_markdown();
    for needle in [
        "### `[cluster]`",
        "### `[node_pools.<name>]`",
        "### `[[node_pools.<name>.requirements]]`",
        "### `[[node_pools.<name>.disruption.budgets]]`",
        "### `[node_classes.<name>.root_volume]`",
        "| `desired_size` | integer | `2` | an integer from 0 to 450 |",
        "`KarpenterNodeRole-<cluster.name>`",
        "See `[[node_group.taints]]`.",
        "karpenter.k8s.aws/instance-generation",
    ] {
        assert!(md.contains(needle), "missing {needle:?} in\n{md}");
    }
    assert_eq!(md.matches("### `[[node_group.taints]]`").count(), 1);
}

#[test]
fn state_table_names_where_state_lives_and_refuses_the_other_backends_fields() {
    use crate::state::Location;
    let bp = |table: &str| check_str("state.toml", &format!("{HEADER}[state]\n{table}"), &[]);
    let located = |table: &str| bp(table).map(|l| Location::of_blueprint(&l.blueprint)).map_err(|d| d.render(false));
    assert_eq!(located("").unwrap(), Location::Local { path: ".kbp/t.state.json".into() });
    assert_eq!(located("path = \"st/t.json\"").unwrap(), Location::Local { path: "st/t.json".into() });
    let Location::S3(s3) = located("backend = \"s3\"\nbucket = \"acme-kbp-state\"\nkms_key_id = \"alias/k\"").unwrap()
    else {
        panic!("expected s3")
    };
    assert_eq!((s3.key.as_str(), s3.region.as_deref()), ("kbp/t.state.json", Some("us-west-2")));
    assert_eq!(s3.kms_key_id.as_deref(), Some("alias/k"));
    for (table, says) in [
        ("backend = \"s3\"", "needs a `bucket`"),
        ("bucket = \"acme-kbp-state\"", "`bucket` is for the `s3` state backend"),
        ("backend = \"s3\"\nbucket = \"acme-kbp-state\"\npath = \"x.json\"", "`path` is for the `local`"),
        ("backend = \"s3\"\nbucket = \"Acme_State\"", "lowercase"),
        ("backend = \"s3\"\nbucket = \"acme-kbp-state\"\nkey = \"dir/\"", "not an object key"),
        ("backend = \"s3\"\nbucket = \"acme-kbp-state\"\nrole_arn = \"ci\"", "not an IAM role ARN"),
        ("backend = \"gcs\"", "one of `local`, `s3`"),
    ] {
        let e = located(table).expect_err(table);
        assert!(e.contains(says), "{table}: {e}");
    }
}

/// The node role has one EKS access entry, of one type, so Linux and Windows classes cannot share it.
#[test]
fn node_classes_are_all_windows_or_all_linux() {
    let windows_only =
        format!("{HEADER}[node_classes.default]\nami_alias = \"windows2022@latest\"\n[node_classes.old]\nami_alias = \"windows2019@latest\"\n");
    assert!(load_str("w.toml", &windows_only, &[]).is_ok());
    let mixed = format!(
        "{HEADER}[node_classes.default]\nami_alias = \"al2023@latest\"\n[node_classes.win]\nami_alias = \"windows2025@latest\"\n"
    );
    let d = load_str("mixed.toml", &mixed, &[]).unwrap_err();
    assert_eq!(errors(&d).len(), 1, "{}", d.render(false));
    let e = &d.items()[0];
    assert_eq!(e.path.as_deref(), Some("node_classes.win.ami_alias"));
    assert!(e.message.contains("one access entry, either EC2_WINDOWS or EC2_LINUX"), "{}", e.message);
    assert!(e.message.contains("KarpenterNodeRole-t"), "names the shared role: {}", e.message);
    assert_eq!(e.related[0].position.line, 5, "points at the Linux class's alias");
}

#[test]
fn the_ami_family_comes_from_the_crd_fields_when_the_blueprint_writes_them() {
    let load_classes = |classes: &str| {
        let text = format!("[cluster]\nname = \"sbx\"\nregion = \"us-west-2\"\n{classes}");
        load_str("bp.toml", &text, &[]).map(|bp| bp.node_classes)
    };
    let c =
        load_classes("[node_classes.default]\nami_selector_terms = [{ alias = \"windows2022@latest\" }]\n").unwrap();
    assert!(c["default"].windows());
    assert_eq!(c["default"].root_volume.device_name, "/dev/sda1", "the device follows the family launched");
    let c = load_classes(
        "[node_classes.default]\namiSelectorTerms = [{ id = \"ami-0123456789abcdef0\" }]\nami_family = \"AL2023\"\n\
         [node_classes.short]\nami_alias = \"bottlerocket@latest\"\n",
    )
    .unwrap();
    assert_eq!((c["default"].family(), c["short"].family()), ("al2023".to_string(), "bottlerocket".to_string()));
    assert_eq!(
        (c["default"].root_volume.device_name.as_str(), c["short"].root_volume.device_name.as_str()),
        ("/dev/xvda", "/dev/xvdb")
    );
    // A Windows class by its selector terms beside a Linux one: one node role cannot be both.
    let mixed = load_classes(
        "[node_classes.default]\nami_selector_terms = [{ alias = \"windows2022@latest\" }]\n\
         [node_classes.linux]\nami_alias = \"al2023@latest\"\n",
    )
    .unwrap_err();
    assert!(
        mixed.items().iter().any(|d| d.message.contains("Windows nodes (`windows2022`)")),
        "{}",
        mixed.render(false)
    );
}

#[test]
fn an_overlay_merges_tables_replaces_values_and_is_blamed_for_its_own_mistakes() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let base = write("base.toml", &format!("{HEADER}[cluster.tags]\nteam = \"a\"\nowner = \"x\"\n"));
    let prod = write("prod.toml", "[cluster]\nversion = \"1.33\"\n[cluster.tags]\nteam = \"b\"\n");
    let bp = check_layered(&base, std::slice::from_ref(&prod), &[]).map_err(|d| d.render(false)).unwrap().blueprint;
    assert_eq!(bp.cluster.version, "1.33");
    let tags: Vec<(&str, &str)> = bp.cluster.tags.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(tags, [("owner", "x"), ("team", "b")], "tables merge key by key, the later file wins");
    // Paths stay relative to the first file.
    assert!(bp.state.path.as_deref().unwrap().starts_with(&dir.path().display().to_string()));

    let bad = write("bad.toml", "[cluster]\nversion = 42\n");
    let err = check_layered(&base, &[prod, bad], &[]).unwrap_err().render(false);
    assert!(err.contains("bad.toml:2:"), "{err}");
}

#[test]
fn a_node_access_entry_takes_neither_groups_nor_policies() {
    let text = format!(
        "{HEADER}[[cluster.access_entries]]\nprincipal_arn = \"arn:aws:iam::123456789012:role/n\"\ntype = \"EC2_LINUX\"\nkubernetes_groups = [\"readers\"]\n[[cluster.access_entries.policies]]\npolicy = \"AmazonEKSViewPolicy\"\n"
    );
    let d = load_str("e.toml", &text, &[]).expect_err("refused");
    let said: Vec<String> = errors(&d).into_iter().map(|(_, _, m)| m).collect();
    for what in ["Kubernetes groups", "access policies"] {
        let message = format!("an access entry of type EC2_LINUX takes no {what}");
        assert_eq!(said.iter().filter(|m| **m == message).count(), 1, "{said:?}");
    }
    let paths: Vec<&str> = d.items().iter().filter_map(|i| i.path.as_deref()).collect();
    assert!(paths.contains(&"cluster.access_entries[0].kubernetes_groups"), "{paths:?}");
    assert!(paths.contains(&"cluster.access_entries[0].policies"), "{paths:?}");
}

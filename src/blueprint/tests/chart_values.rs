//! The chart's values in a blueprint: values files merged in order under the inline values, read as Helm reads
//! YAML, errors inside a values file placed in it, and the controller's scheduling checked against the
//! controller node group.

use super::*;

fn with_taint(extra: &str) -> String {
    format!(
        "{HEADER}\n[[node_group.taints]]\nkey = \"dedicated\"\nvalue = \"platform\"\neffect = \"NoSchedule\"\n{extra}"
    )
}

#[test]
fn a_node_group_taint_the_controller_does_not_tolerate_is_refused_at_the_taint() {
    let d = check_str("bp.toml", &with_taint(""), &[]).map(|_| ()).expect_err("refused");
    let found = errors(&d);
    assert_eq!(found.len(), 1, "{found:?}");
    let (line, _, message) = &found[0];
    assert_eq!(*line, 5, "at the [[node_group.taints]] table: {found:?}");
    assert!(message.contains("does not tolerate") && message.contains("dedicated=platform:NoSchedule"), "{message}");
}

#[test]
fn tolerations_in_the_values_that_cover_every_taint_are_accepted() {
    let values = "\n[karpenter.values]\ntolerations = [\n  { key = \"karpenter.sh/controller\", operator = \"Exists\" },\n  { key = \"dedicated\", operator = \"Equal\", value = \"platform\", effect = \"NoSchedule\" },\n]\n";
    let loaded = check_str("bp.toml", &with_taint(values), &[]).unwrap_or_else(|d| panic!("{:?}", errors(&d)));
    assert_eq!(loaded.blueprint.karpenter.user_values["tolerations"].as_array().map(Vec::len), Some(2));
    // Tolerations replace kbp's list, as a list does in Helm: leaving out the group's own taint is refused.
    let partial = "\n[karpenter.values]\ntolerations = [{ key = \"dedicated\", operator = \"Exists\" }]\n";
    let d = check_str("bp.toml", &with_taint(partial), &[]).map(|_| ()).expect_err("refused");
    assert!(
        errors(&d).iter().any(|(_, _, m)| m.contains("karpenter.sh/controller=true:NoSchedule")),
        "{:?}",
        errors(&d)
    );
}

#[test]
fn a_node_selector_the_controller_group_does_not_carry_is_refused() {
    let text = format!(
        "{HEADER}\n[karpenter.values.nodeSelector]\n\"team\" = \"platform\"\n\"kubernetes.io/os\" = \"linux\"\n"
    );
    let d = check_str("bp.toml", &text, &[]).map(|_| ()).expect_err("refused");
    assert!(errors(&d).iter().any(|(_, _, m)| m.contains("nodeSelector `team: platform`")), "{:?}", errors(&d));
    let labelled = format!(
        "{HEADER}\n[node_group.labels]\nteam = \"platform\"\n\n[karpenter.values.nodeSelector]\nteam = \"platform\"\n"
    );
    check_str("bp.toml", &labelled, &[]).unwrap_or_else(|d| panic!("{:?}", errors(&d)));
}

#[test]
fn values_files_merge_in_order_under_the_inline_values_as_helm_reads_yaml() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.yaml"),
        "replicas: 3\nsettings:\n  isolatedVPC: yes\n  batchMaxDuration: 10s\nlist: [1, 2]\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("b.yaml"), "settings:\n  batchMaxDuration: 20s\nlist: [3]\nmode: 0444\n").unwrap();
    let bp = dir.path().join("bp.toml");
    let text =
        format!("{HEADER}\n[karpenter]\nvalues_files = [\"a.yaml\", \"b.yaml\"]\n\n[karpenter.values]\nreplicas = 4\n");
    std::fs::write(&bp, text).unwrap();
    let loaded = check(&bp, &[]).unwrap_or_else(|d| panic!("{:?}", errors(&d)));
    assert_eq!(
        loaded.blueprint.karpenter.user_values,
        serde_json::json!({ "replicas": 4, "settings": { "isolatedVPC": true, "batchMaxDuration": "20s" }, "list": [3], "mode": 292 })
    );
}

#[test]
fn a_values_file_that_is_not_yaml_is_an_error_in_that_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.yaml"), "replicas: 3\nsettings: [unclosed\n").unwrap();
    let bp = dir.path().join("bp.toml");
    std::fs::write(&bp, format!("{HEADER}\n[karpenter]\nvalues_files = [\"bad.yaml\", \"missing.yaml\"]\n")).unwrap();
    let d = check(&bp, &[]).map(|_| ()).expect_err("refused");
    let shown = d.items().iter().map(|i| format!("{:?} {}", i.position, i.message)).collect::<Vec<_>>().join("\n");
    assert!(d.items().iter().any(|i| i.message.contains("not valid YAML")), "{shown}");
    assert!(
        d.items()
            .iter()
            .any(|i| i.message.contains("cannot read the values file") && i.message.contains("missing.yaml")),
        "{shown}"
    );
}

#[test]
fn coredns_tolerations_that_miss_a_node_group_taint_are_refused_unless_the_controller_resolves_through_the_node() {
    let tolerations = r#"{\"tolerations\": [{\"key\": \"karpenter.sh/controller\", \"operator\": \"Exists\"}]}"#;
    let addon = format!("\n[addons.coredns]\nconfiguration_values = \"{tolerations}\"\n");
    let covered = "[karpenter.values]\ntolerations = [\n  { key = \"karpenter.sh/controller\", operator = \"Exists\" },\n  { key = \"dedicated\", operator = \"Exists\" },\n]\n";
    let text = with_taint(&format!("{covered}{addon}"));
    let d = check_str("bp.toml", &text, &[]).map(|_| ()).expect_err("refused");
    let found = errors(&d);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].2.contains("CoreDNS does not tolerate") && found[0].2.contains("dedicated=platform:NoSchedule"));
    // Resolving through the node, the controller does not wait for CoreDNS.
    let node_dns = text.replace("[karpenter.values]\n", "[karpenter.values]\ndnsPolicy = \"Default\"\n");
    check_str("bp.toml", &node_dns, &[]).unwrap_or_else(|d| panic!("{:?}", errors(&d)));
    // CoreDNS tolerations left to kbp cover every taint of the group.
    let loaded = check_str("bp.toml", &with_taint(covered), &[]).unwrap_or_else(|d| panic!("{:?}", errors(&d)));
    let graph = crate::graph::compile(&loaded.blueprint).unwrap();
    let coredns = graph.in_order().into_iter().find(|r| r.address.to_string() == "eks_addon.main[\"coredns\"]");
    let tolerations = coredns.expect("the CoreDNS add-on").attrs["configuration_values"]["tolerations"].to_string();
    assert!(tolerations.contains("dedicated") && tolerations.contains("karpenter.sh/controller"), "{tolerations}");
}

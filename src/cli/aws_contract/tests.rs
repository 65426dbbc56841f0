//! Each value AWS refused of a blueprint that validate passed, now refused offline at the field it comes from.

use super::*;
use crate::diag::Diagnostic;

/// The errors `kbp validate` reports for `text`, whichever stage finds them: (path, message).
fn refused(text: &str) -> Vec<(String, String)> {
    let errors = |d: crate::diag::Diagnostics| -> Vec<(String, String)> {
        d.items()
            .iter()
            .filter(|i| i.severity == crate::diag::Severity::Error)
            .map(|i: &Diagnostic| (i.path.clone().unwrap_or_default(), i.message.clone()))
            .collect()
    };
    let loaded = match crate::blueprint::check_str("bp.toml", text, &[]) {
        Ok(loaded) => loaded,
        Err(d) => return errors(d),
    };
    let graph = crate::graph::compile(&loaded.blueprint).expect("it compiles");
    check(&loaded, &graph).err().map(errors).unwrap_or_default()
}

fn base(extra: &str) -> String {
    format!("[cluster]\nname = \"demo\"\nregion = \"us-west-2\"\n{extra}")
}

#[test]
fn every_shipped_blueprint_sends_only_what_aws_accepts() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&path).unwrap();
            assert_eq!(refused(&text), Vec::<(String, String)>::new(), "{}", path.display());
            seen += 1;
        }
    }
    assert!(seen >= 5, "{seen} blueprints");
}

#[test]
fn a_long_cluster_name_is_refused_at_the_name_with_each_derived_name_and_its_limit() {
    let name = "c".repeat(100);
    let text = format!(
        "[cluster]\nname = \"{name}\"\nregion = \"us-west-2\"\n[karpenter]\nnode_role_name = \"KarpenterNode\"\ncontroller_role_name = \"KarpenterController\"\n"
    );
    let errors = refused(&text);
    let at_name: Vec<&String> = errors.iter().filter(|(p, _)| p == "cluster.name").map(|(_, m)| m).collect();
    let says = |needle: &str| at_name.iter().any(|m| m.contains(needle));
    assert!(
        says(&format!("IAM role name `{name}-eks-cluster` would be 112 characters; AWS allows 1 to 64")),
        "{at_name:#?}"
    );
    assert!(says(&format!("`{name}-eks-nodes` would be 110 characters")), "{at_name:#?}");
    assert!(says("IAM policy name `KarpenterControllerResourceDiscoveryPolicy-"), "{at_name:#?}");
    assert!(says("characters; AWS allows 1 to 128"), "{at_name:#?}");
    assert!(says(&format!("SQS queue name `{name}` would be 100 characters; AWS allows 1 to 80")), "{at_name:#?}");
    // Every error is at the field the names come from; the role names the blueprint set are fine.
    assert!(errors.iter().all(|(p, _)| p == "cluster.name"), "{errors:#?}");
}

#[test]
fn default_karpenter_role_names_derived_from_a_long_cluster_name_point_at_the_cluster_name() {
    let errors = refused(&format!("[cluster]\nname = \"{}\"\nregion = \"us-west-2\"\n", "d".repeat(60)));
    assert!(errors.iter().any(|(p, m)| p == "cluster.name" && m.contains("`KarpenterNodeRole-ddd")), "{errors:#?}");
    assert!(errors.iter().any(|(p, m)| p == "cluster.name" && m.contains("AWS allows 1 to 64")), "{errors:#?}");
}

#[test]
fn a_cluster_name_of_63_characters_still_gives_five_rules_and_passes() {
    let errors = refused(&format!("[cluster]\nname = \"{}\"\nregion = \"us-west-2\"\n", "e".repeat(40)));
    assert_eq!(errors, Vec::<(String, String)>::new());
}

#[test]
fn tags_are_counted_with_kbps_own_per_resource() {
    let tags: String = (0..46).map(|i| format!("t{i} = \"v\"\n")).collect();
    let errors = refused(&base(&format!("[cluster.tags]\n{tags}")));
    let (path, message) = errors.iter().find(|(p, _)| p == "cluster.tags").expect("a tag count error");
    assert_eq!(path, "cluster.tags");
    assert!(message.contains("AWS allows 50"), "{message}");
    assert!(message.contains("kbp's own 5"), "{message}");
    assert_eq!(errors.iter().filter(|(p, _)| p == "cluster.tags").count(), 1, "one diagnostic: {errors:#?}");
    // 42 leave room for kbp's 5 and the most kbp adds to one resource (a private subnet's Name, discovery and
    // internal-elb tags).
    let tags: String = (0..42).map(|i| format!("t{i} = \"v\"\n")).collect();
    assert_eq!(refused(&base(&format!("[cluster.tags]\n{tags}"))), Vec::<(String, String)>::new());
}

#[test]
fn cluster_and_vpc_tags_together_are_counted_on_the_network() {
    let cluster: String = (0..30).map(|i| format!("c{i} = \"v\"\n")).collect();
    let vpc: String = (0..30).map(|i| format!("n{i} = \"v\"\n")).collect();
    let errors = refused(&base(&format!("[cluster.tags]\n{cluster}[vpc.tags]\n{vpc}")));
    assert!(errors.iter().any(|(p, m)| p == "cluster.tags" && m.contains("vpc.main")), "{errors:#?}");
}

#[test]
fn tag_values_outside_iams_characters_are_refused_at_the_tag() {
    let errors = refused(&base("[cluster.tags]\nteam = \"a&b\"\n"));
    assert!(
        errors.iter().any(|(p, m)| p == "cluster.tags.team" && m.contains("not a valid AWS tag value")),
        "{errors:#?}"
    );
    // What the blueprint cannot spell but kbp derives is judged the same way: the graph's own tags.
    let mut loaded = crate::blueprint::check_str("bp.toml", &base(""), &[]).unwrap();
    loaded.blueprint.cluster.tags.insert("team".to_string(), "a[b]".to_string());
    let graph = crate::graph::compile(&loaded.blueprint).unwrap();
    let problems = problems(&graph, &Registry::builtin());
    assert!(
        problems.iter().any(|p| p.fields[0] == "cluster.tags.team" && p.message.contains("would contain `[`")),
        "{problems:#?}"
    );
}

#[test]
fn node_group_taints_and_labels_beyond_eks_limits_are_errors_at_the_field() {
    let long_key = format!("{}/{}", "a".repeat(250), "k".repeat(60));
    // The controller tolerates every taint, so only the limits are at stake.
    let errors = refused(&base(&format!(
        "[karpenter.values]\ntolerations = [{{ operator = \"Exists\" }}]\n[[node_group.taints]]\nkey = \"{long_key}\"\neffect = \"NoSchedule\"\n[[node_group.taints]]\nkey = \"ok\"\nvalue = \"{}\"\neffect = \"NoSchedule\"\n",
        "v".repeat(64)
    )));
    assert!(
        errors.iter().any(|(p, m)| p == "node_group.taints[0].key" && m.contains("EKS allows 1 to 63")),
        "{errors:#?}"
    );
    assert!(
        errors.iter().any(|(p, m)| p == "node_group.taints[1].value" && m.contains("EKS allows 63")),
        "{errors:#?}"
    );

    let taints: String =
        (0..50).map(|i| format!("[[node_group.taints]]\nkey = \"t{i}\"\neffect = \"NoSchedule\"\n")).collect();
    let errors = refused(&base(&format!("[karpenter.values]\ntolerations = [{{ operator = \"Exists\" }}]\n{taints}")));
    assert!(errors.iter().any(|(p, m)| p == "node_group.taints" && m.contains("51 taints")), "{errors:#?}");

    let key = format!("example.com/{}", "l".repeat(63));
    let errors = refused(&base(&format!("[node_group.labels]\n\"{key}\" = \"x\"\n")));
    let at = crate::blueprint::field_child("node_group.labels", &key);
    assert!(errors.iter().any(|(p, m)| *p == at && m.contains("EKS allows 63")), "{errors:#?}");

    let errors = refused(&base("[karpenter.values]\ntolerations = [{ operator = \"Exists\" }]\n[node_group.labels]\n\"node.kubernetes.io/role\" = \"x\"\n[[node_group.taints]]\nkey = \"k8s.io/x\"\neffect = \"NoSchedule\"\n"));
    let label = crate::blueprint::field_child("node_group.labels", "node.kubernetes.io/role");
    assert!(errors.iter().any(|(p, m)| *p == label && m.contains("kubernetes.io")), "{errors:#?}");
    assert!(errors.iter().any(|(p, m)| p == "node_group.taints[0].key" && m.contains("k8s.io")), "{errors:#?}");
}

#[test]
fn every_kind_that_sends_a_name_or_tags_declares_what_aws_accepts_of_them() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints");
    let registry = Registry::builtin();
    for name in ["karpenter-mng.toml", "existing-vpc.toml", "gpu.toml"] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let loaded = crate::blueprint::check_str(name, &text, &[]).unwrap();
        let graph = crate::graph::compile(&loaded.blueprint).unwrap();
        let missing = contract::undeclared(&graph, &registry);
        assert!(missing.is_empty(), "{name}: kinds sending these attributes declare no constraint: {missing:?}");
    }
}

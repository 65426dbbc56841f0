use serde_json::json;

use super::*;
use crate::kubernetes::fixtures::karpenter_chart;

fn settings(namespace: &str, values: Value) -> ControllerValues {
    ControllerValues { namespace: namespace.into(), kube_version: "1.34".into(), api_versions: Vec::new(), values }
}

fn kbp_values() -> Value {
    json!({
        "settings": { "clusterName": "demo", "clusterEndpoint": "https://ABC.gr7.us-west-2.eks.amazonaws.com", "interruptionQueue": "demo" },
        "nodeSelector": { "karpenter.sh/controller": "true" },
        "tolerations": [
            { "key": "CriticalAddonsOnly", "operator": "Exists" },
            { "key": "karpenter.sh/controller", "operator": "Equal", "value": "true", "effect": "NoSchedule" },
        ],
    })
}

fn find<'a>(objects: &'a [Value], kind: &str) -> &'a Value {
    objects.iter().find(|o| o["kind"] == kind).unwrap_or_else(|| panic!("no {kind}"))
}

#[test]
fn the_chart_renders_the_controller_with_its_own_image_digest_and_kbps_scheduling() {
    let objects = controller(&karpenter_chart(), &settings("karpenter", kbp_values())).unwrap();
    assert_eq!(objects[0]["kind"], "Namespace", "the namespace first");
    let deployment = find(&objects, "Deployment");
    let pod = &deployment["spec"]["template"]["spec"];
    let image = pod["containers"][0]["image"].as_str().unwrap();
    assert!(image.starts_with("public.ecr.aws/karpenter/controller:1.14.1@sha256:"), "{image}");
    assert_eq!(pod["nodeSelector"], json!({ "karpenter.sh/controller": "true", "kubernetes.io/os": "linux" }));
    assert_eq!(pod["tolerations"][1]["key"], "karpenter.sh/controller");
    assert_eq!(pod["automountServiceAccountToken"], true);
    assert_eq!(find(&objects, "ServiceAccount")["automountServiceAccountToken"], false);
    // Every namespaced object is in the controller's namespace but the DNS role the chart puts in kube-system.
    for o in objects.iter().filter(|o| o["metadata"]["namespace"].is_string()) {
        let ns = o["metadata"]["namespace"].as_str().unwrap();
        assert!(ns == "karpenter" || o["metadata"]["name"] == "karpenter-dns", "{} in {ns}", o["kind"]);
    }
    assert_eq!(super::deployment(&objects), Some(("karpenter".into(), "karpenter".into())));
    assert_eq!(deployment["metadata"]["labels"]["app.kubernetes.io/managed-by"], "kbp");
}

#[test]
fn a_system_namespace_is_used_but_not_created() {
    let objects = controller(&karpenter_chart(), &settings("kube-system", kbp_values())).unwrap();
    assert!(objects.iter().all(|o| o["kind"] != "Namespace"));
}

#[test]
fn a_value_that_breaks_the_chart_says_which_template() {
    let mut values = kbp_values();
    values["settings"]["clusterName"] = json!(null);
    let err = controller(&karpenter_chart(), &settings("karpenter", values)).unwrap_err().to_string();
    assert!(err.contains("karpenter/templates/deployment.yaml:"), "{err}");
}

#[test]
fn the_yaml_stream_reads_back_as_the_same_objects() {
    let objects = controller(&karpenter_chart(), &settings("karpenter", kbp_values())).unwrap();
    assert_eq!(documents(&to_yaml_stream(&objects)).unwrap(), objects);
}

#[test]
fn image_references_split_into_repository_and_tag() {
    assert_eq!(split_image_reference("r.io/k/c:1.14.1@sha256:ab"), Some(("r.io/k/c", "1.14.1")));
    assert_eq!(split_image_reference("localhost:5000/c:1.0"), Some(("localhost:5000/c", "1.0")));
    assert_eq!(split_image_reference("localhost:5000/c"), None);
}

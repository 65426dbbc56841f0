use serde_json::json;

use super::*;
use crate::kubernetes::fixtures::karpenter_crds;

fn controller() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "karpenter",
            "namespace": "kube-system",
            "labels": {"app.kubernetes.io/name": "karpenter"},
            "creationTimestamp": null,
        },
        "spec": {
            "replicas": 2,
            "revisionHistoryLimit": 10,
            "strategy": {"rollingUpdate": {"maxUnavailable": 1, "maxSurge": "25%"}},
            "selector": {
                "matchLabels": {"app.kubernetes.io/name": "karpenter"},
                "matchExpressions": [{"key": "app.kubernetes.io/instance", "operator": "Exists"}],
            },
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": "karpenter", "app.kubernetes.io/instance": "karpenter"}},
                "spec": {
                    "serviceAccountName": "karpenter",
                    "priorityClassName": "system-cluster-critical",
                    "dnsPolicy": "ClusterFirst",
                    "securityContext": {"fsGroup": 65532, "runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}],
                    "topologySpreadConstraints": [{
                        "maxSkew": 1,
                        "topologyKey": "topology.kubernetes.io/zone",
                        "whenUnsatisfiable": "DoNotSchedule",
                        "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "karpenter"}},
                    }],
                    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "karpenter.sh/nodepool", "operator": "DoesNotExist"}]},
                    ]}}},
                    "containers": [{
                        "name": "controller",
                        "image": "public.ecr.aws/karpenter/controller:1.14.1",
                        "imagePullPolicy": "IfNotPresent",
                        "securityContext": {
                            "allowPrivilegeEscalation": false,
                            "readOnlyRootFilesystem": true,
                            "runAsUser": 65532,
                            "capabilities": {"drop": ["ALL"]},
                        },
                        "env": [
                            {"name": "CLUSTER_NAME", "value": "demo"},
                            {"name": "SYSTEM_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                            {"name": "MEMORY_LIMIT", "valueFrom": {"resourceFieldRef": {
                                "containerName": "controller", "resource": "limits.memory", "divisor": "0",
                            }}},
                        ],
                        "ports": [
                            {"name": "http-metrics", "containerPort": 8080, "protocol": "TCP"},
                            {"name": "http", "containerPort": 8081},
                        ],
                        "livenessProbe": {"initialDelaySeconds": 30, "timeoutSeconds": 30, "httpGet": {"path": "/healthz", "port": "http"}},
                        "readinessProbe": {"initialDelaySeconds": 5, "httpGet": {"path": "/readyz", "port": 8081}},
                        "resources": {"requests": {"cpu": 1, "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}},
                    }],
                },
            },
        },
        "status": {},
    })
}

fn edited(object: Value, edit: impl FnOnce(&mut Value)) -> Vec<Violation> {
    let mut object = object;
    edit(&mut object);
    validate_builtin_object(&object)
}

fn paths(found: &[Violation]) -> Vec<&str> {
    found.iter().map(|v| v.path.as_str()).collect()
}

fn assert_single(found: &[Violation], path: &str, needle: &str) {
    assert_eq!(found.len(), 1, "expected one violation at {path}, got {found:#?}");
    assert_eq!(found[0].path, path, "{found:#?}");
    assert!(found[0].message.contains(needle), "message {:?} should mention {needle:?}", found[0].message);
}

#[test]
fn a_full_deployment_passes() {
    assert_eq!(validate_builtin_object(&controller()), []);
}

#[test]
fn typos_in_nested_fields_are_reported_with_their_path() {
    let found = edited(controller(), |d| {
        let container = &mut d["spec"]["template"]["spec"]["containers"][0];
        container["imagePullPolicyy"] = json!("Always");
        container["livenessProbe"]["httpGet"]["portt"] = json!(8081);
        d["spec"]["replica"] = json!(3);
        d["spec"]["template"]["spec"]["tolerations"][0]["efect"] = json!("NoSchedule");
    });
    assert_eq!(
        paths(&found),
        [
            "spec.template.spec.tolerations[0].efect",
            "spec.template.spec.containers[0].livenessProbe.httpGet.portt",
            "spec.template.spec.containers[0].imagePullPolicyy",
            "spec.replica",
        ],
        "{found:#?}"
    );
    assert!(found[3].message.contains("did you mean \"replicas\""), "{}", found[3]);
    assert!(found[2].message.contains("would drop it"), "{}", found[2]);
}

#[test]
fn wrong_types_are_reported_with_their_path() {
    let found = edited(controller(), |d| d["spec"]["replicas"] = json!("two"));
    assert_single(&found, "spec.replicas", "invalid type: string \"two\"");
    let found = edited(controller(), |d| d["spec"]["template"]["spec"]["containers"][0]["args"] = json!(["--a", 1]));
    assert_single(&found, "spec.template.spec.containers[0].args[1]", "expected a string");
    let found = edited(controller(), |d| d["spec"]["template"]["spec"]["nodeSelector"] = json!(["linux"]));
    assert_single(&found, "spec.template.spec.nodeSelector", "invalid type: sequence");
    let found = edited(controller(), |d| d["spec"]["replicas"] = json!(3_000_000_000_u64));
    assert_single(&found, "spec.replicas", "3000000000");
}

#[test]
fn several_type_errors_are_reported_in_one_pass() {
    let found = edited(controller(), |d| {
        d["spec"]["replicas"] = json!("two");
        d["spec"]["template"]["spec"]["nodeSelector"] = json!("linux");
        d["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = json!("8080");
        d["spec"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = json!("Always");
    });
    assert_eq!(
        paths(&found),
        [
            "spec.replicas",
            "spec.template.spec.nodeSelector",
            "spec.template.spec.containers[0].ports[0].containerPort",
            "spec.template.spec.containers[0].imagePullPolicyy",
        ],
        "{found:#?}"
    );
}

#[test]
fn a_wrong_type_is_reported_once() {
    let found = edited(controller(), |d| d["metadata"]["name"] = json!(5));
    assert_single(&found, "metadata.name", "invalid type: integer `5`");
    let found = edited(controller(), |d| d["spec"]["selector"] = json!("app=karpenter"));
    assert_single(&found, "spec.selector", "invalid type: string");
}

#[test]
fn int_or_string_and_quantities_survive_as_written() {
    let found = edited(controller(), |d| {
        d["spec"]["strategy"]["rollingUpdate"] = json!({"maxUnavailable": "1", "maxSurge": 0});
        d["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"] = json!(0.5);
    });
    assert_eq!(found, []);
}

#[test]
fn nulls_and_empty_values_are_not_unknown_fields() {
    let found = edited(controller(), |d| {
        let pod = &mut d["spec"]["template"]["spec"];
        pod["volumes"] = json!([]);
        pod["hostAliases"] = Value::Null;
        pod["containers"][0]["volumeMounts"] = json!([]);
        pod["containers"][0]["resources"]["claims"] = Value::Null;
        d["metadata"]["annotations"] = json!({});
    });
    assert_eq!(found, []);
}

#[test]
fn bad_quantities() {
    let found = edited(controller(), |d| {
        d["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"] = json!("1 GiB");
    });
    assert_single(&found, "spec.template.spec.containers[0].resources.limits.memory", "not a quantity");
}

#[test]
fn deployment_selector_is_required_and_must_match_the_template() {
    let found = edited(controller(), |d| {
        d["spec"].as_object_mut().expect("spec").remove("selector");
    });
    assert_single(&found, "spec.selector", "required field \"selector\" is missing");
    let found = edited(controller(), |d| d["spec"]["selector"] = json!({}));
    assert_single(&found, "spec.selector", "empty selector");
    let found = edited(controller(), |d| {
        d["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/name"] = json!("other");
    });
    assert_single(&found, "spec.template.metadata.labels", "matchLabels requires app.kubernetes.io/name=karpenter");
    let found = edited(controller(), |d| {
        d["spec"]["template"]["metadata"]["labels"]
            .as_object_mut()
            .expect("labels")
            .remove("app.kubernetes.io/instance");
    });
    assert_single(&found, "spec.template.metadata.labels", "matchExpressions[0]");
}

#[test]
fn containers_need_name_and_image() {
    let found = edited(controller(), |d| {
        let container = d["spec"]["template"]["spec"]["containers"][0].as_object_mut().expect("container");
        container.remove("name");
        container.remove("image");
    });
    assert_eq!(
        paths(&found),
        ["spec.template.spec.containers[0].name", "spec.template.spec.containers[0].image"],
        "{found:#?}"
    );
    let found = edited(controller(), |d| d["spec"]["template"]["spec"]["containers"] = json!([]));
    assert_single(&found, "spec.template.spec.containers", "at least one container");
}

fn service() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "karpenter", "namespace": "kube-system"},
        "spec": {
            "type": "ClusterIP",
            "selector": {"app.kubernetes.io/name": "karpenter"},
            "ports": [
                {"name": "http-metrics", "port": 8080, "targetPort": "http-metrics", "protocol": "TCP"},
                {"name": "webhook", "port": 8443, "targetPort": 8443},
            ],
        },
    })
}

#[test]
fn service_ports_need_a_port() {
    assert_eq!(validate_builtin_object(&service()), []);
    let found = edited(service(), |s| {
        s["spec"]["ports"][1].as_object_mut().expect("port").remove("port");
    });
    assert_single(&found, "spec.ports[1].port", "required field \"port\" is missing");
    let found = edited(service(), |s| s["metadata"]["name"] = json!("1-karpenter"));
    assert_single(&found, "metadata.name", "DNS-1035");
}

fn pdb() -> Value {
    json!({
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "karpenter", "namespace": "kube-system"},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app.kubernetes.io/name": "karpenter"}}},
    })
}

#[test]
fn pdb_needs_exactly_one_budget() {
    assert_eq!(validate_builtin_object(&pdb()), []);
    assert_eq!(edited(pdb(), |p| p["spec"]["maxUnavailable"] = json!("50%")), []);
    let found = edited(pdb(), |p| p["spec"]["minAvailable"] = json!(1));
    assert_single(&found, "spec", "both are set");
    let found = edited(pdb(), |p| {
        p["spec"].as_object_mut().expect("spec").remove("maxUnavailable");
    });
    assert_single(&found, "spec", "neither is set");
    let found = edited(pdb(), |p| p["spec"]["maxUnavailable"] = json!("50 percent"));
    assert_single(&found, "spec.maxUnavailable", "not a percentage");
}

fn cluster_role_binding() -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "karpenter-core"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "karpenter-core"},
        "subjects": [{"kind": "ServiceAccount", "name": "karpenter", "namespace": "kube-system"}],
    })
}

#[test]
fn bindings_need_a_role_ref() {
    assert_eq!(validate_builtin_object(&cluster_role_binding()), []);
    let found = edited(cluster_role_binding(), |b| {
        b.as_object_mut().expect("binding").remove("roleRef");
    });
    assert_single(&found, "roleRef", "required field \"roleRef\" is missing");
    let found = edited(cluster_role_binding(), |b| b["roleRef"]["kind"] = json!("Role"));
    assert_single(&found, "roleRef.kind", "\"Role\" is not one of ClusterRole");
    let found = edited(cluster_role_binding(), |b| {
        b["kind"] = json!("RoleBinding");
        b["metadata"]["namespace"] = json!("kube-system");
        b.as_object_mut().expect("binding").remove("roleRef");
    });
    assert_single(&found, "roleRef", "missing");
}

#[test]
fn roles_and_other_kinds() {
    let role = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "karpenter-admin", "labels": {"rbac.authorization.k8s.io/aggregate-to-admin": "true"}},
        "rules": [{"apiGroups": ["karpenter.sh"], "resources": ["nodepools"], "verbs": ["get", "list"]}],
    });
    assert_eq!(validate_builtin_object(&role), []);
    let mut no_verbs = role.clone();
    no_verbs["rules"][0]["verbs"] = json!([]);
    assert_single(&validate_builtin_object(&no_verbs), "rules[0].verbs", "at least one verb");
    let namespace =
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "karpenter", "namespace": "x"}});
    assert_single(&validate_builtin_object(&namespace), "metadata.namespace", "cluster-scoped");
    let lease = json!({
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "karpenter-leader-election", "namespace": "kube-system"},
        "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15, "renewTime": "2025-01-01T00:00:00.000000Z"},
    });
    assert_eq!(validate_builtin_object(&lease), []);
    let secret = json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s"},
        "type": "Opaque",
        "data": {"token": "not base64!"},
        "stringData": {"a": "b"},
    });
    assert_single(&validate_builtin_object(&secret), "data.token", "the value does not fit the API type");
    let config = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"bad key": "x"}});
    assert_single(&validate_builtin_object(&config), "data[bad key]", "invalid key");
    let account = json!({
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "karpenter", "annotations": {"eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/k"}},
    });
    assert_eq!(validate_builtin_object(&account), []);
}

#[test]
fn the_karpenter_crds_are_valid_custom_resource_definitions() {
    for crd in karpenter_crds() {
        assert_eq!(validate_builtin_object(&crd), [], "{}", crd["metadata"]["name"]);
    }
    let mut renamed = karpenter_crds().remove(0);
    renamed["metadata"]["name"] = json!("ec2nodeclasses");
    assert_single(&validate_builtin_object(&renamed), "metadata.name", "ec2nodeclasses.karpenter.k8s.aws");
}

#[test]
fn manifests_are_dispatched_by_kind() {
    let crds = karpenter_crds();
    assert_eq!(validate_manifest(&crds, &controller()), []);
    let node_pool = json!({
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "default"},
        "spec": {"template": {"spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}],
        }}},
    });
    assert_eq!(validate_manifest(&crds, &node_pool), []);
    let mut typo = node_pool.clone();
    typo["spec"]["wieght"] = json!(1);
    assert_single(&validate_manifest(&crds, &typo), "spec.wieght", "did you mean \"weight\"");
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}});
    let found = validate_manifest(&crds, &pod);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].message.contains("karpenter.sh/v1 NodePool") && found[0].message.contains("apps/v1 Deployment"));
}

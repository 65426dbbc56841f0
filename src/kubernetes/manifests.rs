//! The Karpenter controller's manifests, rendered from the project's templates (`templates/karpenter/`, compiled
//! into the binary) with the values of one stack. Rendering is pure: the same values give the same objects, in
//! the order they must be applied (namespace, identity, RBAC, service, budget, then the Deployment).

use std::collections::BTreeMap;

use minijinja::Environment;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::graph::Attrs;

/// The templates, in apply order.
const TEMPLATES: &[(&str, &str)] = &[
    ("namespace.yaml", include_str!("../../templates/karpenter/namespace.yaml")),
    ("serviceaccount.yaml", include_str!("../../templates/karpenter/serviceaccount.yaml")),
    ("rbac-cluster.yaml", include_str!("../../templates/karpenter/rbac-cluster.yaml")),
    ("rbac-namespaced.yaml", include_str!("../../templates/karpenter/rbac-namespaced.yaml")),
    ("service.yaml", include_str!("../../templates/karpenter/service.yaml")),
    ("poddisruptionbudget.yaml", include_str!("../../templates/karpenter/poddisruptionbudget.yaml")),
    ("deployment.yaml", include_str!("../../templates/karpenter/deployment.yaml")),
];

/// Name of the controller's Deployment, service account, service and roles.
pub const CONTROLLER_NAME: &str = "karpenter";
/// The controller image of the default Karpenter version, pinned by the digest its chart pins
/// (`controller.image.digest` in the chart's values), so that a re-pushed tag cannot change what runs.
const PINNED_IMAGE: PinnedImage = PinnedImage {
    version: "1.14.1",
    repository: "public.ecr.aws/karpenter/controller",
    digest: "sha256:723130949e4cab989461ff07d1be4cd781d63515432494641b33c235f300ae23",
};
const METRICS_PORT: u16 = 8080;
const HEALTH_PORT: u16 = 8081;
/// Namespaces Kubernetes itself owns: kbp puts the controller in them but never creates or deletes them.
const SYSTEM_NAMESPACES: &[&str] = &["kube-system", "default", "kube-public", "kube-node-lease"];

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("the controller settings are incomplete: `{0}` is missing")]
    Missing(&'static str),
    #[error("template {template} does not render: {message}")]
    Template { template: &'static str, message: String },
    #[error("template {template} renders YAML that does not parse: {message}")]
    Yaml { template: &'static str, message: String },
}

/// What the controller templates are rendered with: the `karpenter_controller` resource's attributes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ControllerValues {
    pub namespace: String,
    pub version: String,
    pub image: String,
    pub replicas: u64,
    pub cluster_name: String,
    pub cluster_endpoint: String,
    pub interruption_queue: Option<String>,
    /// The IRSA role; `None` with EKS Pod Identity.
    pub role_arn: Option<String>,
    pub log_level: String,
    pub cpu: String,
    pub memory: String,
}

impl ControllerValues {
    pub fn from_attrs(attrs: &Attrs) -> Result<Self, RenderError> {
        let text = |key: &'static str| attrs.get(key).and_then(Value::as_str).map(str::to_string);
        let need = |key: &'static str| text(key).ok_or(RenderError::Missing(key));
        Ok(ControllerValues {
            namespace: need("namespace")?,
            version: need("version")?,
            image: need("image")?,
            replicas: attrs.get("replicas").and_then(Value::as_u64).ok_or(RenderError::Missing("replicas"))?,
            cluster_name: need("cluster_name")?,
            cluster_endpoint: need("cluster_endpoint")?,
            interruption_queue: text("interruption_queue"),
            role_arn: text("service_account_role_arn"),
            log_level: need("log_level")?,
            cpu: need("cpu")?,
            memory: need("memory")?,
        })
    }

    /// The labels every controller object carries; the first two select its pods.
    fn labels(&self) -> BTreeMap<&'static str, String> {
        let mut labels = selector();
        labels.insert("app.kubernetes.io/version", self.version.clone());
        labels.insert("app.kubernetes.io/managed-by", "kbp".to_string());
        labels
    }
}

struct PinnedImage {
    version: &'static str,
    repository: &'static str,
    digest: &'static str,
}

/// The controller image as the Deployment names it: `repository:tag`, plus `@digest` for the default version from
/// the official repository. Another version, or a mirror (which may have re-pushed the image under another
/// digest), runs by tag: kbp knows no digest for it.
pub fn image_reference(repository: &str, version: &str) -> String {
    let tag = version.trim_start_matches('v');
    if tag == PINNED_IMAGE.version && repository == PINNED_IMAGE.repository {
        format!("{repository}:{tag}@{}", PINNED_IMAGE.digest)
    } else {
        format!("{repository}:{tag}")
    }
}

/// `(repository, tag)` of an image reference `image_reference` made, the digest dropped.
pub fn split_image_reference(image: &str) -> Option<(&str, &str)> {
    let named = image.split_once('@').map_or(image, |(named, _digest)| named);
    named.rsplit_once(':').filter(|(repository, _)| !repository.is_empty())
}

fn selector() -> BTreeMap<&'static str, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name", CONTROLLER_NAME.to_string()),
        ("app.kubernetes.io/instance", CONTROLLER_NAME.to_string()),
    ])
}

/// Every object of the controller, in apply order.
pub fn controller(values: &ControllerValues) -> Result<Vec<Value>, RenderError> {
    let mut env = Environment::new();
    env.set_keep_trailing_newline(true);
    env.set_trim_blocks(true);
    let labels = values.labels();
    let mut admin_labels = labels.clone();
    admin_labels.insert("rbac.authorization.k8s.io/aggregate-to-admin", "true".to_string());
    let ctx = minijinja::context! {
        name => CONTROLLER_NAME,
        own_namespace => !SYSTEM_NAMESPACES.contains(&values.namespace.as_str()),
        image => image_reference(&values.image, &values.version),
        labels => labels,
        admin_labels => admin_labels,
        selector => selector(),
        metrics_port => METRICS_PORT,
        health_port => HEALTH_PORT,
        ..minijinja::Value::from_serialize(values)
    };
    let mut objects = Vec::new();
    for (template, source) in TEMPLATES {
        let text =
            env.render_str(source, &ctx).map_err(|e| RenderError::Template { template, message: format!("{e:#}") })?;
        objects.extend(documents(&text).map_err(|message| RenderError::Yaml { template, message })?);
    }
    Ok(objects)
}

/// The non-empty YAML documents of `text` as JSON values.
pub fn documents(text: &str) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    for doc in serde_norway::Deserializer::from_str(text) {
        let value = Value::deserialize(doc).map_err(|e| e.to_string())?;
        if !value.is_null() {
            out.push(value);
        }
    }
    Ok(out)
}

/// Manifests as a stream of YAML documents, as `helm template` prints them.
pub fn to_yaml_stream(objects: &[Value]) -> String {
    let mut out = String::new();
    for o in objects {
        out.push_str("---\n");
        match serde_norway::to_string(o) {
            Ok(text) => out.push_str(&text),
            Err(e) => out.push_str(&format!("# kbp cannot print this object as YAML: {e}\n")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    fn values() -> ControllerValues {
        ControllerValues {
            namespace: "karpenter".into(),
            version: "1.14.1".into(),
            image: "public.ecr.aws/karpenter/controller".into(),
            replicas: 2,
            cluster_name: "demo".into(),
            cluster_endpoint: "https://ABC.gr7.us-west-2.eks.amazonaws.com".into(),
            interruption_queue: Some("demo".into()),
            role_arn: None,
            log_level: "info".into(),
            cpu: "1".into(),
            memory: "1Gi".into(),
        }
    }

    fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
        objects
            .iter()
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name}"))
    }

    fn env<'a>(deployment: &'a Value, name: &str) -> Option<&'a Value> {
        deployment["spec"]["template"]["spec"]["containers"][0]["env"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == name)
            .map(|e| &e["value"])
    }

    #[test]
    fn renders_every_object_in_apply_order() {
        let objects = controller(&values()).unwrap();
        let kinds: Vec<&str> = objects.iter().map(|o| o["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds.first(), Some(&"Namespace"));
        assert_eq!(kinds.last(), Some(&"Deployment"));
        for kind in ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Service"] {
            assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
        }
        let pdb = find(&objects, "PodDisruptionBudget", "karpenter");
        assert_eq!(pdb["spec"]["maxUnavailable"], 1);
    }

    #[test]
    fn the_deployment_carries_the_settings_and_runs_only_on_the_controller_nodes() {
        let objects = controller(&values()).unwrap();
        let d = find(&objects, "Deployment", "karpenter");
        assert_eq!(d["spec"]["replicas"], 2);
        let pod = &d["spec"]["template"]["spec"];
        assert_eq!(pod["nodeSelector"]["karpenter.sh/controller"], "true");
        let tolerations = pod["tolerations"].as_array().unwrap();
        assert!(tolerations.iter().any(|t| t["key"] == "karpenter.sh/controller" && t["effect"] == "NoSchedule"));
        assert!(tolerations.iter().any(|t| t["key"] == "CriticalAddonsOnly"));
        assert_eq!(pod["topologySpreadConstraints"][0]["topologyKey"], "topology.kubernetes.io/zone");
        let c = &pod["containers"][0];
        assert_eq!(
            c["image"],
            "public.ecr.aws/karpenter/controller:1.14.1@sha256:723130949e4cab989461ff07d1be4cd781d63515432494641b33c235f300ae23"
        );
        assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true);
        assert_eq!(c["resources"]["limits"]["cpu"], "1");
        assert_eq!(env(d, "CLUSTER_NAME"), Some(&Value::from("demo")));
        assert_eq!(env(d, "INTERRUPTION_QUEUE"), Some(&Value::from("demo")));
        assert_eq!(env(d, "METRICS_PORT"), Some(&Value::from("8080")));
    }

    /// Without CPU_REQUESTS the controller sizes its concurrency for its default of one CPU, whatever
    /// `karpenter.cpu` says; both come from the container's own resources, as the chart wires them.
    #[test]
    fn the_controller_reads_its_cpu_request_and_memory_limit_from_its_container() {
        let objects = controller(&values()).unwrap();
        let d = find(&objects, "Deployment", "karpenter");
        let from_resources = |name: &str| {
            d["spec"]["template"]["spec"]["containers"][0]["env"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["name"] == name)
                .map(|e| e["valueFrom"]["resourceFieldRef"].clone())
        };
        assert_eq!(
            from_resources("CPU_REQUESTS"),
            Some(serde_json::json!({"containerName": "controller", "divisor": "1m", "resource": "requests.cpu"}))
        );
        assert_eq!(
            from_resources("MEMORY_LIMIT"),
            Some(serde_json::json!({"containerName": "controller", "divisor": "0", "resource": "limits.memory"}))
        );
    }

    /// Every permission of a role, one `group/resource verb[ name]` each, so that two ways of writing the same
    /// rules compare equal.
    fn grants(role: &Value) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for rule in role["rules"].as_array().unwrap() {
            let list = |key: &str| -> Vec<String> {
                rule[key].as_array().map_or(vec![], |a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
            };
            let names = list("resourceNames");
            for group in list("apiGroups") {
                for resource in list("resources") {
                    for verb in list("verbs") {
                        let at = format!("{group}/{resource} {verb}");
                        if names.is_empty() {
                            out.insert(at);
                        } else {
                            out.extend(names.iter().map(|n| format!("{at} {n}")));
                        }
                    }
                }
            }
        }
        out
    }

    /// `verbs` on each of `resources` of `group`.
    fn each(group: &str, resources: &[&str], verbs: &[&str]) -> Vec<String> {
        resources.iter().flat_map(|r| verbs.iter().map(move |v| format!("{group}/{r} {v}"))).collect()
    }

    /// The permissions of the chart's roles (charts/karpenter/templates of aws/karpenter-provider-aws v1.14.1,
    /// role.yaml, clusterrole-core.yaml, clusterrole.yaml, aggregate-clusterrole.yaml); kbp grants the same.
    #[test]
    fn the_roles_grant_what_the_chart_grants_and_no_more() {
        let objects = controller(&values()).unwrap();
        let read = ["get", "list", "watch"];
        let roles: Vec<(String, String)> = objects
            .iter()
            .filter(|o| o["kind"] == "Role")
            .map(|o| {
                (o["metadata"]["namespace"].as_str().unwrap().into(), o["metadata"]["name"].as_str().unwrap().into())
            })
            .collect();
        assert_eq!(
            roles,
            [("karpenter".to_string(), "karpenter".to_string()), ("kube-system".into(), "karpenter-dns".into())],
            "the chart's two Roles, nothing in kube-node-lease"
        );
        let expected = |v: Vec<String>| v.into_iter().collect::<BTreeSet<String>>();
        assert_eq!(
            grants(find(&objects, "Role", "karpenter")),
            expected(vec![
                "coordination.k8s.io/leases get".into(),
                "coordination.k8s.io/leases watch".into(),
                "coordination.k8s.io/leases create".into(),
                "coordination.k8s.io/leases patch karpenter-leader-election".into(),
                "coordination.k8s.io/leases update karpenter-leader-election".into(),
            ])
        );
        assert_eq!(grants(find(&objects, "Role", "karpenter-dns")), expected(vec!["/services get kube-dns".into()]));

        let mut core = each(
            "karpenter.sh",
            &[
                "nodepools",
                "nodepools/status",
                "nodeclaims",
                "nodeclaims/status",
                "nodeoverlays",
                "nodeoverlays/status",
            ],
            &read,
        );
        core.extend(each("autoscaling.x-k8s.io", &["capacitybuffers", "capacitybuffers/status"], &read));
        core.extend(each(
            "",
            &["podtemplates", "pods", "nodes", "persistentvolumes", "persistentvolumeclaims", "replicationcontrollers"],
            &read,
        ));
        core.extend(each("", &["namespaces", "events"], &read));
        core.extend(each("storage.k8s.io", &["storageclasses", "csinodes", "volumeattachments"], &read));
        core.extend(each("apps", &["daemonsets", "deployments", "replicasets", "statefulsets"], &read));
        core.extend(each("policy", &["poddisruptionbudgets"], &read));
        core.extend(each(
            "karpenter.sh",
            &["nodeclaims", "nodeclaims/status"],
            &["create", "delete", "update", "patch"],
        ));
        core.extend(each(
            "karpenter.sh",
            &["nodepools", "nodepools/status", "nodeoverlays/status"],
            &["update", "patch"],
        ));
        core.extend(each("autoscaling.x-k8s.io", &["capacitybuffers/status"], &["update", "patch"]));
        core.extend(each("", &["events"], &["create", "patch"]));
        core.extend(each("", &["nodes"], &["patch", "delete", "update"]));
        core.extend(each("", &["pods/eviction"], &["create"]));
        core.extend(each("", &["pods"], &["delete"]));
        assert_eq!(grants(find(&objects, "ClusterRole", "karpenter-core")), expected(core));

        let mut aws = each("karpenter.k8s.aws", &["ec2nodeclasses"], &read);
        aws.extend(each("karpenter.k8s.aws", &["ec2nodeclasses", "ec2nodeclasses/status"], &["patch", "update"]));
        assert_eq!(grants(find(&objects, "ClusterRole", "karpenter")), expected(aws));

        let write = ["get", "list", "watch", "create", "delete", "patch"];
        let mut admin =
            each("karpenter.sh", &["nodepools", "nodepools/status", "nodeclaims", "nodeclaims/status"], &write);
        admin.extend(each("karpenter.k8s.aws", &["ec2nodeclasses"], &write));
        assert_eq!(grants(find(&objects, "ClusterRole", "karpenter-admin")), expected(admin));
        assert_eq!(objects.iter().filter(|o| o["kind"] == "ClusterRole").count(), 3);
    }

    #[test]
    fn only_the_default_version_from_the_official_repository_is_pinned_by_digest() {
        let official = "public.ecr.aws/karpenter/controller";
        let pinned = image_reference(official, "v1.14.1");
        assert_eq!(pinned, format!("{official}:1.14.1@{}", PINNED_IMAGE.digest));
        assert_eq!(image_reference(official, "1.13.0"), format!("{official}:1.13.0"));
        let mirror = "123456789012.dkr.ecr.us-west-2.amazonaws.com/karpenter/controller";
        assert_eq!(image_reference(mirror, "1.14.1"), format!("{mirror}:1.14.1"));
        assert_eq!(split_image_reference(&pinned), Some((official, "1.14.1")));
        assert_eq!(
            split_image_reference("localhost:5000/k/controller:1.13.0"),
            Some(("localhost:5000/k/controller", "1.13.0"))
        );
    }

    /// Bumping the default version without the new chart's digest would run the new tag unpinned.
    #[test]
    fn the_pinned_image_is_of_the_blueprints_default_version() {
        let bp =
            crate::blueprint::load_str("t.toml", "[cluster]\nname = \"t\"\nregion = \"us-west-2\"\n", &[]).unwrap();
        assert_eq!(bp.karpenter.version, PINNED_IMAGE.version);
        assert_eq!(bp.karpenter.image, PINNED_IMAGE.repository);
    }

    #[test]
    fn irsa_annotates_the_service_account_and_no_queue_drops_the_setting() {
        let mut v = values();
        v.role_arn = Some("arn:aws:iam::123456789012:role/KarpenterController-demo".into());
        v.interruption_queue = None;
        let objects = controller(&v).unwrap();
        let sa = find(&objects, "ServiceAccount", "karpenter");
        assert_eq!(sa["metadata"]["annotations"]["eks.amazonaws.com/role-arn"], v.role_arn.clone().unwrap());
        assert_eq!(env(find(&objects, "Deployment", "karpenter"), "INTERRUPTION_QUEUE"), None);
        let pod_identity = controller(&values()).unwrap();
        assert!(find(&pod_identity, "ServiceAccount", "karpenter")["metadata"].get("annotations").is_none());
    }

    #[test]
    fn a_system_namespace_is_used_but_not_created() {
        let mut v = values();
        v.namespace = "kube-system".into();
        let objects = controller(&v).unwrap();
        assert!(objects.iter().all(|o| o["kind"] != "Namespace"));
        assert_eq!(find(&objects, "Deployment", "karpenter")["metadata"]["namespace"], "kube-system");
    }

    #[test]
    fn values_with_quotes_stay_strings() {
        let mut v = values();
        v.cluster_endpoint = "https://a\"b: c".into();
        let objects = controller(&v).unwrap();
        assert_eq!(
            env(find(&objects, "Deployment", "karpenter"), "CLUSTER_ENDPOINT"),
            Some(&Value::from("https://a\"b: c"))
        );
    }

    #[test]
    fn the_yaml_stream_reads_back_as_the_same_objects() {
        let objects = controller(&values()).unwrap();
        assert_eq!(documents(&to_yaml_stream(&objects)).unwrap(), objects);
    }
}

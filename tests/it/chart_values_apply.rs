//! The chart's values reach the cluster, and a new chart release rolls out: `kbp apply` of karpenter-mng with a
//! Helm values file and inline `[karpenter.values]` setting the values users ask for most, read back from the
//! real kube-apiserver; then the same stack moved to a new chart release (a copy of the published chart with a
//! new version, a new env var and a new CRD column, and the ServiceMonitor turned on), planned as updates of the
//! CRDs and the controller, applied CRDs first, and read back again.

use crate::karpenter_deploy::{dynamic as api, get};
use crate::support::*;
use kube::api::{DynamicObject, PostParams};
use serde_json::{json, Value};

const STACK: &str = "ex-karpenter-mng";

/// The values users ask for most, in a Helm values file as they would write it. The controller's tolerations
/// replace kbp's (lists replace, as in Helm), so they name the controller taint too.
const VALUES_FILE: &str = r#"
settings:
  featureGates:
    spotToSpotConsolidation: true
    nodeRepair: true
  isolatedVPC: true
  vmMemoryOverheadPercent: 0.1
  reservedENIs: "1"
  batchMaxDuration: 20s
  batchIdleDuration: 2s
tolerations:
  - key: CriticalAddonsOnly
    operator: Exists
  - key: karpenter.sh/controller
    operator: Equal
    value: "true"
    effect: NoSchedule
  - key: dedicated
    operator: Equal
    value: platform
    effect: NoSchedule
nodeSelector:
  karpenter.sh/controller: "true"
  team: platform
affinity:
  nodeAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 10
        preference:
          matchExpressions:
            - key: team
              operator: In
              values: [platform]
topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: kubernetes.io/hostname
    whenUnsatisfiable: ScheduleAnyway
dnsPolicy: Default
controller:
  env:
    - name: HTTPS_PROXY
      value: http://proxy.internal:3128
    - name: NO_PROXY
      value: 169.254.169.254,.internal
  extraVolumeMounts:
    - name: scratch
      mountPath: /scratch
extraVolumes:
  - name: scratch
    emptyDir: {}
podAnnotations:
  example.com/owner: platform
podLabels:
  team: platform
priorityClassName: system-node-critical
hostNetwork: true
imagePullSecrets:
  - name: mirror-credentials
additionalClusterRoleRules:
  - apiGroups: [""]
    resources: [configmaps]
    verbs: [get, list]
"#;

/// The blueprint's `[karpenter]` additions: the values file, inline values over it (the later layer wins), and
/// the node group's label and taint the values above select and tolerate.
fn blueprint(ws: &Workspace, chart: &str, version: &str, monitor: bool) -> String {
    let text = ws.read_blueprint();
    let text = text
        .replace("version = \"1.14.1\"\n", &format!("version = \"{version}\"\n"))
        .replace("desired_size = 2\n", "desired_size = 2\nlabels = { team = \"platform\" }\ntaints = [{ key = \"dedicated\", value = \"platform\", effect = \"NoSchedule\" }]\n");
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with("chart = ") && out.contains("[karpenter]") && !out.contains("values_files") {
            out.push_str(&format!("chart = {chart:?}\nvalues_files = [\"karpenter-values.yaml\"]\n"));
            if monitor {
                out.push_str("api_versions = [\"monitoring.coreos.com/v1\"]\n");
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    let monitor =
        if monitor { "serviceMonitor = { enabled = true, additionalLabels = { release = \"prom\" } }\n" } else { "" };
    format!("{out}\n[karpenter.values]\nsettings = {{ batchMaxDuration = \"15s\" }}\n{monitor}")
}

/// A minimal ServiceMonitor CRD, as the Prometheus operator would have installed it.
fn service_monitor_crd() -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "servicemonitors.monitoring.coreos.com"},
        "spec": {
            "group": "monitoring.coreos.com", "scope": "Namespaced",
            "names": {"kind": "ServiceMonitor", "listKind": "ServiceMonitorList", "plural": "servicemonitors", "singular": "servicemonitor"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                          "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}],
        },
    }))
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_most_asked_values_reach_the_cluster_and_a_chart_release_rolls_out_crds_first() {
    let em = Emulator::start_with("instant", 1.0);
    let ws = Workspace::with_blueprint("karpenter-mng");
    std::fs::write(ws.path().join("karpenter-values.yaml"), VALUES_FILE).unwrap();
    let reference = reference_chart_dir().display().to_string();
    ws.write_blueprint(&blueprint(&ws, &reference, "1.14.1", false));
    kbp_ok(&em, &["validate", ws.blueprint_arg()], ws.path());
    kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());

    let client = cluster_client(&em, STACK).await;
    let d = get(&client, "apps/v1", "Deployment", "deployments", Some("karpenter"), "karpenter")
        .await
        .expect("the object exists");
    let pod = &d["spec"]["template"]["spec"];
    assert_eq!(d["status"]["availableReplicas"], 2, "{}", d["status"]);
    let env: Vec<Value> = pod["containers"][0]["env"].as_array().unwrap().clone();
    let var = |name: &str| env.iter().find(|e| e["name"] == name).map(|e| e["value"].clone()).unwrap_or(Value::Null);
    let gates = var("FEATURE_GATES");
    assert!(gates.as_str().unwrap().contains("SpotToSpotConsolidation=true"), "{gates}");
    assert!(gates.as_str().unwrap().contains("NodeRepair=true"), "{gates}");
    assert_eq!(var("ISOLATED_VPC"), "true");
    assert_eq!(var("VM_MEMORY_OVERHEAD_PERCENT"), "0.1");
    assert_eq!(var("RESERVED_ENIS"), "1");
    assert_eq!(var("BATCH_MAX_DURATION"), "15s", "the inline value wins over the values file");
    assert_eq!(var("BATCH_IDLE_DURATION"), "2s");
    assert_eq!(var("HTTPS_PROXY"), "http://proxy.internal:3128");
    assert_eq!(var("NO_PROXY"), "169.254.169.254,.internal");
    assert_eq!(var("CLUSTER_NAME"), STACK, "what kbp sets stays under the user's values");
    let tolerations = pod["tolerations"].to_string();
    assert!(tolerations.contains("dedicated") && tolerations.contains("karpenter.sh/controller"), "{tolerations}");
    // Maps merge: the chart's own selector stays beside kbp's and the user's.
    let selector = json!({"karpenter.sh/controller": "true", "kubernetes.io/os": "linux", "team": "platform"});
    assert_eq!(pod["nodeSelector"], selector);
    assert_eq!(pod["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]["weight"], 10);
    assert_eq!(pod["topologySpreadConstraints"][0]["topologyKey"], "kubernetes.io/hostname");
    assert_eq!(pod["dnsPolicy"], "Default");
    assert_eq!(pod["priorityClassName"], "system-node-critical");
    assert_eq!(pod["hostNetwork"], true);
    assert_eq!(pod["imagePullSecrets"], json!([{"name": "mirror-credentials"}]));
    assert_eq!(pod["volumes"][0]["name"], "scratch");
    assert_eq!(pod["containers"][0]["volumeMounts"][0]["mountPath"], "/scratch");
    assert_eq!(d["spec"]["template"]["metadata"]["annotations"]["example.com/owner"], "platform");
    assert_eq!(d["spec"]["template"]["metadata"]["labels"]["team"], "platform");
    // The pods run, on the node group's nodes.
    let pods = api(&client, "v1", "Pod", "pods", Some("karpenter")).list(&Default::default()).await.unwrap();
    assert_eq!(pods.items.len(), 2);
    for p in &pods.items {
        let p = serde_json::to_value(p).unwrap();
        assert_eq!(p["status"]["phase"], "Running", "{}", p["status"]);
        assert_eq!(p["metadata"]["labels"]["team"], "platform");
    }
    let role = get(&client, "rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", None, "karpenter-core")
        .await
        .expect("the object exists");
    let rules = role["rules"].as_array().unwrap();
    assert!(
        rules.iter().any(|r| r["resources"] == json!(["configmaps"]) && r["verbs"] == json!(["get", "list"])),
        "the additional rule: {rules:?}"
    );
    let again = kbp(&em, &["plan", ws.blueprint_arg(), "--detailed-exitcode"], ws.path());
    assert_exit_code(&again, 0, "plan after apply with the values");

    // The next release, with the ServiceMonitor on (the Prometheus operator's CRD now in the cluster).
    let crds = api(&client, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions", None);
    crds.create(&PostParams::default(), &service_monitor_crd()).await.unwrap();
    let next = crate::chart_fidelity::next_release(ws.path());
    ws.write_blueprint(&blueprint(
        &Workspace::with_blueprint("karpenter-mng"),
        &next.display().to_string(),
        "1.15.0",
        true,
    ));
    let plan = events::plan(&kbp_ok(&em, &["plan", ws.blueprint_arg(), "--json"], ws.path()));
    let changes: Vec<(String, String)> = plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["address"].as_str().unwrap().to_string(), c["action"].as_str().unwrap().to_string()))
        .collect();
    for address in ["karpenter_crds.main", "karpenter_controller.main"] {
        assert!(changes.contains(&(address.to_string(), "update".to_string())), "{address} is updated: {changes:?}");
    }
    assert!(changes.iter().all(|(a, _)| a.starts_with("karpenter_")), "only Karpenter's resources change: {changes:?}");
    // The controller's change, as the objects of the chart it changes in the cluster.
    let controller = plan["changes"].as_array().unwrap().iter().find(|c| c["address"] == "karpenter_controller.main");
    let objects = controller.unwrap()["objects"].as_array().expect("the rendered objects' changes").clone();
    let object =
        |name: &str| objects.iter().find(|o| o["object"] == name).unwrap_or_else(|| panic!("{name}: {objects:#?}"));
    assert_eq!(object("ServiceMonitor karpenter/karpenter")["action"], "create");
    let deployment = object("Deployment karpenter/karpenter");
    assert_eq!(deployment["action"], "update");
    let fields: Vec<&str> =
        deployment["fields"].as_array().unwrap().iter().filter_map(|f| f["path"].as_str()).collect();
    assert!(fields.contains(&"spec.template.spec.containers[controller].env[SHUTDOWN_GRACE]"), "{fields:?}");
    assert!(fields.contains(&"metadata.labels.app.kubernetes.io/version"), "{fields:?}");
    assert!(!fields.iter().any(|f| f.contains("env[CLUSTER_NAME]")), "what stays is not listed: {fields:?}");
    let text = stdout(&kbp_ok(&em, &["plan", ws.blueprint_arg()], ws.path()));
    assert!(text.contains("# in the cluster:") && text.contains("+ ServiceMonitor karpenter/karpenter"), "{text}");
    let out = kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());
    let applied = stderr(&out);
    let (updated, updating) = (stamps(&applied, "updated"), stamps(&applied, "updating"));
    assert!(updated["karpenter_crds.main"] <= updating["karpenter_controller.main"], "CRDs first\n{applied}");

    let crd = get(
        &client,
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        None,
        "nodepools.karpenter.sh",
    )
    .await
    .expect("the NodePool CRD exists");
    let columns = crd["spec"]["versions"][0]["additionalPrinterColumns"].to_string();
    assert!(columns.contains("Priority"), "the new release's CRD: {columns}");
    assert_eq!(crd["metadata"]["annotations"]["kbp.dev/karpenter-version"], "1.15.0");
    let d = get(&client, "apps/v1", "Deployment", "deployments", Some("karpenter"), "karpenter")
        .await
        .expect("the object exists");
    assert_eq!(d["metadata"]["labels"]["app.kubernetes.io/version"], "1.15.0");
    let env = d["spec"]["template"]["spec"]["containers"][0]["env"].as_array().unwrap();
    assert!(env.iter().any(|e| e["name"] == "SHUTDOWN_GRACE" && e["value"] == "30"), "{env:?}");
    assert_eq!(d["status"]["updatedReplicas"], 2, "rolled out: {}", d["status"]);
    assert_eq!(d["status"]["availableReplicas"], 2, "rolled out: {}", d["status"]);
    let monitor =
        get(&client, "monitoring.coreos.com/v1", "ServiceMonitor", "servicemonitors", Some("karpenter"), "karpenter")
            .await
            .expect("the object exists");
    assert_eq!(monitor["metadata"]["labels"]["release"], "prom");
    let again = kbp(&em, &["plan", ws.blueprint_arg(), "--detailed-exitcode"], ws.path());
    assert_exit_code(&again, 0, "plan after the new release");
}

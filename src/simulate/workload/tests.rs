use super::*;

const YAML: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  template:
    spec:
      nodeSelector: {kubernetes.io/arch: arm64}
      initContainers:
        - name: migrate
          image: x
          resources: {requests: {cpu: "2", memory: 1Gi}}
      containers:
        - name: app
          image: x
          resources: {requests: {cpu: 500m, memory: 1Gi}}
        - name: sidecar
          image: x
          resources: {limits: {cpu: 250m, memory: 256Mi}}
      topologySpreadConstraints:
        - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule}
        - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  parallelism: 4
  completions: 2
  template:
    spec:
      restartPolicy: Never
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [g5]}]
              - matchExpressions: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [p4d]}]
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: train}}}
      containers:
        - name: t
          image: x
          resources: {limits: {nvidia.com/gpu: 1}, requests: {cpu: "4", memory: 16Gi}}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {ports: [{port: 80}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: log-agent}
spec:
  selector: {matchLabels: {app: log}}
  template:
    spec:
      containers: [{name: a, image: x, resources: {requests: {cpu: 100m, memory: 128Mi}}}]
"#;

#[test]
fn kubernetes_yaml_becomes_pod_groups() {
    let w = parse("w.yaml", YAML).unwrap();
    assert_eq!(w.skipped, ["Service/web"]);
    let web = &w.groups[0];
    assert_eq!(web.name, "Deployment/web");
    assert_eq!(web.replicas, 3);
    // containers sum to 750m / 1.25Gi (the sidecar's limits are its requests); the init container needs 2 CPUs.
    assert_eq!(web.requests, Resources { cpu_milli: 2000, memory: (1 << 30) + (256 << 20), gpu: 0, pods: 1 });
    assert_eq!(web.terms.len(), 1);
    assert_eq!(web.terms[0][0].key, "kubernetes.io/arch");
    assert_eq!(web.zone_skew, Some(1));
    assert_eq!(web.per_node, None, "a ScheduleAnyway spread is a preference");
    let train = &w.groups[1];
    assert_eq!(train.replicas, 2, "a Job runs min(parallelism, completions) pods at once");
    assert_eq!(train.requests.gpu, 1);
    assert_eq!(train.terms.len(), 2, "affinity terms are alternatives");
    assert_eq!(train.per_node, Some(1), "hostname anti-affinity: one per node");
    assert_eq!(train.tolerations[0].key.as_deref(), Some("nvidia.com/gpu"));
    let agent = &w.groups[2];
    assert!(agent.daemon);
    assert_eq!(agent.requests.cpu_milli, 100);
}

#[test]
fn bad_yaml_names_the_file_line_and_column() {
    let err = parse("w.yaml", "kind: Deployment\nmetadata: {name: x\n").unwrap_err();
    assert_eq!(err.file, "w.yaml");
    assert!(err.line >= 2, "{err}");
    let bad = "---\nkind: Deployment\nmetadata: {name: api}\nspec:\n  template:\n    spec:\n      containers:\n        - name: a\n          resources: {requests: {cpu: lots}}\n";
    let err = parse("w.yaml", bad).unwrap_err();
    assert!(err.to_string().contains("Deployment/api: container a: cpu = \"lots\""), "{err}");
    assert_eq!(err.line, 2, "the document's first line");
    assert!(err.to_string().contains("hint:"));
}

#[test]
fn the_compact_form_reads_the_same_constraints() {
    let text = r#"
[[workload]]
name = "api"
replicas = 6
cpu = 1
memory = "2Gi"
node_selector = { "karpenter.sh/capacity-type" = "spot" }
zone_spread = 1
per_node = 2

[[workload]]
name = "infer"
gpu = 1
cpu = "3500m"
memory = "8Gi"
tolerations = [{ key = "nvidia.com/gpu", operator = "Exists" }]
requirements = [{ key = "karpenter.k8s.aws/instance-generation", operator = "Gte", values = ["5"] }]
"#;
    let w = parse("w.toml", text).unwrap();
    let api = &w.groups[0];
    assert_eq!((api.replicas, api.requests.cpu_milli, api.requests.memory), (6, 1000, 2 << 30));
    assert_eq!(api.terms[0][0].values, ["spot"]);
    assert_eq!((api.zone_skew, api.per_node), (Some(1), Some(2)));
    let infer = &w.groups[1];
    assert_eq!((infer.replicas, infer.requests.gpu, infer.requests.cpu_milli), (1, 1, 3500));
    assert_eq!(infer.terms[0][0].operator, "Gte");

    let err = parse("w.toml", "[[workload]]\nname = \"x\"\ncpus = 2\n").unwrap_err();
    assert_eq!((err.line, err.column), (3, 1), "{err}");
    assert!(err.message.contains("cpus"), "{err}");
}

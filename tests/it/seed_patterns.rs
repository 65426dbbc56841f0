//! The NodePools and EC2NodeClasses of the seed documents (the karpenter-mng walkthrough, 000, and the Karpenter
//! guide's design patterns, 004), written as blueprints (tests/fixtures/blueprints/seed-*.toml), render to
//! manifests that hold every field of the seeds' YAML with the same value, and that the CRDs accept. What kbp
//! adds where the seed says nothing (IMDSv2, encrypted volumes, its discovery selectors, `nodeClassRef`) is
//! allowed; nothing the seed says may be lost or changed.
//!
//! The seeds' manifests are transcribed below as facts of those documents. One correction: seed 000 leaves out
//! `operator` on two requirements, which the NodePool CRD requires; they are `In` here.

use serde_json::Value;

use crate::support::{kbp_offline, reference_chart_dir, repo};

const SEED_000: &str = r#"
- apiVersion: karpenter.k8s.aws/v1
  kind: EC2NodeClass
  metadata: { name: default }
  spec:
    amiSelectorTerms: [{ alias: bottlerocket@latest }]
    role: ex-karpenter-mng
    subnetSelectorTerms: [{ tags: { karpenter.sh/discovery: ex-karpenter-mng } }]
- apiVersion: karpenter.sh/v1
  kind: NodePool
  metadata: { name: default }
  spec:
    template:
      spec:
        requirements:
          - { key: karpenter.k8s.aws/instance-category, operator: In, values: ["c", "m", "r"] }
          - { key: karpenter.k8s.aws/instance-cpu, operator: In, values: ["4", "8", "16", "32"] }
          - { key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["2"] }
    limits: { cpu: 1000 }
    disruption: { consolidationPolicy: WhenEmpty, consolidateAfter: 30s }
"#;

const SEED_004: &str = r#"
- apiVersion: karpenter.k8s.aws/v1
  kind: EC2NodeClass
  metadata: { name: default }
  spec:
    amiSelectorTerms: [{ alias: al2023@latest }]
    subnetSelectorTerms: [{ tags: { karpenter.sh/discovery: my-cluster } }]
    securityGroupSelectorTerms: [{ tags: { karpenter.sh/discovery: my-cluster } }]
    role: KarpenterNodeRole-my-cluster
    blockDeviceMappings:
      - { deviceName: /dev/xvda, ebs: { volumeSize: 100Gi, volumeType: gp3, encrypted: true } }
- apiVersion: karpenter.k8s.aws/v1
  kind: EC2NodeClass
  metadata: { name: idp-server }
  spec:
    amiSelectorTerms: [{ alias: al2023@latest }]
    subnetSelectorTerms: [{ tags: { karpenter.sh/discovery: idp-cluster, network: private } }]
    securityGroupSelectorTerms: [{ tags: { karpenter.sh/discovery: idp-cluster } }]
    role: KarpenterNodeRole-idp-cluster
    blockDeviceMappings:
      - { deviceName: /dev/xvda, ebs: { volumeSize: 50Gi, volumeType: gp3, encrypted: true } }
    tags: { Environment: production, Service: idp-server }
- apiVersion: karpenter.sh/v1
  kind: NodePool
  metadata: { name: general }
  spec:
    template:
      spec:
        requirements:
          - { key: kubernetes.io/arch, operator: In, values: ["amd64"] }
          - { key: karpenter.sh/capacity-type, operator: In, values: ["on-demand"] }
          - { key: karpenter.k8s.aws/instance-family, operator: In, values: ["m5", "m6i", "m7i"] }
          - { key: karpenter.k8s.aws/instance-size, operator: In, values: ["large", "xlarge", "2xlarge"] }
        nodeClassRef: { group: karpenter.k8s.aws, kind: EC2NodeClass, name: default }
        expireAfter: 720h
    limits: { cpu: 100, memory: 200Gi }
    disruption: { consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 60s }
    weight: 50
- apiVersion: karpenter.sh/v1
  kind: NodePool
  metadata: { name: spot }
  spec:
    template:
      spec:
        requirements:
          - { key: karpenter.sh/capacity-type, operator: In, values: ["spot"] }
          - { key: karpenter.k8s.aws/instance-family, operator: In, values: ["m5", "m6i", "c5", "c6i", "r5", "r6i"] }
          - { key: karpenter.k8s.aws/instance-size, operator: In, values: ["large", "xlarge", "2xlarge"] }
        nodeClassRef: { group: karpenter.k8s.aws, kind: EC2NodeClass, name: default }
    limits: { cpu: 200 }
    weight: 80
- apiVersion: karpenter.sh/v1
  kind: NodePool
  metadata: { name: on-demand-fallback }
  spec:
    template:
      spec:
        requirements:
          - { key: karpenter.sh/capacity-type, operator: In, values: ["on-demand"] }
          - { key: karpenter.k8s.aws/instance-family, operator: In, values: ["m5", "m6i"] }
        nodeClassRef: { group: karpenter.k8s.aws, kind: EC2NodeClass, name: default }
    limits: { cpu: 100 }
    weight: 20
- apiVersion: karpenter.sh/v1
  kind: NodePool
  metadata: { name: gpu }
  spec:
    template:
      spec:
        requirements:
          - { key: karpenter.k8s.aws/instance-family, operator: In, values: ["g5", "p4d"] }
          - { key: karpenter.sh/capacity-type, operator: In, values: ["on-demand"] }
        taints: [{ key: nvidia.com/gpu, effect: NoSchedule }]
        nodeClassRef: { group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu }
    limits: { cpu: 48, nvidia.com/gpu: 8 }
    weight: 10
- apiVersion: karpenter.sh/v1
  kind: NodePool
  metadata: { name: idp-server }
  spec:
    template:
      metadata: { labels: { workload-type: idp-server } }
      spec:
        requirements:
          - { key: kubernetes.io/arch, operator: In, values: ["amd64"] }
          - { key: karpenter.sh/capacity-type, operator: In, values: ["on-demand"] }
          - { key: karpenter.k8s.aws/instance-family, operator: In, values: ["m5", "m6i", "m7i"] }
          - { key: karpenter.k8s.aws/instance-size, operator: In, values: ["large", "xlarge", "2xlarge"] }
        nodeClassRef: { group: karpenter.k8s.aws, kind: EC2NodeClass, name: idp-server }
        expireAfter: 336h
    limits: { cpu: 64, memory: 128Gi }
    disruption:
      consolidationPolicy: WhenEmptyOrUnderutilized
      consolidateAfter: 60s
      budgets: [{ nodes: "10%" }]
"#;

/// Each difference between what the seed says (`want`) and what kbp rendered (`got`), by path. An integer and
/// the same quantity as a string are one value (int-or-string), as they are to the API server.
fn differences(want: &Value, got: &Value, path: &str, out: &mut Vec<String>) {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (k, v) in w {
                match g.get(k) {
                    Some(gv) => differences(v, gv, &format!("{path}.{k}"), out),
                    None => out.push(format!("{path}.{k}: missing (the seed has {v})")),
                }
            }
        }
        (Value::Array(w), Value::Array(g)) if w.len() == g.len() => {
            for (i, (v, gv)) in w.iter().zip(g).enumerate() {
                differences(v, gv, &format!("{path}[{i}]"), out);
            }
        }
        (Value::Number(n), Value::String(s)) | (Value::String(s), Value::Number(n)) if n.to_string() == *s => {}
        (w, g) if w == g => {}
        (w, g) => out.push(format!("{path}: the seed has {w}, kbp renders {g}")),
    }
}

fn rendered(blueprint: &str) -> Vec<Value> {
    let crds = format!("karpenter.chart={}", reference_chart_dir().display());
    let path = format!("tests/fixtures/blueprints/{blueprint}");
    let validate = kbp_offline(&["validate", &path, "--set", &crds], repo());
    let text = String::from_utf8_lossy(&validate.stderr);
    assert_eq!(validate.status.code(), Some(0), "{path} is not valid:\n{text}");
    assert!(!text.contains("not checked"), "{path} was validated without the CRDs:\n{text}");
    // `render` checks every object against the CRDs again before printing it.
    let out = kbp_offline(&["render", &path, "--set", &crds], repo());
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    serde_norway::Deserializer::from_str(&text).map(|d| serde::Deserialize::deserialize(d).unwrap()).collect()
}

fn assert_holds_the_seed(seed: &str, blueprint: &str) {
    let want: Vec<Value> = serde_norway::from_str(seed).unwrap();
    let got = rendered(blueprint);
    let mut problems = Vec::new();
    for object in &want {
        let (kind, name) = (&object["kind"], &object["metadata"]["name"]);
        match got.iter().find(|o| &o["kind"] == kind && &o["metadata"]["name"] == name) {
            Some(found) => differences(object, found, &format!("{} {}", kind.as_str().unwrap(), name), &mut problems),
            None => problems.push(format!("{kind} {name}: not rendered")),
        }
    }
    assert!(problems.is_empty(), "{blueprint} loses or changes what the seed says:\n{}", problems.join("\n"));
}

#[test]
fn seed_000_node_class_and_pool_render_as_the_walkthrough_declares_them() {
    assert_holds_the_seed(SEED_000, "seed-000.toml");
}

#[test]
fn seed_004_design_patterns_render_as_the_guide_declares_them_custom_subnet_tags_included() {
    assert_holds_the_seed(SEED_004, "seed-004.toml");
}

#[test]
fn the_comparison_sees_a_lost_or_changed_field() {
    let want: Value = serde_norway::from_str("spec: { weight: 80, limits: { cpu: 200 }, tags: { a: b } }").unwrap();
    let got: Value = serde_norway::from_str("spec: { weight: 20, limits: { cpu: '200' } }").unwrap();
    let mut found = Vec::new();
    differences(&want, &got, "x", &mut found);
    assert_eq!(
        found,
        ["x.spec.weight: the seed has 80, kbp renders 20", "x.spec.tags: missing (the seed has {\"a\":\"b\"})"]
    );
}

//! kbp renders Karpenter's published chart as `helm template` does. Each values file in
//! tests/fixtures/chart-values is rendered by kbp's renderer and by helm (v4.3.2, built from its Go module by
//! `scripts/helm.sh install`), CRDs included, and the two are compared object by object, after dropping the one
//! label that says who manages the objects. A chart changed the way a new release changes it (a template, an
//! env var, a CRD) must render as helm renders it too.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use kbp::helm::chart::{Capabilities, Chart, Release};
use kbp::helm::goyaml;
use serde_json::Value;

use crate::support::*;

pub(crate) fn helm() -> PathBuf {
    let out = Command::new("bash").arg(repo().join("scripts/helm.sh")).arg("install").output().unwrap();
    assert!(
        out.status.success(),
        "helm is missing and could not be built; build it with `scripts/helm.sh install` (Go and the Go module \
         proxy are needed once):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// A values file and the helm flags its header names.
struct Case {
    name: String,
    values: PathBuf,
    namespace: String,
    release: String,
    kube_version: String,
    api_versions: Vec<String>,
}

fn cases() -> Vec<Case> {
    let dir = repo().join("tests/fixtures/chart-values");
    let mut cases = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let mut case = Case {
            name: path.file_stem().unwrap().to_string_lossy().into_owned(),
            values: path.clone(),
            namespace: "kube-system".into(),
            release: "karpenter".into(),
            kube_version: "1.33.0".into(),
            api_versions: Vec::new(),
        };
        for line in text.lines().take_while(|l| l.starts_with('#')) {
            let Some((key, value)) = line.trim_start_matches('#').trim().split_once(": ") else { continue };
            match key {
                "namespace" => case.namespace = value.trim().into(),
                "release" => case.release = value.trim().into(),
                "kube-version" => case.kube_version = value.trim().into(),
                "api-versions" => case.api_versions = value.split(',').map(|v| v.trim().to_string()).collect(),
                _ => {}
            }
        }
        cases.push(case);
    }
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    cases
}

/// Objects by kind, namespace and name, without the label naming who manages them.
pub(crate) fn keyed(objects: Vec<Value>) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for mut object in objects {
        if let Some(labels) = object.pointer_mut("/metadata/labels").and_then(Value::as_object_mut) {
            labels.remove("app.kubernetes.io/managed-by");
        }
        let key = format!(
            "{}/{} {}/{}",
            object["apiVersion"].as_str().unwrap_or(""),
            object["kind"].as_str().unwrap_or(""),
            object.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or(""),
            object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("")
        );
        assert!(out.insert(key.clone(), object).is_none(), "{key} rendered twice");
    }
    out
}

fn with_helm(chart: &Path, case: &Case) -> BTreeMap<String, Value> {
    let mut cmd = Command::new(helm());
    cmd.args(["template", &case.release])
        .arg(chart)
        .args(["--namespace", &case.namespace, "--kube-version", &case.kube_version, "--include-crds", "-f"])
        .arg(&case.values);
    for api in &case.api_versions {
        cmd.args(["--api-versions", api]);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "helm template {}: {}", case.name, String::from_utf8_lossy(&out.stderr));
    let docs = goyaml::documents(&String::from_utf8_lossy(&out.stdout)).unwrap();
    keyed(docs.into_iter().filter(|d| !d.is_null()).collect())
}

fn with_kbp(chart: &Path, case: &Case) -> BTreeMap<String, Value> {
    let chart = Chart::from_dir(chart).unwrap();
    let values = goyaml::document(&std::fs::read_to_string(&case.values).unwrap()).unwrap();
    let release = Release { name: case.release.clone(), namespace: case.namespace.clone(), service: "kbp".into() };
    let capabilities =
        Capabilities { kube_version: case.kube_version.clone(), api_versions: case.api_versions.clone() };
    let output =
        chart.render(&values, &release, &capabilities).unwrap_or_else(|e| panic!("kbp renders {}: {e}", case.name));
    let mut objects: Vec<Value> = output.objects.into_iter().map(|r| r.object).collect();
    for (_, text) in chart.crd_files() {
        objects.extend(goyaml::documents(text).unwrap().into_iter().filter(|d| !d.is_null()));
    }
    keyed(objects)
}

/// The first place two values differ, as a JSON pointer with both sides.
fn first_difference(path: &str, a: &Value, b: &Value) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for key in x.keys().chain(y.keys()) {
                let here = format!("{path}/{key}");
                match (x.get(key), y.get(key)) {
                    (Some(p), Some(q)) => {
                        if let Some(d) = first_difference(&here, p, q) {
                            return Some(d);
                        }
                    }
                    (p, q) => return Some(format!("{here}: kbp {p:?}, helm {q:?}")),
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            x.iter().zip(y).enumerate().find_map(|(i, (p, q))| first_difference(&format!("{path}/{i}"), p, q))
        }
        _ if a == b => None,
        _ => Some(format!("{path}: kbp {a}, helm {b}")),
    }
}

pub(crate) fn assert_same(case: &str, kbp: &BTreeMap<String, Value>, helm: &BTreeMap<String, Value>) {
    let kbp_keys: Vec<&String> = kbp.keys().collect();
    let helm_keys: Vec<&String> = helm.keys().collect();
    assert_eq!(kbp_keys, helm_keys, "{case}: kbp and helm render different objects");
    for (key, object) in kbp {
        if let Some(difference) = first_difference("", object, &helm[key]) {
            panic!("{case}: {key} differs at {difference}");
        }
    }
}

#[test]
fn every_values_case_renders_as_helm_template_renders_it() {
    let chart = reference_chart_dir();
    let cases = cases();
    assert!(cases.len() >= 10, "the values table is in tests/fixtures/chart-values ({} cases)", cases.len());
    for case in &cases {
        let (kbp, helm) = (with_kbp(&chart, case), with_helm(&chart, case));
        // The chart's objects and its five CRDs at least.
        assert!(kbp.len() >= 16, "{}: only {} objects", case.name, kbp.len());
        assert_same(&case.name, &kbp, &helm);
    }
}

/// A new release of the published chart, made in `dir` the way a release changes a chart: its version 1.15.0, a
/// template (a new env var, `SHUTDOWN_GRACE`), a CRD (a new NodePool printer column, `Priority`).
pub(crate) fn next_release(dir: &Path) -> PathBuf {
    let chart = dir.join("karpenter-1.15.0");
    copy_dir(&reference_chart_dir(), &chart);
    let edit = |file: &str, from: &str, to: &str| {
        let path = chart.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{file} no longer holds {from:?}");
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    };
    edit("Chart.yaml", "version: 1.14.1", "version: 1.15.0");
    edit("Chart.yaml", "appVersion: 1.14.1", "appVersion: 1.15.0");
    edit(
        "templates/deployment.yaml",
        "            - name: METRICS_PORT",
        "            - name: SHUTDOWN_GRACE\n              value: {{ .Values.replicas | mul 15 | quote }}\n            - name: METRICS_PORT",
    );
    edit(
        "crds/karpenter.sh_nodepools.yaml",
        "    - additionalPrinterColumns:\n",
        "    - additionalPrinterColumns:\n        - jsonPath: .spec.weight\n          name: Priority\n          type: integer\n",
    );
    chart
}

#[test]
fn a_new_chart_release_renders_as_helm_renders_it() {
    let temp = tempfile::tempdir().unwrap();
    let chart = next_release(temp.path());
    let case = cases().into_iter().find(|c| c.name == "defaults").expect("a defaults case");
    let (kbp, helm) = (with_kbp(&chart, &case), with_helm(&chart, &case));
    assert_same("changed chart", &kbp, &helm);
    let deployment = kbp.values().find(|o| o["kind"] == "Deployment").unwrap();
    let env = deployment.pointer("/spec/template/spec/containers/0/env").unwrap().as_array().unwrap();
    assert!(env.iter().any(|e| e["name"] == "SHUTDOWN_GRACE" && e["value"] == "30"), "{env:?}");
    assert_eq!(deployment.pointer("/metadata/labels/app.kubernetes.io~1version"), Some(&Value::from("1.15.0")));
}

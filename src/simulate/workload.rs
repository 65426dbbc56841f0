//! The workload `kbp simulate` places: Kubernetes YAML (Deployments, StatefulSets, ReplicaSets, Jobs, Pods,
//! DaemonSets, and `List`s of them, many documents per file) or the compact TOML form, each read into pod
//! groups — identical pods, with what the scheduler and Karpenter look at: requests, node selector and required
//! node affinity, tolerations, topology spread and pod anti-affinity on zone or hostname.
//!
//! What is read and what is not: requests (a resource without a request takes its limit, as the API server
//! defaults it), init containers (the pod needs the largest of them or the sum of its containers, whichever is
//! more), `DoNotSchedule` spread constraints and required anti-affinity (taken to select the pod's own group,
//! which is what they are written for); preferred affinities and `ScheduleAnyway` spreads are preferences that
//! Karpenter relaxes when they cannot be met, so they do not change what must be launched and are not read.
//! Other kinds (Services, ConfigMaps…) are listed as skipped.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Pod, PodSpec, PodTemplateSpec};
use serde::Deserialize;

use super::resources::Resources;
use super::taints::Toleration;
use crate::blueprint::model::Requirement;

/// A workload file read into pod groups.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Workload {
    /// The pod groups, in file order; DaemonSets among them with `daemon` set.
    pub groups: Vec<PodGroup>,
    /// Objects that are not workloads, as `Kind/name`.
    pub skipped: Vec<String>,
}

/// Identical pods: a Deployment's replicas, a Job's parallel pods, one Pod, a DaemonSet's pod on every node.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PodGroup {
    /// `Deployment/web`, or the compact form's `name`.
    pub name: String,
    /// How many identical pods: `replicas` (default 1), a Job's `parallelism`; 1 for a Pod or a DaemonSet.
    pub replicas: u32,
    /// One pod's requests (`pods` = 1).
    pub requests: Resources,
    /// Node selector and required node affinity as alternatives (the affinity's terms are ORed), each the
    /// requirements a node must all meet; one empty term when the pod has none.
    pub terms: Vec<Vec<Requirement>>,
    /// Which node taints the pods tolerate.
    pub tolerations: Vec<Toleration>,
    /// `maxSkew` of a `DoNotSchedule` spread over `topology.kubernetes.io/zone`.
    pub zone_skew: Option<u32>,
    /// At most this many of the group on one node (hostname spread's `maxSkew`, 1 for hostname anti-affinity).
    pub per_node: Option<u32>,
    /// At most this many of the group in one zone (1 for zone anti-affinity).
    pub per_zone: Option<u32>,
    /// A DaemonSet: not placed, but its pod takes room on every node it tolerates and selects.
    pub daemon: bool,
}

/// A workload file that cannot be read, with where and what to do.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}:{line}:{column}: {message}\n  hint: {hint}")]
pub struct WorkloadError {
    /// The workload file, as given on the command line.
    pub file: String,
    /// 1-based line of the problem (of the document, for YAML that parsed).
    pub line: usize,
    /// 1-based column of the problem.
    pub column: usize,
    /// What is wrong with the file there.
    pub message: String,
    /// What the file should hold instead (the YAML kinds read, or the compact form's keys).
    pub hint: String,
}

const ZONE: &str = "topology.kubernetes.io/zone";
const HOSTNAME: &str = "kubernetes.io/hostname";
const YAML_HINT: &str = "a workload file holds Kubernetes objects (Deployment, StatefulSet, ReplicaSet, Job, Pod, \
                         DaemonSet) as YAML documents separated by `---`, or is a .toml file of [[workload]] tables";

/// Reads a workload file: `.toml` as the compact form, anything else as Kubernetes YAML (or JSON).
pub fn parse(file: &str, text: &str) -> Result<Workload, WorkloadError> {
    if file.ends_with(".toml") {
        parse_toml(file, text)
    } else {
        parse_yaml(file, text)
    }
}

/// Kubernetes YAML, many documents.
pub fn parse_yaml(file: &str, text: &str) -> Result<Workload, WorkloadError> {
    let starts = document_lines(text);
    let mut out = Workload::default();
    for (i, doc) in serde_norway::Deserializer::from_str(text).enumerate() {
        let line = starts.get(i).copied().unwrap_or(1);
        let value = serde_json::Value::deserialize(doc).map_err(|e| {
            let (line, column) = e.location().map_or((line, 1), |l| (l.line(), l.column()));
            WorkloadError { file: file.into(), line, column, message: e.to_string(), hint: YAML_HINT.into() }
        })?;
        let at = |message: String, hint: &str| WorkloadError {
            file: file.into(),
            line,
            column: 1,
            message,
            hint: hint.into(),
        };
        read_object(value, &mut out).map_err(|m| at(m, YAML_HINT))?;
    }
    Ok(out)
}

/// The line each YAML document starts on (after a `---` or at the top).
fn document_lines(text: &str) -> Vec<usize> {
    let mut starts = vec![1];
    for (n, line) in text.lines().enumerate() {
        if line.starts_with("---") && n > 0 {
            starts.push(n + 2);
        } else if line.starts_with("---") {
            starts[0] = 2;
        }
    }
    starts
}

fn read_object(value: serde_json::Value, out: &mut Workload) -> Result<(), String> {
    if value.is_null() {
        return Ok(());
    }
    let kind = value.get("kind").and_then(|k| k.as_str()).unwrap_or_default().to_string();
    let name = value.pointer("/metadata/name").and_then(|n| n.as_str()).unwrap_or("unnamed").to_string();
    let label = format!("{kind}/{name}");
    let typed = |e: serde_json::Error| format!("{label}: {e}");
    let template = |t: Option<PodTemplateSpec>| t.and_then(|t| t.spec).unwrap_or_default();
    let (spec, replicas, daemon) = match kind.as_str() {
        "List" => {
            let items = value.get("items").and_then(|i| i.as_array()).cloned().unwrap_or_default();
            return items.into_iter().try_for_each(|item| read_object(item, out));
        }
        "Deployment" => {
            let d: Deployment = serde_json::from_value(value).map_err(typed)?;
            let s = d.spec.unwrap_or_default();
            (template(Some(s.template)), s.replicas.unwrap_or(1), false)
        }
        "StatefulSet" => {
            let d: StatefulSet = serde_json::from_value(value).map_err(typed)?;
            let s = d.spec.unwrap_or_default();
            (template(Some(s.template)), s.replicas.unwrap_or(1), false)
        }
        "ReplicaSet" => {
            let d: ReplicaSet = serde_json::from_value(value).map_err(typed)?;
            let s = d.spec.unwrap_or_default();
            (template(s.template), s.replicas.unwrap_or(1), false)
        }
        "Job" => {
            let d: Job = serde_json::from_value(value).map_err(typed)?;
            let s = d.spec.unwrap_or_default();
            let parallel = s.parallelism.unwrap_or(1).min(s.completions.unwrap_or(i32::MAX));
            (template(Some(s.template)), parallel, false)
        }
        "Pod" => {
            let d: Pod = serde_json::from_value(value).map_err(typed)?;
            (d.spec.unwrap_or_default(), 1, false)
        }
        "DaemonSet" => {
            let d: DaemonSet = serde_json::from_value(value).map_err(typed)?;
            (template(Some(d.spec.unwrap_or_default().template)), 1, true)
        }
        "" => return Err("an object without `kind`".into()),
        _ => {
            out.skipped.push(label);
            return Ok(());
        }
    };
    let mut group = from_pod_spec(&spec).map_err(|e| format!("{label}: {e}"))?;
    group.name = label;
    group.replicas = u32::try_from(replicas.max(0)).unwrap_or(0);
    group.daemon = daemon;
    out.groups.push(group);
    Ok(())
}

/// What the simulation reads of a pod's spec.
fn from_pod_spec(spec: &PodSpec) -> Result<PodGroup, String> {
    let requests = |c: &k8s_openapi::api::core::v1::Container| -> Result<Resources, String> {
        let res = c.resources.clone().unwrap_or_default();
        let mut merged: BTreeMap<String, String> =
            res.limits.unwrap_or_default().into_iter().map(|(k, v)| (k, v.0)).collect();
        merged.extend(res.requests.unwrap_or_default().into_iter().map(|(k, v)| (k, v.0)));
        Resources::from_quantities(merged.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .map_err(|e| format!("container {}: {e}", c.name))
    };
    let mut sum = Resources::default();
    for c in &spec.containers {
        sum = sum.plus(requests(c)?);
    }
    for c in spec.init_containers.iter().flatten() {
        sum = sum.max(requests(c)?);
    }
    sum.pods = 1;

    let selector: Vec<Requirement> = spec
        .node_selector
        .iter()
        .flatten()
        .map(|(k, v)| Requirement { key: k.clone(), operator: "In".into(), values: vec![v.clone()], min_values: None })
        .collect();
    let affinity = spec.affinity.clone().unwrap_or_default();
    let node_terms = affinity
        .node_affinity
        .and_then(|a| a.required_during_scheduling_ignored_during_execution)
        .map(|s| s.node_selector_terms)
        .unwrap_or_default();
    let mut terms: Vec<Vec<Requirement>> = node_terms
        .into_iter()
        .map(|t| {
            let mut reqs = selector.clone();
            reqs.extend(t.match_expressions.unwrap_or_default().into_iter().map(|e| Requirement {
                key: e.key,
                operator: e.operator,
                values: e.values.unwrap_or_default(),
                min_values: None,
            }));
            reqs
        })
        .collect();
    if terms.is_empty() {
        terms.push(selector);
    }

    let tolerations = spec
        .tolerations
        .iter()
        .flatten()
        .map(|t| Toleration {
            key: t.key.clone(),
            operator: t.operator.clone(),
            value: t.value.clone(),
            effect: t.effect.clone(),
        })
        .collect();

    let mut group = PodGroup { requests: sum, terms, tolerations, ..PodGroup::default() };
    for c in spec.topology_spread_constraints.iter().flatten() {
        if c.when_unsatisfiable != "DoNotSchedule" {
            continue;
        }
        let skew = u32::try_from(c.max_skew.max(1)).unwrap_or(1);
        match c.topology_key.as_str() {
            ZONE => group.zone_skew = Some(skew),
            HOSTNAME => group.per_node = Some(group.per_node.map_or(skew, |n| n.min(skew))),
            _ => {}
        }
    }
    let anti = affinity
        .pod_anti_affinity
        .and_then(|a| a.required_during_scheduling_ignored_during_execution)
        .unwrap_or_default();
    for term in anti {
        match term.topology_key.as_str() {
            HOSTNAME => group.per_node = Some(1),
            ZONE => group.per_zone = Some(1),
            _ => {}
        }
    }
    Ok(group)
}

/// The compact form: `[[workload]]` tables.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CompactFile {
    #[serde(default)]
    workload: Vec<Compact>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Compact {
    name: String,
    #[serde(default = "one")]
    replicas: u32,
    #[serde(default)]
    cpu: Option<Amount>,
    #[serde(default)]
    memory: Option<Amount>,
    #[serde(default)]
    gpu: Option<u32>,
    #[serde(default)]
    node_selector: BTreeMap<String, String>,
    #[serde(default)]
    requirements: Vec<CompactRequirement>,
    #[serde(default)]
    tolerations: Vec<CompactToleration>,
    #[serde(default)]
    zone_spread: Option<u32>,
    #[serde(default)]
    per_node: Option<u32>,
    #[serde(default)]
    per_zone: Option<u32>,
    #[serde(default)]
    daemonset: bool,
}

fn one() -> u32 {
    1
}

/// A quantity written as a string (`"500m"`) or a number (`2`).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Amount {
    Text(String),
    Number(f64),
}

impl Amount {
    fn text(&self) -> String {
        match self {
            Amount::Text(s) => s.clone(),
            Amount::Number(n) => n.to_string(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CompactRequirement {
    key: String,
    operator: String,
    #[serde(default)]
    values: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CompactToleration {
    #[serde(default)]
    key: Option<String>,
    #[serde(default)]
    operator: Option<String>,
    #[serde(default)]
    value: Option<String>,
    #[serde(default)]
    effect: Option<String>,
}

const TOML_HINT: &str = "each [[workload]] takes name, replicas, cpu, memory, gpu, node_selector, requirements, \
                         tolerations, zone_spread, per_node, per_zone, daemonset (see docs/simulate.md)";

/// The compact TOML form.
pub fn parse_toml(file: &str, text: &str) -> Result<Workload, WorkloadError> {
    let at = |offset: usize, message: String| {
        let before = &text[..offset.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        WorkloadError { file: file.into(), line, column, message, hint: TOML_HINT.into() }
    };
    let parsed: CompactFile =
        toml::from_str(text).map_err(|e| at(e.span().map_or(0, |s| s.start), e.message().to_string()))?;
    let mut out = Workload::default();
    for w in parsed.workload {
        let offset = text.find(&format!("\"{}\"", w.name)).unwrap_or(0);
        let mut quantities = Vec::new();
        if let Some(cpu) = &w.cpu {
            quantities.push(("cpu", cpu.text()));
        }
        if let Some(memory) = &w.memory {
            quantities.push(("memory", memory.text()));
        }
        let mut requests = Resources::from_quantities(quantities.iter().map(|(k, v)| (*k, v.as_str())))
            .map_err(|e| at(offset, format!("workload {}: {e}", w.name)))?;
        requests.gpu = u64::from(w.gpu.unwrap_or(0));
        requests.pods = 1;
        let mut reqs: Vec<Requirement> = w
            .node_selector
            .iter()
            .map(|(k, v)| Requirement {
                key: k.clone(),
                operator: "In".into(),
                values: vec![v.clone()],
                min_values: None,
            })
            .collect();
        reqs.extend(w.requirements.into_iter().map(|r| Requirement {
            key: r.key,
            operator: r.operator,
            values: r.values,
            min_values: None,
        }));
        out.groups.push(PodGroup {
            name: w.name,
            replicas: w.replicas,
            requests,
            terms: vec![reqs],
            tolerations: w
                .tolerations
                .into_iter()
                .map(|t| Toleration { key: t.key, operator: t.operator, value: t.value, effect: t.effect })
                .collect(),
            zone_skew: w.zone_spread,
            per_node: w.per_node,
            per_zone: w.per_zone,
            daemon: w.daemonset,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests;

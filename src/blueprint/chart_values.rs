//! The user's values for Karpenter's chart, layered as `helm -f a.yaml -f b.yaml --set …` layers them: each of
//! `karpenter.values_files` in order (read as Helm reads YAML), then the inline `[karpenter.values]`. Maps merge,
//! everything else replaces. A file that cannot be read is an error at its entry in `values_files`; a file that
//! is not YAML, or not a map, is an error in that file, at its line and column.
//!
//! Then what the values must agree with: the controller runs only on the controller node group, so its
//! tolerations must cover every taint of that group, and its nodeSelector must match the group's labels.

use std::path::Path;

use serde_json::Value as Json;

use super::Loaded;
use crate::helm::{goyaml, values};

pub(crate) fn read(loaded: &mut Loaded, base: &Path) {
    let mut merged = Json::Object(Default::default());
    let files = loaded.blueprint.karpenter.values_files.clone();
    let mut absolute = Vec::with_capacity(files.len());
    for (i, file) in files.iter().enumerate() {
        let joined = base.join(file);
        let path = std::path::absolute(&joined).unwrap_or(joined);
        absolute.push(path.display().to_string());
        let field = format!("karpenter.values_files[{i}]");
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) => {
                let message = format!("cannot read the values file {}: {e}", path.display());
                refuse(loaded, &field, message, "the path is relative to the blueprint file".into());
                continue;
            }
        };
        let source = loaded.warnings.add_source(path.display().to_string(), text.clone());
        match goyaml::document(&text) {
            Ok(Json::Null) => {}
            Ok(layer @ Json::Object(_)) => values::merge(&mut merged, layer),
            Ok(other) => {
                let kind = if other.is_array() { "a list" } else { "a single value" };
                loaded
                    .warnings
                    .error(
                        source,
                        0..text.len().min(1),
                        format!("a values file holds a map of the chart's values, not {kind}"),
                    )
                    .path(&field)
                    .hint("write the chart's keys at the top level, as in the chart's values.yaml");
            }
            Err(e) => {
                let at = offset(&text, e.line, e.col);
                loaded
                    .warnings
                    .error(source, at..at, format!("not valid YAML: {}", e.message))
                    .path(&field)
                    .hint("a values file is YAML, as `helm -f` reads it");
            }
        }
    }
    if let Some(inline) = loaded.blueprint.karpenter.values.clone() {
        values::merge(&mut merged, inline);
    }
    loaded.blueprint.karpenter.values_files = absolute;
    loaded.blueprint.karpenter.user_values = merged;
    scheduling(loaded);
}

/// The controller's tolerations as the chart will get them: the user's when the values set them, else kbp's
/// (the chart's `CriticalAddonsOnly` and the controller node group's own taint).
fn tolerations(user: &Json) -> Vec<Json> {
    match user.get("tolerations") {
        Some(Json::Array(list)) => list.clone(),
        Some(_) => Vec::new(),
        None => vec![
            serde_json::json!({ "key": "CriticalAddonsOnly", "operator": "Exists" }),
            serde_json::json!({ "key": "karpenter.sh/controller", "operator": "Equal", "value": "true", "effect": "NoSchedule" }),
        ],
    }
}

/// Kubernetes' rule: a toleration tolerates a taint when the effects agree (an empty effect matches all), the
/// keys agree (an empty key with `Exists` matches all), and with `Equal` (the default) the values too.
fn tolerates(toleration: &Json, key: &str, value: &str, effect: &str) -> bool {
    let field = |name: &str| toleration.get(name).and_then(Json::as_str).unwrap_or_default();
    let effect_ok = field("effect").is_empty() || field("effect") == effect;
    let exists = field("operator") == "Exists";
    let key_ok = field("key") == key || (field("key").is_empty() && exists);
    effect_ok && key_ok && (exists || field("value") == value)
}

/// `(key, value, effect, field)` of every taint of the controller node group: kbp's own, then the blueprint's.
fn all_taints(loaded: &Loaded) -> Vec<(String, String, String, Option<String>)> {
    let mut all = vec![("karpenter.sh/controller".to_string(), "true".to_string(), "NoSchedule".to_string(), None)];
    all.extend(loaded.blueprint.node_group.taints.iter().enumerate().map(|(i, t)| {
        (t.key.clone(), t.value.clone().unwrap_or_default(), t.effect.clone(), Some(format!("node_group.taints[{i}]")))
    }));
    all
}

/// CoreDNS has to run on the controller node group: until it runs, nothing in the cluster resolves names, and
/// the controller (with the chart's `dnsPolicy: ClusterFirst`) cannot reach AWS to launch the node CoreDNS
/// would otherwise wait for. kbp's default CoreDNS configuration tolerates every taint of the group; tolerations
/// the blueprint sets itself must too, unless the controller resolves through the node (`dnsPolicy: Default`).
fn coredns(loaded: &mut Loaded, taints: &[(String, String, String, Option<String>)], where_set: &str) {
    let given = loaded.blueprint.addons.get("coredns").and_then(|a| a.configuration_values.clone());
    let Some(config) = given.and_then(|text| serde_json::from_str::<Json>(&text).ok()) else { return };
    let Some(Json::Array(tolerations)) = config.get("tolerations") else { return };
    let policy = loaded
        .blueprint
        .karpenter
        .user_values
        .get("dnsPolicy")
        .and_then(Json::as_str)
        .unwrap_or("ClusterFirst")
        .to_string();
    if policy == "Default" {
        return;
    }
    for (key, value, effect, _) in taints {
        if effect == "PreferNoSchedule" || tolerations.iter().any(|t| tolerates(t, key, value, effect)) {
            continue;
        }
        let taint = if value.is_empty() { format!("{key}:{effect}") } else { format!("{key}={value}:{effect}") };
        refuse(
            loaded,
            "addons.coredns.configuration_values",
            format!(
                "CoreDNS does not tolerate the controller node group's taint `{taint}`: it could run only on nodes \
                 Karpenter launches, and the controller (dnsPolicy {policy}) needs CoreDNS to reach AWS and launch one"
            ),
            format!(
                "add {{\"key\": \"{key}\", \"operator\": \"Exists\", \"effect\": \"{effect}\"}} to CoreDNS's \
                 tolerations, leave its tolerations to kbp, or set `dnsPolicy = \"Default\"` in {where_set}"
            ),
        );
    }
}

fn scheduling(loaded: &mut Loaded) {
    let user = loaded.blueprint.karpenter.user_values.clone();
    let where_set = if loaded.blueprint.karpenter.values_files.is_empty() {
        "[karpenter.values]".to_string()
    } else {
        "[karpenter.values] or karpenter.values_files".to_string()
    };
    let tolerations = tolerations(&user);
    for (key, value, effect, field) in all_taints(loaded) {
        // PreferNoSchedule only prefers: the scheduler still places the pods.
        if effect == "PreferNoSchedule" || tolerations.iter().any(|t| tolerates(t, &key, &value, &effect)) {
            continue;
        }
        let field = field.unwrap_or_else(|| "karpenter.values.tolerations".to_string());
        let taint = if value.is_empty() { format!("{key}:{effect}") } else { format!("{key}={value}:{effect}") };
        let example = if value.is_empty() {
            format!("{{ key = \"{key}\", operator = \"Exists\", effect = \"{effect}\" }}")
        } else {
            format!("{{ key = \"{key}\", operator = \"Equal\", value = \"{value}\", effect = \"{effect}\" }}")
        };
        refuse(
            loaded,
            &field,
            format!(
                "the Karpenter controller does not tolerate the controller node group's taint `{taint}`: its pods \
                 could not be scheduled (tolerations from {where_set})"
            ),
            format!("add {example} to the chart's `tolerations` in {where_set}, or drop the taint"),
        );
    }
    coredns(loaded, &all_taints(loaded), &where_set);
    // A nodeSelector naming a label the controller node group sets otherwise, or not at all, leaves the pods
    // nowhere to run. Labels Kubernetes and EKS put on every node are left alone.
    let mut labels = loaded.blueprint.node_group.labels.clone();
    labels.insert("karpenter.sh/controller".into(), "true".into());
    if let Some(Json::Object(selector)) = user.get("nodeSelector") {
        for (key, want) in selector {
            let Some(want) = want.as_str() else { continue };
            let domain = key.split_once('/').map_or("", |(d, _)| d);
            let well_known = ["kubernetes.io", "k8s.io", "eks.amazonaws.com"]
                .iter()
                .any(|w| domain == *w || domain.ends_with(&format!(".{w}")));
            let mismatch = match labels.get(key) {
                Some(have) => have != want,
                None => !well_known,
            };
            if mismatch {
                refuse(
                    loaded,
                    "node_group.labels",
                    format!(
                        "the Karpenter controller's nodeSelector `{key}: {want}` (from {where_set}) matches no node of \
                         the controller node group: its pods could not be scheduled"
                    ),
                    format!("add `\"{key}\" = \"{want}\"` to [node_group.labels], or drop it from the nodeSelector"),
                );
            }
        }
    }
}

/// The user's values checked against the chart they go to (read offline by the caller): a key the chart does
/// not read is a warning with the nearest key it does (the chart would ignore it), an error where the chart's
/// values.schema.json forbids it (Helm would refuse the values); each at the line or field that set it.
pub(crate) fn against_chart(loaded: &mut Loaded, chart: &crate::helm::chart::Chart, chart_place: &str) {
    let templates: Vec<&str> =
        chart.files.iter().filter(|(path, _)| path.starts_with("templates/")).map(|(_, text)| text.as_str()).collect();
    let user = loaded.blueprint.karpenter.user_values.clone();
    for unknown in values::unknown_keys(&chart.values, &templates, chart.schema.as_ref(), &user) {
        let key = unknown.path.last().map(String::as_str).unwrap_or_default();
        let near = unknown
            .known
            .iter()
            .map(|k| (strsim::levenshtein(&k.to_lowercase(), &key.to_lowercase()), k))
            .filter(|(d, _)| *d <= 3)
            .min();
        let dotted = unknown.path.join(".");
        let (source, span, field) = value_place(loaded, &unknown.path);
        let hint = match near {
            Some((_, k)) => format!("did you mean `{k}`?"),
            None => format!("the keys there are: {}", unknown.known.join(", ")),
        };
        let diag = if unknown.refused {
            let message = format!("`{dotted}` is not a value of {chart_place}: its values.schema.json refuses it");
            loaded.warnings.error(source, span, message)
        } else {
            let message =
                format!("`{dotted}` is not a value of {chart_place} (neither its values.yaml nor its templates read it): the chart ignores it");
            loaded.warnings.warning(source, span, message)
        };
        diag.path(field).hint(hint);
    }
}

/// Where the user's value at `path` was set: its field when `[karpenter.values]` sets it, else its line in the
/// last values file that does. `(source, span, field)`.
pub(crate) fn value_place(loaded: &mut Loaded, path: &[String]) -> (usize, std::ops::Range<usize>, String) {
    let inline = loaded.blueprint.karpenter.values.clone().unwrap_or_default();
    if lookup(&inline, path).is_some() {
        let field = path.iter().fold("karpenter.values".to_string(), |f, k| super::field_child(&f, k));
        let (source, span) = loaded.place(&field);
        return (source, span, field);
    }
    let files = loaded.blueprint.karpenter.values_files.clone();
    for (i, file) in files.iter().enumerate().rev() {
        let Ok(text) = std::fs::read_to_string(file) else { continue };
        let Ok(doc) = goyaml::document(&text) else { continue };
        if lookup(&doc, path).is_some() {
            let span = key_span(&text, path);
            let source = loaded.warnings.add_source(file.clone(), text);
            return (source, span, format!("karpenter.values_files[{i}]"));
        }
    }
    let (source, span) = loaded.place("karpenter");
    (source, span, "karpenter.values".into())
}

fn lookup<'a>(value: &'a Json, path: &[String]) -> Option<&'a Json> {
    path.iter().try_fold(value, |v, k| v.get(k))
}

/// The span of the key at `path` in a YAML text, found line by line: each key on a line after its parent's,
/// written plain or quoted. The start of the text when it cannot be found.
fn key_span(text: &str, path: &[String]) -> std::ops::Range<usize> {
    let mut from = 0;
    let mut found = 0..0;
    for key in path {
        let mut offset = from;
        let mut hit = None;
        for line in text[from..].split_inclusive('\n') {
            let body = line.trim_start().trim_start_matches("- ").trim_start();
            let indent = line.len() - body.len();
            for written in [key.clone(), format!("\"{key}\""), format!("'{key}'")] {
                if body.strip_prefix(&written).is_some_and(|rest| rest.trim_start().starts_with(':')) {
                    hit = Some(offset + indent..offset + indent + written.len());
                    break;
                }
            }
            if hit.is_some() {
                break;
            }
            offset += line.len();
        }
        match hit {
            Some(span) => {
                from = span.end;
                found = span;
            }
            None => return found,
        }
    }
    found
}

/// The chart, given the user's values, names the controller's service account `rendered`; kbp's identity (the
/// Pod Identity association, or the IRSA role's trust policy) grants AWS access to `karpenter` in the
/// controller's namespace only. A mismatch is an error at the value that renamed it.
pub(crate) fn service_account(loaded: &mut Loaded, rendered: &str) {
    const GRANTED: &str = "karpenter";
    if rendered == GRANTED {
        return;
    }
    let user = loaded.blueprint.karpenter.user_values.clone();
    let culprit = [
        ["serviceAccount", "name"].as_slice(),
        &["serviceAccount", "create"],
        &["fullnameOverride"],
        &["nameOverride"],
    ]
    .into_iter()
    .map(|p| p.iter().map(|k| k.to_string()).collect::<Vec<_>>())
    .find(|p| lookup(&user, p).is_some_and(|v| !v.is_null() && v != ""));
    let namespace = loaded.blueprint.karpenter.namespace.clone();
    let (grant, field) = match loaded.blueprint.karpenter.identity {
        super::Identity::PodIdentity => {
            ("the Pod Identity association kbp makes (karpenter.identity = \"pod-identity\")", "karpenter.identity")
        }
        super::Identity::Irsa => {
            ("the trust policy of the controller's IAM role (karpenter.identity = \"irsa\")", "karpenter.identity")
        }
    };
    let (source, span, at) = match &culprit {
        Some(path) => value_place(loaded, path),
        None => {
            let (source, span) = loaded.place("karpenter.values");
            (source, span, "karpenter.values".to_string())
        }
    };
    let by = culprit.map(|p| format!(" (set by `{}`)", p.join("."))).unwrap_or_default();
    loaded
        .warnings
        .error(
            source,
            span,
            format!(
                "the chart would run the controller as service account `{namespace}/{rendered}`{by}, but {grant} \
                 grants AWS access to `{namespace}/{GRANTED}` only: the controller would have no AWS credentials"
            ),
        )
        .path(at)
        .hint(format!(
            "leave the service account's name to the chart's default, `{GRANTED}`, which {field} grants; the \
             service account's annotations may still be set"
        ));
}

/// An error at the blueprint field `field`.
fn refuse(loaded: &mut Loaded, field: &str, message: String, hint: String) {
    let (source, span) = loaded.place(field);
    loaded.warnings.error(source, span, message).path(field).hint(hint);
}

/// The byte offset of a 1-based line and column in `text`.
fn offset(text: &str, line: usize, col: usize) -> usize {
    let start: usize = text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
    let rest = &text[start.min(text.len())..];
    start + rest.chars().take(col.saturating_sub(1)).map(char::len_utf8).sum::<usize>()
}

//! Core Kubernetes objects (the kinds kbp renders besides Karpenter's custom resources) checked against the
//! k8s-openapi types before they reach a cluster: a value of the wrong type, a field the type does not have (the
//! API server drops it, so a typo silently loses the setting), and the required fields and invariants the API
//! server enforces but the Rust types model as optional or defaulted.
//!
//! Custom objects go through [`openapi`]; [`validate_manifest`] picks the right one of the two.

use std::sync::OnceLock;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret, Service, ServiceAccount};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use regex::Regex;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use super::openapi::{self, child, describe, index, NameRule, Violation};

type Check = fn(&Value, &mut Vec<Violation>);

/// A core kind kbp knows: how it is named, whether it lives in a namespace, its typed round trip and the
/// server-side rules its Rust type does not carry.
struct CoreKind {
    api_version: &'static str,
    kind: &'static str,
    names: NameRule,
    namespaced: bool,
    round_trip: Check,
    rules: Check,
}

const fn kind(
    api_version: &'static str,
    kind: &'static str,
    names: NameRule,
    namespaced: bool,
    round_trip: Check,
    rules: Check,
) -> CoreKind {
    CoreKind { api_version, kind, names, namespaced, round_trip, rules }
}

const RBAC: &str = "rbac.authorization.k8s.io/v1";

const CORE_KINDS: &[CoreKind] = &[
    kind("v1", "Namespace", NameRule::Label, false, round_trip::<Namespace>, no_rules),
    kind("v1", "ServiceAccount", NameRule::Subdomain, true, round_trip::<ServiceAccount>, no_rules),
    kind("v1", "Service", NameRule::Dns1035Label, true, round_trip::<Service>, service_rules),
    kind("v1", "ConfigMap", NameRule::Subdomain, true, round_trip::<ConfigMap>, data_key_rules),
    kind("v1", "Secret", NameRule::Subdomain, true, round_trip::<Secret>, data_key_rules),
    kind("apps/v1", "Deployment", NameRule::Subdomain, true, round_trip::<Deployment>, deployment_rules),
    kind("policy/v1", "PodDisruptionBudget", NameRule::Subdomain, true, round_trip::<PodDisruptionBudget>, pdb_rules),
    kind(RBAC, "ClusterRole", NameRule::PathSegment, false, round_trip::<ClusterRole>, role_rules),
    kind(RBAC, "ClusterRoleBinding", NameRule::PathSegment, false, round_trip::<ClusterRoleBinding>, binding_rules),
    kind(RBAC, "Role", NameRule::PathSegment, true, round_trip::<Role>, role_rules),
    kind(RBAC, "RoleBinding", NameRule::PathSegment, true, round_trip::<RoleBinding>, binding_rules),
    kind("coordination.k8s.io/v1", "Lease", NameRule::Subdomain, true, round_trip::<Lease>, no_rules),
    kind(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        NameRule::Subdomain,
        false,
        round_trip::<CustomResourceDefinition>,
        crd_rules,
    ),
];

fn core_kind(object: &Value) -> Option<&'static CoreKind> {
    let api_version = object.get("apiVersion").and_then(Value::as_str)?;
    let kind = object.get("kind").and_then(Value::as_str)?;
    CORE_KINDS.iter().find(|k| k.api_version == api_version && k.kind == kind)
}

fn core_kind_names() -> String {
    CORE_KINDS.iter().map(|k| format!("{} {}", k.api_version, k.kind)).collect::<Vec<_>>().join(", ")
}

/// Checks a core object against its k8s-openapi type and the API server's rules for it.
pub fn validate_core_object(object: &Value) -> Vec<Violation> {
    let Some(kind) = core_kind(object) else {
        let api_version = object.get("apiVersion").map_or_else(|| "(none)".to_string(), |v| v.to_string());
        let name = object.get("kind").map_or_else(|| "(none)".to_string(), |v| v.to_string());
        return vec![Violation::new(
            "",
            format!(
                "apiVersion {api_version} kind {name} is not a core kind kbp checks; it checks {}",
                core_kind_names()
            ),
        )];
    };
    let mut out = Vec::new();
    (kind.round_trip)(object, &mut out);
    let mut rules = Vec::new();
    openapi::check_object_meta(object, kind.names, &mut rules);
    (kind.rules)(object, &mut rules);
    // A value of the wrong type is reported once, by the round trip, not again by a rule that reads it.
    let typed = out.clone();
    let within = |path: &str, at: &str| {
        path.strip_prefix(at).is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
    };
    out.extend(rules.into_iter().filter(|rule| !typed.iter().any(|t| within(&rule.path, &t.path))));
    if !kind.namespaced && object.pointer("/metadata/namespace").is_some_and(|n| !n.is_null()) {
        out.push(Violation::new(
            "metadata.namespace",
            format!(
                "{} is cluster-scoped: the API server ignores a namespace, so it would be lost; remove it",
                kind.kind
            ),
        ));
    }
    out
}

/// Checks any manifest kbp renders: custom objects against the CRD that serves them (from `crds`), core
/// objects against their API types. A kind that neither knows is itself a violation.
pub fn validate_manifest(crds: &[Value], object: &Value) -> Vec<Violation> {
    if core_kind(object).is_some() {
        return validate_core_object(object);
    }
    let api_version = object.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or_default();
    match openapi::find_version(crds, api_version, kind) {
        Ok(_) => openapi::validate_custom_object(crds, object),
        Err(Violation { path, message }) if path.is_empty() => {
            vec![Violation::new(path, format!("{message}; core kinds kbp checks: {}", core_kind_names()))]
        }
        Err(missing) => vec![missing],
    }
}

/// Deserializes the object into its typed form and serializes it back. A type error is reported where it
/// happened; a field of the input that the round trip lost is one the type (and so the API server) does not have.
fn round_trip<T: DeserializeOwned + Serialize>(object: &Value, out: &mut Vec<Violation>) {
    // serde stops at the first type error; dropping the offending field and trying again finds the others.
    const MAX_TYPE_ERRORS: usize = 20;
    let mut object = object.clone();
    for _ in 0..MAX_TYPE_ERRORS {
        match typed_round_trip::<T>(&object) {
            Ok(back) => {
                lost_fields(&object, &back, "", out);
                return;
            }
            Err((violation, at)) => {
                out.push(violation);
                if !remove_field(&mut object, &at) {
                    return;
                }
            }
        }
    }
}

fn typed_round_trip<T: DeserializeOwned + Serialize>(object: &Value) -> Result<Value, (Violation, Vec<Step>)> {
    // serde_json reports errors by line, so the object is written one field per line, each line's path known.
    let mut lines = Vec::new();
    write_lines(object, Vec::new(), String::new(), false, &mut lines);
    let text = lines.iter().map(|(line, _)| line.as_str()).collect::<Vec<_>>().join("\n");
    let typed: T = serde_json::from_str(&text).map_err(|error| {
        let at = lines.get(error.line().saturating_sub(1)).map(|(_, at)| at.clone()).unwrap_or_default();
        let message = error.to_string();
        let message = message.rsplit_once(" at line ").map_or(message.as_str(), |(m, _)| m);
        (Violation::new(render(&at), format!("{message} (the value does not fit the API type)")), at)
    })?;
    serde_json::to_value(&typed).map_err(|error| {
        (Violation::new("", format!("kbp limitation: cannot serialize the typed object back: {error}")), Vec::new())
    })
}

/// One step of a path to a value: a field or a list index.
#[derive(Debug, Clone)]
enum Step {
    Field(String),
    Item(usize),
}

fn render(path: &[Step]) -> String {
    path.iter().fold(String::new(), |at, step| match step {
        Step::Field(name) => child(&at, name),
        Step::Item(i) => index(&at, *i),
    })
}

/// Removes the field at `path` so that the next attempt gets past it. False when the path ends at a list item
/// (dropping it would renumber the list) or at the object itself.
fn remove_field(object: &mut Value, path: &[Step]) -> bool {
    let Some((Step::Field(last), parents)) = path.split_last() else { return false };
    let mut value = object;
    for step in parents {
        let next = match step {
            Step::Field(name) => value.get_mut(name.as_str()),
            Step::Item(i) => value.get_mut(*i),
        };
        let Some(next) = next else { return false };
        value = next;
    }
    value.as_object_mut().and_then(|fields| fields.remove(last)).is_some()
}

/// Writes `value` as JSON with each field and item on its own line, recording the path of every line.
fn write_lines(value: &Value, path: Vec<Step>, prefix: String, comma: bool, lines: &mut Vec<(String, Vec<Step>)>) {
    let comma = if comma { "," } else { "" };
    let with = |step: Step| {
        let mut next = path.clone();
        next.push(step);
        next
    };
    match value {
        Value::Object(fields) if !fields.is_empty() => {
            lines.push((format!("{prefix}{{"), path.clone()));
            for (i, (key, field)) in fields.iter().enumerate() {
                let key_json = Value::String(key.clone()).to_string();
                write_lines(
                    field,
                    with(Step::Field(key.clone())),
                    format!("{key_json}: "),
                    i + 1 < fields.len(),
                    lines,
                );
            }
            lines.push((format!("}}{comma}"), path));
        }
        Value::Array(items) if !items.is_empty() => {
            lines.push((format!("{prefix}["), path.clone()));
            for (i, item) in items.iter().enumerate() {
                write_lines(item, with(Step::Item(i)), String::new(), i + 1 < items.len(), lines);
            }
            lines.push((format!("]{comma}"), path));
        }
        scalar => lines.push((format!("{prefix}{scalar}{comma}"), path)),
    }
}

/// Reports the fields of `input` that are missing from `output`. A null that disappears is fine (it meant
/// "unset"), and so are changed scalars: the types rewrite quantities, timestamps and base64 in canonical form.
fn lost_fields(input: &Value, output: &Value, path: &str, out: &mut Vec<Violation>) {
    match (input, output) {
        (Value::Object(fields), Value::Object(kept)) => {
            for (key, value) in fields {
                match kept.get(key) {
                    Some(back) => lost_fields(value, back, &child(path, key), out),
                    None if value.is_null() => {}
                    None => out.push(Violation::new(child(path, key), unknown_field_message(key, kept))),
                }
            }
        }
        (Value::Array(items), Value::Array(kept)) => {
            for (i, (item, back)) in items.iter().zip(kept).enumerate() {
                lost_fields(item, back, &index(path, i), out);
            }
        }
        _ => {}
    }
}

fn unknown_field_message(key: &str, siblings: &Map<String, Value>) -> String {
    let hint = siblings
        .keys()
        .filter(|known| strsim::levenshtein(known, key) <= 2)
        .min_by_key(|known| strsim::levenshtein(known, key))
        .map(|close| format!(" (did you mean \"{close}\"?)"))
        .unwrap_or_default();
    format!(
        "unknown field \"{key}\"{hint}: the API type has no such field, \
         so the API server would drop it and the setting would be lost"
    )
}

fn no_rules(_: &Value, _: &mut Vec<Violation>) {}

fn missing(path: &str, field: &str) -> Violation {
    Violation::new(child(path, field), format!("required field \"{field}\" is missing"))
}

fn non_empty_str<'a>(object: &'a Value, field: &str) -> Option<&'a str> {
    object.get(field).and_then(Value::as_str).filter(|s| !s.is_empty())
}

fn list<'a>(object: &'a Value, field: &str) -> &'a [Value] {
    object.get(field).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

fn deployment_rules(object: &Value, out: &mut Vec<Violation>) {
    let Some(spec) = object.get("spec").filter(|s| s.is_object()) else {
        out.push(missing("", "spec"));
        return;
    };
    if let Some(replicas) = spec.get("replicas").and_then(Value::as_i64).filter(|r| *r < 0) {
        out.push(Violation::new("spec.replicas", format!("must be greater than or equal to 0, got {replicas}")));
    }
    match spec.get("selector").filter(|s| !s.is_null()) {
        None => out.push(missing("spec", "selector")),
        Some(selector) => {
            let empty = selector.get("matchLabels").and_then(Value::as_object).is_none_or(Map::is_empty)
                && list(selector, "matchExpressions").is_empty();
            if empty {
                out.push(Violation::new(
                    "spec.selector",
                    "an empty selector is invalid for a Deployment: it would select every pod",
                ));
            } else {
                let labels = spec.pointer("/template/metadata/labels").and_then(Value::as_object);
                if let Some(mismatch) = selector_mismatch(selector, labels) {
                    out.push(Violation::new(
                        "spec.template.metadata.labels",
                        format!("the selector does not match the template's labels: {mismatch}"),
                    ));
                }
            }
        }
    }
    match spec.get("template").filter(|t| t.is_object()) {
        None => out.push(missing("spec", "template")),
        Some(template) => match template.get("spec").filter(|s| s.is_object()) {
            None => out.push(missing("spec.template", "spec")),
            Some(pod) => pod_rules(pod, "spec.template.spec", out),
        },
    }
}

/// What of `selector` the labels fail, if anything (matchLabels and matchExpressions, as the server evaluates).
fn selector_mismatch(selector: &Value, labels: Option<&Map<String, Value>>) -> Option<String> {
    let label = |key: &str| labels.and_then(|l| l.get(key)).and_then(Value::as_str);
    for (key, want) in selector.get("matchLabels").and_then(Value::as_object).into_iter().flatten() {
        let want = want.as_str().unwrap_or_default();
        if label(key) != Some(want) {
            let have = label(key).map_or_else(|| "no such label".to_string(), |v| format!("the label is \"{v}\""));
            return Some(format!("matchLabels requires {key}={want}, {have}"));
        }
    }
    for (i, expression) in list(selector, "matchExpressions").iter().enumerate() {
        let key = expression.get("key").and_then(Value::as_str).unwrap_or_default();
        let values: Vec<&str> = list(expression, "values").iter().filter_map(Value::as_str).collect();
        let operator = expression.get("operator").and_then(Value::as_str).unwrap_or_default();
        let holds = match operator {
            "In" => label(key).is_some_and(|v| values.contains(&v)),
            "NotIn" => label(key).is_none_or(|v| !values.contains(&v)),
            "Exists" => label(key).is_some(),
            "DoesNotExist" => label(key).is_none(),
            _ => {
                return Some(format!(
                    "matchExpressions[{i}] has operator \"{operator}\"; expected In, NotIn, Exists or DoesNotExist"
                ))
            }
        };
        if !holds {
            return Some(format!("matchExpressions[{i}] ({key} {operator} {values:?}) does not hold"));
        }
    }
    None
}

fn pod_rules(pod: &Value, path: &str, out: &mut Vec<Violation>) {
    if list(pod, "containers").is_empty() {
        out.push(Violation::new(child(path, "containers"), "a pod needs at least one container"));
    }
    let mut names = Vec::new();
    for field in ["initContainers", "containers"] {
        for (i, container) in list(pod, field).iter().enumerate() {
            let at = index(&child(path, field), i);
            match non_empty_str(container, "name") {
                None => out.push(missing(&at, "name")),
                Some(name) if names.contains(&name) => {
                    out.push(Violation::new(child(&at, "name"), format!("duplicate container name \"{name}\"")))
                }
                Some(name) => {
                    out.extend(NameRule::Label.check(name).map(|m| Violation::new(child(&at, "name"), m)));
                    names.push(name);
                }
            }
            match non_empty_str(container, "image") {
                None => out.push(missing(&at, "image")),
                Some(image) if image.trim() != image => out.push(Violation::new(
                    child(&at, "image"),
                    format!("\"{image}\" has leading or trailing whitespace"),
                )),
                Some(_) => {}
            }
            for (j, port) in list(container, "ports").iter().enumerate() {
                port_rule(port, "containerPort", &index(&child(&at, "ports"), j), out);
            }
            for (j, variable) in list(container, "env").iter().enumerate() {
                if non_empty_str(variable, "name").is_none() {
                    out.push(missing(&index(&child(&at, "env"), j), "name"));
                }
            }
            for bound in ["limits", "requests"] {
                let quantities = container.pointer(&format!("/resources/{bound}")).and_then(Value::as_object);
                for (resource, amount) in quantities.into_iter().flatten() {
                    quantity_rule(amount, &child(&child(&child(&at, "resources"), bound), resource), out);
                }
            }
        }
    }
}

fn port_rule(port: &Value, field: &str, path: &str, out: &mut Vec<Violation>) {
    match port.get(field).filter(|p| !p.is_null()).map(Value::as_i64) {
        None => out.push(missing(path, field)),
        Some(Some(number)) if !(1..=65535).contains(&number) => {
            out.push(Violation::new(child(path, field), format!("must be between 1 and 65535, got {number}")))
        }
        Some(_) => {} // a wrong type is reported by the round trip
    }
}

/// Quantities are strings in the types, so any text deserializes; the API server parses them.
fn quantity_rule(amount: &Value, path: &str, out: &mut Vec<Violation>) {
    static QUANTITY: OnceLock<Option<Regex>> = OnceLock::new();
    let pattern = QUANTITY.get_or_init(|| {
        Regex::new(
            r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(([KMGTPE]i)|[numkMGTPE]|[eE][+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+))?$",
        )
        .ok()
    });
    let valid = match amount {
        Value::Number(_) => true,
        Value::String(text) => pattern.as_ref().is_none_or(|p| p.is_match(text)),
        _ => true, // a type error the round trip reports
    };
    if !valid {
        out.push(Violation::new(path, format!("{} is not a quantity such as 500m, 2, 512Mi or 1Gi", describe(amount))));
    }
}

fn service_rules(object: &Value, out: &mut Vec<Violation>) {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let ports = list(spec, "ports");
    let service_type = spec.get("type").and_then(Value::as_str).unwrap_or("ClusterIP");
    let headless = spec.get("clusterIP").and_then(Value::as_str) == Some("None");
    if ports.is_empty() && service_type != "ExternalName" && !headless {
        out.push(Violation::new(
            "spec.ports",
            "a Service needs at least one port (unless it is headless or ExternalName)",
        ));
    }
    let mut names = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let at = index("spec.ports", i);
        port_rule(port, "port", &at, out);
        match non_empty_str(port, "name") {
            None if ports.len() > 1 => {
                out.push(Violation::new(child(&at, "name"), "every port needs a name when a Service has several"))
            }
            Some(name) if names.contains(&name) => {
                out.push(Violation::new(child(&at, "name"), format!("duplicate port name \"{name}\"")))
            }
            Some(name) => names.push(name),
            None => {}
        }
        if let Some(target) = port.get("targetPort").and_then(Value::as_i64).filter(|t| !(1..=65535).contains(t)) {
            out.push(Violation::new(child(&at, "targetPort"), format!("must be between 1 and 65535, got {target}")));
        }
    }
}

fn pdb_rules(object: &Value, out: &mut Vec<Violation>) {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let set: Vec<&str> =
        ["minAvailable", "maxUnavailable"].into_iter().filter(|f| spec.get(*f).is_some_and(|v| !v.is_null())).collect();
    if set.len() != 1 {
        let found = if set.is_empty() { "neither is set".to_string() } else { "both are set".to_string() };
        out.push(Violation::new("spec", format!("set exactly one of minAvailable and maxUnavailable; {found}")));
    }
    for field in set {
        let at = child("spec", field);
        match &spec[field] {
            Value::Number(n) if n.as_i64().is_some_and(|n| n < 0) => {
                out.push(Violation::new(at, format!("must be greater than or equal to 0, got {n}")))
            }
            Value::String(text) => {
                let percent = text.strip_suffix('%').and_then(|n| n.parse::<u32>().ok());
                if percent.is_none_or(|p| p > 100) {
                    out.push(Violation::new(
                        at,
                        format!("\"{text}\" is not a percentage from 0% to 100% (or give a number)"),
                    ));
                }
            }
            _ => {}
        }
    }
}

fn role_rules(object: &Value, out: &mut Vec<Violation>) {
    for (i, rule) in list(object, "rules").iter().enumerate() {
        let at = index("rules", i);
        if list(rule, "verbs").is_empty() {
            out.push(Violation::new(child(&at, "verbs"), "a policy rule needs at least one verb"));
        }
        let urls = !list(rule, "nonResourceURLs").is_empty();
        if !urls && list(rule, "resources").is_empty() {
            out.push(Violation::new(child(&at, "resources"), "a policy rule needs resources (or nonResourceURLs)"));
        }
        if urls && object.get("kind").and_then(Value::as_str) == Some("Role") {
            out.push(Violation::new(child(&at, "nonResourceURLs"), "only a ClusterRole may grant nonResourceURLs"));
        }
    }
}

fn binding_rules(object: &Value, out: &mut Vec<Violation>) {
    let cluster = object.get("kind").and_then(Value::as_str) == Some("ClusterRoleBinding");
    match object.get("roleRef").filter(|r| r.is_object()) {
        None => out.push(missing("", "roleRef")),
        Some(role_ref) => {
            if role_ref.get("apiGroup").and_then(Value::as_str) != Some("rbac.authorization.k8s.io") {
                out.push(Violation::new("roleRef.apiGroup", "must be \"rbac.authorization.k8s.io\""));
            }
            let allowed: &[&str] = if cluster { &["ClusterRole"] } else { &["Role", "ClusterRole"] };
            let role_kind = role_ref.get("kind").and_then(Value::as_str).unwrap_or_default();
            if !allowed.contains(&role_kind) {
                out.push(Violation::new(
                    "roleRef.kind",
                    format!("\"{role_kind}\" is not one of {}", allowed.join(", ")),
                ));
            }
            if non_empty_str(role_ref, "name").is_none() {
                out.push(missing("roleRef", "name"));
            }
        }
    }
    for (i, subject) in list(object, "subjects").iter().enumerate() {
        let at = index("subjects", i);
        if non_empty_str(subject, "name").is_none() {
            out.push(missing(&at, "name"));
        }
        match subject.get("kind").and_then(Value::as_str).unwrap_or_default() {
            "ServiceAccount" => {
                if cluster && non_empty_str(subject, "namespace").is_none() {
                    out.push(missing(&at, "namespace"));
                }
                if non_empty_str(subject, "apiGroup").is_some() {
                    out.push(Violation::new(child(&at, "apiGroup"), "must be empty for a ServiceAccount"));
                }
            }
            "User" | "Group" => {}
            other => out.push(Violation::new(
                child(&at, "kind"),
                format!("\"{other}\" is not one of ServiceAccount, User, Group"),
            )),
        }
    }
}

fn data_key_rules(object: &Value, out: &mut Vec<Violation>) {
    for field in ["data", "binaryData", "stringData"] {
        for key in object.get(field).and_then(Value::as_object).into_iter().flatten().map(|(k, _)| k) {
            let valid = !key.is_empty()
                && key.len() <= 253
                && key.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
                && key != "."
                && key != "..";
            if !valid {
                out.push(Violation::new(
                    child(field, key),
                    format!("invalid key \"{key}\": at most 253 characters of alphanumerics, '-', '_' and '.'"),
                ));
            }
        }
    }
}

fn crd_rules(object: &Value, out: &mut Vec<Violation>) {
    let plural = object.pointer("/spec/names/plural").and_then(Value::as_str).unwrap_or_default();
    let group = object.pointer("/spec/group").and_then(Value::as_str).unwrap_or_default();
    let name = object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
    if name != format!("{plural}.{group}") {
        out.push(Violation::new(
            "metadata.name",
            format!("must be spec.names.plural + \".\" + spec.group: \"{plural}.{group}\""),
        ));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::kubernetes::openapi::tests::karpenter_crds;

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
        validate_core_object(&object)
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
        assert_eq!(validate_core_object(&controller()), []);
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
        let found =
            edited(controller(), |d| d["spec"]["template"]["spec"]["containers"][0]["args"] = json!(["--a", 1]));
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
        assert_eq!(validate_core_object(&service()), []);
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
        assert_eq!(validate_core_object(&pdb()), []);
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
        assert_eq!(validate_core_object(&cluster_role_binding()), []);
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
        assert_eq!(validate_core_object(&role), []);
        let mut no_verbs = role.clone();
        no_verbs["rules"][0]["verbs"] = json!([]);
        assert_single(&validate_core_object(&no_verbs), "rules[0].verbs", "at least one verb");
        let namespace =
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "karpenter", "namespace": "x"}});
        assert_single(&validate_core_object(&namespace), "metadata.namespace", "cluster-scoped");
        let lease = json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "karpenter-leader-election", "namespace": "kube-system"},
            "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15, "renewTime": "2025-01-01T00:00:00.000000Z"},
        });
        assert_eq!(validate_core_object(&lease), []);
        let secret = json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "s"},
            "type": "Opaque",
            "data": {"token": "not base64!"},
            "stringData": {"a": "b"},
        });
        assert_single(&validate_core_object(&secret), "data.token", "the value does not fit the API type");
        let config =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"bad key": "x"}});
        assert_single(&validate_core_object(&config), "data[bad key]", "invalid key");
        let account = json!({
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "karpenter", "annotations": {"eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/k"}},
        });
        assert_eq!(validate_core_object(&account), []);
    }

    #[test]
    fn the_karpenter_crds_are_valid_custom_resource_definitions() {
        for crd in karpenter_crds() {
            assert_eq!(validate_core_object(&crd), [], "{}", crd["metadata"]["name"]);
        }
        let mut renamed = karpenter_crds().remove(0);
        renamed["metadata"]["name"] = json!("ec2nodeclasses");
        assert_single(&validate_core_object(&renamed), "metadata.name", "ec2nodeclasses.karpenter.k8s.aws");
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
        assert!(
            found[0].message.contains("karpenter.sh/v1 NodePool") && found[0].message.contains("apps/v1 Deployment")
        );
    }
}

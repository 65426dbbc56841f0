//! The API server's rules for the built-in kinds that their Rust types do not carry: required fields the types
//! make optional, a Deployment's selector matching its template, port ranges, quantities, a PodDisruptionBudget's
//! one budget, RBAC role references and subjects, ConfigMap and Secret keys, a CRD's name. Each `*_rules`
//! function is the rule set of one kind (or family of kinds) in the kind table of [`super`].

use serde_json::{Map, Value};

use crate::kubernetes::names::NameRule;
use crate::kubernetes::quantity::is_quantity;
use crate::kubernetes::violation::{child, describe, index, Violation};

pub(super) fn no_rules(_: &Value, _: &mut Vec<Violation>) {}

fn missing(path: &str, field: &str) -> Violation {
    Violation::new(child(path, field), format!("required field \"{field}\" is missing"))
}

fn non_empty_str<'a>(object: &'a Value, field: &str) -> Option<&'a str> {
    object.get(field).and_then(Value::as_str).filter(|s| !s.is_empty())
}

fn list<'a>(object: &'a Value, field: &str) -> &'a [Value] {
    object.get(field).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

pub(super) fn deployment_rules(object: &Value, out: &mut Vec<Violation>) {
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
    let valid = match amount {
        Value::Number(_) => true,
        Value::String(text) => is_quantity(text),
        _ => true, // a type error the round trip reports
    };
    if !valid {
        out.push(Violation::new(path, format!("{} is not a quantity such as 500m, 2, 512Mi or 1Gi", describe(amount))));
    }
}

pub(super) fn service_rules(object: &Value, out: &mut Vec<Violation>) {
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

pub(super) fn pdb_rules(object: &Value, out: &mut Vec<Violation>) {
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

pub(super) fn role_rules(object: &Value, out: &mut Vec<Violation>) {
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

pub(super) fn binding_rules(object: &Value, out: &mut Vec<Violation>) {
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

pub(super) fn data_key_rules(object: &Value, out: &mut Vec<Violation>) {
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

pub(super) fn crd_rules(object: &Value, out: &mut Vec<Violation>) {
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

//! The built-in kinds kbp renders besides Karpenter's custom resources (a Deployment, its Service and RBAC, a
//! PodDisruptionBudget, the CRDs themselves) checked before they reach a cluster, in two passes:
//! - [`round_trip()`] through the k8s-openapi types: a value of the wrong type, or a field the type does not have
//!   (the API server drops it, so a typo silently loses the setting);
//! - [`rules`]: the required fields and invariants the API server enforces but the Rust types model as optional
//!   or defaulted.
//!
//! Custom objects go through [`super::openapi`]; [`validate_manifest`] picks the right one of the two.

mod round_trip;
mod rules;
#[cfg(test)]
mod tests;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret, Service, ServiceAccount};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use self::round_trip::round_trip;
use self::rules::{
    binding_rules, crd_rules, data_key_rules, deployment_rules, no_rules, pdb_rules, role_rules, service_rules,
};
use super::meta::check_object_meta;
use super::names::NameRule;
use super::openapi;
use super::violation::Violation;

type Check = fn(&Value, &mut Vec<Violation>);

/// A built-in kind kbp knows.
struct BuiltinKind {
    api_version: &'static str,
    kind: &'static str,
    /// The rule its `metadata.name` follows.
    names: NameRule,
    /// Whether it lives in a namespace (a cluster-scoped object loses the namespace it is sent with).
    namespaced: bool,
    /// The typed round trip through its k8s-openapi type.
    round_trip: Check,
    /// The server-side rules its Rust type does not carry.
    rules: Check,
}

/// One row of [`KINDS`]: `T` is the kind's k8s-openapi type, the one its objects make the round trip through.
const fn kind<T: DeserializeOwned + Serialize>(
    api_version: &'static str,
    kind: &'static str,
    names: NameRule,
    namespaced: bool,
    rules: Check,
) -> BuiltinKind {
    BuiltinKind { api_version, kind, names, namespaced, round_trip: round_trip::<T>, rules }
}

const RBAC: &str = "rbac.authorization.k8s.io/v1";

const KINDS: &[BuiltinKind] = &[
    kind::<Namespace>("v1", "Namespace", NameRule::Label, false, no_rules),
    kind::<ServiceAccount>("v1", "ServiceAccount", NameRule::Subdomain, true, no_rules),
    kind::<Service>("v1", "Service", NameRule::Dns1035Label, true, service_rules),
    kind::<ConfigMap>("v1", "ConfigMap", NameRule::Subdomain, true, data_key_rules),
    kind::<Secret>("v1", "Secret", NameRule::Subdomain, true, data_key_rules),
    kind::<Deployment>("apps/v1", "Deployment", NameRule::Subdomain, true, deployment_rules),
    kind::<PodDisruptionBudget>("policy/v1", "PodDisruptionBudget", NameRule::Subdomain, true, pdb_rules),
    kind::<ClusterRole>(RBAC, "ClusterRole", NameRule::PathSegment, false, role_rules),
    kind::<ClusterRoleBinding>(RBAC, "ClusterRoleBinding", NameRule::PathSegment, false, binding_rules),
    kind::<Role>(RBAC, "Role", NameRule::PathSegment, true, role_rules),
    kind::<RoleBinding>(RBAC, "RoleBinding", NameRule::PathSegment, true, binding_rules),
    kind::<Lease>("coordination.k8s.io/v1", "Lease", NameRule::Subdomain, true, no_rules),
    kind::<CustomResourceDefinition>(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        NameRule::Subdomain,
        false,
        crd_rules,
    ),
];

/// Whether `object` lives in a namespace, when it is a kind kbp knows the API type of.
pub fn namespaced(object: &Value) -> Option<bool> {
    builtin_kind(object).map(|k| k.namespaced)
}

fn builtin_kind(object: &Value) -> Option<&'static BuiltinKind> {
    let api_version = object.get("apiVersion").and_then(Value::as_str)?;
    let kind = object.get("kind").and_then(Value::as_str)?;
    KINDS.iter().find(|k| k.api_version == api_version && k.kind == kind)
}

fn kind_names() -> String {
    KINDS.iter().map(|k| format!("{} {}", k.api_version, k.kind)).collect::<Vec<_>>().join(", ")
}

/// Checks an object of a built-in kind against its k8s-openapi type and the API server's rules for it.
pub fn validate_builtin_object(object: &Value) -> Vec<Violation> {
    let Some(kind) = builtin_kind(object) else {
        let api_version = object.get("apiVersion").map_or_else(|| "(none)".to_string(), |v| v.to_string());
        let name = object.get("kind").map_or_else(|| "(none)".to_string(), |v| v.to_string());
        return vec![Violation::new(
            "",
            format!("apiVersion {api_version} kind {name} is not a core kind kbp checks; it checks {}", kind_names()),
        )];
    };
    let mut out = Vec::new();
    (kind.round_trip)(object, &mut out);
    let mut rules = Vec::new();
    check_object_meta(object, kind.names, &mut rules);
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

/// Checks any manifest kbp renders: custom objects against the CRD that serves them (from `crds`), built-in
/// ones against their API types. A kind that neither knows is itself a violation.
pub fn validate_manifest(crds: &[Value], object: &Value) -> Vec<Violation> {
    if builtin_kind(object).is_some() {
        return validate_builtin_object(object);
    }
    let api_version = object.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or_default();
    match openapi::find_version(crds, api_version, kind) {
        Ok(_) => openapi::validate_custom_object(crds, object),
        Err(Violation { path, message }) if path.is_empty() => {
            vec![Violation::new(path, format!("{message}; core kinds kbp checks: {}", kind_names()))]
        }
        Err(missing) => vec![missing],
    }
}

//! Validation of custom objects against a CRD version's structural schema (`openAPIV3Schema`), the checks the API
//! server's OpenAPI validation makes, so that kbp rejects what the server would reject before sending it.
//!
//! One addition to what the server does: a field the schema does not declare is reported. The server prunes such
//! a field silently (the object is accepted without it), so a misspelt setting would simply vanish.
//!
//! Here: finding the CRD version that serves an object and the checks of a resource root. The walk through the
//! schema is [`schema`], string formats [`mod@format`], patterns (Go's regular expressions) [`go_regex`], the CEL
//! rules (`x-kubernetes-validations`) [`cel`], evaluated in-process on the object with the schema's
//! [`defaults`] applied, as the server evaluates them.
//!
//! Why not a JSON Schema crate (the tests use `jsonschema` for kbp's own JSON contract): a CRD's schema is
//! OpenAPI v3 with Kubernetes' extensions, which change what a value may be (`x-kubernetes-int-or-string`,
//! `x-kubernetes-preserve-unknown-fields`, `x-kubernetes-embedded-resource`, list types and map keys) and the
//! server reports errors by field path in its own words; a JSON Schema validator would accept and reject
//! different objects and describe them differently.

mod cel;
mod defaults;
mod format;
mod go_regex;
mod schema;
#[cfg(test)]
mod tests;

use serde_json::Value;

use self::cel::Verdicts;
pub use self::cel::{cel_rules, is_transition};
use super::meta::check_object_meta;
use super::names::NameRule;
use super::violation::{describe, Violation};

/// Validates `object` against `schema` (a CRD version's `schema.openAPIV3Schema`) as the API server's OpenAPI
/// validation does. When the schema declares `metadata` (every resource root does), the object is a resource:
/// `apiVersion`, `kind` and `metadata.name` are checked instead of validating `metadata` against the schema.
pub fn validate(schema: &Value, object: &Value) -> Vec<Violation> {
    check_root(schema, object, &mut Verdicts::default())
}

fn check_root(schema: &Value, object: &Value, verdicts: &mut Verdicts) -> Vec<Violation> {
    let mut out = Vec::new();
    if schema.pointer("/properties/metadata").is_some() {
        check_resource_identity(object, &mut out);
    }
    schema::check(schema, object, "", true, &mut out, verdicts);
    out
}

/// Finds in `crds` (CustomResourceDefinition objects as JSON) the CRD and served version for the object's
/// apiVersion and kind, and validates the object against that version's schema.
pub fn validate_custom_object(crds: &[Value], object: &Value) -> Vec<Violation> {
    Validator::new(crds).custom_object(object)
}

/// Validates many custom objects against the same CRDs, each CEL rule judging a value it has judged before
/// (the same requirement key or node class reference in every NodePool) from memory. It borrows the CRDs for as
/// long as it lives, which is what makes its memory sound (schema nodes are told apart by address).
pub struct Validator<'a> {
    crds: &'a [Value],
    verdicts: Verdicts,
}

impl<'a> Validator<'a> {
    /// A validator judging objects against `crds` (CustomResourceDefinition documents as JSON).
    pub fn new(crds: &'a [Value]) -> Self {
        Validator { crds, verdicts: Verdicts::default() }
    }

    /// Finds the CRD and served version for the object's apiVersion and kind, and validates the object against
    /// that version's schema.
    pub fn custom_object(&mut self, object: &Value) -> Vec<Violation> {
        let api_version = object.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or_default();
        let (crd, version) = match find_version(self.crds, api_version, kind) {
            Ok(found) => found,
            Err(violation) => return vec![violation],
        };
        let Some(schema) = version.pointer("/schema/openAPIV3Schema") else {
            let name = crd.pointer("/metadata/name").and_then(Value::as_str).unwrap_or(kind);
            return vec![Violation::new("", format!("the CRD {name} has no openAPIV3Schema for {api_version}"))];
        };
        let mut out = check_root(schema, object, &mut self.verdicts);
        if version.pointer("/subresources/status").is_some() && object.get("status").is_some_and(|s| !s.is_null()) {
            out.push(Violation::new(
                "status",
                format!(
                    "{kind} has the status subresource: the API server ignores status sent with the object, \
                     so it would be lost"
                ),
            ));
        }
        let cluster_scoped = crd.pointer("/spec/scope").and_then(Value::as_str) == Some("Cluster");
        if cluster_scoped && object.pointer("/metadata/namespace").is_some_and(|n| !n.is_null()) {
            out.push(Violation::new(
                "metadata.namespace",
                format!("{kind} is cluster-scoped: the API server ignores a namespace, so it would be lost; remove it"),
            ));
        }
        out
    }
}

/// The CRD and served version that serve `api_version` and `kind`, or a violation naming what `crds` do serve.
pub fn find_version<'a>(crds: &'a [Value], api_version: &str, kind: &str) -> Result<(&'a Value, &'a Value), Violation> {
    if api_version.is_empty() || kind.is_empty() {
        let field = if api_version.is_empty() { "apiVersion" } else { "kind" };
        return Err(Violation::new(field, format!("required field \"{field}\" is missing")));
    }
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let mut served = Vec::new();
    for crd in crds {
        let crd_group = crd.pointer("/spec/group").and_then(Value::as_str).unwrap_or_default();
        let crd_kind = crd.pointer("/spec/names/kind").and_then(Value::as_str).unwrap_or_default();
        let versions = crd.pointer("/spec/versions").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        for candidate in versions {
            if candidate.get("served").and_then(Value::as_bool) != Some(true) {
                continue;
            }
            let name = candidate.get("name").and_then(Value::as_str).unwrap_or_default();
            if crd_group == group && crd_kind == kind && name == version {
                return Ok((crd, candidate));
            }
            served.push(format!("{crd_group}/{name} {crd_kind}"));
        }
    }
    let served = if served.is_empty() { "none".to_string() } else { served.join(", ") };
    Err(Violation::new(
        "",
        format!("no CustomResourceDefinition serves apiVersion {api_version} kind {kind}; served: {served}"),
    ))
}

fn check_resource_identity(object: &Value, out: &mut Vec<Violation>) {
    for field in ["apiVersion", "kind"] {
        match object.get(field) {
            Some(Value::String(text)) if !text.is_empty() => {}
            Some(other) if !other.is_null() && !other.is_string() => {
                out.push(Violation::new(field, format!("expected string, got {}", describe(other))))
            }
            _ => out.push(Violation::new(field, format!("required field \"{field}\" is missing"))),
        }
    }
    if object.is_object() {
        check_object_meta(object, NameRule::Subdomain, out);
    }
}

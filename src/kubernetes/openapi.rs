//! Validation of custom objects against a CRD version's structural schema (`openAPIV3Schema`), the checks the API
//! server's OpenAPI validation makes, so that kbp rejects what the server would reject before sending it.
//!
//! One addition to what the server does: a field the schema does not declare is reported. The server prunes such
//! a field silently (the object is accepted without it), so a misspelt setting would simply vanish.
//!
//! CEL rules (`x-kubernetes-validations`) are listed by [`cel_rules`], not evaluated: the Karpenter rules kbp
//! relies on are checked by hand where the blueprint is validated.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, OnceLock, PoisonError};

use base64::Engine as _;
use regex::Regex;
use serde_json::{Map, Number, Value};

/// One reason the API server would refuse an object (or would silently drop part of it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Where in the object, e.g. `spec.template.spec.requirements[0].operator`; empty for the object itself.
    pub path: String,
    /// What was found and what was expected.
    pub message: String,
}

impl Violation {
    pub(crate) fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Violation { path: path.into(), message: message.into() }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// Validates `object` against `schema` (a CRD version's `schema.openAPIV3Schema`) as the API server's OpenAPI
/// validation does. When the schema declares `metadata` (every resource root does), the object is a resource:
/// `apiVersion`, `kind` and `metadata.name` are checked instead of validating `metadata` against the schema.
pub fn validate(schema: &Value, object: &Value) -> Vec<Violation> {
    let mut out = Vec::new();
    if schema.pointer("/properties/metadata").is_some() {
        check_resource_identity(object, &mut out);
    }
    check(schema, object, "", true, &mut out);
    out
}

/// Finds in `crds` (CustomResourceDefinition objects as JSON) the CRD and served version for the object's
/// apiVersion and kind, and validates the object against that version's schema.
pub fn validate_custom_object(crds: &[Value], object: &Value) -> Vec<Violation> {
    let api_version = object.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or_default();
    let (crd, version) = match find_version(crds, api_version, kind) {
        Ok(found) => found,
        Err(violation) => return vec![violation],
    };
    let Some(schema) = version.pointer("/schema/openAPIV3Schema") else {
        let name = crd.pointer("/metadata/name").and_then(Value::as_str).unwrap_or(kind);
        return vec![Violation::new("", format!("the CRD {name} has no openAPIV3Schema for {api_version}"))];
    };
    let mut out = validate(schema, object);
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

/// The CEL rules (`x-kubernetes-validations`) of a schema: (path, rule, message), paths written like violation
/// paths with `[*]` for any list item and `.*` for any map value. The path is empty for rules on the root.
pub fn cel_rules(schema: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    collect_cel_rules(schema, "", &mut out);
    out
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

/// The rules object names follow; which one applies depends on the kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameRule {
    /// DNS-1123 subdomain: lowercase alphanumerics, '-' and '.', at most 253 characters (most kinds).
    Subdomain,
    /// DNS-1123 label: lowercase alphanumerics and '-', at most 63 characters (Namespace).
    Label,
    /// DNS-1035 label: a DNS-1123 label that starts with a letter (Service).
    Dns1035Label,
    /// Any path segment: not "." or "..", no '/' or '%' (RBAC objects, e.g. `system:controller`).
    PathSegment,
}

impl NameRule {
    /// Why `name` breaks the rule, if it does.
    pub(crate) fn check(self, name: &str) -> Option<String> {
        let (ok, rule) = match self {
            NameRule::Subdomain => (
                name.len() <= 253 && name.split('.').all(|part| is_dns_label(part, false)),
                "a DNS-1123 subdomain (lowercase letters, digits, '-' and '.', starting and ending alphanumeric, \
                 at most 253 characters)",
            ),
            NameRule::Label => (
                name.len() <= 63 && is_dns_label(name, false),
                "a DNS-1123 label (lowercase letters, digits and '-', starting and ending alphanumeric, \
                 at most 63 characters)",
            ),
            NameRule::Dns1035Label => (
                name.len() <= 63 && is_dns_label(name, true),
                "a DNS-1035 label (lowercase letters, digits and '-', starting with a letter, ending alphanumeric, \
                 at most 63 characters)",
            ),
            NameRule::PathSegment => (
                !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '%']),
                "a path segment (not \".\" or \"..\", without '/' or '%')",
            ),
        };
        (!ok).then(|| format!("invalid name \"{name}\": must be {rule}"))
    }
}

fn is_dns_label(part: &str, letter_first: bool) -> bool {
    let bytes = part.as_bytes();
    let (Some(first), Some(last)) = (bytes.first(), bytes.last()) else { return false };
    let first_ok =
        if letter_first { first.is_ascii_lowercase() } else { first.is_ascii_lowercase() || first.is_ascii_digit() };
    first_ok
        && (last.is_ascii_lowercase() || last.is_ascii_digit())
        && bytes.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
}

/// Checks `metadata` the way the API server checks every object's ObjectMeta: a name following `rule`, a
/// namespace that is a DNS-1123 label, label keys and values, annotation keys.
pub(crate) fn check_object_meta(object: &Value, rule: NameRule, out: &mut Vec<Violation>) {
    let Some(meta) = object.get("metadata") else {
        out.push(Violation::new("metadata", "required field \"metadata\" is missing"));
        return;
    };
    let Some(meta) = meta.as_object() else {
        out.push(Violation::new("metadata", format!("expected object, got {}", describe(meta))));
        return;
    };
    match meta.get("name") {
        None | Some(Value::Null) => out.push(Violation::new("metadata.name", "required field \"name\" is missing")),
        Some(Value::String(name)) => out.extend(rule.check(name).map(|m| Violation::new("metadata.name", m))),
        Some(other) => out.push(Violation::new("metadata.name", format!("expected string, got {}", describe(other)))),
    }
    if let Some(namespace) = meta.get("namespace").filter(|n| !n.is_null()) {
        match namespace.as_str() {
            Some(ns) => out.extend(NameRule::Label.check(ns).map(|m| Violation::new("metadata.namespace", m))),
            None => {
                out.push(Violation::new("metadata.namespace", format!("expected string, got {}", describe(namespace))))
            }
        }
    }
    for (field, values_are_labels) in [("labels", true), ("annotations", false)] {
        let Some(map) = meta.get(field).filter(|m| !m.is_null()) else { continue };
        let path = format!("metadata.{field}");
        let Some(map) = map.as_object() else {
            out.push(Violation::new(path, format!("expected object, got {}", describe(map))));
            continue;
        };
        for (key, value) in map {
            let at = child(&path, key);
            if let Some(problem) = qualified_name_problem(key) {
                out.push(Violation::new(&at, format!("invalid key \"{key}\": {problem}")));
            }
            match value.as_str() {
                None => out.push(Violation::new(&at, format!("expected string, got {}", describe(value)))),
                Some(text) if values_are_labels && !is_label_value(text) => out.push(Violation::new(
                    &at,
                    format!(
                        "invalid label value \"{text}\": at most 63 characters, alphanumerics, '-', '_' or '.', \
                         starting and ending alphanumeric"
                    ),
                )),
                Some(_) => {}
            }
        }
    }
}

/// Why `key` is not a qualified name (`[prefix/]name`, as label and annotation keys must be).
pub(crate) fn qualified_name_problem(key: &str) -> Option<String> {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix {
        if let Some(problem) = NameRule::Subdomain.check(prefix) {
            return Some(format!("prefix: {problem}"));
        }
    }
    let name_ok = name.len() <= 63
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    (!name_ok).then(|| {
        "name part must be at most 63 characters, alphanumerics, '-', '_' or '.', starting and ending alphanumeric"
            .into()
    })
}

fn is_label_value(value: &str) -> bool {
    value.is_empty() || (qualified_name_problem(value).is_none() && !value.contains('/'))
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

/// Validates `value` at `path`. `structural` is false inside allOf/anyOf/oneOf/not, which only constrain values:
/// there a field the subschema does not list is not unknown (the structural schema declares it).
fn check(schema: &Value, value: &Value, path: &str, structural: bool, out: &mut Vec<Violation>) {
    if value.is_null() {
        if !flag(schema, "nullable") {
            if let Some(expected) = expected_type(schema) {
                out.push(Violation::new(path, format!("expected {expected}, got null (the schema is not nullable)")));
            }
        }
        return;
    }
    if !check_type(schema, value, path, out) {
        return;
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
        if !allowed.iter().any(|candidate| json_eq(candidate, value)) {
            let list: Vec<String> = allowed.iter().map(|v| v.to_string()).collect();
            out.push(Violation::new(
                path,
                format!("unsupported value {}; supported values: {}", short(value), list.join(", ")),
            ));
        }
    }
    match value {
        Value::String(text) => check_string(schema, text, path, out),
        Value::Number(number) => check_number(schema, number, path, out),
        Value::Array(items) => check_array(schema, items, path, structural, out),
        Value::Object(fields) => check_object(schema, fields, path, structural, out),
        Value::Bool(_) | Value::Null => {}
    }
    check_junctors(schema, value, path, out);
}

fn check_junctors(schema: &Value, value: &Value, path: &str, out: &mut Vec<Violation>) {
    let violations_of = |sub: &Value| {
        let mut found = Vec::new();
        check(sub, value, path, false, &mut found);
        found
    };
    for sub in schema.get("allOf").and_then(Value::as_array).into_iter().flatten() {
        out.extend(violations_of(sub));
    }
    if let Some(alternatives) = schema.get("anyOf").and_then(Value::as_array) {
        let failures: Vec<Vec<Violation>> = alternatives.iter().map(violations_of).collect();
        if !failures.is_empty() && failures.iter().all(|f| !f.is_empty()) {
            let reasons: Vec<String> = failures.iter().map(|f| f[0].to_string()).collect();
            out.push(Violation::new(path, format!("matches none of the anyOf alternatives: {}", reasons.join("; "))));
        }
    }
    if let Some(alternatives) = schema.get("oneOf").and_then(Value::as_array) {
        let matching = alternatives.iter().filter(|sub| violations_of(sub).is_empty()).count();
        if matching != 1 {
            out.push(Violation::new(
                path,
                format!("must match exactly one of the {} oneOf alternatives, matches {matching}", alternatives.len()),
            ));
        }
    }
    if let Some(forbidden) = schema.get("not") {
        if violations_of(forbidden).is_empty() {
            out.push(Violation::new(path, format!("must not match the schema {forbidden}")));
        }
    }
}

fn flag(schema: &Value, keyword: &str) -> bool {
    schema.get(keyword).and_then(Value::as_bool).unwrap_or(false)
}

fn expected_type(schema: &Value) -> Option<&str> {
    if flag(schema, "x-kubernetes-int-or-string") {
        return Some("integer or string");
    }
    schema.get("type").and_then(Value::as_str)
}

/// Whether the value has the schema's type; reports it when not. Integers are JSON integers within int64, as
/// the server decodes them; `1.0` is a number, not an integer.
fn check_type(schema: &Value, value: &Value, path: &str, out: &mut Vec<Violation>) -> bool {
    let Some(expected) = expected_type(schema) else { return true };
    let is_integer = value.as_i64().is_some();
    let ok = match expected {
        "integer or string" => is_integer || value.is_string(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "integer" => is_integer,
        "number" => value.is_number(),
        _ => true,
    };
    if !ok {
        out.push(Violation::new(path, format!("expected {expected}, got {}", describe(value))));
    }
    ok
}

fn check_string(schema: &Value, text: &str, path: &str, out: &mut Vec<Violation>) {
    let length = text.chars().count() as u64;
    if let Some(min) = schema.get("minLength").and_then(Value::as_u64).filter(|min| length < *min) {
        out.push(Violation::new(path, format!("must be at least {min} characters long, got {length}")));
    }
    if let Some(max) = schema.get("maxLength").and_then(Value::as_u64).filter(|max| length > *max) {
        out.push(Violation::new(path, format!("may be at most {max} characters long, got {length}")));
    }
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
        match compiled(pattern) {
            Ok(regex) if !regex.is_match(text) => {
                out.push(Violation::new(path, format!("\"{text}\" does not match the pattern {pattern}")))
            }
            Ok(_) => {}
            Err(error) => out.push(Violation::new(
                path,
                format!(
                    "kbp limitation, not an error in the value: the schema's pattern {pattern} cannot be compiled \
                     here ({error}), so \"{text}\" was not checked against it"
                ),
            )),
        }
    }
    if let Some(format) = schema.get("format").and_then(Value::as_str) {
        if let Some(expected) = string_format_problem(format, text) {
            out.push(Violation::new(path, format!("\"{text}\" is not {expected} (format {format})")));
        }
    }
}

/// What `text` should have been for a string format the server checks; formats it does not know are ignored.
fn string_format_problem(format: &str, text: &str) -> Option<&'static str> {
    let ok = match format {
        "date-time" | "datetime" => is_date_time(text),
        "date" => is_date(text),
        "byte" => base64::prelude::BASE64_STANDARD.decode(text).is_ok(),
        "ipv4" => text.parse::<std::net::Ipv4Addr>().is_ok(),
        "ipv6" => text.parse::<std::net::Ipv6Addr>().is_ok(),
        "cidr" => text.parse::<ipnet::IpNet>().is_ok(),
        "uuid" => compiled("^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")
            .is_ok_and(|uuid| uuid.is_match(text)),
        _ => return None,
    };
    let expected = match format {
        "date-time" | "datetime" => "an RFC 3339 date-time such as 2025-01-31T12:00:00Z",
        "date" => "a date such as 2025-01-31",
        "byte" => "base64-encoded",
        "ipv4" => "an IPv4 address",
        "ipv6" => "an IPv6 address",
        "cidr" => "a CIDR such as 10.0.0.0/16",
        _ => "a UUID",
    };
    (!ok).then_some(expected)
}

fn is_date(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    let [year, month, day] = parts.as_slice() else { return false };
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    if !(digits(year, 4) && digits(month, 2) && digits(day, 2)) {
        return false;
    }
    let (Ok(year), Ok(month), Ok(day)) = (year.parse::<i32>(), month.parse::<u8>(), day.parse::<u8>()) else {
        return false;
    };
    time::Month::try_from(month).is_ok_and(|month| time::Date::from_calendar_date(year, month, day).is_ok())
}

/// RFC 3339 and the reduced forms the server's date-time parser also takes (no seconds, no zone).
fn is_date_time(text: &str) -> bool {
    let Ok(shape) =
        compiled(r"^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:?\d{2})?$")
    else {
        return false;
    };
    let Some(parts) = shape.captures(text) else { return false };
    let number = |i: usize| parts.get(i).map_or(Ok(0), |m| m.as_str().parse::<u8>());
    let (Ok(hour), Ok(minute), Ok(second)) = (number(2), number(3), number(4)) else { return false };
    is_date(&parts[1]) && hour < 24 && minute < 60 && second <= 60
}

fn check_number(schema: &Value, number: &Number, path: &str, out: &mut Vec<Violation>) {
    for (bound, exclusive_keyword, below) in
        [("minimum", "exclusiveMinimum", true), ("maximum", "exclusiveMaximum", false)]
    {
        // OpenAPI 3.0 makes exclusiveMinimum a flag on minimum; JSON Schema drafts make it the bound itself.
        let (limit, exclusive) = match (schema.get(bound), schema.get(exclusive_keyword)) {
            (_, Some(Value::Number(limit))) => (limit, true),
            (Some(Value::Number(limit)), exclusive) => (limit, exclusive.and_then(Value::as_bool).unwrap_or(false)),
            _ => continue,
        };
        let Some(order) = number_cmp(number, limit) else { continue };
        let broken = match (below, exclusive) {
            (true, false) => order == Ordering::Less,
            (true, true) => order != Ordering::Greater,
            (false, false) => order == Ordering::Greater,
            (false, true) => order != Ordering::Less,
        };
        if broken {
            let relation = match (below, exclusive) {
                (true, false) => "greater than or equal to",
                (true, true) => "greater than",
                (false, false) => "less than or equal to",
                (false, true) => "less than",
            };
            out.push(Violation::new(path, format!("must be {relation} {limit}, got {number}")));
        }
    }
    if let Some(divisor) = schema.get("multipleOf").and_then(Value::as_f64).filter(|d| *d > 0.0) {
        let quotient = number.as_f64().unwrap_or_default() / divisor;
        if (quotient - quotient.round()).abs() > 1e-9 {
            out.push(Violation::new(path, format!("must be a multiple of {divisor}, got {number}")));
        }
    }
    // The API server does not range-check int32, but the controller decodes the field into an int32 and fails.
    if schema.get("format").and_then(Value::as_str) == Some("int32") {
        if let Some(value) = number.as_i64().filter(|v| i32::try_from(*v).is_err()) {
            out.push(Violation::new(path, format!("{value} is outside the 32-bit integer range (format int32)")));
        }
    }
}

fn check_array(schema: &Value, items: &[Value], path: &str, structural: bool, out: &mut Vec<Violation>) {
    let count = items.len() as u64;
    if let Some(min) = schema.get("minItems").and_then(Value::as_u64).filter(|min| count < *min) {
        out.push(Violation::new(path, format!("must have at least {min} items, has {count}")));
    }
    if let Some(max) = schema.get("maxItems").and_then(Value::as_u64).filter(|max| count > *max) {
        out.push(Violation::new(path, format!("may have at most {max} items, has {count}")));
    }
    if let Some(item_schema) = schema.get("items").filter(|s| s.is_object()) {
        for (i, item) in items.iter().enumerate() {
            check(item_schema, item, &index(path, i), structural, out);
        }
    }
    match schema.get("x-kubernetes-list-type").and_then(Value::as_str) {
        Some("set") => {
            for (i, item) in items.iter().enumerate() {
                if items[..i].iter().any(|earlier| json_eq(earlier, item)) {
                    out.push(Violation::new(
                        index(path, i),
                        format!("duplicate value {} (the list is a set: x-kubernetes-list-type: set)", short(item)),
                    ));
                }
            }
        }
        Some("map") => {
            let keys: Vec<&str> = schema
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .map(|keys| keys.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let key_of = |item: &Value| -> Vec<Value> {
                keys.iter().map(|k| item.get(*k).cloned().unwrap_or(Value::Null)).collect()
            };
            for (i, item) in items.iter().enumerate() {
                let key = key_of(item);
                if items[..i].iter().any(|earlier| key_of(earlier).iter().zip(&key).all(|(a, b)| json_eq(a, b))) {
                    let shown: Vec<String> = keys.iter().zip(&key).map(|(k, v)| format!("{k}={}", short(v))).collect();
                    out.push(Violation::new(
                        index(path, i),
                        format!(
                            "duplicate entry with key {} (the list is a map keyed by {})",
                            shown.join(", "),
                            keys.join(", ")
                        ),
                    ));
                }
            }
        }
        _ => {}
    }
}

fn check_object(schema: &Value, fields: &Map<String, Value>, path: &str, structural: bool, out: &mut Vec<Violation>) {
    let properties = schema.get("properties").and_then(Value::as_object);
    let additional = schema.get("additionalProperties");
    let preserve = flag(schema, "x-kubernetes-preserve-unknown-fields");
    for (key, value) in fields {
        // ObjectMeta at a resource root is the server's own type, checked by check_object_meta.
        if path.is_empty() && key == "metadata" && properties.is_some_and(|p| p.contains_key("metadata")) {
            continue;
        }
        let at = child(path, key);
        let field_schema = properties.and_then(|p| p.get(key)).or(additional.filter(|a| a.is_object()));
        match field_schema {
            // The server drops a null the schema does not allow (or defaults it); `required` catches the gap.
            Some(field_schema) if value.is_null() && !flag(field_schema, "nullable") => {}
            Some(field_schema) => check(field_schema, value, &at, structural, out),
            None if !structural || preserve || additional == Some(&Value::Bool(true)) => {}
            None if flag(schema, "x-kubernetes-embedded-resource")
                && ["apiVersion", "kind", "metadata"].contains(&key.as_str()) => {}
            None if additional == Some(&Value::Bool(false)) => out
                .push(Violation::new(at, format!("field \"{key}\" is not allowed here (additionalProperties: false)"))),
            None => out.push(Violation::new(at, unknown_field_message(key, properties))),
        }
    }
    for required in schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
        let field_schema = properties.and_then(|p| p.get(required));
        // The server applies defaults before it validates, so a defaulted field is never missing.
        if field_schema.is_some_and(|s| s.get("default").is_some()) {
            continue;
        }
        match fields.get(required) {
            None => {
                out.push(Violation::new(child(path, required), format!("required field \"{required}\" is missing")))
            }
            Some(Value::Null) if !field_schema.is_some_and(|s| flag(s, "nullable")) => out.push(Violation::new(
                child(path, required),
                format!(
                    "required field \"{required}\" is null; the API server drops a null the schema does not allow, \
                     so the field would be missing"
                ),
            )),
            Some(_) => {}
        }
    }
    let count = fields.len() as u64;
    if let Some(min) = schema.get("minProperties").and_then(Value::as_u64).filter(|min| count < *min) {
        out.push(Violation::new(path, format!("must have at least {min} fields, has {count}")));
    }
    if let Some(max) = schema.get("maxProperties").and_then(Value::as_u64).filter(|max| count > *max) {
        out.push(Violation::new(path, format!("may have at most {max} fields, has {count}")));
    }
}

fn unknown_field_message(key: &str, properties: Option<&Map<String, Value>>) -> String {
    let known: Vec<&str> = properties.map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
    let hint = match known.iter().min_by_key(|k| strsim::levenshtein(k, key)) {
        Some(close) if strsim::levenshtein(close, key) <= 2 => format!(" (did you mean \"{close}\"?)"),
        _ if known.is_empty() => " (the schema declares no fields here)".to_string(),
        _ if known.len() > 15 => format!(" (known fields: {}, ...)", known[..15].join(", ")),
        _ => format!(" (known fields: {})", known.join(", ")),
    };
    format!(
        "unknown field \"{key}\"{hint}: the schema does not declare it, \
         so the API server would silently prune it and the setting would be lost"
    )
}

fn collect_cel_rules(schema: &Value, path: &str, out: &mut Vec<(String, String, String)>) {
    for rule in schema.get("x-kubernetes-validations").and_then(Value::as_array).into_iter().flatten() {
        let text = rule.get("rule").and_then(Value::as_str).unwrap_or_default().to_string();
        let message = match (rule.get("message"), rule.get("messageExpression")) {
            (Some(Value::String(message)), _) => message.clone(),
            (_, Some(Value::String(expression))) => format!("messageExpression: {expression}"),
            _ => format!("failed rule: {text}"),
        };
        out.push((path.to_string(), text, message));
    }
    for (name, sub) in schema.get("properties").and_then(Value::as_object).into_iter().flatten() {
        collect_cel_rules(sub, &child(path, name), out);
    }
    if let Some(values) = schema.get("additionalProperties").filter(|a| a.is_object()) {
        collect_cel_rules(values, &if path.is_empty() { "*".to_string() } else { format!("{path}.*") }, out);
    }
    if let Some(items) = schema.get("items").filter(|i| i.is_object()) {
        collect_cel_rules(items, &format!("{path}[*]"), out);
    }
}

/// The path of a field or map key; keys that are not plain identifiers are bracketed, as in
/// `labels[app.kubernetes.io/name]`.
pub(crate) fn child(path: &str, key: &str) -> String {
    let plain = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match (path.is_empty(), plain) {
        (true, true) => key.to_string(),
        (false, true) => format!("{path}.{key}"),
        (_, false) => format!("{path}[{key}]"),
    }
}

pub(crate) fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

/// A value as a message shows it: its JSON type and, for scalars, the value.
pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) if n.as_i64().is_some() || n.as_u64().is_some() => format!("integer {n}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(_) => format!("string {}", short(value)),
        Value::Array(items) => format!("array of {} items", items.len()),
        Value::Object(_) => "object".into(),
    }
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 80 {
        return text;
    }
    let cut: String = text.chars().take(77).collect();
    format!("{cut}...")
}

/// JSON equality with numbers compared by value, so `1` equals `1.0` as it does for the server.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => number_cmp(x, y) == Some(Ordering::Equal),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_eq(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

fn number_cmp(a: &Number, b: &Number) -> Option<Ordering> {
    let exact = |n: &Number| n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from));
    match (exact(a), exact(b)) {
        (Some(x), Some(y)) => Some(x.cmp(&y)),
        _ => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

/// The compiled form of a schema pattern, compiled once per process.
fn compiled(pattern: &str) -> Result<Regex, String> {
    static CACHE: OnceLock<Mutex<HashMap<String, Result<Regex, String>>>> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Default::default).lock().unwrap_or_else(PoisonError::into_inner);
    cache
        .entry(pattern.to_string())
        .or_insert_with(|| Regex::new(&go_pattern(pattern)).map_err(|e| e.to_string().replace('\n', " ")))
        .clone()
}

/// Rewrites a pattern written for the API server (Go's RE2 syntax) so the regex crate reads it the same way:
/// Go's `\d`, `\s` and `\w` are ASCII-only where the regex crate's are Unicode, and a `[` inside a character
/// class is a literal in Go but opens a nested class here.
fn go_pattern(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(escaped) = chars.next() else {
                    out.push('\\');
                    break;
                };
                let ascii = match escaped {
                    'd' => Some(("0-9", false)),
                    'D' => Some(("0-9", true)),
                    's' => Some((r"\t\n\f\r ", false)),
                    'S' => Some((r"\t\n\f\r ", true)),
                    'w' => Some(("0-9A-Za-z_", false)),
                    'W' => Some(("0-9A-Za-z_", true)),
                    _ => None,
                };
                match ascii {
                    Some((set, false)) if in_class => out.push_str(set),
                    Some((set, negated)) if !in_class => {
                        out.push_str(if negated { "[^" } else { "[" });
                        out.push_str(set);
                        out.push(']');
                    }
                    _ => {
                        out.push('\\');
                        out.push(escaped);
                    }
                }
            }
            '[' if in_class => {
                if chars.peek() == Some(&':') {
                    // A POSIX class such as [:alpha:] means the same in both syntaxes.
                    out.push('[');
                    for posix in chars.by_ref() {
                        out.push(posix);
                        if posix == ']' {
                            break;
                        }
                    }
                } else {
                    out.push_str(r"\[");
                }
            }
            '[' => {
                in_class = true;
                out.push('[');
                if chars.peek() == Some(&'^') {
                    out.extend(chars.next());
                }
                // A ']' right after the opening bracket is a literal in both syntaxes.
                if chars.peek() == Some(&']') {
                    chars.next();
                    out.push_str(r"\]");
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use super::*;

    /// The official Karpenter CRDs (v1.14.1), read from the shared reference data; never copied into the project.
    pub(crate) fn karpenter_crds() -> Vec<Value> {
        let dir = std::env::var_os("KBP_KARPENTER_CRDS_DIR").map(PathBuf::from).unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/reference/karpenter-v1.14.1/crds")
        });
        ["karpenter.k8s.aws_ec2nodeclasses.yaml", "karpenter.sh_nodeclaims.yaml", "karpenter.sh_nodepools.yaml"]
            .iter()
            .map(|file| {
                let path = dir.join(file);
                let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
                    panic!(
                        "the Karpenter v1.14.1 CRDs are expected in {} (set KBP_KARPENTER_CRDS_DIR to their directory): \
                         cannot read {}: {e}",
                        dir.display(),
                        path.display()
                    )
                });
                serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{} is not YAML: {e}", path.display()))
            })
            .collect()
    }

    fn schema_of<'a>(crds: &'a [Value], kind: &str) -> &'a Value {
        let crd = crds.iter().find(|c| c.pointer("/spec/names/kind") == Some(&json!(kind))).expect("kind in the CRDs");
        crd.pointer("/spec/versions/0/schema/openAPIV3Schema").expect("CRD has a schema")
    }

    /// The single violation of `value` against `schema`, which must be at `path` and mention `needle`.
    fn assert_one(schema: Value, value: Value, path: &str, needle: &str) {
        let found = validate(&schema, &value);
        assert_eq!(found.len(), 1, "expected one violation at {path}, got {found:#?}");
        assert_eq!(found[0].path, path, "{found:#?}");
        assert!(found[0].message.contains(needle), "message {:?} should mention {needle:?}", found[0].message);
    }

    fn assert_clean(schema: Value, value: Value) {
        let found = validate(&schema, &value);
        assert!(found.is_empty(), "expected no violations, got {found:#?}");
    }

    fn field(schema: Value) -> Value {
        json!({"type": "object", "properties": {"f": schema}})
    }

    #[test]
    fn type_keyword_accepts_each_type_and_rejects_others() {
        let cases = [
            ("object", json!({}), json!([])),
            ("array", json!([1]), json!({})),
            ("string", json!("x"), json!(1)),
            ("integer", json!(3), json!(1.5)),
            ("number", json!(1.5), json!("1.5")),
            ("boolean", json!(true), json!("true")),
        ];
        for (ty, good, bad) in cases {
            assert_clean(field(json!({"type": ty})), json!({"f": good}));
            assert_one(field(json!({"type": ty})), json!({"f": bad}), "f", &format!("expected {ty}"));
        }
    }

    #[test]
    fn integer_accepts_json_integers_only() {
        assert_one(field(json!({"type": "integer"})), json!({"f": 1.0}), "f", "got number 1.0");
        assert_one(field(json!({"type": "integer"})), json!({"f": u64::MAX}), "f", "expected integer");
        assert_clean(field(json!({"type": "integer"})), json!({"f": -7}));
    }

    #[test]
    fn int_or_string_takes_integers_and_strings() {
        let schema = field(json!({"x-kubernetes-int-or-string": true, "pattern": "^[0-9]+%$"}));
        assert_clean(schema.clone(), json!({"f": 3}));
        assert_clean(schema.clone(), json!({"f": "30%"}));
        assert_one(schema.clone(), json!({"f": 1.5}), "f", "expected integer or string");
        assert_one(schema.clone(), json!({"f": true}), "f", "expected integer or string");
        assert_one(schema, json!({"f": "30"}), "f", "does not match the pattern");
    }

    #[test]
    fn unknown_fields_are_reported_as_pruned_unless_preserved() {
        let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        assert_one(schema.clone(), json!({"nmae": "x"}), "nmae", "silently prune");
        assert_one(schema.clone(), json!({"nmae": "x"}), "nmae", "did you mean \"name\"");
        let preserved = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"name": {"type": "string"}}});
        assert_clean(preserved.clone(), json!({"anything": {"goes": [1]}}));
        assert_one(preserved, json!({"name": 1}), "name", "expected string");
    }

    #[test]
    fn an_object_without_properties_keeps_no_fields() {
        assert_one(json!({"type": "object"}), json!({"a": 1}), "a", "declares no fields");
    }

    #[test]
    fn nullable_allows_null_and_non_nullable_null_is_dropped() {
        let schema = json!({
            "type": "object",
            "required": ["must"],
            "properties": {"must": {"type": "string"}, "may": {"type": "string"}, "null_ok": {"type": "string", "nullable": true}},
        });
        assert_clean(schema.clone(), json!({"must": "x", "null_ok": null, "may": null}));
        assert_one(schema.clone(), json!({"must": null}), "must", "is null");
        let list = field(json!({"type": "array", "items": {"type": "string"}}));
        assert_one(list, json!({"f": ["a", null]}), "f[1]", "not nullable");
        let nullable_list = field(json!({"type": "array", "items": {"type": "string", "nullable": true}}));
        assert_clean(nullable_list, json!({"f": ["a", null]}));
    }

    #[test]
    fn additional_properties_schema_validates_map_values() {
        let schema = field(json!({"type": "object", "additionalProperties": {"type": "string", "maxLength": 3}}));
        assert_clean(schema.clone(), json!({"f": {"a": "abc", "b.c/d": ""}}));
        assert_one(schema, json!({"f": {"team.example.com/owner": "abcd"}}), "f[team.example.com/owner]", "at most 3");
    }

    #[test]
    fn additional_properties_bool() {
        let closed = json!({"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": false});
        assert_clean(closed.clone(), json!({"a": 1}));
        assert_one(closed, json!({"a": 1, "b": 2}), "b", "not allowed");
        let open = json!({"type": "object", "additionalProperties": true});
        assert_clean(open, json!({"a": 1, "b": [true]}));
    }

    #[test]
    fn required_fields() {
        let schema = json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}, "b": {"type": "string"}}});
        assert_clean(schema.clone(), json!({"a": ""}));
        assert_one(schema, json!({"b": "x"}), "a", "required field \"a\" is missing");
    }

    #[test]
    fn a_required_field_with_a_default_is_filled_by_the_server() {
        let schema =
            json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "string", "default": "x"}}});
        assert_clean(schema.clone(), json!({}));
        assert_clean(schema, json!({"a": null}));
    }

    #[test]
    fn default_values_themselves_are_not_validated() {
        assert_clean(field(json!({"type": "integer", "default": "not an integer"})), json!({}));
    }

    #[test]
    fn enum_values() {
        let schema = field(json!({"type": "string", "enum": ["In", "NotIn"]}));
        assert_clean(schema.clone(), json!({"f": "NotIn"}));
        assert_one(schema, json!({"f": "in"}), "f", "supported values: \"In\", \"NotIn\"");
        assert_clean(field(json!({"type": "number", "enum": [1]})), json!({"f": 1.0}));
    }

    #[test]
    fn patterns_match_anywhere_unless_anchored() {
        assert_clean(field(json!({"type": "string", "pattern": "sg-[0-9a-z]+"})), json!({"f": "x sg-12ab"}));
        assert_one(
            field(json!({"type": "string", "pattern": "^sg-[0-9a-z]+$"})),
            json!({"f": "x sg-12ab"}),
            "f",
            "pattern",
        );
    }

    #[test]
    fn patterns_read_like_go_regular_expressions() {
        // Go's \d is ASCII only: an Arabic-Indic digit does not match, where the regex crate's \d would.
        let digits = field(json!({"type": "string", "pattern": r"^\d+$"}));
        assert_clean(digits.clone(), json!({"f": "42"}));
        assert_one(digits, json!({"f": "٤٢"}), "f", "pattern");
        // A '[' inside a class is a literal in Go.
        assert_clean(field(json!({"type": "string", "pattern": r"^[[a]+$"})), json!({"f": "[a["}));
        assert_clean(field(json!({"type": "string", "pattern": r"^[\s\d]+$"})), json!({"f": " 1\t2"}));
        assert_eq!(go_pattern(r"\\d[\w]\S"), r"\\d[0-9A-Za-z_][^\t\n\f\r ]");
    }

    #[test]
    fn a_pattern_kbp_cannot_compile_is_its_own_limitation() {
        // A backreference is not RE2 either, but whatever cannot be compiled must not blame the value.
        assert_one(field(json!({"type": "string", "pattern": r"^(a)\1$"})), json!({"f": "aa"}), "f", "kbp limitation");
        assert!(compiled(r"^(a)\1$").is_err());
    }

    #[test]
    fn string_formats() {
        let date_time = field(json!({"type": "string", "format": "date-time"}));
        assert_clean(date_time.clone(), json!({"f": "2025-02-28T23:59:59.123Z"}));
        assert_clean(date_time.clone(), json!({"f": "2025-02-28T23:59:59+02:00"}));
        assert_one(date_time.clone(), json!({"f": "2025-02-30T00:00:00Z"}), "f", "format date-time");
        assert_one(date_time, json!({"f": "yesterday"}), "f", "format date-time");
        let cases = [("date", "2024-02-29", "2023-02-29"), ("byte", "aGk=", "h!"), ("ipv4", "10.0.0.1", "10.0.0.256")];
        for (format, good, bad) in cases {
            assert_clean(field(json!({"type": "string", "format": format})), json!({"f": good}));
            assert_one(field(json!({"type": "string", "format": format})), json!({"f": bad}), "f", format);
        }
        assert_clean(field(json!({"type": "string", "format": "no-such-format"})), json!({"f": "anything"}));
    }

    #[test]
    fn integer_formats() {
        let int32 = field(json!({"type": "integer", "format": "int32"}));
        assert_clean(int32.clone(), json!({"f": 2_147_483_647}));
        assert_one(int32, json!({"f": 2_147_483_648_i64}), "f", "32-bit");
        assert_clean(field(json!({"type": "integer", "format": "int64"})), json!({"f": i64::MAX}));
    }

    #[test]
    fn minimum_and_maximum() {
        let schema = field(json!({"type": "integer", "minimum": 1, "maximum": 100}));
        assert_clean(schema.clone(), json!({"f": 1}));
        assert_clean(schema.clone(), json!({"f": 100}));
        assert_one(schema.clone(), json!({"f": 0}), "f", "greater than or equal to 1, got 0");
        assert_one(schema, json!({"f": 101}), "f", "less than or equal to 100, got 101");
    }

    #[test]
    fn exclusive_bounds() {
        let schema = field(
            json!({"type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 1, "exclusiveMaximum": true}),
        );
        assert_clean(schema.clone(), json!({"f": 0.5}));
        assert_one(schema.clone(), json!({"f": 0}), "f", "greater than 0");
        assert_one(schema, json!({"f": 1.0}), "f", "less than 1");
    }

    #[test]
    fn lengths_count_code_points() {
        let schema = field(json!({"type": "string", "minLength": 2, "maxLength": 3}));
        assert_clean(schema.clone(), json!({"f": "ééé"}));
        assert_one(schema.clone(), json!({"f": "éééé"}), "f", "at most 3 characters long, got 4");
        assert_one(schema, json!({"f": "é"}), "f", "at least 2 characters long, got 1");
    }

    #[test]
    fn item_counts() {
        let schema = field(json!({"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "integer"}}));
        assert_clean(schema.clone(), json!({"f": [1, 2]}));
        assert_one(schema.clone(), json!({"f": []}), "f", "at least 1 items");
        assert_one(schema, json!({"f": [1, 2, 3]}), "f", "at most 2 items");
    }

    #[test]
    fn property_counts() {
        let schema = field(
            json!({"type": "object", "minProperties": 1, "maxProperties": 2, "additionalProperties": {"type": "string"}}),
        );
        assert_clean(schema.clone(), json!({"f": {"a": "1"}}));
        assert_one(schema.clone(), json!({"f": {}}), "f", "at least 1 fields");
        assert_one(schema, json!({"f": {"a": "", "b": "", "c": ""}}), "f", "at most 2 fields");
    }

    #[test]
    fn items_are_validated_with_their_index() {
        let schema =
            field(json!({"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}}));
        assert_clean(schema.clone(), json!({"f": [{"k": "a"}, {}]}));
        assert_one(schema, json!({"f": [{"k": "a"}, {"k": 2}]}), "f[1].k", "expected string");
    }

    #[test]
    fn all_of() {
        let schema = field(json!({"type": "integer", "allOf": [{"minimum": 2}, {"maximum": 4}]}));
        assert_clean(schema.clone(), json!({"f": 3}));
        assert_one(schema, json!({"f": 5}), "f", "less than or equal to 4");
    }

    #[test]
    fn any_of() {
        let schema =
            field(json!({"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": true}));
        assert_clean(schema.clone(), json!({"f": "1Gi"}));
        let ranges = field(json!({"type": "integer", "anyOf": [{"maximum": 1}, {"minimum": 10}]}));
        assert_clean(ranges.clone(), json!({"f": 10}));
        assert_one(ranges, json!({"f": 5}), "f", "matches none of the anyOf alternatives");
    }

    #[test]
    fn junctor_subschemas_do_not_make_fields_unknown() {
        let schema = field(json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "anyOf": [{"required": ["a"]}, {"required": ["b"]}],
        }));
        assert_clean(schema.clone(), json!({"f": {"a": "x", "b": "y"}}));
        assert_one(schema, json!({"f": {}}), "f", "anyOf");
    }

    #[test]
    fn one_of() {
        let schema = field(json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
        }));
        assert_clean(schema.clone(), json!({"f": {"a": "x"}}));
        assert_one(schema.clone(), json!({"f": {"a": "x", "b": "y"}}), "f", "matches 2");
        assert_one(schema, json!({"f": {}}), "f", "matches 0");
    }

    #[test]
    fn not() {
        let schema = field(json!({"type": "string", "not": {"enum": ["forbidden"]}}));
        assert_clean(schema.clone(), json!({"f": "fine"}));
        assert_one(schema, json!({"f": "forbidden"}), "f", "must not match");
    }

    #[test]
    fn list_type_set_rejects_duplicates() {
        let schema = field(json!({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}));
        assert_clean(schema.clone(), json!({"f": ["a", "b"]}));
        assert_one(schema, json!({"f": ["a", "b", "a"]}), "f[2]", "duplicate value \"a\"");
    }

    #[test]
    fn list_type_map_rejects_duplicate_keys() {
        let schema = field(json!({
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name", "port"],
            "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}, "x": {"type": "string"}}},
        }));
        assert_clean(schema.clone(), json!({"f": [{"name": "a", "port": 1}, {"name": "a", "port": 2}]}));
        assert_one(
            schema,
            json!({"f": [{"name": "a", "port": 1, "x": "1"}, {"name": "a", "port": 1, "x": "2"}]}),
            "f[1]",
            "duplicate entry with key name=\"a\", port=1",
        );
    }

    #[test]
    fn a_resource_root_needs_identity_and_a_valid_name() {
        let schema = json!({"type": "object", "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"}}});
        let good = json!({"apiVersion": "x.io/v1", "kind": "X", "metadata": {"name": "a.b-c", "labels": {"app": "x"}}});
        assert_clean(schema.clone(), good);
        let found = validate(&schema, &json!({"metadata": {"name": "Not_Valid"}}));
        let paths: Vec<&str> = found.iter().map(|v| v.path.as_str()).collect();
        assert_eq!(paths, ["apiVersion", "kind", "metadata.name"], "{found:#?}");
        assert!(found[2].message.contains("DNS-1123 subdomain"));
        let long = "a".repeat(254);
        assert_one(
            schema.clone(),
            json!({"apiVersion": "v1", "kind": "X", "metadata": {"name": long}}),
            "metadata.name",
            "253",
        );
        assert_one(schema, json!({"apiVersion": "v1", "kind": "X", "metadata": {}}), "metadata.name", "missing");
    }

    fn good_ec2_node_class() -> Value {
        json!({
            "apiVersion": "karpenter.k8s.aws/v1",
            "kind": "EC2NodeClass",
            "metadata": {"name": "default"},
            "spec": {
                "amiSelectorTerms": [{"alias": "al2023@latest"}],
                "role": "KarpenterNodeRole-demo",
                "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}, {"id": "subnet-0123456789abcdef0"}],
                "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}, {"id": "sg-0123456789abcdef0"}],
                "metadataOptions": {
                    "httpEndpoint": "enabled",
                    "httpProtocolIPv6": "disabled",
                    "httpPutResponseHopLimit": 1,
                    "httpTokens": "required",
                },
                "blockDeviceMappings": [{
                    "deviceName": "/dev/xvda",
                    "ebs": {"volumeSize": "20Gi", "volumeType": "gp3", "encrypted": true},
                }],
            },
        })
    }

    fn good_node_pool() -> Value {
        json!({
            "apiVersion": "karpenter.sh/v1",
            "kind": "NodePool",
            "metadata": {"name": "default"},
            "spec": {
                "template": {
                    "metadata": {"labels": {"team": "platform"}},
                    "spec": {
                        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                        "requirements": [
                            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]},
                            {"key": "kubernetes.io/arch", "operator": "NotIn", "values": ["arm64"]},
                            {"key": "karpenter.k8s.aws/instance-family", "operator": "Exists"},
                            {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gt", "values": ["1"]},
                            {"key": "karpenter.k8s.aws/instance-memory", "operator": "Gte", "values": ["2048"]},
                            {"key": "karpenter.k8s.aws/instance-generation", "operator": "Lte", "values": ["8"]},
                        ],
                        "expireAfter": "720h",
                    },
                },
                "limits": {"cpu": "1000", "memory": "1000Gi"},
                "disruption": {
                    "consolidationPolicy": "WhenEmptyOrUnderutilized",
                    "consolidateAfter": "1m",
                    "budgets": [{"nodes": "10%"}],
                },
                "weight": 10,
            },
        })
    }

    /// Applies `edit` to a copy of `object` and returns its violations against the Karpenter CRDs.
    fn violations_after(object: &Value, edit: impl FnOnce(&mut Value)) -> Vec<Violation> {
        let mut object = object.clone();
        edit(&mut object);
        validate_custom_object(&karpenter_crds(), &object)
    }

    fn assert_single(found: &[Violation], path: &str, needle: &str) {
        assert_eq!(found.len(), 1, "expected one violation at {path}, got {found:#?}");
        assert_eq!(found[0].path, path);
        assert!(found[0].message.contains(needle), "message {:?} should mention {needle:?}", found[0].message);
    }

    #[test]
    fn karpenter_good_objects_validate_clean() {
        let crds = karpenter_crds();
        assert_eq!(validate_custom_object(&crds, &good_ec2_node_class()), []);
        assert_eq!(validate_custom_object(&crds, &good_node_pool()), []);
    }

    #[test]
    fn ec2_node_class_volume_type_typo() {
        let found = violations_after(&good_ec2_node_class(), |o| {
            o["spec"]["blockDeviceMappings"][0]["ebs"]["volumeType"] = json!("gp33");
        });
        assert_single(&found, "spec.blockDeviceMappings[0].ebs.volumeType", "unsupported value \"gp33\"");
        assert!(found[0].message.contains("\"gp3\""), "lists the supported values: {}", found[0]);
    }

    #[test]
    fn ec2_node_class_hop_limit_zero() {
        let found = violations_after(&good_ec2_node_class(), |o| {
            o["spec"]["metadataOptions"]["httpPutResponseHopLimit"] = json!(0);
        });
        assert_single(&found, "spec.metadataOptions.httpPutResponseHopLimit", "greater than or equal to 1, got 0");
    }

    #[test]
    fn ec2_node_class_bad_volume_size_and_ids() {
        let found = violations_after(&good_ec2_node_class(), |o| {
            o["spec"]["blockDeviceMappings"][0]["ebs"]["volumeSize"] = json!("20 GiB");
            o["spec"]["securityGroupSelectorTerms"][1]["id"] = json!("0123");
        });
        let paths: Vec<&str> = found.iter().map(|v| v.path.as_str()).collect();
        assert_eq!(paths, ["spec.securityGroupSelectorTerms[1].id", "spec.blockDeviceMappings[0].ebs.volumeSize"]);
    }

    #[test]
    fn node_pool_unknown_operator() {
        let found = violations_after(&good_node_pool(), |o| {
            o["spec"]["template"]["spec"]["requirements"][0]["operator"] = json!("Gtx");
        });
        assert_single(&found, "spec.template.spec.requirements[0].operator", "unsupported value \"Gtx\"");
        assert!(found[0].message.contains("\"Gte\""), "{}", found[0]);
    }

    #[test]
    fn node_pool_weight_over_100() {
        let found = violations_after(&good_node_pool(), |o| o["spec"]["weight"] = json!(101));
        assert_single(&found, "spec.weight", "less than or equal to 100, got 101");
    }

    #[test]
    fn node_pool_without_node_class_ref() {
        let found = violations_after(&good_node_pool(), |o| {
            o["spec"]["template"]["spec"].as_object_mut().expect("spec is an object").remove("nodeClassRef");
        });
        assert_single(&found, "spec.template.spec.nodeClassRef", "required field \"nodeClassRef\" is missing");
    }

    #[test]
    fn node_pool_unknown_field() {
        let found = violations_after(&good_node_pool(), |o| o["spec"]["template"]["spec"]["foo"] = json!("bar"));
        assert_single(&found, "spec.template.spec.foo", "silently prune");
    }

    #[test]
    fn node_pool_budget_nodes_not_a_percentage() {
        let found = violations_after(&good_node_pool(), |o| {
            o["spec"]["disruption"]["budgets"][0]["nodes"] = json!("10 percent");
        });
        assert_single(&found, "spec.disruption.budgets[0].nodes", "\"10 percent\" does not match the pattern");
    }

    #[test]
    fn node_pool_limits_accept_integers_and_quantities_only() {
        let found = violations_after(&good_node_pool(), |o| {
            o["spec"]["limits"] = json!({"cpu": 1000, "memory": "1000 Gi", "nvidia.com/gpu": 1.5});
        });
        let paths: Vec<&str> = found.iter().map(|v| v.path.as_str()).collect();
        assert_eq!(paths, ["spec.limits.memory", "spec.limits[nvidia.com/gpu]"], "{found:#?}");
    }

    #[test]
    fn a_budget_without_nodes_is_defaulted_by_the_server() {
        let found = violations_after(&good_node_pool(), |o| {
            o["spec"]["disruption"]["budgets"] =
                json!([{"reasons": ["Empty"], "schedule": "@daily", "duration": "10m"}]);
        });
        assert_eq!(found, []);
    }

    #[test]
    fn status_and_namespace_of_a_cluster_scoped_object_would_be_lost() {
        let found = violations_after(&good_node_pool(), |o| {
            o["metadata"]["namespace"] = json!("karpenter");
            o["status"] = json!({"nodes": 1});
        });
        let paths: Vec<&str> = found.iter().map(|v| v.path.as_str()).collect();
        assert_eq!(paths, ["status", "metadata.namespace"], "{found:#?}");
    }

    #[test]
    fn an_unserved_kind_names_the_served_ones() {
        let crds = karpenter_crds();
        let found = validate_custom_object(&crds, &json!({"apiVersion": "karpenter.sh/v1beta1", "kind": "NodePool"}));
        assert_eq!(found.len(), 1);
        for served in ["karpenter.sh/v1 NodePool", "karpenter.sh/v1 NodeClaim", "karpenter.k8s.aws/v1 EC2NodeClass"] {
            assert!(found[0].message.contains(served), "{} should name {served}", found[0]);
        }
        assert_eq!(validate_custom_object(&crds, &json!({"kind": "NodePool"}))[0].path, "apiVersion");
    }

    #[test]
    fn cel_rules_are_listed_per_crd() {
        let crds = karpenter_crds();
        let counts: Vec<(&str, usize)> = ["EC2NodeClass", "NodeClaim", "NodePool"]
            .iter()
            .map(|k| (*k, cel_rules(schema_of(&crds, k)).len()))
            .collect();
        assert_eq!(counts, [("EC2NodeClass", 44), ("NodeClaim", 10), ("NodePool", 20)]);
        let rules = cel_rules(schema_of(&crds, "NodePool"));
        assert!(rules.iter().any(|(path, rule, message)| path == "spec.disruption.budgets"
            && rule == "self.all(x, has(x.schedule) == has(x.duration))"
            && message == "'schedule' must be set with 'duration'"));
        assert!(rules.iter().any(|(path, _, _)| path == "spec.template.spec.requirements[*].key"));
    }

    #[test]
    fn every_crd_pattern_compiles() {
        let mut patterns = Vec::new();
        fn walk(schema: &Value, out: &mut Vec<String>) {
            match schema {
                Value::Object(map) => {
                    if let Some(Value::String(p)) = map.get("pattern") {
                        out.push(p.clone());
                    }
                    map.values().for_each(|v| walk(v, out));
                }
                Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
                _ => {}
            }
        }
        for crd in karpenter_crds() {
            walk(&crd["spec"]["versions"], &mut patterns);
        }
        assert!(patterns.len() >= 40, "found {} patterns", patterns.len());
        for pattern in patterns {
            assert!(compiled(&pattern).is_ok(), "{pattern}: {:?}", compiled(&pattern).err());
        }
    }
}

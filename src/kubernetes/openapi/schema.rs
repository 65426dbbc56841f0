//! The structural-schema walk: a value against an `openAPIV3Schema` node, keyword by keyword (type, enum,
//! lengths and bounds, list types, properties and required, allOf/anyOf/oneOf/not), as the API server's OpenAPI
//! validation walks it, the CEL rules of each node it reaches, plus the unknown-field report the server does not make (it prunes them silently).

use std::cmp::Ordering;

use serde_json::{Map, Number, Value};

use super::cel::Verdicts;
use super::format::string_format_problem;
use super::go_regex::compiled;
use crate::kubernetes::violation::{child, describe, index, short, Violation};

/// Validates `value` at `path`. `structural` is false inside allOf/anyOf/oneOf/not, which only constrain values:
/// there a field the subschema does not list is not unknown (the structural schema declares it).
pub(super) fn check(
    schema: &Value,
    value: &Value,
    path: &str,
    structural: bool,
    out: &mut Vec<Violation>,
    verdicts: &mut Verdicts,
) {
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
    if structural {
        super::cel::check(schema, value, path, out, verdicts);
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
        Value::Array(items) => check_array(schema, items, path, structural, out, verdicts),
        Value::Object(fields) => check_object(schema, fields, path, structural, out, verdicts),
        Value::Bool(_) | Value::Null => {}
    }
    check_junctors(schema, value, path, out, verdicts);
}

fn check_junctors(schema: &Value, value: &Value, path: &str, out: &mut Vec<Violation>, verdicts: &mut Verdicts) {
    let mut violations_of = |sub: &Value| {
        let mut found = Vec::new();
        check(sub, value, path, false, &mut found, verdicts);
        found
    };
    for sub in schema.get("allOf").and_then(Value::as_array).into_iter().flatten() {
        out.extend(violations_of(sub));
    }
    if let Some(alternatives) = schema.get("anyOf").and_then(Value::as_array) {
        let failures: Vec<Vec<Violation>> = alternatives.iter().map(&mut violations_of).collect();
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

fn check_array(
    schema: &Value,
    items: &[Value],
    path: &str,
    structural: bool,
    out: &mut Vec<Violation>,
    verdicts: &mut Verdicts,
) {
    let count = items.len() as u64;
    if let Some(min) = schema.get("minItems").and_then(Value::as_u64).filter(|min| count < *min) {
        out.push(Violation::new(path, format!("must have at least {min} items, has {count}")));
    }
    if let Some(max) = schema.get("maxItems").and_then(Value::as_u64).filter(|max| count > *max) {
        out.push(Violation::new(path, format!("may have at most {max} items, has {count}")));
    }
    if let Some(item_schema) = schema.get("items").filter(|s| s.is_object()) {
        for (i, item) in items.iter().enumerate() {
            check(item_schema, item, &index(path, i), structural, out, verdicts);
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

fn check_object(
    schema: &Value,
    fields: &Map<String, Value>,
    path: &str,
    structural: bool,
    out: &mut Vec<Violation>,
    verdicts: &mut Verdicts,
) {
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
            Some(field_schema) => check(field_schema, value, &at, structural, out, verdicts),
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

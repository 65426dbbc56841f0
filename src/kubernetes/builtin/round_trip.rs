//! The typed round trip: an object deserialized into its k8s-openapi type and serialized back. A type error is
//! reported at the field where it happened; a field of the input that the round trip lost is one the type (and
//! so the API server) does not have.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::kubernetes::violation::{child, index, Violation};

/// Deserializes the object into its typed form and serializes it back. A type error is reported where it
/// happened; a field of the input that the round trip lost is one the type (and so the API server) does not have.
pub(super) fn round_trip<T: DeserializeOwned + Serialize>(object: &Value, out: &mut Vec<Violation>) {
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

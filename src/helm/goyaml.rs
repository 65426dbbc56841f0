//! YAML as Helm reads it: `sigs.k8s.io/yaml` over go-yaml v2, a YAML 1.1 reader. Its plain scalars resolve
//! otherwise than a YAML 1.2 reader's: `yes`, `on` and `Y` are booleans, `0444` is octal (292), `1_000` is an
//! integer. Values files, `fromYaml` and the rendered manifests all go through here, so kbp applies what Helm
//! would. Integral numbers come out as JSON integers, as `sigs.k8s.io/yaml` writes them; a key that is not a
//! string becomes its text; aliases, merge keys (`<<`) and later duplicates (which win) behave as in go-yaml v2.

use std::collections::HashMap;

use serde_json::{Map, Value};
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser, Tag};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// YAML that does not parse, at its line and column (1-based).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {line} column {col}: {message}")]
pub struct YamlError {
    /// 1-based line of the problem.
    pub line: usize,
    /// 1-based column of the problem.
    pub col: usize,
    /// The YAML parser's message.
    pub message: String,
}

/// Every document of a stream; empty documents are `null`.
pub fn documents(text: &str) -> Result<Vec<Value>, YamlError> {
    let mut builder = Builder::default();
    let mut parser = Parser::new_from_str(text);
    parser.load(&mut builder, true).map_err(|e| YamlError {
        line: e.marker().line(),
        col: e.marker().col() + 1,
        message: e.info().to_string(),
    })?;
    if let Some(error) = builder.error {
        return Err(error);
    }
    Ok(builder.documents)
}

/// The one document of a values file (`null` when empty).
pub fn document(text: &str) -> Result<Value, YamlError> {
    let mut docs = documents(text)?;
    Ok(if docs.is_empty() { Value::Null } else { docs.swap_remove(0) })
}

enum Frame {
    Seq(Vec<Value>, usize),
    Map(Map<String, Value>, Option<String>, usize, Vec<Map<String, Value>>),
}

#[derive(Default)]
struct Builder {
    documents: Vec<Value>,
    stack: Vec<Frame>,
    anchors: HashMap<usize, Value>,
    error: Option<YamlError>,
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, event: Event, mark: Marker) {
        if self.error.is_some() {
            return;
        }
        match event {
            Event::DocumentStart => {}
            Event::DocumentEnd => {}
            Event::SequenceStart(anchor, _) => self.stack.push(Frame::Seq(Vec::new(), anchor)),
            Event::MappingStart(anchor, _) => self.stack.push(Frame::Map(Map::new(), None, anchor, Vec::new())),
            Event::SequenceEnd => {
                if let Some(Frame::Seq(items, anchor)) = self.stack.pop() {
                    self.value(Value::Array(items), anchor, mark, false);
                }
            }
            Event::MappingEnd => {
                if let Some(Frame::Map(mut entries, _, anchor, merged)) = self.stack.pop() {
                    // `<<` merge keys: the mapping's own keys win, then earlier merged maps over later ones.
                    for source in merged {
                        for (k, v) in source {
                            entries.entry(k).or_insert(v);
                        }
                    }
                    self.value(Value::Object(entries), anchor, mark, false);
                }
            }
            Event::Scalar(text, style, anchor, tag) => {
                let is_merge_key = style == TScalarStyle::Plain && text == "<<";
                let value = resolve(&text, style, tag.as_ref());
                self.value(value, anchor, mark, is_merge_key);
            }
            Event::Alias(id) => {
                let value = self.anchors.get(&id).cloned().unwrap_or(Value::Null);
                self.value(value, 0, mark, false);
            }
            _ => {}
        }
    }
}

impl Builder {
    fn value(&mut self, value: Value, anchor: usize, mark: Marker, is_merge_key: bool) {
        if anchor > 0 {
            self.anchors.insert(anchor, value.clone());
        }
        match self.stack.last_mut() {
            None => self.documents.push(value),
            Some(Frame::Seq(items, _)) => items.push(value),
            Some(Frame::Map(entries, key, _, merged)) => match key.take() {
                None => {
                    let name = if is_merge_key { "<<".to_string() } else { key_text(&value) };
                    *key = Some(name);
                }
                Some(name) if name == "<<" => match value {
                    Value::Object(map) => merged.push(map),
                    Value::Array(maps) => merged.extend(maps.into_iter().filter_map(|m| match m {
                        Value::Object(map) => Some(map),
                        _ => None,
                    })),
                    _ => {
                        self.error = Some(YamlError {
                            line: mark.line(),
                            col: mark.col() + 1,
                            message: "map merge requires map or sequence of maps as the value".into(),
                        })
                    }
                },
                Some(name) => {
                    entries.insert(name, value);
                }
            },
        }
    }
}

/// A key that is not a string, as `sigs.k8s.io/yaml` names it in JSON.
fn key_text(key: &Value) -> String {
    match key {
        Value::String(s) => s.clone(),
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

/// go-yaml v2's resolution of a scalar: quoted and block scalars are strings; plain ones may be null, a
/// boolean (YAML 1.1's words), an integer (Go literal forms: `0x`, `0o`, leading-zero octal, `0b`, `_`) or a
/// float.
fn resolve(text: &str, style: TScalarStyle, tag: Option<&Tag>) -> Value {
    let forced = tag.filter(|t| t.handle == "tag:yaml.org,2002:" || t.handle == "!!").map(|t| t.suffix.as_str());
    match forced {
        Some("str") => return Value::String(text.to_string()),
        Some("null") => return Value::Null,
        _ => {}
    }
    if style != TScalarStyle::Plain && forced.is_none() {
        return Value::String(text.to_string());
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" | "true" | "True" | "TRUE" => return Value::Bool(true),
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" | "false" | "False" | "FALSE" => {
            return Value::Bool(false)
        }
        _ => {}
    }
    if text.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.')) {
        let plain = text.replace('_', "");
        if let Some(n) = go_int(&plain) {
            return Value::from(n);
        }
        if is_yaml_float(&plain) {
            if let Ok(x) = plain.parse::<f64>() {
                return super::gofmt::json_number(x);
            }
        }
    }
    Value::String(text.to_string())
}

/// `strconv.ParseInt(s, 0, 64)`.
fn go_int(s: &str) -> Option<i64> {
    let (negative, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if digits.is_empty() {
        return None;
    }
    let (radix, body) = if let Some(b) = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        (16, b)
    } else if let Some(b) = digits.strip_prefix("0o").or_else(|| digits.strip_prefix("0O")) {
        (8, b)
    } else if let Some(b) = digits.strip_prefix("0b").or_else(|| digits.strip_prefix("0B")) {
        (2, b)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits)
    };
    if body.is_empty() || !body.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let n = i64::from_str_radix(body, radix).ok()?;
    Some(if negative { -n } else { n })
}

/// go-yaml v2's float pattern: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_float(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let digits = |t: &str| !t.is_empty() && t.chars().all(|c| c.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", frac)) => digits(frac),
        Some((int, frac)) => digits(int) && (frac.is_empty() || digits(frac)),
        None => digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e)));
    mantissa_ok && exponent_ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plain_scalars_resolve_as_go_yaml_v2_resolves_them() {
        let doc = document(
            "a: yes\nb: Off\nc: 0444\nd: 08\ne: 1_000\nf: 1e3\ng: '0444'\nh: ~\ni: 0x1F\nj: 2.50\nk: 1.0\nl: text\nm: \"yes\"\nnn: -0b11\nn: key\n",
        )
        .unwrap();
        assert_eq!(
            doc,
            json!({"a": true, "b": false, "c": 292, "d": 8, "e": 1000, "f": 1000, "g": "0444", "h": null, "i": 31,
                   "j": 2.5, "k": 1, "l": "text", "m": "yes", "nn": -3, "false": "key"})
        );
    }

    #[test]
    fn anchors_merge_keys_and_documents() {
        let docs =
            documents("base: &b {p: 1, q: 2}\nmerged:\n  <<: *b\n  q: 3\n---\n---\nlist: [&c {z: 1}, *c]\n").unwrap();
        assert_eq!(docs[0]["merged"], json!({"p": 1, "q": 3}));
        assert_eq!(docs.len(), 3);
        assert_eq!(docs[1], Value::Null);
        assert_eq!(docs[2]["list"][1], json!({"z": 1}));
    }

    #[test]
    fn bad_yaml_says_where() {
        let err = document("a: [1, 2\nb: c").unwrap_err();
        assert!(err.line >= 1, "{err}");
    }
}

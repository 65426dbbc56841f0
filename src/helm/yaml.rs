//! `toYaml` and `toJson` as Helm writes them. Helm's `toYaml` is `sigs.k8s.io/yaml`: JSON first (keys sorted,
//! Go's number forms), then block YAML with two-space indents and lists flush under their key. What matters is
//! that the text reads back as the same value wherever a template indents it, so a string is written plain only
//! when no YAML 1.1 or 1.2 reader could take it for anything else, and double-quoted otherwise.

use super::gofmt;
use super::value::Value;

/// Helm's `toYaml`, without the final newline (Helm trims it).
pub fn to_yaml(value: &Value) -> String {
    match value {
        Value::Map(m) if !m.borrow().is_empty() => block(value).join("\n"),
        Value::List(l) if !l.borrow().is_empty() => block(value).join("\n"),
        Value::Struct(_) => block(value).join("\n"),
        other => scalar(other),
    }
}

fn is_block(value: &Value) -> bool {
    match value {
        Value::Map(m) => !m.borrow().is_empty(),
        Value::List(l) => !l.borrow().is_empty(),
        Value::Struct(s) => s.fields.values().any(|v| !matches!(v, Value::Method(_))),
        _ => false,
    }
}

fn entries(value: &Value) -> Vec<(String, Value)> {
    match value {
        Value::Map(m) => m.borrow().iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        Value::Struct(s) => s
            .fields
            .iter()
            .filter(|(_, v)| !matches!(v, Value::Method(_)))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        _ => Vec::new(),
    }
}

/// The lines of a non-empty map or list, unindented.
fn block(value: &Value) -> Vec<String> {
    let mut lines = Vec::new();
    match value {
        Value::List(items) => {
            for item in items.borrow().iter() {
                if is_block(item) {
                    for (i, line) in block(item).into_iter().enumerate() {
                        lines.push(if i == 0 { format!("- {line}") } else { format!("  {line}") });
                    }
                } else {
                    lines.push(format!("- {}", scalar(item)));
                }
            }
        }
        _ => {
            for (key, item) in entries(value) {
                let key = string_scalar(&key);
                match &item {
                    Value::List(_) if is_block(&item) => {
                        lines.push(format!("{key}:"));
                        lines.extend(block(&item));
                    }
                    _ if is_block(&item) => {
                        lines.push(format!("{key}:"));
                        lines.extend(block(&item).into_iter().map(|l| format!("  {l}")));
                    }
                    _ => lines.push(format!("{key}: {}", scalar(&item))),
                }
            }
        }
    }
    lines
}

fn scalar(value: &Value) -> String {
    match value {
        Value::Nil | Value::Method(_) => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(n) => n.to_string(),
        Value::Float(x) => gofmt::json_float_text(*x),
        Value::Str(s) => string_scalar(s),
        Value::List(_) => "[]".into(),
        Value::Map(_) | Value::Struct(_) => "{}".into(),
    }
}

fn string_scalar(s: &str) -> String {
    if plain_is_safe(s) {
        s.to_string()
    } else {
        serde_json::Value::String(s.to_string()).to_string()
    }
}

/// Whether `s` reads back as the same string when written without quotes, under YAML 1.1 (what Helm and the
/// API server read) and 1.2 alike. Errs towards quoting.
fn plain_is_safe(s: &str) -> bool {
    let Some(first) = s.chars().next() else { return false };
    if s.trim() != s || s.chars().any(|c| c.is_control()) {
        return false;
    }
    if "-?:,[]{}#&*!|>'\"%@`=<~".contains(first) {
        return false;
    }
    if s.contains(": ") || s.contains(" #") || s.ends_with(':') {
        return false;
    }
    let lower = s.to_ascii_lowercase();
    const WORDS: &[&str] = &["null", "true", "false", "yes", "no", "on", "off", "y", "n", ".inf", ".nan"];
    if WORDS.contains(&lower.as_str()) {
        return false;
    }
    // Anything that starts like a number (including `.5`, `+1`, `0x1f`, `1_000`, timestamps) is quoted.
    let unsigned = lower.trim_start_matches(['+', '-']);
    !(unsigned.starts_with(|c: char| c.is_ascii_digit()) || unsigned.starts_with('.'))
}

/// Go's `encoding/json` text of a value: keys sorted, Go's number forms, `<`, `>` and `&` escaped when
/// `escape_html` (sprig's `toJson` and `toPrettyJson`; `toRawJson` does not), indented when asked.
pub fn to_json_text(value: &Value, escape_html: bool, indent: Option<&str>) -> String {
    let mut out = String::new();
    write_json(value, escape_html, indent, 0, &mut out);
    out
}

fn write_json(value: &Value, html: bool, indent: Option<&str>, depth: usize, out: &mut String) {
    let newline = |out: &mut String, depth: usize| {
        if let Some(unit) = indent {
            out.push('\n');
            out.push_str(&unit.repeat(depth));
        }
    };
    match value {
        Value::List(items) => {
            let items = items.borrow();
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                write_json(item, html, indent, depth + 1, out);
            }
            newline(out, depth);
            out.push(']');
        }
        Value::Map(_) | Value::Struct(_) => {
            let entries = entries(value);
            if entries.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push('{');
            for (i, (key, item)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                json_string(key, html, out);
                out.push(':');
                if indent.is_some() {
                    out.push(' ');
                }
                write_json(item, html, indent, depth + 1, out);
            }
            newline(out, depth);
            out.push('}');
        }
        Value::Str(s) => json_string(s, html, out),
        Value::Float(x) => out.push_str(&gofmt::json_float_text(*x)),
        Value::Int(n) => out.push_str(&n.to_string()),
        Value::Bool(b) => out.push_str(&b.to_string()),
        Value::Nil | Value::Method(_) => out.push_str("null"),
    }
}

fn json_string(s: &str, html: bool, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        if let Some(escaped) = super::gofmt::short_escape(c) {
            out.push_str(escaped);
            continue;
        }
        match c {
            '<' | '>' | '&' if html => out.push_str(&format!("\\u{:04x}", c as u32)),
            '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

//! Values in and out of other forms: defaults and types (sprig), numbers (sprig's `cast`-based conversions),
//! YAML and JSON (Helm's and sprig's encoders, with Go's key order and number forms), semantic versions.

use super::{count, empty, string, Result};
use crate::helm::value::{deep_equal, Value};
use crate::helm::{goyaml, semver, yaml};

pub use yaml::{to_json_text, to_yaml};

pub(super) fn call(name: &str, args: &[Value]) -> Result<Option<Value>> {
    Ok(Some(match name {
        "default" => {
            count(args, 1, 2)?;
            match args.get(1) {
                Some(given) if !empty(given) => given.clone(),
                _ => args[0].clone(),
            }
        }
        "empty" => {
            count(args, 1, 1)?;
            Value::Bool(empty(&args[0]))
        }
        "coalesce" => args.iter().find(|a| !empty(a)).cloned().unwrap_or(Value::Nil),
        "ternary" => {
            count(args, 3, 3)?;
            match &args[2] {
                Value::Bool(true) => args[0].clone(),
                Value::Bool(false) => args[1].clone(),
                other => return Err(format!("wrong type for value; expected bool; got {}", other.type_name())),
            }
        }
        "kindOf" => {
            count(args, 1, 1)?;
            Value::str(args[0].kind())
        }
        "kindIs" => {
            count(args, 2, 2)?;
            Value::Bool(string(args, 0)? == args[1].kind())
        }
        "typeOf" => {
            count(args, 1, 1)?;
            Value::str(args[0].type_name())
        }
        "typeIs" | "typeIsLike" => {
            count(args, 2, 2)?;
            let wanted = string(args, 0)?;
            let actual = args[1].type_name();
            Value::Bool(wanted == actual || (name == "typeIsLike" && wanted.trim_start_matches('*') == actual))
        }
        "deepEqual" => {
            count(args, 2, 2)?;
            Value::Bool(deep_equal(&args[0], &args[1]))
        }
        "int" | "int64" => {
            count(args, 1, 1)?;
            Value::Int(to_int64(&args[0]))
        }
        "float64" => {
            count(args, 1, 1)?;
            Value::Float(to_float64(&args[0]))
        }
        "atoi" => {
            count(args, 1, 1)?;
            Value::Int(string(args, 0)?.parse().unwrap_or(0))
        }
        "toDecimal" => {
            count(args, 1, 1)?;
            Value::Int(i64::from_str_radix(&super::strval(&args[0]), 8).unwrap_or(0))
        }
        "add" => Value::Int(args.iter().map(to_int64).fold(0i64, i64::wrapping_add)),
        "add1" => {
            count(args, 1, 1)?;
            Value::Int(to_int64(&args[0]).wrapping_add(1))
        }
        "sub" | "div" | "mod" => {
            count(args, 2, 2)?;
            let (a, b) = (to_int64(&args[0]), to_int64(&args[1]));
            Value::Int(match name {
                "sub" => a.wrapping_sub(b),
                _ if b == 0 => return Err("integer divide by zero".into()),
                "div" => a / b,
                _ => a % b,
            })
        }
        "mul" => Value::Int(args.iter().map(to_int64).fold(1i64, i64::wrapping_mul)),
        "max" | "min" => {
            count(args, 1, usize::MAX)?;
            let numbers = args.iter().map(to_int64);
            Value::Int(if name == "max" { numbers.max() } else { numbers.min() }.unwrap_or(0))
        }
        "addf" => Value::Float(args.iter().map(to_float64).sum()),
        "add1f" => {
            count(args, 1, 1)?;
            Value::Float(to_float64(&args[0]) + 1.0)
        }
        "subf" | "divf" => {
            count(args, 1, usize::MAX)?;
            let mut numbers = args.iter().map(to_float64);
            let first = numbers.next().unwrap_or(0.0);
            Value::Float(numbers.fold(first, |acc, x| if name == "subf" { acc - x } else { acc / x }))
        }
        "mulf" => Value::Float(args.iter().map(to_float64).product()),
        "maxf" => Value::Float(args.iter().map(to_float64).fold(f64::NEG_INFINITY, f64::max)),
        "minf" => Value::Float(args.iter().map(to_float64).fold(f64::INFINITY, f64::min)),
        "floor" | "ceil" => {
            count(args, 1, 1)?;
            let x = to_float64(&args[0]);
            Value::Float(if name == "floor" { x.floor() } else { x.ceil() })
        }
        "round" => {
            count(args, 2, 3)?;
            let places = to_int64(&args[1]) as i32;
            let factor = 10f64.powi(places);
            let half = args.get(2).map(to_float64).unwrap_or(0.5);
            let x = to_float64(&args[0]) * factor;
            let rounded = if x.fract().abs() >= half { x.trunc() + x.signum() } else { x.trunc() };
            Value::Float(rounded / factor)
        }
        "toYaml" | "mustToYaml" => {
            count(args, 1, 1)?;
            Value::str(to_yaml(&args[0]))
        }
        "fromYaml" | "fromYamlArray" => {
            count(args, 1, 1)?;
            let parsed = goyaml::document(string(args, 0)?);
            match (parsed, name) {
                (Ok(v @ serde_json::Value::Object(_)), "fromYaml") => Value::from_json(&v),
                (Ok(serde_json::Value::Null), "fromYaml") => Value::map(Default::default()),
                (Ok(v @ serde_json::Value::Array(_)), "fromYamlArray") => Value::from_json(&v),
                (Ok(_), "fromYaml") => error_map("cannot unmarshal into a map"),
                (Ok(_), _) => Value::list(vec![Value::str("error unmarshaling: not a list")]),
                (Err(e), "fromYaml") => error_map(&e.to_string()),
                (Err(e), _) => Value::list(vec![Value::str(e.to_string())]),
            }
        }
        "fromJson" | "fromJsonArray" => {
            count(args, 1, 1)?;
            match serde_json::from_str::<serde_json::Value>(string(args, 0)?) {
                Ok(v) => Value::from_json(&v),
                Err(e) if name == "fromJson" => error_map(&e.to_string()),
                Err(e) => Value::list(vec![Value::str(e.to_string())]),
            }
        }
        "toJson" | "mustToJson" => {
            count(args, 1, 1)?;
            Value::str(to_json_text(&args[0], true, None))
        }
        "toRawJson" => {
            count(args, 1, 1)?;
            Value::str(to_json_text(&args[0], false, None))
        }
        "toPrettyJson" => {
            count(args, 1, 1)?;
            Value::str(to_json_text(&args[0], true, Some("  ")))
        }
        "semverCompare" => {
            count(args, 2, 2)?;
            Value::Bool(semver::satisfies(string(args, 0)?, string(args, 1)?)?)
        }
        "semver" => {
            count(args, 1, 1)?;
            semver::fields(string(args, 0)?)?
        }
        _ => return Ok(None),
    }))
}

/// Helm's `fromYaml` does not fail a render: it returns a dict holding the error.
fn error_map(message: &str) -> Value {
    Value::map([("Error".to_string(), Value::str(message))].into_iter().collect())
}

/// `cast.ToInt64`: numbers truncated, strings parsed as Go literals (`0x1f`, `017`), bools as 0/1, else 0.
pub(super) fn to_int64(value: &Value) -> i64 {
    match value {
        Value::Int(n) => *n,
        Value::Float(x) => *x as i64,
        Value::Bool(b) => *b as i64,
        Value::Str(s) => parse_go_int(s.trim()).unwrap_or(0),
        _ => 0,
    }
}

fn parse_go_int(s: &str) -> Option<i64> {
    let (negative, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let digits = digits.replace('_', "");
    let lower = digits.to_ascii_lowercase();
    let n = if let Some(hex) = lower.strip_prefix("0x") {
        i64::from_str_radix(hex, 16).ok()?
    } else if let Some(oct) = lower.strip_prefix("0o") {
        i64::from_str_radix(oct, 8).ok()?
    } else if let Some(bin) = lower.strip_prefix("0b") {
        i64::from_str_radix(bin, 2).ok()?
    } else if lower.len() > 1 && lower.starts_with('0') {
        i64::from_str_radix(&lower[1..], 8).ok()?
    } else {
        lower.parse().ok()?
    };
    Some(if negative { -n } else { n })
}

fn to_float64(value: &Value) -> f64 {
    match value {
        Value::Int(n) => *n as f64,
        Value::Float(x) => *x,
        Value::Bool(b) => *b as i64 as f64,
        Value::Str(s) => s.trim().parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

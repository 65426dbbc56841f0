//! The functions a chart can call: Go `text/template`'s builtins, the sprig library Helm ships (minus `env` and
//! `expandenv`, which Helm removes), and Helm's own (`toYaml`, `fromYaml`, `toJson`, `required`, `lookup`,
//! `semverCompare`, …; `include` and `tpl` live in `exec`, which they need). Argument types are checked as Go
//! checks them: a `float64` from the values where a function takes a `string` is an error, as in Helm.

mod collections;
mod convert;
mod printf;
mod strings;

use super::value::{basic_equal, Value};

pub use convert::{to_json_text, to_yaml};

/// Every function name [`call`] knows, plus those `exec` handles.
pub(super) const NAMES: &[&str] = &[
    // text/template builtins
    "and",
    "or",
    "not",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "len",
    "index",
    "slice",
    "print",
    "printf",
    "println",
    "html",
    "js",
    "urlquery",
    "call",
    // Helm
    "include",
    "tpl",
    "required",
    "lookup",
    "toYaml",
    "mustToYaml",
    "fromYaml",
    "fromYamlArray",
    "toJson",
    "mustToJson",
    "toPrettyJson",
    "toRawJson",
    "fromJson",
    "fromJsonArray",
    "semverCompare",
    "semver",
    "fail",
    // sprig: strings
    "upper",
    "lower",
    "title",
    "untitle",
    "repeat",
    "substr",
    "trunc",
    "trim",
    "trimAll",
    "trimPrefix",
    "trimSuffix",
    "nospace",
    "abbrev",
    "initials",
    "contains",
    "hasPrefix",
    "hasSuffix",
    "quote",
    "squote",
    "cat",
    "indent",
    "nindent",
    "replace",
    "plural",
    "snakecase",
    "camelcase",
    "kebabcase",
    "splitList",
    "split",
    "splitn",
    "join",
    "sortAlpha",
    "toString",
    "toStrings",
    "regexMatch",
    "mustRegexMatch",
    "regexFind",
    "regexFindAll",
    "regexReplaceAll",
    "regexReplaceAllLiteral",
    "regexSplit",
    "regexQuoteMeta",
    "b64enc",
    "b64dec",
    "sha256sum",
    // sprig: logic and types
    "default",
    "empty",
    "coalesce",
    "ternary",
    "all",
    "any",
    "kindOf",
    "kindIs",
    "typeOf",
    "typeIs",
    "typeIsLike",
    "deepEqual",
    // sprig: lists
    "list",
    "tuple",
    "append",
    "push",
    "mustAppend",
    "mustPush",
    "prepend",
    "mustPrepend",
    "first",
    "mustFirst",
    "last",
    "mustLast",
    "rest",
    "mustRest",
    "initial",
    "mustInitial",
    "reverse",
    "mustReverse",
    "uniq",
    "mustUniq",
    "without",
    "mustWithout",
    "has",
    "mustHas",
    "compact",
    "mustCompact",
    "concat",
    "until",
    "untilStep",
    "seq",
    "chunk",
    "sortAlpha",
    // sprig: dicts
    "dict",
    "get",
    "set",
    "unset",
    "hasKey",
    "pluck",
    "keys",
    "values",
    "pick",
    "omit",
    "merge",
    "mustMerge",
    "mergeOverwrite",
    "mustMergeOverwrite",
    "deepCopy",
    "mustDeepCopy",
    "dig",
    // sprig: numbers
    "add",
    "add1",
    "sub",
    "mul",
    "div",
    "mod",
    "max",
    "min",
    "floor",
    "ceil",
    "round",
    "int",
    "int64",
    "float64",
    "atoi",
    "toDecimal",
    "addf",
    "add1f",
    "subf",
    "mulf",
    "divf",
    "maxf",
    "minf",
];

/// Whether a template may call `name`.
pub(crate) fn known(name: &str) -> bool {
    NAMES.contains(&name)
}

pub(crate) type Result<T> = std::result::Result<T, String>;

/// Calls a function other than `and`, `or`, `include` and `tpl`.
pub(crate) fn call(name: &str, args: &[Value]) -> Result<Value> {
    if let Some(value) = builtin(name, args)? {
        return Ok(value);
    }
    if let Some(value) = strings::call(name, args)? {
        return Ok(value);
    }
    if let Some(value) = collections::call(name, args)? {
        return Ok(value);
    }
    if let Some(value) = convert::call(name, args)? {
        return Ok(value);
    }
    Err(format!("function {name:?} not defined"))
}

pub(super) fn count(args: &[Value], min: usize, max: usize) -> Result<()> {
    if args.len() < min || args.len() > max {
        let want = if min == max {
            min.to_string()
        } else if max == usize::MAX {
            format!("at least {min}")
        } else {
            format!("{min} to {max}")
        };
        return Err(format!("wrong number of args: want {want} got {}", args.len()));
    }
    Ok(())
}

/// A `string` parameter, as text/template converts arguments: only a string will do.
pub(super) fn string(args: &[Value], i: usize) -> Result<&str> {
    match args.get(i) {
        Some(Value::Str(s)) => Ok(s),
        Some(Value::Nil) | None => Err("invalid value; expected string".into()),
        Some(other) => Err(format!("wrong type for value; expected string; got {}", other.type_name())),
    }
}

/// An `int` parameter: an integer constant or a count; a `float64` from the values is refused, as in Go.
pub(super) fn int(args: &[Value], i: usize) -> Result<i64> {
    match args.get(i) {
        Some(Value::Int(n)) => Ok(*n),
        Some(Value::Nil) | None => Err("invalid value; expected int".into()),
        Some(other) => Err(format!("wrong type for value; expected int; got {}", other.type_name())),
    }
}

/// sprig's `strval`: a string as is, anything else as `fmt.Sprint` prints it.
pub(super) fn strval(value: &Value) -> String {
    match value {
        Value::Str(s) => s.to_string(),
        other => other.to_string(),
    }
}

/// sprig's `empty`: text/template's falsity (a struct is never empty, nor false).
pub(super) fn empty(value: &Value) -> bool {
    !value.truthy()
}

fn builtin(name: &str, args: &[Value]) -> Result<Option<Value>> {
    Ok(Some(match name {
        "not" => {
            count(args, 1, 1)?;
            Value::Bool(!args[0].truthy())
        }
        "eq" => {
            count(args, 2, usize::MAX)?;
            let mut truth = false;
            for other in &args[1..] {
                if basic_equal(&args[0], other)? {
                    truth = true;
                    break;
                }
            }
            Value::Bool(truth)
        }
        "ne" => {
            count(args, 2, 2)?;
            Value::Bool(!basic_equal(&args[0], &args[1])?)
        }
        "lt" | "le" | "gt" | "ge" => {
            count(args, 2, 2)?;
            let ordering = compare(&args[0], &args[1])?;
            Value::Bool(match name {
                "lt" => ordering.is_lt(),
                "le" => ordering.is_le(),
                "gt" => ordering.is_gt(),
                _ => ordering.is_ge(),
            })
        }
        "len" => {
            count(args, 1, 1)?;
            Value::Int(match &args[0] {
                Value::Str(s) => s.len() as i64,
                Value::List(l) => l.borrow().len() as i64,
                Value::Map(m) => m.borrow().len() as i64,
                other => return Err(format!("len of type {}", other.type_name())),
            })
        }
        "index" => {
            count(args, 1, usize::MAX)?;
            let mut item = args[0].clone();
            for key in &args[1..] {
                item = match (&item, key) {
                    (Value::List(l), Value::Int(i)) => {
                        let l = l.borrow();
                        l.get(usize::try_from(*i).map_err(|_| format!("index out of range: {i}"))?)
                            .cloned()
                            .ok_or_else(|| format!("index out of range: {i}"))?
                    }
                    (Value::Map(m), Value::Str(k)) => m.borrow().get(&**k).cloned().unwrap_or(Value::Nil),
                    (Value::Nil, _) => return Err("index of untyped nil".into()),
                    (Value::Map(_), other) => {
                        return Err(format!("value has type {}; should be string", other.type_name()))
                    }
                    (_, other) => return Err(format!("cannot index {} with {}", item.type_name(), other.type_name())),
                };
            }
            item
        }
        "slice" => {
            count(args, 1, 3)?;
            let bound = |i: usize| args.get(i).map(|_| int(args, i)).transpose();
            match &args[0] {
                Value::Str(s) => {
                    let (from, to) =
                        (bound(1)?.unwrap_or(0) as usize, bound(2)?.map(|n| n as usize).unwrap_or(s.len()));
                    Value::str(s.get(from..to).ok_or_else(|| format!("index out of range: {to}"))?)
                }
                Value::List(l) => {
                    let l = l.borrow();
                    let (from, to) =
                        (bound(1)?.unwrap_or(0) as usize, bound(2)?.map(|n| n as usize).unwrap_or(l.len()));
                    Value::list(l.get(from..to).ok_or_else(|| format!("index out of range: {to}"))?.to_vec())
                }
                other => return Err(format!("can't slice item of type {}", other.type_name())),
            }
        }
        "print" => Value::str(sprint(args)),
        "println" => {
            let parts: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            Value::str(format!("{}\n", parts.join(" ")))
        }
        "printf" => {
            count(args, 1, usize::MAX)?;
            Value::str(printf::sprintf(string(args, 0)?, &args[1..]))
        }
        "html" => Value::str(
            sprint(args)
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('"', "&#34;")
                .replace('\'', "&#39;"),
        ),
        "js" => Value::str(
            sprint(args)
                .replace('\\', "\\\\")
                .replace('\'', "\\'")
                .replace('"', "\\\"")
                .replace('<', "\\u003C")
                .replace('>', "\\u003E")
                .replace('&', "\\u0026")
                .replace('=', "\\u003D"),
        ),
        "urlquery" => Value::str(urlencoding::encode(&sprint(args)).replace("%20", "+")),
        "call" => {
            count(args, 1, usize::MAX)?;
            match &args[0] {
                Value::Method(m) => (m.call)(&args[1..])?,
                other => return Err(format!("non-function of type {}", other.type_name())),
            }
        }
        "required" => {
            count(args, 2, 2)?;
            let message = string(args, 0)?;
            match &args[1] {
                Value::Nil => return Err(message.to_string()),
                Value::Str(s) if s.is_empty() => return Err(message.to_string()),
                other => other.clone(),
            }
        }
        "fail" => {
            count(args, 1, 1)?;
            return Err(string(args, 0)?.to_string());
        }
        // `helm template` has no cluster to look in: lookup finds nothing.
        "lookup" => {
            count(args, 4, 4)?;
            Value::map(Default::default())
        }
        _ => return Ok(None),
    }))
}

/// `fmt.Sprint`: a space between operands when neither is a string.
pub(super) fn sprint(args: &[Value]) -> String {
    let mut out = String::new();
    for (i, arg) in args.iter().enumerate() {
        if i > 0 && !matches!(arg, Value::Str(_)) && !matches!(args[i - 1], Value::Str(_)) {
            out.push(' ');
        }
        out.push_str(&arg.to_string());
    }
    out
}

fn compare(a: &Value, b: &Value) -> Result<std::cmp::Ordering> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Ok(x.cmp(y)),
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y).ok_or_else(|| "incomparable values".into()),
        (Value::Str(x), Value::Str(y)) => Ok(x.cmp(y)),
        (Value::Nil, _) | (_, Value::Nil) => Err("invalid type for comparison".into()),
        (x, y) if x.kind() == y.kind() => Err(format!("invalid type for comparison: {}", x.type_name())),
        _ => Err("incompatible types for comparison".into()),
    }
}

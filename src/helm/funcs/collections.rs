//! sprig's list and dict functions. `set`, `unset`, `merge` and `mergeOverwrite` change the dict they are given
//! (charts rely on it); the list functions return new lists. `merge` follows mergo, the library sprig uses: a key
//! the destination lacks, or holds an empty value for, takes the source's; nested dicts merge in place.

use super::{count, empty, int, string, strval, Result};
use crate::helm::value::{deep_equal, Map, Value};

pub(super) fn call(name: &str, args: &[Value]) -> Result<Option<Value>> {
    let list = |items: Vec<Value>| Ok(Some(Value::list(items)));
    Ok(Some(match name {
        "list" | "tuple" => return list(args.to_vec()),
        "append" | "push" | "mustAppend" | "mustPush" => {
            count(args, 2, 2)?;
            let mut items = items_of(name, &args[0])?;
            items.push(args[1].clone());
            return list(items);
        }
        "prepend" | "mustPrepend" => {
            count(args, 2, 2)?;
            let mut items = items_of(name, &args[0])?;
            items.insert(0, args[1].clone());
            return list(items);
        }
        "first" | "mustFirst" | "last" | "mustLast" => {
            count(args, 1, 1)?;
            let items = items_of(name, &args[0])?;
            let item = if name.ends_with("irst") { items.first() } else { items.last() };
            item.cloned().unwrap_or(Value::Nil)
        }
        "rest" | "mustRest" | "initial" | "mustInitial" => {
            count(args, 1, 1)?;
            let items = items_of(name, &args[0])?;
            if items.is_empty() {
                return Ok(Some(Value::Nil));
            }
            let kept = if name.ends_with("est") { items[1..].to_vec() } else { items[..items.len() - 1].to_vec() };
            return list(kept);
        }
        "reverse" | "mustReverse" => {
            count(args, 1, 1)?;
            let mut items = items_of(name, &args[0])?;
            items.reverse();
            return list(items);
        }
        "uniq" | "mustUniq" => {
            count(args, 1, 1)?;
            let mut kept: Vec<Value> = Vec::new();
            for item in items_of(name, &args[0])? {
                if !kept.iter().any(|k| deep_equal(k, &item)) {
                    kept.push(item);
                }
            }
            return list(kept);
        }
        "without" | "mustWithout" => {
            count(args, 1, usize::MAX)?;
            let omit = &args[1..];
            let kept =
                items_of(name, &args[0])?.into_iter().filter(|i| !omit.iter().any(|o| deep_equal(o, i))).collect();
            return list(kept);
        }
        "has" | "mustHas" => {
            count(args, 2, 2)?;
            let found = match &args[1] {
                Value::Nil => false,
                haystack => items_of(name, haystack)?.iter().any(|i| deep_equal(i, &args[0])),
            };
            Value::Bool(found)
        }
        "compact" | "mustCompact" => {
            count(args, 1, 1)?;
            return list(items_of(name, &args[0])?.into_iter().filter(|i| !empty(i)).collect());
        }
        "concat" => {
            let mut all = Vec::new();
            for arg in args {
                all.extend(items_of(name, arg)?);
            }
            return list(all);
        }
        "chunk" => {
            count(args, 2, 2)?;
            let size = usize::try_from(int(args, 0)?).unwrap_or(0).max(1);
            let items = items_of(name, &args[1])?;
            return list(items.chunks(size).map(|c| Value::list(c.to_vec())).collect());
        }
        "until" => {
            count(args, 1, 1)?;
            let n = int(args, 0)?;
            let step = if n < 0 { -1 } else { 1 };
            return list(steps(0, n, step).into_iter().map(Value::Int).collect());
        }
        "untilStep" => {
            count(args, 3, 3)?;
            return list(steps(int(args, 0)?, int(args, 1)?, int(args, 2)?).into_iter().map(Value::Int).collect());
        }
        "seq" => {
            let numbers: Vec<i64> = args.iter().map(super::convert::to_int64).collect();
            let (start, end, step) = match numbers.as_slice() {
                [] => return Ok(Some(Value::str(""))),
                [end] => (1, *end, if *end < 1 { -1 } else { 1 }),
                [start, end] => (*start, *end, if end < start { -1 } else { 1 }),
                [start, step, end, ..] => (*start, *end, *step),
            };
            let end = if step > 0 { end + 1 } else { end - 1 };
            let text: Vec<String> = steps(start, end, step).iter().map(i64::to_string).collect();
            Value::str(text.join(" "))
        }
        "all" => Value::Bool(args.iter().all(|a| !empty(a))),
        "any" => Value::Bool(args.iter().any(|a| !empty(a))),
        "dict" => {
            let mut entries = Map::new();
            for pair in args.chunks(2) {
                entries.insert(strval(&pair[0]), pair.get(1).cloned().unwrap_or_else(|| Value::str("")));
            }
            Value::map(entries)
        }
        "get" => {
            count(args, 2, 2)?;
            let key = string(args, 1)?;
            dict(name, &args[0])?.borrow().get(key).cloned().unwrap_or_else(|| Value::str(""))
        }
        "set" => {
            count(args, 3, 3)?;
            dict(name, &args[0])?.borrow_mut().insert(string(args, 1)?.to_string(), args[2].clone());
            args[0].clone()
        }
        "unset" => {
            count(args, 2, 2)?;
            dict(name, &args[0])?.borrow_mut().remove(string(args, 1)?);
            args[0].clone()
        }
        "hasKey" => {
            count(args, 2, 2)?;
            Value::Bool(dict(name, &args[0])?.borrow().contains_key(string(args, 1)?))
        }
        "pluck" => {
            count(args, 1, usize::MAX)?;
            let key = string(args, 0)?;
            let mut found = Vec::new();
            for d in &args[1..] {
                if let Some(v) = dict(name, d)?.borrow().get(key) {
                    found.push(v.clone());
                }
            }
            return list(found);
        }
        "keys" => {
            let mut keys = Vec::new();
            for d in args {
                keys.extend(dict(name, d)?.borrow().keys().map(Value::str));
            }
            return list(keys);
        }
        "values" => {
            count(args, 1, 1)?;
            return list(dict(name, &args[0])?.borrow().values().cloned().collect());
        }
        "pick" | "omit" => {
            count(args, 1, usize::MAX)?;
            let chosen: Vec<String> = args[1..].iter().map(strval).collect();
            let source = dict(name, &args[0])?.borrow().clone();
            let keep = |k: &String| chosen.contains(k) == (name == "pick");
            Value::map(source.into_iter().filter(|(k, _)| keep(k)).collect())
        }
        "merge" | "mustMerge" | "mergeOverwrite" | "mustMergeOverwrite" => {
            count(args, 1, usize::MAX)?;
            let overwrite = name.contains("Overwrite");
            for src in &args[1..] {
                merge_into(&args[0], src, overwrite, name)?;
            }
            args[0].clone()
        }
        "deepCopy" | "mustDeepCopy" => {
            count(args, 1, 1)?;
            args[0].deep_copy()
        }
        "dig" => {
            count(args, 3, usize::MAX)?;
            let (d, rest) = args.split_last().unwrap_or((&Value::Nil, &[]));
            let (default, keys) = rest.split_last().unwrap_or((&Value::Nil, &[]));
            let mut current = d.clone();
            for key in keys {
                let key = strval(key);
                let next = match &current {
                    Value::Map(m) => m.borrow().get(&key).cloned(),
                    _ => None,
                };
                match next {
                    Some(v) => current = v,
                    None => return Ok(Some(default.clone())),
                }
            }
            current
        }
        _ => return Ok(None),
    }))
}

fn items_of(name: &str, value: &Value) -> Result<Vec<Value>> {
    match value {
        Value::List(items) => Ok(items.borrow().clone()),
        Value::Nil => Ok(Vec::new()),
        other => Err(format!("cannot {name} on type {}", other.type_name())),
    }
}

fn dict<'v>(name: &str, value: &'v Value) -> Result<&'v std::rc::Rc<std::cell::RefCell<Map>>> {
    match value {
        Value::Map(m) => Ok(m),
        other => Err(format!("{name} needs a dict, not {}", other.type_name())),
    }
}

fn steps(start: i64, stop: i64, step: i64) -> Vec<i64> {
    let mut out = Vec::new();
    if step == 0 {
        return out;
    }
    let mut i = start;
    while (step > 0 && i < stop) || (step < 0 && i > stop) {
        out.push(i);
        i += step;
        if out.len() > 1_000_000 {
            break;
        }
    }
    out
}

/// mergo's `Merge` (and `WithOverride`) of one dict into another.
fn merge_into(dst: &Value, src: &Value, overwrite: bool, name: &str) -> Result<()> {
    let (Value::Map(dst), Value::Map(src)) = (dst, src) else {
        if matches!(src, Value::Nil) {
            return Ok(());
        }
        return Err(format!("{name} needs dicts, not {} and {}", dst.type_name(), src.type_name()));
    };
    if std::rc::Rc::ptr_eq(dst, src) {
        return Ok(());
    }
    let entries: Vec<(String, Value)> = src.borrow().iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    for (key, value) in entries {
        let existing = dst.borrow().get(&key).cloned();
        match existing {
            Some(existing @ Value::Map(_)) if matches!(value, Value::Map(_)) => {
                merge_into(&existing, &value, overwrite, name)?;
            }
            Some(existing) if !empty(&existing) && (!overwrite || empty(&value)) => {}
            _ => {
                if matches!(value, Value::Nil) && dst.borrow().contains_key(&key) {
                    continue;
                }
                dst.borrow_mut().insert(key, value);
            }
        }
    }
    Ok(())
}

//! How Helm combines values: `-f` files and `--set`s merge in order (maps merge, anything else replaces), and the
//! result coalesces over the chart's `values.yaml` (a user's `null` removes the chart's key; a table and a
//! non-table do not mix, the user's side kept and a warning given).

use serde_json::{Map, Value};

/// Helm's `mergeMaps`: `over` into `base`, later layers winning, maps merged key by key.
pub fn merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(base), Value::Object(over)) => {
            for (key, value) in over {
                match base.get_mut(&key) {
                    Some(existing @ Value::Object(_)) if value.is_object() => merge(existing, value),
                    _ => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (base, over) => *base = over,
    }
}

/// Helm's `CoalesceValues`: the user's values over the chart's defaults. Returns the values and the warnings
/// Helm would print.
pub fn coalesce(defaults: &Value, user: &Value) -> (Value, Vec<String>) {
    let mut warnings = Vec::new();
    let mut out = match user {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    if let Value::Object(defaults) = defaults {
        tables(&mut out, defaults, "", &mut warnings);
    }
    (Value::Object(out), warnings)
}

fn tables(dst: &mut Map<String, Value>, src: &Map<String, Value>, prefix: &str, warnings: &mut Vec<String>) {
    for (key, default) in src {
        let full = if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") };
        match dst.get_mut(key) {
            None => {
                dst.insert(key.clone(), default.clone());
            }
            Some(Value::Null) => {
                dst.remove(key);
            }
            Some(Value::Object(user)) => match default {
                Value::Object(default) => tables(user, default, &full, warnings),
                Value::Null => {}
                other => warnings.push(format!("skipped value for {full}: Not a table ({other})")),
            },
            Some(user) => {
                if default.is_object() {
                    warnings.push(format!("cannot overwrite table with non table for {full} ({user})"));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn files_merge_maps_and_replace_lists() {
        let mut base = json!({"a": {"b": 1, "c": [1, 2]}, "d": 1});
        merge(&mut base, json!({"a": {"c": [3], "e": null}, "d": {"x": 1}}));
        assert_eq!(base, json!({"a": {"b": 1, "c": [3], "e": null}, "d": {"x": 1}}));
    }

    #[test]
    fn user_values_coalesce_over_the_charts_and_null_removes_a_default() {
        let defaults =
            json!({"nodeSelector": {"kubernetes.io/os": "linux"}, "replicas": 2, "strategy": {"type": "x"}, "n": null});
        let user = json!({"nodeSelector": {"kubernetes.io/os": null, "role": "ctl"}, "strategy": "bad", "extra": 1});
        let (values, warnings) = coalesce(&defaults, &user);
        assert_eq!(
            values,
            json!({"nodeSelector": {"role": "ctl"}, "replicas": 2, "strategy": "bad", "extra": 1, "n": null})
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
    }
}

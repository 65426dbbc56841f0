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

/// A key of a user's values that the chart does not read.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownKey {
    /// From the top: `["settings", "clustername"]`.
    pub path: Vec<String>,
    /// The keys the chart knows beside it, sorted.
    pub known: Vec<String>,
    /// The chart's values.schema.json forbids the key (Helm refuses the values); else the chart ignores it.
    pub refused: bool,
}

/// The keys of `user` that `chart_values` (its values.yaml), `templates` (their `.Values.a.b` reads) and
/// `schema` (values.schema.json, if any) do not know.
///
/// A map is the chart's own when it is the top level or a template reads a key under it; a map the templates
/// only pass on whole (`toYaml .Values.affinity`, a Kubernetes type) may hold anything and is not looked into.
/// In the chart's own maps a key is known when values.yaml has it or a template reads it. Where the schema says
/// `additionalProperties: false`, its `properties` decide, and an unknown key is refused.
pub fn unknown_keys(chart_values: &Value, templates: &[&str], schema: Option<&Value>, user: &Value) -> Vec<UnknownKey> {
    let reads = template_reads(templates);
    let mut out = Vec::new();
    walk(chart_values, &reads, schema, user, &mut Vec::new(), &mut out);
    out
}

/// Every `.Values.a.b.c` a template reads, as paths.
fn template_reads(templates: &[&str]) -> Vec<Vec<String>> {
    let mut reads = Vec::new();
    for text in templates {
        for (at, _) in text.match_indices(".Values.") {
            let rest = &text[at + ".Values.".len()..];
            let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.')).unwrap_or(rest.len());
            let path: Vec<String> = rest[..end].split('.').take_while(|k| !k.is_empty()).map(str::to_string).collect();
            if !path.is_empty() {
                reads.push(path);
            }
        }
    }
    reads.sort();
    reads.dedup();
    reads
}

fn walk(
    defaults: &Value,
    reads: &[Vec<String>],
    schema: Option<&Value>,
    user: &Value,
    path: &mut Vec<String>,
    out: &mut Vec<UnknownKey>,
) {
    let Value::Object(map) = user else { return };
    let closed = schema.is_some_and(|s| s.get("additionalProperties") == Some(&Value::Bool(false)));
    let properties = schema.and_then(|s| s.get("properties")).and_then(Value::as_object);
    let owned = path.is_empty() || reads.iter().any(|r| r.len() > path.len() && r.starts_with(path));
    let default_map = defaults.as_object();
    let mut known: Vec<String> = default_map.map(|m| m.keys().cloned().collect()).unwrap_or_default();
    known.extend(reads.iter().filter(|r| r.len() > path.len() && r.starts_with(path)).map(|r| r[path.len()].clone()));
    known.extend(properties.into_iter().flat_map(|p| p.keys().cloned()));
    known.sort();
    known.dedup();
    for (key, value) in map {
        path.push(key.clone());
        let by_schema = properties.is_some_and(|p| p.contains_key(key));
        let by_chart = default_map.is_some_and(|m| m.contains_key(key)) || reads.iter().any(|r| r.starts_with(path));
        if closed && !by_schema {
            out.push(UnknownKey { path: path.clone(), known: known.clone(), refused: true });
        } else if owned && !by_chart && !by_schema && !closed {
            out.push(UnknownKey { path: path.clone(), known: known.clone(), refused: false });
        } else {
            let below = default_map.and_then(|m| m.get(key)).unwrap_or(&Value::Null);
            let schema_below = properties.and_then(|p| p.get(key));
            walk(below, reads, schema_below, value, path, out);
        }
        path.pop();
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

    #[test]
    fn unknown_keys_are_found_in_the_charts_own_maps_and_not_in_the_kubernetes_types_it_passes_on() {
        let defaults = json!({
            "settings": { "clusterName": "", "featureGates": { "nodeRepair": false } },
            "affinity": { "nodeAffinity": {} },
            "nodeSelector": { "kubernetes.io/os": "linux" },
            "podAnnotations": {},
        });
        let templates = [
            "{{ .Values.settings.clusterName }} {{ with .Values.settings.featureGates.nodeRepair }}{{ end }}",
            "{{ toYaml .Values.nodeSelector }} {{ .Values.affinity.podAffinity }} {{- .Values.extra.thing -}}",
        ];
        let user = json!({
            "settings": { "clustername": "x", "featureGates": { "nodeRepiar": true } },
            "affinity": { "podAffinity": {}, "nodeAfinity": {} },
            "nodeSelector": { "team": "a" },
            "podAnnotations": { "a/b": "c" },
            "extra": { "thing": 1 },
            "replcas": 3,
        });
        let found = unknown_keys(&defaults, &templates, None, &user);
        let mut paths: Vec<String> = found.iter().map(|u| u.path.join(".")).collect();
        paths.sort();
        assert_eq!(
            paths,
            ["affinity.nodeAfinity", "replcas", "settings.clustername", "settings.featureGates.nodeRepiar"]
        );
        let name = found.iter().find(|u| u.path == ["settings", "clustername"]).unwrap();
        assert!(name.known.contains(&"clusterName".to_string()) && !name.refused);
    }

    #[test]
    fn a_closed_schema_refuses_keys_outside_its_properties() {
        let schema = json!({ "type": "object", "properties": {
            "image": { "type": "object", "additionalProperties": false, "properties": { "tag": {}, "repository": {} } },
        }});
        let user = json!({ "image": { "tga": "1", "tag": "2" } });
        let found = unknown_keys(&json!({ "image": { "tag": "" } }), &[], Some(&schema), &user);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].path, ["image", "tga"]);
        assert!(found[0].refused);
        assert_eq!(found[0].known, ["repository", "tag"]);
    }
}

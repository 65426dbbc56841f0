//! What a change of the Karpenter controller does to the objects in the cluster. Its attributes hold the chart's
//! values; a values change, or a new chart release, reads better as the objects it changes: the chart is
//! rendered with the attributes last applied and with the blueprint's, and the two are compared object by
//! object, field by field (`spec.template.spec.containers[controller].env[FEATURE_GATES].value`), lists of
//! named items keyed by name. Rendering needs both charts at hand offline (a local chart, or kbp's cache) for
//! the earlier one, and the desired one as apply would read it; without them the plan shows the attributes
//! alone.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Action, AttrChange, Plan};
use crate::graph::compile::kinds;
use crate::graph::kinds::karpenter_controller::Controller;
use crate::graph::kinds::Input;
use crate::graph::value::resolve;
use crate::kubernetes::{manifests, oci};
use crate::providers::spec;
use crate::state::State;

/// One object of a change's rendering that is created, updated or deleted, with the fields that differ.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObjectChange {
    /// `Deployment karpenter/karpenter`, `ClusterRole karpenter-core`.
    pub object: String,
    /// What happens to the object.
    pub action: Action,
    /// The fields that differ (for an update).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<AttrChange>,
}

/// Adds to each update of the controller in `p` the objects it changes; `state` holds the attributes last applied.
pub async fn attach(p: &mut Plan, state: &State) {
    for i in 0..p.changes.len() {
        let change = &p.changes[i];
        if change.kind != kinds::KARPENTER_CONTROLLER
            || !matches!(change.action, Action::Update | Action::Replace | Action::ReplaceCreateFirst)
        {
            continue;
        }
        let Some(prior) = state.get(&change.address).map(|r| r.attributes.clone()) else { continue };
        let Some(desired) = p.resources.iter().find(|r| r.address == change.address) else { continue };
        let lookup = |address: &crate::graph::Address, output: &str| state.output(address, output);
        let desired = resolve(&Value::Object(desired.attrs.clone()), &lookup).0;
        let Some(desired) = desired.as_object() else { continue };
        let (Some(before), Some(after)) = (render(&prior, false).await, render(desired, true).await) else { continue };
        p.changes[i].objects = diff(&before, &after);
    }
}

/// The controller's objects for `attrs`, the chart read offline (or, for the desired attributes, pulled).
async fn render(attrs: &manifests::Attrs, may_pull: bool) -> Option<Vec<Value>> {
    let s = spec::parse::<Controller<Input>>(kinds::KARPENTER_CONTROLLER, attrs).ok()?;
    let chart = match oci::offline_chart(&s.chart, &s.version) {
        Ok(Some((chart, _))) => chart,
        _ if may_pull => oci::release_chart(&s.chart, &s.version).await.ok()?.0,
        _ => return None,
    };
    manifests::controller(&chart, &s.chart_settings()).ok()
}

fn name_of(object: &Value) -> String {
    let kind = object["kind"].as_str().unwrap_or("?");
    let name = object["metadata"]["name"].as_str().unwrap_or("?");
    match object["metadata"]["namespace"].as_str() {
        Some(ns) => format!("{kind} {ns}/{name}"),
        None => format!("{kind} {name}"),
    }
}

/// The objects of `after` created, updated (with their fields) and those of `before` deleted, in `after`'s order.
pub fn diff(before: &[Value], after: &[Value]) -> Vec<ObjectChange> {
    let mut out = Vec::new();
    for object in after {
        let name = name_of(object);
        match before.iter().find(|b| name_of(b) == name) {
            None => out.push(ObjectChange { object: name, action: Action::Create, fields: Vec::new() }),
            Some(old) => {
                let mut fields = Vec::new();
                fields_of("", old, object, &mut fields);
                if !fields.is_empty() {
                    out.push(ObjectChange { object: name, action: Action::Update, fields });
                }
            }
        }
    }
    for old in before {
        let name = name_of(old);
        if !after.iter().any(|a| name_of(a) == name) {
            out.push(ObjectChange { object: name, action: Action::Delete, fields: Vec::new() });
        }
    }
    out
}

/// The name of each item when every item of both lists is a map with a distinct string `name`.
fn names(items: &[Value]) -> Option<Vec<&str>> {
    let names: Vec<&str> = items.iter().map(|i| i.get("name").and_then(Value::as_str)).collect::<Option<_>>()?;
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    (unique.len() == names.len()).then_some(names)
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn fields_of(path: &str, before: &Value, after: &Value, out: &mut Vec<AttrChange>) {
    let change = |before: Option<&Value>, after: Option<&Value>| AttrChange {
        path: path.to_string(),
        before: before.cloned(),
        after: after.cloned(),
        forces_replacement: false,
    };
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            for (key, value) in a {
                match b.get(key) {
                    Some(old) => fields_of(&join(path, key), old, value, out),
                    None => out.push(AttrChange { path: join(path, key), ..change(None, Some(value)) }),
                }
            }
            for (key, old) in b.iter().filter(|(k, _)| !a.contains_key(*k)) {
                out.push(AttrChange { path: join(path, key), ..change(Some(old), None) });
            }
        }
        (Value::Array(b), Value::Array(a)) => match (names(b), names(a)) {
            (Some(bn), Some(an)) => {
                for (name, value) in an.iter().zip(a) {
                    let here = format!("{path}[{name}]");
                    match bn.iter().position(|n| n == name) {
                        Some(at) => fields_of(&here, &b[at], value, out),
                        None => out.push(AttrChange { path: here, ..change(None, Some(value)) }),
                    }
                }
                for (name, old) in bn.iter().zip(b).filter(|(n, _)| !an.contains(n)) {
                    out.push(AttrChange { path: format!("{path}[{name}]"), ..change(Some(old), None) });
                }
            }
            _ if a.len() == b.len() => {
                for (i, (old, value)) in b.iter().zip(a).enumerate() {
                    fields_of(&format!("{path}[{i}]"), old, value, out);
                }
            }
            _ => out.push(change(Some(before), Some(after))),
        },
        _ if before != after => out.push(change(Some(before), Some(after))),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn objects_are_compared_field_by_field_with_named_items_keyed_by_name() {
        let deployment = |gates: &str, extra: bool| {
            let mut env = vec![
                json!({"name": "CLUSTER_NAME", "value": "demo"}),
                json!({"name": "FEATURE_GATES", "value": gates}),
            ];
            if extra {
                env.insert(0, json!({"name": "HTTPS_PROXY", "value": "http://proxy:3128"}));
            }
            json!({"kind": "Deployment", "metadata": {"name": "karpenter", "namespace": "karpenter"},
                   "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "controller", "env": env}]}}}})
        };
        let monitor = json!({"kind": "ServiceMonitor", "metadata": {"name": "karpenter", "namespace": "karpenter"}});
        let role = json!({"kind": "ClusterRole", "metadata": {"name": "karpenter-core"}, "rules": [1, 2]});
        let before = [deployment("A=false", false), role.clone()];
        let after = [deployment("A=true", true), monitor];
        let changes = diff(&before, &after);
        assert_eq!(changes.len(), 3, "{changes:#?}");
        assert_eq!(changes[0].object, "Deployment karpenter/karpenter");
        assert_eq!(changes[0].action, Action::Update);
        let paths: Vec<&str> = changes[0].fields.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "spec.template.spec.containers[controller].env[HTTPS_PROXY]",
                "spec.template.spec.containers[controller].env[FEATURE_GATES].value"
            ]
        );
        assert_eq!(changes[0].fields[1].before, Some(json!("A=false")));
        assert_eq!(changes[0].fields[1].after, Some(json!("A=true")));
        assert_eq!(
            (changes[1].object.as_str(), changes[1].action),
            ("ServiceMonitor karpenter/karpenter", Action::Create)
        );
        assert_eq!((changes[2].object.as_str(), changes[2].action), ("ClusterRole karpenter-core", Action::Delete));
        assert!(diff(&after, &after).is_empty(), "nothing changes between equal renders");
    }
}

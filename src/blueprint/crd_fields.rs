//! The blueprint's other fields of a NodePool or EC2NodeClass spec, named as the CRD names them. The mapping is
//! mechanical, directed by the CRD's schema: a written key matches the declared property whose name is the same
//! ignoring case and underscores (`kms_key_id` → `kmsKeyID`, `metadata_options` → `metadataOptions`), at every
//! depth where the schema declares properties; the keys of maps (`additionalProperties`: tags, labels,
//! annotations, kubelet reservations) are data and kept as written. A key the CRD does not declare is kept as
//! written, so that the CRD check reports it as unknown with the names that are. Without the CRDs only the
//! first level is renamed (snake_case to camelCase) and nothing below, and the NodePool's fields go under
//! `template.spec`.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// The places under a NodePool's `spec` its blueprint table's fields may belong to, tried in order.
const NODE_POOL_SCOPES: &[&[&str]] = &[&[], &["template", "spec"], &["template", "metadata"]];

/// `written` (a node class's or pool's other fields, keyed as written) named as the CRD of `kind` names them,
/// nested under the object's `spec` where they belong. `crds` are the release's CRD objects, when at hand.
pub fn name(kind: &str, written: &BTreeMap<String, Value>, crds: Option<&[Value]>) -> Map<String, Value> {
    let spec_schema = crds.and_then(|crds| spec_schema(crds, kind));
    let scopes: &[&[&str]] = if kind == "NodePool" { NODE_POOL_SCOPES } else { &[&[]] };
    let mut out = Map::new();
    for (key, value) in written {
        let placed = spec_schema.and_then(|schema| {
            scopes.iter().find_map(|scope| {
                let at = descend(schema, scope)?;
                let (name, sub) = property(at, key)?;
                Some((*scope, name.to_string(), canonical(Some(sub), value)))
            })
        });
        let (scope, name, value) = match (placed, spec_schema) {
            (Some(found), _) => found,
            // The CRD does not have it: kept as written, for the CRD check to name.
            (None, Some(_)) => (&[][..], key.clone(), value.clone()),
            (None, None) => {
                let scope = if kind == "NodePool" { NODE_POOL_SCOPES[1] } else { &[][..] };
                (scope, camel(key), value.clone())
            }
        };
        let mut target = &mut out;
        for part in scope {
            let entry = target.entry(part.to_string()).or_insert_with(|| Value::Object(Map::new()));
            if !entry.is_object() {
                *entry = Value::Object(Map::new());
            }
            target = entry.as_object_mut().expect("made an object above");
        }
        target.insert(name, value);
    }
    out
}

/// Names the other fields of every node class and pool of `bp` as the CRDs do (see [`name`]), in place. Names
/// already the CRD's stay as they are, so naming twice changes nothing.
pub fn name_all(bp: &mut super::Blueprint, crds: Option<&[Value]>) {
    for class in bp.node_classes.values_mut() {
        class.spec = name("EC2NodeClass", &class.spec, crds).into_iter().collect();
    }
    for pool in bp.node_pools.values_mut() {
        pool.spec = name("NodePool", &pool.spec, crds).into_iter().collect();
    }
}

/// Merges `extra` into `base`: tables field by field, anything else (lists included) replaced.
pub fn merge(base: &mut Map<String, Value>, extra: Map<String, Value>) {
    for (key, value) in extra {
        match (base.get_mut(&key), value) {
            (Some(Value::Object(into)), Value::Object(from)) => merge(into, from),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// The `spec` schema of `kind`'s served version in `crds`.
fn spec_schema<'a>(crds: &'a [Value], kind: &str) -> Option<&'a Value> {
    let crd = crds.iter().find(|c| c.pointer("/spec/names/kind").and_then(Value::as_str) == Some(kind))?;
    let versions = crd.pointer("/spec/versions")?.as_array()?;
    let version = versions.iter().find(|v| v.get("storage") == Some(&Value::Bool(true))).or(versions.first())?;
    version.pointer("/schema/openAPIV3Schema/properties/spec")
}

fn descend<'a>(schema: &'a Value, scope: &[&str]) -> Option<&'a Value> {
    scope.iter().try_fold(schema, |at, part| at.get("properties")?.get(*part))
}

/// The declared property `key` stands for, and its schema.
fn property<'a>(schema: &'a Value, key: &str) -> Option<(&'a str, &'a Value)> {
    let wanted = normalized(key);
    schema
        .get("properties")?
        .as_object()?
        .iter()
        .find(|(name, _)| normalized(name) == wanted)
        .map(|(n, s)| (n.as_str(), s))
}

fn normalized(name: &str) -> String {
    name.chars().filter(|c| *c != '_').map(|c| c.to_ascii_lowercase()).collect()
}

/// `value` with every key the schema declares under its CRD name.
fn canonical(schema: Option<&Value>, value: &Value) -> Value {
    let Some(schema) = schema else { return value.clone() };
    match value {
        Value::Object(fields) => {
            let declared = schema.get("properties").and_then(Value::as_object).is_some();
            let values = schema.get("additionalProperties").filter(|a| a.is_object());
            Value::Object(
                fields
                    .iter()
                    .map(|(key, v)| match (declared, property(schema, key)) {
                        (true, Some((name, sub))) => (name.to_string(), canonical(Some(sub), v)),
                        _ => (key.clone(), canonical(values, v)),
                    })
                    .collect(),
            )
        }
        Value::Array(items) => {
            let item = schema.get("items").filter(|i| i.is_object());
            Value::Array(items.iter().map(|v| canonical(item, v)).collect())
        }
        other => other.clone(),
    }
}

/// `subnet_selector_terms` → `subnetSelectorTerms`; a name with no underscore is kept.
fn camel(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        match (c, upper) {
            ('_', _) => upper = !out.is_empty(),
            (c, true) => {
                out.push(c.to_ascii_uppercase());
                upper = false;
            }
            (c, false) => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kubernetes::fixtures::karpenter_crds;
    use serde_json::json;

    fn written(v: Value) -> BTreeMap<String, Value> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn node_class_fields_take_the_crd_names_at_every_depth_and_map_keys_stay() {
        let crds = karpenter_crds();
        let got = name(
            "EC2NodeClass",
            &written(json!({
                "subnet_selector_terms": [{ "tags": { "network_tier": "private" } }],
                "block_device_mappings": [{ "device_name": "/dev/xvda", "ebs": { "kms_key_id": "k", "snapshot_id": "s", "volume_size": "20Gi" } }],
                "metadataOptions": { "http_protocol_ipv6": "enabled" },
                "capacity_reservation_selector_terms": [{ "owner_id": "123456789012", "instance_match_criteria": "open" }],
                "kubelet": { "maxPods": 110, "system_reserved": { "cpu": "100m" } },
                "subnet_selector_termz": [],
            })),
            Some(&crds),
        );
        assert_eq!(
            Value::Object(got),
            json!({
                "subnetSelectorTerms": [{ "tags": { "network_tier": "private" } }],
                "blockDeviceMappings": [{ "deviceName": "/dev/xvda", "ebs": { "kmsKeyID": "k", "snapshotID": "s", "volumeSize": "20Gi" } }],
                "metadataOptions": { "httpProtocolIPv6": "enabled" },
                "capacityReservationSelectorTerms": [{ "ownerID": "123456789012", "instanceMatchCriteria": "open" }],
                // The release's CRD declares kubelet's settings, so they take its names too; the keys of a map
                // under them (resource names) stay as written.
                "kubelet": { "maxPods": 110, "systemReserved": { "cpu": "100m" } },
                "subnet_selector_termz": [],
            })
        );
    }

    #[test]
    fn node_pool_fields_go_where_the_crd_declares_them() {
        let crds = karpenter_crds();
        let got = name(
            "NodePool",
            &written(json!({ "annotations": { "team": "a" }, "replicas": 2, "node_class_ref": { "name": "x" } })),
            Some(&crds),
        );
        assert_eq!(
            Value::Object(got),
            json!({ "replicas": 2, "template": { "metadata": { "annotations": { "team": "a" } }, "spec": { "nodeClassRef": { "name": "x" } } } })
        );
        let without = name("NodePool", &written(json!({ "startup_taints": [] })), None);
        assert_eq!(Value::Object(without), json!({ "template": { "spec": { "startupTaints": [] } } }));
    }

    #[test]
    fn merging_keeps_what_the_user_did_not_say_and_replaces_lists() {
        let mut base = json!({ "metadataOptions": { "httpTokens": "required", "httpPutResponseHopLimit": 1 }, "subnetSelectorTerms": [{ "tags": { "a": "b" } }] });
        let extra = json!({ "metadataOptions": { "httpPutResponseHopLimit": 2 }, "subnetSelectorTerms": [{ "id": "subnet-1" }] });
        merge(base.as_object_mut().unwrap(), extra.as_object().unwrap().clone());
        assert_eq!(
            base,
            json!({ "metadataOptions": { "httpTokens": "required", "httpPutResponseHopLimit": 2 }, "subnetSelectorTerms": [{ "id": "subnet-1" }] })
        );
    }
}

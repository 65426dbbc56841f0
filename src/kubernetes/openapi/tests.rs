use serde_json::json;

use super::go_regex::{compiled, go_pattern};
use super::*;
use crate::kubernetes::fixtures::karpenter_crds;

fn schema_of<'a>(crds: &'a [Value], kind: &str) -> &'a Value {
    let crd = crds.iter().find(|c| c.pointer("/spec/names/kind") == Some(&json!(kind))).expect("kind in the CRDs");
    crd.pointer("/spec/versions/0/schema/openAPIV3Schema").expect("CRD has a schema")
}

/// The single violation of `value` against `schema`, which must be at `path` and mention `needle`.
fn assert_one(schema: Value, value: Value, path: &str, needle: &str) {
    let found = validate(&schema, &value);
    assert_eq!(found.len(), 1, "expected one violation at {path}, got {found:#?}");
    assert_eq!(found[0].path, path, "{found:#?}");
    assert!(found[0].message.contains(needle), "message {:?} should mention {needle:?}", found[0].message);
}

fn assert_clean(schema: Value, value: Value) {
    let found = validate(&schema, &value);
    assert!(found.is_empty(), "expected no violations, got {found:#?}");
}

fn field(schema: Value) -> Value {
    json!({"type": "object", "properties": {"f": schema}})
}

#[test]
fn type_keyword_accepts_each_type_and_rejects_others() {
    let cases = [
        ("object", json!({}), json!([])),
        ("array", json!([1]), json!({})),
        ("string", json!("x"), json!(1)),
        ("integer", json!(3), json!(1.5)),
        ("number", json!(1.5), json!("1.5")),
        ("boolean", json!(true), json!("true")),
    ];
    for (ty, good, bad) in cases {
        assert_clean(field(json!({"type": ty})), json!({"f": good}));
        assert_one(field(json!({"type": ty})), json!({"f": bad}), "f", &format!("expected {ty}"));
    }
}

#[test]
fn integer_accepts_json_integers_only() {
    assert_one(field(json!({"type": "integer"})), json!({"f": 1.0}), "f", "got number 1.0");
    assert_one(field(json!({"type": "integer"})), json!({"f": u64::MAX}), "f", "expected integer");
    assert_clean(field(json!({"type": "integer"})), json!({"f": -7}));
}

#[test]
fn int_or_string_takes_integers_and_strings() {
    let schema = field(json!({"x-kubernetes-int-or-string": true, "pattern": "^[0-9]+%$"}));
    assert_clean(schema.clone(), json!({"f": 3}));
    assert_clean(schema.clone(), json!({"f": "30%"}));
    assert_one(schema.clone(), json!({"f": 1.5}), "f", "expected integer or string");
    assert_one(schema.clone(), json!({"f": true}), "f", "expected integer or string");
    assert_one(schema, json!({"f": "30"}), "f", "does not match the pattern");
}

#[test]
fn unknown_fields_are_reported_as_pruned_unless_preserved() {
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    assert_one(schema.clone(), json!({"nmae": "x"}), "nmae", "silently prune");
    assert_one(schema.clone(), json!({"nmae": "x"}), "nmae", "did you mean \"name\"");
    let preserved = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"name": {"type": "string"}}});
    assert_clean(preserved.clone(), json!({"anything": {"goes": [1]}}));
    assert_one(preserved, json!({"name": 1}), "name", "expected string");
}

#[test]
fn an_object_without_properties_keeps_no_fields() {
    assert_one(json!({"type": "object"}), json!({"a": 1}), "a", "declares no fields");
}

#[test]
fn nullable_allows_null_and_non_nullable_null_is_dropped() {
    let schema = json!({
        "type": "object",
        "required": ["must"],
        "properties": {"must": {"type": "string"}, "may": {"type": "string"}, "null_ok": {"type": "string", "nullable": true}},
    });
    assert_clean(schema.clone(), json!({"must": "x", "null_ok": null, "may": null}));
    assert_one(schema.clone(), json!({"must": null}), "must", "is null");
    let list = field(json!({"type": "array", "items": {"type": "string"}}));
    assert_one(list, json!({"f": ["a", null]}), "f[1]", "not nullable");
    let nullable_list = field(json!({"type": "array", "items": {"type": "string", "nullable": true}}));
    assert_clean(nullable_list, json!({"f": ["a", null]}));
}

#[test]
fn additional_properties_schema_validates_map_values() {
    let schema = field(json!({"type": "object", "additionalProperties": {"type": "string", "maxLength": 3}}));
    assert_clean(schema.clone(), json!({"f": {"a": "abc", "b.c/d": ""}}));
    assert_one(schema, json!({"f": {"team.example.com/owner": "abcd"}}), "f[team.example.com/owner]", "at most 3");
}

#[test]
fn additional_properties_bool() {
    let closed = json!({"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": false});
    assert_clean(closed.clone(), json!({"a": 1}));
    assert_one(closed, json!({"a": 1, "b": 2}), "b", "not allowed");
    let open = json!({"type": "object", "additionalProperties": true});
    assert_clean(open, json!({"a": 1, "b": [true]}));
}

#[test]
fn required_fields() {
    let schema =
        json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}, "b": {"type": "string"}}});
    assert_clean(schema.clone(), json!({"a": ""}));
    assert_one(schema, json!({"b": "x"}), "a", "required field \"a\" is missing");
}

#[test]
fn a_required_field_with_a_default_is_filled_by_the_server() {
    let schema = json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "string", "default": "x"}}});
    assert_clean(schema.clone(), json!({}));
    assert_clean(schema, json!({"a": null}));
}

#[test]
fn default_values_themselves_are_not_validated() {
    assert_clean(field(json!({"type": "integer", "default": "not an integer"})), json!({}));
}

#[test]
fn enum_values() {
    let schema = field(json!({"type": "string", "enum": ["In", "NotIn"]}));
    assert_clean(schema.clone(), json!({"f": "NotIn"}));
    assert_one(schema, json!({"f": "in"}), "f", "supported values: \"In\", \"NotIn\"");
    assert_clean(field(json!({"type": "number", "enum": [1]})), json!({"f": 1.0}));
}

#[test]
fn patterns_match_anywhere_unless_anchored() {
    assert_clean(field(json!({"type": "string", "pattern": "sg-[0-9a-z]+"})), json!({"f": "x sg-12ab"}));
    assert_one(
        field(json!({"type": "string", "pattern": "^sg-[0-9a-z]+$"})),
        json!({"f": "x sg-12ab"}),
        "f",
        "pattern",
    );
}

#[test]
fn patterns_read_like_go_regular_expressions() {
    // Go's \d is ASCII only: an Arabic-Indic digit does not match, where the regex crate's \d would.
    let digits = field(json!({"type": "string", "pattern": r"^\d+$"}));
    assert_clean(digits.clone(), json!({"f": "42"}));
    assert_one(digits, json!({"f": "٤٢"}), "f", "pattern");
    // A '[' inside a class is a literal in Go.
    assert_clean(field(json!({"type": "string", "pattern": r"^[[a]+$"})), json!({"f": "[a["}));
    assert_clean(field(json!({"type": "string", "pattern": r"^[\s\d]+$"})), json!({"f": " 1\t2"}));
    assert_eq!(go_pattern(r"\\d[\w]\S"), r"\\d[0-9A-Za-z_][^\t\n\f\r ]");
}

#[test]
fn a_pattern_kbp_cannot_compile_is_its_own_limitation() {
    // A backreference is not RE2 either, but whatever cannot be compiled must not blame the value.
    assert_one(field(json!({"type": "string", "pattern": r"^(a)\1$"})), json!({"f": "aa"}), "f", "kbp limitation");
    assert!(compiled(r"^(a)\1$").is_err());
}

#[test]
fn string_formats() {
    let date_time = field(json!({"type": "string", "format": "date-time"}));
    assert_clean(date_time.clone(), json!({"f": "2025-02-28T23:59:59.123Z"}));
    assert_clean(date_time.clone(), json!({"f": "2025-02-28T23:59:59+02:00"}));
    assert_one(date_time.clone(), json!({"f": "2025-02-30T00:00:00Z"}), "f", "format date-time");
    assert_one(date_time, json!({"f": "yesterday"}), "f", "format date-time");
    let cases = [("date", "2024-02-29", "2023-02-29"), ("byte", "aGk=", "h!"), ("ipv4", "10.0.0.1", "10.0.0.256")];
    for (format, good, bad) in cases {
        assert_clean(field(json!({"type": "string", "format": format})), json!({"f": good}));
        assert_one(field(json!({"type": "string", "format": format})), json!({"f": bad}), "f", format);
    }
    assert_clean(field(json!({"type": "string", "format": "no-such-format"})), json!({"f": "anything"}));
}

#[test]
fn integer_formats() {
    let int32 = field(json!({"type": "integer", "format": "int32"}));
    assert_clean(int32.clone(), json!({"f": 2_147_483_647}));
    assert_one(int32, json!({"f": 2_147_483_648_i64}), "f", "32-bit");
    assert_clean(field(json!({"type": "integer", "format": "int64"})), json!({"f": i64::MAX}));
}

#[test]
fn minimum_and_maximum() {
    let schema = field(json!({"type": "integer", "minimum": 1, "maximum": 100}));
    assert_clean(schema.clone(), json!({"f": 1}));
    assert_clean(schema.clone(), json!({"f": 100}));
    assert_one(schema.clone(), json!({"f": 0}), "f", "greater than or equal to 1, got 0");
    assert_one(schema, json!({"f": 101}), "f", "less than or equal to 100, got 101");
}

#[test]
fn exclusive_bounds() {
    let schema = field(
        json!({"type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 1, "exclusiveMaximum": true}),
    );
    assert_clean(schema.clone(), json!({"f": 0.5}));
    assert_one(schema.clone(), json!({"f": 0}), "f", "greater than 0");
    assert_one(schema, json!({"f": 1.0}), "f", "less than 1");
}

#[test]
fn lengths_count_code_points() {
    let schema = field(json!({"type": "string", "minLength": 2, "maxLength": 3}));
    assert_clean(schema.clone(), json!({"f": "ééé"}));
    assert_one(schema.clone(), json!({"f": "éééé"}), "f", "at most 3 characters long, got 4");
    assert_one(schema, json!({"f": "é"}), "f", "at least 2 characters long, got 1");
}

#[test]
fn item_counts() {
    let schema = field(json!({"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "integer"}}));
    assert_clean(schema.clone(), json!({"f": [1, 2]}));
    assert_one(schema.clone(), json!({"f": []}), "f", "at least 1 items");
    assert_one(schema, json!({"f": [1, 2, 3]}), "f", "at most 2 items");
}

#[test]
fn property_counts() {
    let schema = field(
        json!({"type": "object", "minProperties": 1, "maxProperties": 2, "additionalProperties": {"type": "string"}}),
    );
    assert_clean(schema.clone(), json!({"f": {"a": "1"}}));
    assert_one(schema.clone(), json!({"f": {}}), "f", "at least 1 fields");
    assert_one(schema, json!({"f": {"a": "", "b": "", "c": ""}}), "f", "at most 2 fields");
}

#[test]
fn items_are_validated_with_their_index() {
    let schema = field(json!({"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}}));
    assert_clean(schema.clone(), json!({"f": [{"k": "a"}, {}]}));
    assert_one(schema, json!({"f": [{"k": "a"}, {"k": 2}]}), "f[1].k", "expected string");
}

#[test]
fn all_of() {
    let schema = field(json!({"type": "integer", "allOf": [{"minimum": 2}, {"maximum": 4}]}));
    assert_clean(schema.clone(), json!({"f": 3}));
    assert_one(schema, json!({"f": 5}), "f", "less than or equal to 4");
}

#[test]
fn any_of() {
    let schema = field(json!({"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": true}));
    assert_clean(schema.clone(), json!({"f": "1Gi"}));
    let ranges = field(json!({"type": "integer", "anyOf": [{"maximum": 1}, {"minimum": 10}]}));
    assert_clean(ranges.clone(), json!({"f": 10}));
    assert_one(ranges, json!({"f": 5}), "f", "matches none of the anyOf alternatives");
}

#[test]
fn junctor_subschemas_do_not_make_fields_unknown() {
    let schema = field(json!({
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        "anyOf": [{"required": ["a"]}, {"required": ["b"]}],
    }));
    assert_clean(schema.clone(), json!({"f": {"a": "x", "b": "y"}}));
    assert_one(schema, json!({"f": {}}), "f", "anyOf");
}

#[test]
fn one_of() {
    let schema = field(json!({
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
    }));
    assert_clean(schema.clone(), json!({"f": {"a": "x"}}));
    assert_one(schema.clone(), json!({"f": {"a": "x", "b": "y"}}), "f", "matches 2");
    assert_one(schema, json!({"f": {}}), "f", "matches 0");
}

#[test]
fn not() {
    let schema = field(json!({"type": "string", "not": {"enum": ["forbidden"]}}));
    assert_clean(schema.clone(), json!({"f": "fine"}));
    assert_one(schema, json!({"f": "forbidden"}), "f", "must not match");
}

#[test]
fn list_type_set_rejects_duplicates() {
    let schema = field(json!({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}));
    assert_clean(schema.clone(), json!({"f": ["a", "b"]}));
    assert_one(schema, json!({"f": ["a", "b", "a"]}), "f[2]", "duplicate value \"a\"");
}

#[test]
fn list_type_map_rejects_duplicate_keys() {
    let schema = field(json!({
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name", "port"],
        "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}, "x": {"type": "string"}}},
    }));
    assert_clean(schema.clone(), json!({"f": [{"name": "a", "port": 1}, {"name": "a", "port": 2}]}));
    assert_one(
        schema,
        json!({"f": [{"name": "a", "port": 1, "x": "1"}, {"name": "a", "port": 1, "x": "2"}]}),
        "f[1]",
        "duplicate entry with key name=\"a\", port=1",
    );
}

#[test]
fn a_resource_root_needs_identity_and_a_valid_name() {
    let schema = json!({"type": "object", "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"}}});
    let good = json!({"apiVersion": "x.io/v1", "kind": "X", "metadata": {"name": "a.b-c", "labels": {"app": "x"}}});
    assert_clean(schema.clone(), good);
    let found = validate(&schema, &json!({"metadata": {"name": "Not_Valid"}}));
    let paths: Vec<&str> = found.iter().map(|v| v.path.as_str()).collect();
    assert_eq!(paths, ["apiVersion", "kind", "metadata.name"], "{found:#?}");
    assert!(found[2].message.contains("DNS-1123 subdomain"));
    let long = "a".repeat(254);
    assert_one(
        schema.clone(),
        json!({"apiVersion": "v1", "kind": "X", "metadata": {"name": long}}),
        "metadata.name",
        "253",
    );
    assert_one(schema, json!({"apiVersion": "v1", "kind": "X", "metadata": {}}), "metadata.name", "missing");
}

fn good_ec2_node_class() -> Value {
    json!({
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "default"},
        "spec": {
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "role": "KarpenterNodeRole-demo",
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}, {"id": "subnet-0123456789abcdef0"}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}, {"id": "sg-0123456789abcdef0"}],
            "metadataOptions": {
                "httpEndpoint": "enabled",
                "httpProtocolIPv6": "disabled",
                "httpPutResponseHopLimit": 1,
                "httpTokens": "required",
            },
            "blockDeviceMappings": [{
                "deviceName": "/dev/xvda",
                "ebs": {"volumeSize": "20Gi", "volumeType": "gp3", "encrypted": true},
            }],
        },
    })
}

fn good_node_pool() -> Value {
    json!({
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "default"},
        "spec": {
            "template": {
                "metadata": {"labels": {"team": "platform"}},
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                    "requirements": [
                        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]},
                        {"key": "kubernetes.io/arch", "operator": "NotIn", "values": ["arm64"]},
                        {"key": "karpenter.k8s.aws/instance-family", "operator": "Exists"},
                        {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gt", "values": ["1"]},
                        {"key": "karpenter.k8s.aws/instance-memory", "operator": "Gte", "values": ["2048"]},
                        {"key": "karpenter.k8s.aws/instance-generation", "operator": "Lte", "values": ["8"]},
                    ],
                    "expireAfter": "720h",
                },
            },
            "limits": {"cpu": "1000", "memory": "1000Gi"},
            "disruption": {
                "consolidationPolicy": "WhenEmptyOrUnderutilized",
                "consolidateAfter": "1m",
                "budgets": [{"nodes": "10%"}],
            },
            "weight": 10,
        },
    })
}

/// Applies `edit` to a copy of `object` and returns its violations against the Karpenter CRDs.
fn violations_after(object: &Value, edit: impl FnOnce(&mut Value)) -> Vec<Violation> {
    let mut object = object.clone();
    edit(&mut object);
    validate_custom_object(&karpenter_crds(), &object)
}

fn assert_single(found: &[Violation], path: &str, needle: &str) {
    assert_eq!(found.len(), 1, "expected one violation at {path}, got {found:#?}");
    assert_eq!(found[0].path, path);
    assert!(found[0].message.contains(needle), "message {:?} should mention {needle:?}", found[0].message);
}

#[test]
fn karpenter_good_objects_validate_clean() {
    let crds = karpenter_crds();
    assert_eq!(validate_custom_object(&crds, &good_ec2_node_class()), []);
    assert_eq!(validate_custom_object(&crds, &good_node_pool()), []);
}

#[test]
fn ec2_node_class_volume_type_typo() {
    let found = violations_after(&good_ec2_node_class(), |o| {
        o["spec"]["blockDeviceMappings"][0]["ebs"]["volumeType"] = json!("gp33");
    });
    assert_single(&found, "spec.blockDeviceMappings[0].ebs.volumeType", "unsupported value \"gp33\"");
    assert!(found[0].message.contains("\"gp3\""), "lists the supported values: {}", found[0]);
}

#[test]
fn ec2_node_class_hop_limit_zero() {
    let found = violations_after(&good_ec2_node_class(), |o| {
        o["spec"]["metadataOptions"]["httpPutResponseHopLimit"] = json!(0);
    });
    assert_single(&found, "spec.metadataOptions.httpPutResponseHopLimit", "greater than or equal to 1, got 0");
}

#[test]
fn ec2_node_class_bad_volume_size_and_ids() {
    let found = violations_after(&good_ec2_node_class(), |o| {
        o["spec"]["blockDeviceMappings"][0]["ebs"]["volumeSize"] = json!("20 GiB");
        o["spec"]["securityGroupSelectorTerms"][1]["id"] = json!("0123");
    });
    let paths: Vec<&str> = found.iter().map(|v| v.path.as_str()).collect();
    assert_eq!(paths, ["spec.securityGroupSelectorTerms[1].id", "spec.blockDeviceMappings[0].ebs.volumeSize"]);
}

#[test]
fn node_pool_unknown_operator() {
    let found = violations_after(&good_node_pool(), |o| {
        o["spec"]["template"]["spec"]["requirements"][0]["operator"] = json!("Gtx");
    });
    assert_single(&found, "spec.template.spec.requirements[0].operator", "unsupported value \"Gtx\"");
    assert!(found[0].message.contains("\"Gte\""), "{}", found[0]);
}

#[test]
fn node_pool_weight_over_100() {
    let found = violations_after(&good_node_pool(), |o| o["spec"]["weight"] = json!(101));
    assert_single(&found, "spec.weight", "less than or equal to 100, got 101");
}

#[test]
fn node_pool_without_node_class_ref() {
    let found = violations_after(&good_node_pool(), |o| {
        o["spec"]["template"]["spec"].as_object_mut().expect("spec is an object").remove("nodeClassRef");
    });
    assert_single(&found, "spec.template.spec.nodeClassRef", "required field \"nodeClassRef\" is missing");
}

#[test]
fn node_pool_unknown_field() {
    let found = violations_after(&good_node_pool(), |o| o["spec"]["template"]["spec"]["foo"] = json!("bar"));
    assert_single(&found, "spec.template.spec.foo", "silently prune");
}

#[test]
fn node_pool_budget_nodes_not_a_percentage() {
    let found = violations_after(&good_node_pool(), |o| {
        o["spec"]["disruption"]["budgets"][0]["nodes"] = json!("10 percent");
    });
    assert_single(&found, "spec.disruption.budgets[0].nodes", "\"10 percent\" does not match the pattern");
}

#[test]
fn node_pool_limits_accept_integers_and_quantities_only() {
    let found = violations_after(&good_node_pool(), |o| {
        o["spec"]["limits"] = json!({"cpu": 1000, "memory": "1000 Gi", "nvidia.com/gpu": 1.5});
    });
    let paths: Vec<&str> = found.iter().map(|v| v.path.as_str()).collect();
    assert_eq!(paths, ["spec.limits.memory", "spec.limits[nvidia.com/gpu]"], "{found:#?}");
}

#[test]
fn a_budget_without_nodes_is_defaulted_by_the_server() {
    let found = violations_after(&good_node_pool(), |o| {
        o["spec"]["disruption"]["budgets"] = json!([{"reasons": ["Empty"], "schedule": "@daily", "duration": "10m"}]);
    });
    assert_eq!(found, []);
}

#[test]
fn status_and_namespace_of_a_cluster_scoped_object_would_be_lost() {
    let found = violations_after(&good_node_pool(), |o| {
        o["metadata"]["namespace"] = json!("karpenter");
        o["status"] = json!({"nodes": 1});
    });
    let paths: Vec<&str> = found.iter().map(|v| v.path.as_str()).collect();
    assert_eq!(paths, ["status", "metadata.namespace"], "{found:#?}");
}

#[test]
fn an_unserved_kind_names_the_served_ones() {
    let crds = karpenter_crds();
    let found = validate_custom_object(&crds, &json!({"apiVersion": "karpenter.sh/v1beta1", "kind": "NodePool"}));
    assert_eq!(found.len(), 1);
    for served in ["karpenter.sh/v1 NodePool", "karpenter.sh/v1 NodeClaim", "karpenter.k8s.aws/v1 EC2NodeClass"] {
        assert!(found[0].message.contains(served), "{} should name {served}", found[0]);
    }
    assert_eq!(validate_custom_object(&crds, &json!({"kind": "NodePool"}))[0].path, "apiVersion");
}

#[test]
fn cel_rules_are_listed_per_crd() {
    let crds = karpenter_crds();
    let counts: Vec<(&str, usize)> =
        ["EC2NodeClass", "NodeClaim", "NodePool"].iter().map(|k| (*k, cel_rules(schema_of(&crds, k)).len())).collect();
    // The published 1.14.1 release: its EC2NodeClass types `kubelet`, adding ten rules (three on the object,
    // seven on its maps' keys and values) to the 44 of the provider's main branch.
    assert_eq!(counts, [("EC2NodeClass", 54), ("NodeClaim", 10), ("NodePool", 20)]);
    let rules = cel_rules(schema_of(&crds, "NodePool"));
    assert!(rules.iter().any(|(path, rule, message)| path == "spec.disruption.budgets"
        && rule == "self.all(x, has(x.schedule) == has(x.duration))"
        && message == "'schedule' must be set with 'duration'"));
    assert!(rules.iter().any(|(path, _, _)| path == "spec.template.spec.requirements[*].key"));
}

#[test]
fn every_crd_pattern_compiles() {
    let mut patterns = Vec::new();
    fn walk(schema: &Value, out: &mut Vec<String>) {
        match schema {
            Value::Object(map) => {
                if let Some(Value::String(p)) = map.get("pattern") {
                    out.push(p.clone());
                }
                map.values().for_each(|v| walk(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    for crd in karpenter_crds() {
        walk(&crd["spec"]["versions"], &mut patterns);
    }
    assert!(patterns.len() >= 40, "found {} patterns", patterns.len());
    for pattern in patterns {
        assert!(compiled(&pattern).is_ok(), "{pattern}: {:?}", compiled(&pattern).err());
    }
}

/// A named change to a valid object, and what the CRD's rules must then say.
type Case = (&'static str, fn(&mut Value), &'static str);

/// The messages of `found`, for comparing CEL verdicts.
fn messages(found: &[Violation]) -> Vec<String> {
    found.iter().map(|v| format!("{}: {}", v.path, v.message)).collect()
}

#[test]
fn every_cel_rule_parses_as_the_reference_parser_reads_it_and_transition_rules_are_known() {
    for crd in karpenter_crds() {
        for (path, rule, _) in cel_rules(&crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]) {
            let parsed = super::cel::parses_as_the_reference_parser(&rule);
            assert!(parsed, "{path}: `{rule}` does not parse, or not as the reference parser reads it");
        }
    }
    assert!(is_transition("self.group == oldSelf.group"));
    assert!(!is_transition("self.oldSelfish == 1"));
}

#[test]
fn cel_rules_of_the_ec2_node_class_refuse_what_the_server_refuses() {
    let cases: &[Case] = &[
        (
            "role and instanceProfile",
            |o| o["spec"]["instanceProfile"] = json!("p"),
            "exactly one of ['role', 'instanceProfile']",
        ),
        (
            "restricted tag",
            |o| o["spec"]["tags"] = json!({"kubernetes.io/cluster/x": "owned"}),
            "restricted tag matching kubernetes.io/cluster",
        ),
        ("eks tag", |o| o["spec"]["tags"] = json!({"eks:eks-cluster-name": "x"}), "eks:eks-cluster-name"),
        (
            "alias family",
            |o| o["spec"]["amiSelectorTerms"] = json!([{"alias": "ubuntu@latest"}]),
            "family is not supported",
        ),
        (
            "windows version",
            |o| o["spec"]["amiSelectorTerms"] = json!([{"alias": "windows2022@v1"}]),
            "windows families may only specify version 'latest'",
        ),
        (
            "alias with id",
            |o| o["spec"]["amiSelectorTerms"] = json!([{"alias": "al2023@latest"}, {"id": "ami-0123456789abcdef0"}]),
            "'alias' is mutually exclusive",
        ),
        (
            "no amiFamily",
            |o| o["spec"]["amiSelectorTerms"] = json!([{"id": "ami-0123456789abcdef0"}]),
            "must specify amiFamily",
        ),
        (
            "empty tag value",
            |o| o["spec"]["subnetSelectorTerms"] = json!([{"tags": {"network": ""}}]),
            "empty tag keys or values",
        ),
        (
            "two root volumes",
            |o| {
                o["spec"]["blockDeviceMappings"] = json!([
                    {"deviceName": "/dev/xvda", "rootVolume": true, "ebs": {"volumeSize": "20Gi"}},
                    {"deviceName": "/dev/xvdb", "rootVolume": true, "ebs": {"volumeSize": "20Gi"}},
                ])
            },
            "only one blockDeviceMappings with rootVolume",
        ),
        (
            "ebs without size",
            |o| o["spec"]["blockDeviceMappings"] = json!([{"deviceName": "/dev/xvda", "ebs": {"volumeType": "gp3"}}]),
            "snapshotID or volumeSize must be defined",
        ),
    ];
    for (name, change, needle) in cases {
        let found = violations_after(&good_ec2_node_class(), change);
        assert!(messages(&found).iter().any(|m| m.contains(needle)), "{name}: expected {needle:?} in {found:#?}");
    }
    assert_eq!(violations_after(&good_ec2_node_class(), |_| {}), []);
}

#[test]
fn cel_rules_of_the_node_pool_refuse_what_the_server_refuses() {
    let requirement = |o: &mut Value, r: Value| o["spec"]["template"]["spec"]["requirements"] = json!([r]);
    let cases: &[Case] = &[
        (
            "In without values",
            |o| o["spec"]["template"]["spec"]["requirements"] = json!([{"key": "a", "operator": "In", "values": []}]),
            "operator 'In' must have a value",
        ),
        (
            "Gte negative",
            |o| {
                o["spec"]["template"]["spec"]["requirements"] =
                    json!([{"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gte", "values": ["-1"]}])
            },
            "must have a single positive integer value",
        ),
        (
            "Lt not a number",
            |o| {
                o["spec"]["template"]["spec"]["requirements"] =
                    json!([{"key": "karpenter.k8s.aws/instance-cpu", "operator": "Lt", "values": ["four"]}])
            },
            "must have a single positive integer value",
        ),
        (
            "minValues",
            |o| {
                o["spec"]["template"]["spec"]["requirements"] =
                    json!([{"key": "a", "operator": "In", "values": ["x"], "minValues": 2}])
            },
            "must have at least that many values",
        ),
        (
            "restricted domain",
            |o| {
                o["spec"]["template"]["spec"]["requirements"] =
                    json!([{"key": "foo.karpenter.sh/x", "operator": "Exists"}])
            },
            "label domain \"karpenter.sh\" is restricted",
        ),
        (
            "hostname label",
            |o| o["spec"]["template"]["metadata"] = json!({"labels": {"kubernetes.io/hostname": "x"}}),
            "label \"kubernetes.io/hostname\" is restricted",
        ),
        (
            "aws domain",
            |o| o["spec"]["template"]["metadata"] = json!({"labels": {"karpenter.k8s.aws/foo": "x"}}),
            "label domain \"karpenter.k8s.aws\" is restricted",
        ),
        (
            "schedule without duration",
            |o| o["spec"]["disruption"]["budgets"] = json!([{"nodes": "1", "schedule": "@daily"}]),
            "'schedule' must be set with 'duration'",
        ),
        (
            "static with cpu limit",
            |o| {
                o["spec"]["replicas"] = json!(2);
                o["spec"]["limits"] = json!({"cpu": 4});
            },
            "only 'limits.nodes' is supported on static NodePools",
        ),
        (
            "static with weight",
            |o| {
                o["spec"]["replicas"] = json!(2);
                o["spec"]["weight"] = json!(5);
            },
            "'weight' is not supported on static NodePools",
        ),
    ];
    for (name, change, needle) in cases {
        let found = violations_after(&good_node_pool(), change);
        assert!(messages(&found).iter().any(|m| m.contains(needle)), "{name}: expected {needle:?} in {found:#?}");
    }
    let mut ok = good_node_pool();
    requirement(&mut ok, json!({"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gte", "values": ["4"]}));
    ok["spec"]["template"]["metadata"] = json!({"labels": {"karpenter.sh/capacity-type": "spot", "team": "a"}});
    ok["spec"]["replicas"] = json!(3);
    ok["spec"]["limits"] = json!({"nodes": 10});
    ok["spec"].as_object_mut().expect("spec").remove("weight");
    let crds = karpenter_crds();
    assert_eq!(validate_custom_object(&crds, &ok), []);
}

#[test]
fn a_rule_that_fails_to_evaluate_refuses_with_its_message_and_unknown_functions_are_a_limitation() {
    let schema = field(json!({"type": "string", "x-kubernetes-validations": [
        {"rule": "int(self) >= 0", "message": "must be a number"},
        {"rule": "self.noSuchFunction()", "message": "never"},
    ]}));
    let found = validate(&schema, &json!({"f": "x"}));
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found[0].message.starts_with("must be a number (the rule failed to evaluate"), "{}", found[0]);
    assert!(found[1].message.starts_with("kbp limitation"), "{}", found[1]);
    assert_clean(
        field(json!({"type": "string", "x-kubernetes-validations": [{"rule": "self.find('[0-9]+') == '12'"}]})),
        json!({"f": "ab12cd3"}),
    );
}

#[test]
fn a_validator_judges_a_value_met_again_the_same_and_reports_it_where_it_is_met() {
    let crds = karpenter_crds();
    let with_requirements = |requirements: Value| {
        let mut pool = good_node_pool();
        pool["spec"]["template"]["spec"]["requirements"] = requirements;
        pool
    };
    let refused = json!({"key": "karpenter.sh/nodepool", "operator": "Exists"});
    let kept = json!({"key": "team", "operator": "Exists"});
    let first = with_requirements(json!([refused.clone()]));
    let second = with_requirements(json!([kept.clone(), kept, refused]));
    let mut validator = Validator::new(&crds);
    let remembered = [validator.custom_object(&first), validator.custom_object(&second)];
    let fresh = [validate_custom_object(&crds, &first), validate_custom_object(&crds, &second)];
    assert_eq!(remembered, fresh);
    assert!(!fresh[0].is_empty(), "the reserved key is refused");
    let paths: Vec<&str> = fresh[1].iter().map(|v| v.path.as_str()).collect();
    assert!(paths.iter().all(|p| p.starts_with("spec.template.spec.requirements[2]")), "{paths:?}");
    // A value judged clean stays clean wherever it is met again.
    assert_eq!(validator.custom_object(&good_node_pool()), []);
    assert_eq!(validator.custom_object(&good_node_pool()), []);
}

use super::value::Value;
use super::{TemplateError, TemplateSet};

fn values(yaml: &str) -> Value {
    Value::from_json(&super::goyaml::document(yaml).unwrap())
}

fn render(template: &str, data: &Value) -> Result<String, TemplateError> {
    let mut set = TemplateSet::default();
    set.add("t.yaml", template)?;
    set.execute("t.yaml", data)
}

fn ok(template: &str, data: &str) -> String {
    render(template, &values(data)).unwrap_or_else(|e| panic!("{template}: {e}"))
}

#[test]
fn trim_markers_remove_the_whitespace_beside_them() {
    assert_eq!(ok("a  {{- \"b\" -}}  \n c", "{}"), "abc");
    assert_eq!(ok("a {{ \"b\" }} c", "{}"), "a b c");
    assert_eq!(ok("x\n{{- /* a comment */ -}}\ny", "{}"), "xy");
    assert_eq!(ok("{{-3}}", "{}"), "-3");
}

#[test]
fn conditionals_scopes_and_loops_follow_go() {
    let data = "{num: 0, s: '', l: [a, b, c], m: {z: 1, a: 2}, flag: true}";
    assert_eq!(ok("{{ if .num }}x{{ else if .flag }}y{{ else }}z{{ end }}", data), "y");
    assert_eq!(ok("{{ with .m }}{{ .a }}{{ end }}{{ with .s }}no{{ else }}empty{{ end }}", data), "2empty");
    assert_eq!(ok("{{ range $i, $v := .l }}{{ $i }}{{ $v }},{{ end }}", data), "0a,1b,2c,");
    // Maps are visited in key order.
    assert_eq!(ok("{{ range $k, $v := .m }}{{ $k }}={{ $v }} {{ end }}", data), "a=2 z=1 ");
    assert_eq!(ok("{{ range .l }}{{ if eq . \"b\" }}{{ continue }}{{ end }}{{ if eq . \"c\" }}{{ break }}{{ end }}{{ . }}{{ end }}", data), "a");
    assert_eq!(ok("{{ range 3 }}{{ . }}{{ end }}", data), "012");
    assert_eq!(ok("{{ range .missing }}x{{ else }}none{{ end }}", data), "none");
    // A variable declared in a block ends with it; `=` assigns the outer one.
    assert_eq!(ok("{{ $x := 1 }}{{ if .flag }}{{ $x = 2 }}{{ $y := 3 }}{{ end }}{{ $x }}", data), "2");
    assert_eq!(ok("{{ range .l }}{{ $.flag }}{{ end }}", data), "truetruetrue");
}

#[test]
fn defines_include_and_indentation_compose_as_in_helm() {
    let template = r#"{{- define "labels" -}}
app: {{ .name }}
tier: {{ .tier | default "web" }}
{{- end -}}
metadata:
  labels:
    {{- include "labels" . | nindent 4 }}
{{ template "labels" . }}"#;
    assert_eq!(ok(template, "{name: kbp}"), "metadata:\n  labels:\n    app: kbp\n    tier: web\napp: kbp\ntier: web");
}

#[test]
fn helm_numbers_are_floats_and_print_as_go_prints_them() {
    let data = "{replicas: 2, big: 1000000, half: 0.5}";
    assert_eq!(ok("{{ .replicas }} {{ .big }} {{ .half }} {{ 3 }}", data), "2 1e+06 0.5 3");
    assert_eq!(ok("{{ toYaml . }}", data), "big: 1000000\nhalf: 0.5\nreplicas: 2");
    // Go refuses to compare a float64 from the values with an integer constant.
    let err = render("{{ eq .replicas 2 }}", &values(data)).unwrap_err();
    assert!(err.message.contains("incompatible types for comparison"), "{err}");
}

#[test]
fn missing_keys_print_nothing_but_fields_of_nothing_fail_where_they_are() {
    assert_eq!(ok("[{{ .missing }}]", "{}"), "[<no value>]");
    let err = render("line one\n  {{ .a.b.c }}", &values("{a: {}}")).unwrap_err();
    assert_eq!((err.line, err.col), (2, 6));
    assert!(err.message.contains("nil pointer evaluating interface {}.c"), "{err}");
    assert!(err.to_string().starts_with("t.yaml:2:6: "), "{err}");
}

#[test]
fn maps_are_shared_so_set_through_range_changes_the_values() {
    let template = r#"{{- range .Values.terms }}{{- $_ := set . "labelSelector" (dict "app" "k") }}{{- end -}}
{{ toYaml .Values.terms }}"#;
    let data = values("{Values: {terms: [{topologyKey: zone}]}}");
    assert_eq!(render(template, &data).unwrap(), "- labelSelector:\n    app: k\n  topologyKey: zone");
}

#[test]
fn sprig_string_functions_take_the_subject_last() {
    assert_eq!(ok(r#"{{ "karpenter-" | trunc 63 | trimSuffix "-" }}"#, "{}"), "karpenter");
    assert_eq!(ok(r#"{{ printf "%s-%s" "a" "b" | replace "-" "_" | upper | quote }}"#, "{}"), "\"A_B\"");
    assert_eq!(ok(r#"{{ contains "pen" "karpenter" }} {{ join "," .l }}"#, "{l: [a, b]}"), "true a,b");
    assert_eq!(ok(r#"{{ tpl "{{ .x }}-y" . }}"#, "{x: v}"), "v-y");
    assert_eq!(ok(r#"{{ semverCompare ">= 1.21-0" "v1.33.0" }}"#, "{}"), "true");
    assert_eq!(ok(r#"{{ $l := fromYaml "a: 1" }}{{ $l.a }}"#, "{}"), "1");
    assert_eq!(ok(r#"{{ toJson . }}"#, "{a: '<b>', num: 2}"), r#"{"a":"\u003cb\u003e","num":2}"#);
    assert_eq!(ok(r#"{{ merge (dict "a" 1) (dict "a" 2 "b" 3) | toJson }}"#, "{}"), r#"{"a":1,"b":3}"#);
}

#[test]
fn strings_that_yaml_would_read_as_something_else_are_quoted() {
    let yaml = ok(
        "{{ toYaml . }}",
        r#"{a: "true", b: "0123", c: "yes", d: "plain text", e: "x: y", f: "", g: "1e3", h: "line\nbreak"}"#,
    );
    let back = super::goyaml::document(&yaml).unwrap();
    assert_eq!(
        back,
        serde_json::json!({"a": "true", "b": "0123", "c": "yes", "d": "plain text", "e": "x: y", "f": "", "g": "1e3", "h": "line\nbreak"})
    );
    assert!(yaml.contains("d: plain text"), "{yaml}");
}

#[test]
fn required_and_fail_stop_the_render_with_the_chart_message() {
    let err = render(r#"{{ required "settings.clusterName is required" .x }}"#, &values("{}")).unwrap_err();
    assert!(err.message.contains("settings.clusterName is required"), "{err}");
}

#[test]
fn a_function_kbp_lacks_fails_to_parse_even_in_a_branch_never_taken() {
    let err = render("{{ if false }}{{ now }}{{ end }}", &values("{}")).unwrap_err();
    assert!(err.message.contains(r#"function "now" not defined"#), "{err}");
}

#[test]
fn every_function_named_is_implemented() {
    let missing: Vec<&str> = super::funcs::NAMES
        .iter()
        .copied()
        .filter(|name| !matches!(*name, "and" | "or" | "include" | "tpl"))
        .filter(|name| super::funcs::call(name, &[]).is_err_and(|e| e.contains("not defined")))
        .collect();
    assert!(missing.is_empty(), "named but not implemented: {missing:?}");
}

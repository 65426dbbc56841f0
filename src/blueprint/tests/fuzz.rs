//! Property tests over the whole load (parse, `--set`, schema walk, rules) and the rendering of what it finds:
//! arbitrary bytes, and documents from a grammar close to a blueprint's (its tables and keys read from the schema,
//! values of every TOML type, deep nesting, long arrays and strings). For every input: no panic, a bounded time,
//! and every diagnostic placed inside the text it points into, at the line and column a scan finds.
//!
//! A few hundred cases keep CI under a few seconds; `PROPTEST_CASES=20000 cargo nextest run --lib fuzz` runs
//! longer by hand.

use std::time::{Duration, Instant};

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::Config;

use super::check_str;
use crate::blueprint::schema::{Field, Ty, BLUEPRINT};
use crate::diag::{Diagnostics, Position};

fn config() -> Config {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(200);
    Config { cases, max_shrink_iters: 2000, ..Config::default() }
}

/// Each load must finish in this time even in a debug build; a superlinear path shows up as a failure here.
const PER_LOAD: Duration = Duration::from_secs(3);

/// The line and column a scan from the start finds for `at`.
fn scan(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (before.matches('\n').count() + 1, text[line_start..at].chars().count() + 1)
}

fn assert_placed(d: &Diagnostics, source: Option<usize>, p: &Position) {
    let Some(source) = source else { return };
    let text = &d.source(source).text;
    assert!(p.span.start <= p.span.end && p.span.end <= text.len(), "span {:?} outside {} bytes", p.span, text.len());
    assert!(
        text.is_char_boundary(p.span.start) && text.is_char_boundary(p.span.end),
        "span {:?} splits a char",
        p.span
    );
    assert_eq!((p.line, p.column), scan(text, p.span.start), "place of {:?}", p.span);
}

/// Loads `text` with `sets` and checks everything the load produced.
fn load_checked(text: &str, sets: &[String]) {
    let started = Instant::now();
    let result = check_str("fuzz.toml", text, sets);
    let elapsed = started.elapsed();
    assert!(elapsed < PER_LOAD, "loading took {elapsed:?}");
    let d = match result {
        Ok(loaded) => {
            assert!(!loaded.warnings.has_errors());
            assert!(crate::graph::compile(&loaded.blueprint).is_ok(), "a valid blueprint compiles");
            loaded.warnings
        }
        Err(d) => {
            assert!(d.has_errors(), "Err without an error");
            d
        }
    };
    for item in d.items() {
        if let Some(p) = &item.position {
            assert_placed(&d, item.source, p);
        }
        for r in &item.related {
            assert_placed(&d, Some(r.source), &r.position);
        }
    }
    let rendered = d.render(false);
    assert!(d.is_empty() || !rendered.is_empty());
    assert!(serde_json::to_string(d.items()).is_ok());
}

/// Every field name in the schema, at any depth.
fn schema_keys() -> Vec<&'static str> {
    fn fields(fs: &'static [Field], out: &mut Vec<&'static str>) {
        for f in fs {
            out.push(f.name);
            ty(&f.ty, out);
        }
    }
    fn ty(t: &'static Ty, out: &mut Vec<&'static str>) {
        match t {
            Ty::Table(fs) => fields(fs, out),
            Ty::Map { value, .. } => ty(value, out),
            Ty::List { item, .. } | Ty::CountOr { list: item, .. } => ty(item, out),
            _ => {}
        }
    }
    let mut out = Vec::new();
    fields(BLUEPRINT, &mut out);
    out.sort_unstable();
    out.dedup();
    out
}

/// Every table header the schema allows, `{}` standing for a user-chosen name (`[node_pools.{}.limits]`), and
/// `[[…]]` for arrays of tables.
fn schema_headers() -> Vec<String> {
    fn fields(fs: &'static [Field], path: &str, out: &mut Vec<String>) {
        for f in fs {
            let p = if path.is_empty() { f.name.to_string() } else { format!("{path}.{}", f.name) };
            ty(&f.ty, &p, out);
        }
    }
    fn ty(t: &'static Ty, path: &str, out: &mut Vec<String>) {
        match t {
            Ty::Table(fs) => {
                out.push(format!("[{path}]"));
                fields(fs, path, out);
            }
            Ty::Map { value, .. } => {
                out.push(format!("[{path}]"));
                ty(value, &format!("{path}.{{}}"), out);
            }
            Ty::List { item: Ty::Table(fs), .. } => {
                out.push(format!("[[{path}]]"));
                fields(fs, path, out);
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    fields(BLUEPRINT, "", &mut out);
    out
}

/// Strings a blueprint holds, valid somewhere or close to it.
const WORDS: &[&str] = &[
    "us-west-2",
    "us-west-2a",
    "eu-central-1b",
    "1.33",
    "1.29",
    "10.0.0.0/16",
    "10.0.0.0/20",
    "10.0.8.0/21",
    "192.168.0.0/30",
    "0.0.0.0/0",
    "default",
    "gpu",
    "In",
    "NotIn",
    "Exists",
    "Gt",
    "Lte",
    "spot",
    "on-demand",
    "amd64",
    "karpenter.sh/capacity-type",
    "kubernetes.io/arch",
    "nvidia.com/gpu",
    "20Gi",
    "1000",
    "200Gi",
    "10%",
    "30s",
    "720h",
    "Never",
    "WhenEmpty",
    "NoSchedule",
    "gp3",
    "io2",
    "/dev/xvda",
    "al2@latest",
    "bottlerocket@latest",
    "al2023@v20240807",
    "irsa",
    "pod_identity",
    "s3",
    "local",
    "AL2023_x86_64_STANDARD",
    "BOTTLEROCKET_ARM_64",
    "m5.large",
    "vpc-0a1b2c3d",
    "subnet-0a1b2c3d",
    "subnet-0123456789abcdef0",
    "sg-0a1b2c3d",
    "",
    " ",
    "é",
    "a.b",
    "UPPER",
    "-x-",
    "\u{1b}[31m",
];

const NAMES: &[&str] = &["default", "gpu", "spot", "a", "GPU", "x.y", "", "a/b", "vpc-cni", "é"];

/// `s` as a TOML basic string.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::sample::select(schema_keys()).prop_map(str::to_string),
        1 => prop::sample::select(NAMES).prop_map(quote),
        1 => "[a-z_]{1,12}",
    ]
}

fn scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(WORDS).prop_map(quote),
        2 => prop_oneof![Just(0i64), Just(-1), Just(1), Just(3), Just(100), Just(i64::MAX), any::<i64>()]
            .prop_map(|i| i.to_string()),
        1 => Just("99999999999999999999".to_string()),
        1 => any::<bool>().prop_map(|b| b.to_string()),
        1 => prop_oneof![Just("1.5"), Just("inf"), Just("-0.0"), Just("1e400")].prop_map(str::to_string),
        1 => Just("1979-05-27T07:32:00Z".to_string()),
        1 => "\\PC{0,24}".prop_map(|s| quote(&s)),
        1 => (1usize..5_000).prop_map(|n| quote(&"x".repeat(n))),
    ]
}

fn value() -> impl Strategy<Value = String> {
    scalar().prop_recursive(6, 48, 8, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..8).prop_map(|v| format!("[{}]", v.join(", "))),
            vec((key(), inner), 0..5).prop_map(|kv| {
                let kv: Vec<String> = kv.into_iter().map(|(k, v)| format!("{k} = {v}")).collect();
                format!("{{ {} }}", kv.join(", "))
            }),
        ]
    })
}

/// Stress values: deep nesting around the limit and past it, long arrays.
fn extreme() -> impl Strategy<Value = String> {
    prop_oneof![
        (25usize..45).prop_map(|n| format!("{}1{}", "[".repeat(n), "]".repeat(n))),
        (25usize..45).prop_map(|n| format!("{}{}", "{ a = ".repeat(n), " 1 }".repeat(n))),
        (100usize..5000, prop::sample::select(&["1", "\"a\"", "{}", "[]"][..]))
            .prop_map(|(n, v)| format!("[{}]", vec![v; n].join(","))),
    ]
}

/// A table header and the lines under it.
fn section() -> impl Strategy<Value = (String, String)> {
    let header = (prop::sample::select(schema_headers()), prop::sample::select(NAMES)).prop_map(|(h, n)| {
        let name = if n.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') && !n.is_empty() {
            n.to_string()
        } else {
            quote(n)
        };
        h.replace("{}", &name)
    });
    let line = (key(), prop_oneof![8 => value(), 1 => extreme()]);
    (header, vec(line, 0..6)).prop_map(|(h, lines)| {
        // A key written twice is a TOML error, and would keep most documents from reaching the schema.
        let mut seen = std::collections::HashSet::new();
        let lines: Vec<String> =
            lines.into_iter().filter(|(k, _)| seen.insert(k.clone())).map(|(k, v)| format!("{k} = {v}")).collect();
        (h, lines.join("\n"))
    })
}

fn document() -> impl Strategy<Value = String> {
    let header = prop_oneof![3 => Just("[cluster]\nname = \"f\"\nregion = \"us-west-2\"\n".to_string()), 1 => Just(String::new())];
    (header, vec(section(), 0..8)).prop_map(|(h, sections)| {
        // Likewise a table header twice (arrays of tables `[[…]]` may repeat).
        let mut seen: std::collections::HashSet<String> = ["[cluster]".to_string()].into();
        let sections: String = sections
            .into_iter()
            .filter(|(header, _)| header.starts_with("[[") || seen.insert(header.clone()))
            .map(|(header, body)| format!("{header}\n{body}\n"))
            .collect();
        h + &sections
    })
}

fn set() -> impl Strategy<Value = String> {
    let path =
        vec(prop_oneof![prop::sample::select(schema_keys()).prop_map(str::to_string), Just("gpu".to_string())], 1..5);
    (path, prop_oneof![value(), "\\PC{0,12}"]).prop_map(|(p, v)| format!("{}={v}", p.join(".")))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_bytes(bytes in vec(any::<u8>(), 0..2048)) {
        load_checked(&String::from_utf8_lossy(&bytes), &[]);
    }

    #[test]
    fn documents_shaped_like_blueprints(doc in document(), sets in vec(set(), 0..3)) {
        load_checked(&doc, &sets);
    }

    #[test]
    fn blueprint_documents_with_bytes_spliced_in(doc in document(), at in any::<prop::sample::Index>(), noise in "\\PC{1,6}") {
        let mut at = at.index(doc.len() + 1);
        while !doc.is_char_boundary(at) {
            at -= 1;
        }
        load_checked(&format!("{}{noise}{}", &doc[..at], &doc[at..]), &[]);
    }
}

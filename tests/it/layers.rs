//! The layers of docs/architecture.md hold in the code: every `crate::…` path in a module of `src/` (test code
//! aside) names a module of a lower layer, and every module of `src/` has a layer. An import that runs back up
//! (or sideways, between two modules of one layer) fails here with the file that makes it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::support::repo;

/// The layer of each module, from the table under "## Layers" in docs/architecture.md (1 is the top).
fn layers(doc: &str) -> BTreeMap<String, u32> {
    let section = doc.split("\n## Layers\n").nth(1).expect("docs/architecture.md has a Layers section");
    let section = section.split("\n## ").next().unwrap_or_default();
    let mut out = BTreeMap::new();
    for row in section.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let Ok(layer) = cells[1].parse::<u32>() else { continue };
        for module in cells[2].split(',') {
            let module = module.trim().trim_matches('`');
            assert!(out.insert(module.to_string(), layer).is_none(), "{module} stands in two layers");
        }
    }
    out
}

/// The `.rs` files of `src/`'s top-level module `name` (a file or a directory), test files left out.
fn files_of(src: &Path, name: &str) -> Vec<PathBuf> {
    let dir = src.join(name);
    if !dir.is_dir() {
        return vec![src.join(format!("{name}.rs"))];
    }
    let mut stack = vec![dir];
    let mut files = Vec::new();
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("a readable directory") {
            let path = entry.expect("a directory entry").path();
            let file = path.file_name().and_then(|f| f.to_str()).unwrap_or_default().to_string();
            if path.is_dir() {
                if file != "tests" {
                    stack.push(path);
                }
            } else if file.ends_with(".rs") && !["tests.rs", "fixtures.rs", "testing.rs"].contains(&file.as_str()) {
                files.push(path);
            }
        }
    }
    files
}

/// The top-level modules a file's code (up to its test module) names through `crate::`.
fn uses(text: &str) -> BTreeSet<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    let code: String = code.lines().map(|l| l.split("//").next().unwrap_or_default()).collect::<Vec<_>>().join("\n");
    let path = regex::Regex::new(r"crate::([a-z_]+)").expect("a valid pattern");
    let group = regex::Regex::new(r"use crate::\{([^}]*)\}").expect("a valid pattern");
    let mut out: BTreeSet<String> = path.captures_iter(&code).map(|c| c[1].to_string()).collect();
    for g in group.captures_iter(&code) {
        out.extend(g[1].split(',').filter_map(|p| p.trim().split("::").next()).map(str::to_string));
    }
    out
}

/// Every use of a module that is not in a lower layer: `(file, module, used)`.
fn violations(layer: &BTreeMap<String, u32>, used: &[(String, String, String)]) -> Vec<String> {
    used.iter()
        .filter(|(_, module, other)| {
            other != module && layer.contains_key(other) && layer.get(other) <= layer.get(module)
        })
        .map(|(file, module, other)| {
            format!("{file}: `{module}` (layer {}) uses `{other}` (layer {})", layer[module], layer[other])
        })
        .collect()
}

#[test]
fn every_import_runs_down_the_layers_of_docs_architecture() {
    let doc = std::fs::read_to_string(repo().join("docs/architecture.md")).expect("docs/architecture.md");
    let layer = layers(&doc);
    let src = repo().join("src");
    let mut modules = BTreeSet::new();
    for entry in std::fs::read_dir(&src).expect("src/") {
        let path = entry.expect("an entry of src/").path();
        let name = path.file_stem().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        let is_module = path.is_dir() || path.extension().is_some_and(|e| e == "rs");
        if is_module && !["lib", "main"].contains(&name.as_str()) {
            modules.insert(name);
        }
    }
    let unplaced: Vec<&String> = modules.iter().filter(|m| !layer.contains_key(*m)).collect();
    assert!(unplaced.is_empty(), "modules of src/ the Layers table does not place: {unplaced:?}");
    let mut used = Vec::new();
    for module in &modules {
        for file in files_of(&src, module) {
            let text = std::fs::read_to_string(&file).expect("a readable source file");
            let shown = file.strip_prefix(repo()).unwrap_or(&file).display().to_string();
            used.extend(uses(&text).into_iter().map(|other| (shown.clone(), module.clone(), other)));
        }
    }
    assert!(used.len() > 100, "the scan sees the crate's imports ({} seen)", used.len());
    let wrong = violations(&layer, &used);
    assert!(wrong.is_empty(), "imports that run up or sideways:\n{}", wrong.join("\n"));
}

#[test]
fn the_layer_check_sees_an_import_that_runs_up_or_sideways() {
    let layer = layers("\n## Layers\n\n| Layer | Modules | |\n| --- | --- | --- |\n| 1 | `cli` | |\n| 2 | `ui`, `teardown` | |\n| 3 | `exec` | |\n");
    assert_eq!(layer.get("teardown"), Some(&2));
    let used = |m: &str, o: &str| ("f.rs".to_string(), m.to_string(), o.to_string());
    assert!(violations(&layer, &[used("cli", "exec"), used("ui", "exec"), used("exec", "exec")]).is_empty());
    assert_eq!(violations(&layer, &[used("exec", "cli"), used("ui", "teardown")]).len(), 2);
    assert_eq!(
        uses("use crate::{graph::Address, plan};\nfn f() { crate::state::open(); } // crate::cli\n#[cfg(test)]\nmod tests { use crate::ui; }"),
        ["graph", "plan", "state"].map(String::from).into()
    );
}

/// The modules that may call AWS themselves: the providers, the state backend (S3), the catalog (EC2's and the
/// Pricing API's lists) and the credentials module that builds every client.
const CALLS_AWS: &[&str] = &["providers", "state", "catalog", "aws"];

/// The places in a file's code (up to its test module) that call an AWS service: a client from the provider
/// context (`cx.ec2()`, …) or one built by hand (`aws_client!`, `Client::new`).
fn aws_calls(text: &str) -> Vec<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    let call = regex::Regex::new(
        r"\.(ec2|iam|kms|eks|elbv2|logs|sqs|eventbridge|sts|tagging)\(\)\s*\.|aws_client!|aws_sdk_[a-z0-9]+::Client::",
    )
    .expect("a valid pattern");
    code.lines()
        .map(|l| l.split("//").next().unwrap_or_default())
        .filter(|l| call.is_match(l))
        .map(|l| l.trim().to_string())
        .collect()
}

#[test]
fn only_the_providers_state_catalog_and_credentials_call_aws() {
    let src = repo().join("src");
    let mut seen = 0;
    let mut outside = Vec::new();
    for entry in std::fs::read_dir(&src).expect("src/") {
        let path = entry.expect("an entry of src/").path();
        let name = path.file_stem().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        if !(path.is_dir() || path.extension().is_some_and(|e| e == "rs")) || ["lib", "main"].contains(&name.as_str()) {
            continue;
        }
        for file in files_of(&src, &name) {
            let text = std::fs::read_to_string(&file).expect("a readable source file");
            let calls = aws_calls(&text);
            seen += calls.len();
            if !CALLS_AWS.contains(&name.as_str()) {
                let shown = file.strip_prefix(repo()).unwrap_or(&file).display().to_string();
                outside.extend(calls.into_iter().map(|c| format!("{shown}: {c}")));
            }
        }
    }
    assert!(seen > 100, "the scan sees the providers' calls ({seen} seen)");
    assert!(outside.is_empty(), "AWS calls outside providers/, state/, catalog/ and aws.rs:\n{}", outside.join("\n"));
}

#[test]
fn the_aws_call_scan_sees_a_client_call() {
    assert_eq!(aws_calls("let r = cx.eks().describe_cluster().name(n).send().await;").len(), 1);
    assert_eq!(aws_calls("let c = crate::aws_client!(aws_sdk_ec2, sdk);").len(), 1);
    assert!(aws_calls("let e = cx.eks_endpoint(); // cx.ec2().x\n#[cfg(test)]\nmod tests { cx.ec2().y }").is_empty());
}

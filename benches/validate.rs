//! Figures, not a test: how long `kbp validate` takes, and how much memory, on realistic blueprints and on the
//! worst inputs kbp accepts (up to the 1 MiB size limit): many NodePools, many diagnostics, deep nesting, long
//! strings and keys. For each: input size; errors and warnings found; `load ms`, parse, schema and rules
//! (`blueprint::check`); `check ms`, that and what `kbp validate` does next with a valid blueprint (read the
//! release's CRDs, name the node classes' and pools' CRD fields, compile the graph, check every NodePool and
//! EC2NodeClass by the CRD's schema and CEL rules: `cli::crd_check`, as the command runs it); `crd ms`, of that,
//! the CRD work alone (the compile left out; needs the reference CRDs); `check ms` also holds the judging of
//! every name, tag set and document the stack would send by the providers' AWS constraints (`cli::aws_contract`); `text ms` and `json ms`, that and
//! rendering as text (at most `diag::SHOWN` diagnostics) or as JSON (all kept); the sizes of both outputs; and
//! the peak heap in use during the run (counted by a wrapping allocator). Times are the best of a few runs in one
//! process, so what a process does once (parsing the CEL rules, compiling the schema's patterns) and the parsed
//! CRDs in kbp's cache are warm; on a busy machine they vary by half.
//!
//! `cargo bench --bench validate` prints the table; `-- WORD…` runs only the cases whose name contains a WORD;
//! `-- --write DIR` also writes each input to DIR/<case>.toml, to time the real binary on it
//! (`/usr/bin/time -v kbp validate DIR/<case>.toml`).

// A benchmark prints its figures on stdout; its setup unwraps, as a test does.
#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::alloc::System;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use kbp::blueprint::limits::{MAX_BYTES, MAX_NODE_CLASSES, MAX_NODE_POOLS};
use kbp::cli::crd_check;
use kbp::diag::Diagnostics;
use peakmem_alloc::{PeakMemAlloc, PeakMemAllocTrait, INSTRUMENTED_SYSTEM};

/// The system allocator, counting the bytes in use: the peak since a reset is the most a run held above where it
/// started.
#[global_allocator]
static ALLOCATOR: &PeakMemAlloc<System> = &INSTRUMENTED_SYSTEM;

const HEADER: &str = "[cluster]\nname = \"bench\"\nregion = \"us-west-2\"\n\n";

/// Appends `piece(i)` for i = 0, 1, … while the text stays within `budget` bytes.
fn fill(mut text: String, budget: usize, mut piece: impl FnMut(usize) -> String) -> String {
    for i in 0.. {
        let p = piece(i);
        if text.len() + p.len() > budget {
            break;
        }
        text.push_str(&p);
    }
    text
}

/// A NodePool as people write them: a class, a weight, two requirements, limits; no two pools alike.
fn pool(i: usize) -> String {
    let (weight, generation, cpu) = (1 + i % 100, 4 + i % 3, 100 + i);
    let categories = ["\"c\", \"m\", \"r\"", "\"c\", \"m\"", "\"m\", \"r\"", "\"r\""][i % 4];
    format!(
        "[node_pools.pool-{i:05}]\nnode_class = \"default\"\nweight = {weight}\n\n\
         [[node_pools.pool-{i:05}.requirements]]\nkey = \"karpenter.k8s.aws/instance-category\"\noperator = \"In\"\nvalues = [{categories}]\n\n\
         [[node_pools.pool-{i:05}.requirements]]\nkey = \"karpenter.k8s.aws/instance-generation\"\noperator = \"Gt\"\nvalues = [\"{generation}\"]\n\n\
         [node_pools.pool-{i:05}.limits]\ncpu = {cpu}\nmemory = \"200Gi\"\n\n"
    )
}

fn pools(n: usize) -> String {
    (0..n).fold(HEADER.to_string(), |text, i| text + &pool(i))
}

/// A short name for `i`: a, b, …, z, ba, bb, … (valid Kubernetes names, as short as can be).
fn name(mut i: usize) -> String {
    let mut s = Vec::new();
    loop {
        s.push(b'a' + (i % 26) as u8);
        i /= 26;
        if i == 0 {
            break;
        }
    }
    s.reverse();
    String::from_utf8(s).unwrap_or_default()
}

/// The cases: (name, blueprint text).
fn cases() -> Vec<(&'static str, String)> {
    let max = MAX_BYTES;
    let long = "x".repeat(max - 200);
    vec![
        ("50 pools", pools(50)),
        ("500 pools", pools(500)),
        ("1000 pools (the limit)", pools(MAX_NODE_POOLS)),
        // Each entry is a few bytes but gets every default: the most work per byte for a valid blueprint.
        ("1000 empty pools and classes, inline", {
            let entries = |n: usize| (0..n).map(|i| format!("{} = {{}}", name(i))).collect::<Vec<_>>().join(", ");
            format!(
                "node_pools = {{ {} }}\nnode_classes = {{ {}, default = {{}} }}\n{HEADER}",
                entries(MAX_NODE_POOLS),
                entries(MAX_NODE_CLASSES - 1)
            )
        }),
        // Top-level keys go before the first table header.
        ("empty pools to 1 MiB, inline", {
            let t = fill("node_pools = { ".into(), max - HEADER.len() - 2, |i| format!("{} = {{}}, ", name(i)));
            t + "}\n" + HEADER
        }),
        ("empty add-ons to 1 MiB, inline", {
            let t = fill("addons = { ".into(), max - HEADER.len() - 2, |i| format!("{} = {{}}, ", name(i)));
            t + "}\n" + HEADER
        }),
        (
            "wrong types in requirements",
            fill(HEADER.to_string(), max, |i| {
                format!("[[node_pools.p{}.requirements]]\nkey = 1\noperator = \"In\"\n", i % MAX_NODE_POOLS)
            }),
        ),
        ("a wrong type per pool, one line", {
            let entries: Vec<String> = (0..MAX_NODE_POOLS).map(|i| format!("p{i} = {{ weight = \"x\" }}")).collect();
            format!("node_pools = {{ {} }}\n{HEADER}", entries.join(", "))
        }),
        ("an error per 2 bytes", {
            let t = fill(
                format!("{HEADER}[[node_pools.default.requirements]]\nkey = \"k\"\noperator = \"In\"\nvalues = ["),
                max - 2,
                |_| "1,".into(),
            );
            t + "]\n"
        }),
        ("unknown fields", fill(String::new(), max - HEADER.len(), |i| format!("bogus{i} = 1\n")) + HEADER),
        ("syntax errors", fill(HEADER.to_string(), max, |_| "= = =\n".into())),
        ("nesting past the limit", {
            let n = (max - HEADER.len()) / 2 - 8;
            format!("{HEADER}x = {}{}\n", "[".repeat(n), "]".repeat(n))
        }),
        (
            "nesting at the limit, repeated",
            fill(HEADER.to_string(), max, |i| format!("x{i} = {}{}\n", "[".repeat(32), "]".repeat(32))),
        ),
        ("a 1 MiB string", format!("[cluster]\nname = \"{long}\"\nregion = \"us-west-2\"\n")),
        ("a long pool name over many values", {
            let key = "X".repeat(max / 2);
            let head =
                format!("{HEADER}[[node_pools.\"{key}\".requirements]]\nkey = \"k\"\noperator = \"In\"\nvalues = [");
            fill(head, max - 2, |_| "\"\",".into()) + "]\n"
        }),
        ("pools naming missing classes", {
            let classes = fill(HEADER.to_string(), max / 2, |i| format!("[node_classes.class-{i}]\n"));
            fill(classes, max, |i| format!("[node_pools.p{i}]\nnode_class = \"clas-{i}\"\n"))
        }),
    ]
}

/// The shape `kbp validate --json` prints, serialized the same way (streamed, not built as a `Value` first).
#[derive(serde::Serialize)]
struct JsonReport<'a> {
    valid: bool,
    errors: usize,
    warnings: usize,
    listed: usize,
    diagnostics: &'a [kbp::diag::Diagnostic],
}

struct Run {
    /// Parse, schema and rules (`blueprint::check`).
    load: Duration,
    /// And the graph compile, as `kbp validate` does for a valid blueprint.
    check: Duration,
    text: Duration,
    json: Duration,
    text_bytes: usize,
    json_bytes: usize,
    /// Of `check`, the CRD checks of a valid blueprint (None without the reference CRDs or when invalid).
    crd: Option<Duration>,
    errors: usize,
    warnings: usize,
    peak: usize,
}

/// The official CRDs the blueprint is checked against (as `kbp validate` reads them from `karpenter.crds_dir`),
/// when the reference data is at hand: `KBP_KARPENTER_CRDS_DIR`, else `../shared/reference` beside the checkout.
fn crds_dir() -> Option<std::path::PathBuf> {
    std::env::var_os("KBP_KARPENTER_CRDS_DIR").map(Into::into).or_else(|| {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/reference/karpenter-v1.14.1/crds");
        dir.is_dir().then_some(dir)
    })
}

fn run(text: &str) -> Run {
    ALLOCATOR.reset_peak_memory();
    let started = Instant::now();
    let loaded = kbp::blueprint::check_str("bench.toml", text, &[]);
    let load = started.elapsed();
    let mut crd = None;
    let diags: Diagnostics = match loaded {
        Ok(mut loaded) => {
            match crds_dir() {
                // What `kbp validate` runs when the CRDs are at hand (`karpenter.crds_dir`): read them, name the
                // CRD fields, one compile, then the CRD checks of every NodePool and EC2NodeClass.
                Some(dir) => {
                    loaded.blueprint.karpenter.crds_dir = Some(dir.display().to_string());
                    let started = Instant::now();
                    let crds = crd_check::offline(&mut loaded).expect("the reference CRDs read");
                    crd_check::name_fields(&mut loaded, Some(&crds));
                    let compiling = Instant::now();
                    let graph = kbp::graph::compile(&loaded.blueprint).expect("a valid blueprint compiles");
                    let compile = compiling.elapsed();
                    let judged = crd_check::check(&loaded, &graph, &crds);
                    assert!(judged.is_ok(), "the bench's valid blueprints are valid by the CRDs too");
                    crd = Some(started.elapsed() - compile);
                    let sent = kbp::cli::aws_contract::check(&loaded, &graph);
                    assert!(sent.is_ok(), "the bench's valid blueprints send only what AWS accepts");
                }
                None => {
                    let graph = kbp::graph::compile(&loaded.blueprint).expect("a valid blueprint compiles");
                    let sent = kbp::cli::aws_contract::check(&loaded, &graph);
                    assert!(sent.is_ok(), "the bench's valid blueprints send only what AWS accepts");
                }
            }
            loaded.warnings
        }
        Err(d) => d,
    };
    let check = started.elapsed();
    let started = Instant::now();
    let rendered = diags.render(false);
    let text_time = started.elapsed();
    let started = Instant::now();
    let counts = diags.counts();
    let report = JsonReport {
        valid: counts.errors == 0,
        errors: counts.errors,
        warnings: counts.warnings,
        listed: counts.listed,
        diagnostics: diags.items(),
    };
    let json = serde_json::to_vec(&report).unwrap_or_default();
    let json_time = started.elapsed();
    Run {
        load,
        check,
        crd,
        text: check + text_time,
        json: check + json_time,
        text_bytes: rendered.len(),
        json_bytes: json.len(),
        errors: counts.errors,
        warnings: counts.warnings,
        peak: ALLOCATOR.get_peak_memory(),
    }
}

/// Runs per case: the machine may be busy.
const RUNS: usize = 7;

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

fn main() {
    // Test runners list every target's tests (`--list`, as cargo-nextest does with --all-targets): a benchmark
    // that prints figures has none, so it says nothing then.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let mut args = std::env::args().skip(1);
    let (mut write_to, mut only) = (None, Vec::new());
    while let Some(a) = args.next() {
        match a.as_str() {
            "--write" => write_to = args.next(),
            // What `cargo bench` passes to every bench target.
            "--bench" => {}
            _ => only.push(a),
        }
    }
    println!(
        "{:<38} {:>8} {:>7} {:>6} {:>8} {:>8} {:>7} {:>8} {:>8} {:>8} {:>8} {:>7}",
        "case",
        "bytes",
        "errors",
        "warns",
        "load ms",
        "check ms",
        "crd ms",
        "text ms",
        "json ms",
        "text out",
        "json out",
        "peak MB"
    );
    for (name, text) in
        cases().into_iter().filter(|(name, _)| only.is_empty() || only.iter().any(|o| name.contains(o.as_str())))
    {
        if let Some(dir) = &write_to {
            let file = format!("{dir}/{}.toml", name.replace([' ', ','], "-"));
            if let Err(e) = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&file, &text)) {
                eprintln!("cannot write {file}: {e}");
            }
        }
        // The fastest of a few runs, so that a scheduling hiccup does not count; the peak of the first.
        let runs: Vec<Run> = (0..RUNS).map(|_| run(&text)).collect();
        let best = |f: fn(&Run) -> Duration| runs.iter().map(f).min().unwrap_or_default();
        let r = &runs[0];
        let mut line = String::new();
        let _ = write!(
            line,
            "{:<38} {:>8} {:>7} {:>6} {:>8} {:>8} {:>7} {:>8} {:>8} {:>8} {:>8} {:>7.1}",
            name,
            text.len(),
            r.errors,
            r.warnings,
            ms(best(|r| r.load)),
            ms(best(|r| r.check)),
            runs.iter().filter_map(|r| r.crd).min().map_or("—".to_string(), ms),
            ms(best(|r| r.text)),
            ms(best(|r| r.json)),
            r.text_bytes,
            r.json_bytes,
            r.peak as f64 / (1 << 20) as f64,
        );
        println!("{line}");
    }
}

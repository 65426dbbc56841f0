//! The Karpenter CRD corpus (tests/fixtures/crd_corpus; its README gives the format): for every case, the verdict
//! of `kbp validate` equals the API server's under the pinned v1.14.1 CRDs, as told by the independent oracle
//! `scripts/crd_oracle.py` (the structural schema through Python's jsonschema, the CEL rules through cel-python)
//! on the very object kbp renders (`kbp render --skip-crds`). Also: each case's `intent` matches the oracle (a
//! wrong case or a wrong oracle shows), the corpus has at least 150 cases, and every CEL rule of the NodePool
//! and EC2NodeClass CRDs, read here from the CRD files, is reported by the oracle for at least one case.
//!
//! Every disagreement is collected and reported at once. A case that `render --skip-crds` refuses has no object
//! to judge: that too is a disagreement (kbp's blueprint stands between the user and a field the CRD accepts).
//! The oracle runs once, over every case's object, with the emulator's virtualenv (scripts/emulator.sh installs
//! cel-python and jsonschema there; `KBP_EMULATOR_VENV` points elsewhere).
//!
//! A second judge is the real thing: a kube-apiserver v1.34.4 built from the Kubernetes project's modules
//! (`scripts/kube.sh`; `scripts/test.sh` builds it once per machine) with the same CRDs, to which every object is
//! sent as a dry-run create with strict field validation (`scripts/crd_apiserver.py`). kbp must agree with it
//! too, so the model oracle cannot drift from the server unnoticed.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde::Deserialize;
use serde_json::{json, Value};

use crate::support::control_plane::ControlPlane;
use crate::support::{kbp_offline, reference_crds_dir, repo};

const MIN_CASES: usize = 150;

/// The CRDs whose rules the corpus must cover, as (kind, file).
const CRD_FILES: [(&str, &str); 2] =
    [("NodePool", "karpenter.sh_nodepools.yaml"), ("EC2NodeClass", "karpenter.k8s.aws_ec2nodeclasses.yaml")];

/// The placeholder kbp renders for a value known only after apply (the cluster security group's id).
const UNKNOWN: &str = kbp::graph::value::UNKNOWN;

#[derive(Debug, Deserialize)]
struct CaseFile {
    case: Vec<RawCase>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    name: String,
    intent: String,
    note: String,
    fragment: String,
}

struct Case {
    file: String,
    name: String,
    intent: bool,
    note: String,
    fragment: String,
    /// NodePool or EC2NodeClass.
    kind: &'static str,
    /// The object's metadata.name: the table's key.
    object: String,
}

/// What kbp made of a case.
struct Kbp {
    /// The rendered object, or why there is none.
    rendered: Result<Value, String>,
    /// `validate --json`'s summary `valid`, or why there is none.
    valid: Result<bool, String>,
    diagnostics: Vec<String>,
}

/// The oracle's answer for one object.
#[derive(Debug, Deserialize)]
struct Verdict {
    id: String,
    valid: bool,
    errors: Vec<OracleError>,
}

#[derive(Debug, Deserialize)]
struct OracleError {
    path: String,
    message: String,
    rule: Option<String>,
    schema_path: Option<String>,
}

fn corpus_dir() -> PathBuf {
    repo().join("tests/fixtures/crd_corpus")
}

fn load_cases() -> Vec<Case> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("read tests/fixtures/crd_corpus")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    let mut names = BTreeSet::new();
    for path in files {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        let parsed: CaseFile = toml::from_str(&text).unwrap_or_else(|e| panic!("{file} is not a corpus file: {e}"));
        for raw in parsed.case {
            assert!(names.insert(raw.name.clone()), "{file}: case name `{}` is used twice", raw.name);
            let intent = match raw.intent.as_str() {
                "valid" => true,
                "invalid" => false,
                other => panic!("{file}: case `{}`: intent is valid or invalid, not `{other}`", raw.name),
            };
            let (kind, object) = declared_table(&raw.fragment)
                .unwrap_or_else(|e| panic!("{file}: case `{}`: {e}:\n{}", raw.name, raw.fragment));
            cases.push(Case {
                file: file.clone(),
                name: raw.name,
                intent,
                note: raw.note,
                fragment: raw.fragment,
                kind,
                object,
            });
        }
    }
    cases
}

/// The one `[node_pools.<name>]` or `[node_classes.<name>]` table a fragment declares.
fn declared_table(fragment: &str) -> Result<(&'static str, String), String> {
    let table: toml::Table = toml::from_str(fragment).map_err(|e| format!("the fragment is not TOML: {e}"))?;
    let mut tops = table.iter();
    let (Some((top, entries)), None) = (tops.next(), tops.next()) else {
        return Err("a fragment declares exactly one top-level table".into());
    };
    let kind = match top.as_str() {
        "node_pools" => "NodePool",
        "node_classes" => "EC2NodeClass",
        other => return Err(format!("a fragment declares node_pools or node_classes, not `{other}`")),
    };
    let entries = entries.as_table().ok_or("node_pools/node_classes is a table")?;
    let mut names = entries.keys();
    match (names.next(), names.next()) {
        (Some(name), None) => Ok((kind, name.clone())),
        _ => Err(format!("a fragment declares exactly one {top} entry")),
    }
}

fn blueprint(case: &Case, crds_dir: &Path) -> String {
    let mut text = format!(
        "[cluster]\nname = \"corpus\"\nregion = \"us-west-2\"\n\n[karpenter]\ncrds_dir = {:?}\nchart = {:?}\n\n",
        crds_dir.display().to_string(),
        crds_dir.join("../chart/karpenter").display().to_string()
    );
    if !(case.kind == "EC2NodeClass" && case.object == "default") {
        text.push_str("[node_classes.default]\n\n");
    }
    text.push_str(&case.fragment);
    text
}

fn output_text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout)).trim().to_string()
}

/// Renders and validates one case with the kbp binary, in a directory of its own.
fn run_kbp(case: &Case, dir: &Path, crds_dir: &Path) -> Kbp {
    std::fs::create_dir_all(dir).expect("create the case's directory");
    std::fs::write(dir.join("blueprint.toml"), blueprint(case, crds_dir)).expect("write the case's blueprint");

    let render = kbp_offline(&["render", "--skip-crds", "blueprint.toml"], dir);
    let rendered = if render.status.success() {
        pick_object(&String::from_utf8_lossy(&render.stdout), case.kind, &case.object)
    } else {
        Err(format!("render --skip-crds refused it (exit {:?}): {}", render.status.code(), output_text(&render)))
    };

    let validate = kbp_offline(&["validate", "--json", "blueprint.toml"], dir);
    let mut valid = Err(format!(
        "validate --json printed no summary (exit {:?}): {}",
        validate.status.code(),
        output_text(&validate)
    ));
    let mut diagnostics = Vec::new();
    for line in String::from_utf8_lossy(&validate.stdout).lines() {
        let Ok(event) = serde_json::from_str::<Value>(line) else { continue };
        match event["type"].as_str() {
            Some("diagnostic") => diagnostics.push(format!(
                "{} {}: {}{}",
                event["severity"].as_str().unwrap_or("?"),
                event["path"].as_str().unwrap_or("-"),
                event["message"].as_str().unwrap_or(""),
                event["expected"].as_str().map(|e| format!(" (expected {e})")).unwrap_or_default()
            )),
            Some("summary") => {
                if let Some(v) = event["valid"].as_bool() {
                    valid = Ok(v);
                }
            }
            _ => {}
        }
    }
    Kbp { rendered, valid, diagnostics }
}

fn pick_object(yaml: &str, kind: &str, name: &str) -> Result<Value, String> {
    let mut found = None;
    for doc in serde_norway::Deserializer::from_str(yaml) {
        let value = Value::deserialize(doc).map_err(|e| format!("render printed YAML that does not parse: {e}"))?;
        if value["kind"] == kind && value["metadata"]["name"] == name {
            found = Some(value);
        }
    }
    found.ok_or_else(|| format!("render printed no {kind} named {name}"))
}

/// The judges' input: `[{"id", "object"}]`, in a file in `scratch`.
fn write_objects(objects: &[(String, Value)], scratch: &Path) -> PathBuf {
    let input = scratch.join("objects.json");
    let list: Vec<Value> = objects.iter().map(|(id, o)| json!({"id": id, "object": o})).collect();
    std::fs::write(&input, serde_json::to_vec(&list).unwrap()).expect("write the judges' input");
    input
}

/// Runs the oracle once over every rendered object; its verdicts by case name.
fn run_oracle(objects: &[(String, Value)], crds_dir: &Path, scratch: &Path) -> BTreeMap<String, Verdict> {
    let input = write_objects(objects, scratch);
    let python = venv_python();
    let out = Command::new(&python)
        .arg(repo().join("scripts/crd_oracle.py"))
        .arg("--crds")
        .arg(crds_dir)
        .args(["--unknown", UNKNOWN])
        .arg(&input)
        .output()
        .unwrap_or_else(|e| {
            panic!("run the oracle with {} ({e}): `scripts/emulator.sh install` makes the venv", python.display())
        });
    assert!(out.status.success(), "the oracle failed:\n{}", output_text(&out));
    let verdicts: Vec<Verdict> = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("the oracle's answer is not its JSON ({e}):\n{}", String::from_utf8_lossy(&out.stdout))
    });
    assert_eq!(verdicts.len(), objects.len(), "one verdict per object");
    verdicts.into_iter().map(|v| (v.id.clone(), v)).collect()
}

/// A real kube-apiserver's verdict on one object (dry-run create, strict field validation).
#[derive(Debug, Deserialize)]
struct ServerVerdict {
    id: String,
    valid: bool,
    errors: Vec<String>,
}

/// Sends every rendered object to a real kube-apiserver holding the same CRDs; its verdicts by case name.
fn run_apiserver(objects: &[(String, Value)], crds_dir: &Path, scratch: &Path) -> BTreeMap<String, ServerVerdict> {
    let input = write_objects(objects, scratch);
    let plane = ControlPlane::start();
    let out = Command::new(venv_python())
        .arg(repo().join("scripts/crd_apiserver.py"))
        .arg("--crds")
        .arg(crds_dir)
        .args(["--unknown", UNKNOWN])
        .arg(&input)
        .envs(plane.env.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("run scripts/crd_apiserver.py");
    assert!(out.status.success(), "crd_apiserver.py failed:\n{}", output_text(&out));
    let verdicts: Vec<ServerVerdict> = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("crd_apiserver.py's answer is not its JSON ({e}):\n{}", String::from_utf8_lossy(&out.stdout))
    });
    assert_eq!(verdicts.len(), objects.len(), "one verdict per object");
    let refused = verdicts.iter().filter(|v| !v.valid).count();
    assert!(refused > 0 && refused < verdicts.len(), "the server refused {refused} of {} objects", verdicts.len());
    eprintln!("kube-apiserver: {refused} of {} objects refused", verdicts.len());
    verdicts.into_iter().map(|v| (v.id.clone(), v)).collect()
}

fn venv_python() -> PathBuf {
    let venv =
        std::env::var_os("KBP_EMULATOR_VENV").map(PathBuf::from).unwrap_or_else(|| repo().join(".venv-emulator"));
    venv.join("bin/python")
}

/// Every CEL rule of the CRD, as (kind, schema path, rule), but the transition rules (they use `oldSelf`, and
/// apply only to updates). Read from the YAML here, not from the oracle, so an oracle that misses a rule fails.
fn crd_rules(crds_dir: &Path) -> BTreeSet<(String, String, String)> {
    fn walk(kind: &str, node: &Value, path: &str, out: &mut BTreeSet<(String, String, String)>) {
        let old_self = regex::Regex::new(r"\boldSelf\b").unwrap();
        for rule in node["x-kubernetes-validations"].as_array().into_iter().flatten() {
            let text = rule["rule"].as_str().expect("a rule is a string");
            let transition = old_self.is_match(text) || rule["optionalOldSelf"].as_bool() == Some(true);
            if !transition {
                out.insert((kind.to_string(), path.to_string(), text.to_string()));
            }
        }
        for (key, child) in node["properties"].as_object().into_iter().flatten() {
            let child_path = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
            walk(kind, child, &child_path, out);
        }
        if node["items"].is_object() {
            walk(kind, &node["items"], &format!("{path}[]"), out);
        }
        if node["additionalProperties"].is_object() {
            walk(kind, &node["additionalProperties"], &format!("{path}{{}}"), out);
        }
    }
    let mut out = BTreeSet::new();
    for (kind, file) in CRD_FILES {
        let path = crds_dir.join(file);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let crd: Value = serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for version in crd["spec"]["versions"].as_array().expect("a CRD has versions") {
            walk(kind, &version["schema"]["openAPIV3Schema"], "", &mut out);
        }
    }
    out
}

fn describe_oracle(v: &Verdict) -> String {
    let mut s = if v.valid { "valid".to_string() } else { "invalid".to_string() };
    for e in &v.errors {
        let _ = write!(s, "\n      {}: {}", if e.path.is_empty() { "<object>" } else { &e.path }, e.message);
    }
    s
}

fn describe_kbp(k: &Kbp) -> String {
    let mut s = match &k.valid {
        Ok(true) => "valid".to_string(),
        Ok(false) => "invalid".to_string(),
        Err(e) => e.clone(),
    };
    for d in &k.diagnostics {
        let _ = write!(s, "\n      {d}");
    }
    s
}

#[test]
fn kbp_validate_agrees_with_the_crd_oracle_on_every_corpus_case() {
    let crds_dir = reference_crds_dir();
    let cases = load_cases();
    let scratch = tempfile::Builder::new().prefix("kbp-crd-corpus-").tempdir().expect("a scratch directory");

    // kbp, two cases at a time: each case is two short offline runs of the binary.
    let results: Vec<Kbp> = {
        let mut slots: Vec<Option<Kbp>> = (0..cases.len()).map(|_| None).collect();
        std::thread::scope(|s| {
            let (evens, odds): (Vec<_>, Vec<_>) = slots.iter_mut().enumerate().partition(|(i, _)| i % 2 == 0);
            for half in [evens, odds] {
                let (cases, crds_dir, scratch) = (&cases, &crds_dir, scratch.path());
                s.spawn(move || {
                    for (i, slot) in half {
                        *slot = Some(run_kbp(&cases[i], &scratch.join(&cases[i].name), crds_dir));
                    }
                });
            }
        });
        slots.into_iter().map(|k| k.expect("every case ran")).collect()
    };

    let objects: Vec<(String, Value)> = cases
        .iter()
        .zip(&results)
        .filter_map(|(c, k)| k.rendered.as_ref().ok().map(|o| (c.name.clone(), o.clone())))
        .collect();
    let verdicts = run_oracle(&objects, &crds_dir, scratch.path());
    let server = run_apiserver(&objects, &crds_dir, scratch.path());

    // Agreement, case by case.
    let mut disagreements = String::new();
    let mut causes: BTreeMap<&str, usize> = BTreeMap::new();
    let mut wrong_intents = String::new();
    let mut fired: BTreeSet<(String, String, String)> = BTreeSet::new();
    let mut by_kind: BTreeMap<(&str, bool), usize> = BTreeMap::new();
    let mut server_disagreements = String::new();
    for (case, kbp) in cases.iter().zip(&results) {
        let verdict = verdicts.get(&case.name);
        if let (Some(real), Ok(valid)) = (server.get(&case.name), &kbp.valid) {
            if real.valid != *valid {
                let _ = write!(
                    server_disagreements,
                    "\n  {} ({}): kube-apiserver says {}{}\n    kbp: {}",
                    case.name,
                    case.file,
                    if real.valid { "valid" } else { "invalid" },
                    real.errors.iter().map(|e| format!("\n      {e}")).collect::<String>(),
                    describe_kbp(kbp)
                );
            }
        }
        if let Some(v) = verdict {
            *by_kind.entry((case.kind, v.valid)).or_default() += 1;
            for e in &v.errors {
                if let (Some(rule), Some(path)) = (&e.rule, &e.schema_path) {
                    fired.insert((case.kind.to_string(), path.clone(), rule.clone()));
                }
            }
            if v.valid != case.intent {
                let _ = write!(
                    wrong_intents,
                    "\n  {} ({}): intent {}, oracle {}",
                    case.name,
                    case.file,
                    if case.intent { "valid" } else { "invalid" },
                    describe_oracle(v)
                );
            }
        }
        let cause = match (verdict, &kbp.valid) {
            // Which of the blueprint's layers stood in the way, for the summary only.
            (None, _) if kbp.rendered.as_ref().is_err_and(|e| e.contains("unknown field")) => {
                Some("render --skip-crds refused the case: a key the blueprint does not know (unknown field)")
            }
            (None, _) => Some("render --skip-crds refused the case: a check of the blueprint's own"),
            (Some(v), Ok(k)) if v.valid == *k => None,
            (Some(v), Ok(_)) if v.valid => Some("kbp says invalid, the API server would accept"),
            (Some(_), Ok(_)) => Some("kbp says valid, the API server would refuse"),
            (Some(_), Err(_)) => Some("kbp validate gave no verdict"),
        };
        if let Some(cause) = cause {
            *causes.entry(cause).or_default() += 1;
            let _ = write!(
                disagreements,
                "\n  {} ({}; intent {}: {})\n    oracle: {}\n    kbp: {}",
                case.name,
                case.file,
                if case.intent { "valid" } else { "invalid" },
                case.note,
                verdict.map_or_else(|| "no object".to_string(), describe_oracle),
                match &kbp.rendered {
                    Ok(_) => describe_kbp(kbp),
                    Err(why) => format!("{why}\n    kbp validate: {}", describe_kbp(kbp)),
                }
            );
        }
    }

    let rules = crd_rules(&crds_dir);
    let uncovered: Vec<_> = rules.difference(&fired).collect();

    let mut problems = String::new();
    if cases.len() < MIN_CASES {
        let _ = write!(problems, "\nthe corpus has {} cases, fewer than {MIN_CASES}", cases.len());
    }
    if !uncovered.is_empty() {
        let _ = write!(
            problems,
            "\n{} of the {} CEL rules are reported by the oracle for no case:",
            uncovered.len(),
            rules.len()
        );
        for (kind, path, rule) in &uncovered {
            let _ = write!(problems, "\n  {kind} {path}: {rule}");
        }
    }
    if !server_disagreements.is_empty() {
        let _ = write!(problems, "\ncases where the real kube-apiserver and kbp disagree:{server_disagreements}");
    }
    if !wrong_intents.is_empty() {
        let _ = write!(
            problems,
            "\ncases whose intent is not the oracle's verdict (the case or the oracle is wrong):{wrong_intents}"
        );
    }
    if !causes.is_empty() {
        let total: usize = causes.values().sum();
        let _ = write!(problems, "\nkbp and the oracle disagree on {total} of {} cases:", cases.len());
        for (cause, n) in &causes {
            let _ = write!(problems, "\n  {n:4}  {cause}");
        }
        problems.push_str(&disagreements);
    }
    let summary = format!(
        "{} cases ({} rendered; oracle: NodePool {} valid / {} invalid, EC2NodeClass {} valid / {} invalid); \
         {} of {} CEL rules reported",
        cases.len(),
        objects.len(),
        by_kind.get(&("NodePool", true)).unwrap_or(&0),
        by_kind.get(&("NodePool", false)).unwrap_or(&0),
        by_kind.get(&("EC2NodeClass", true)).unwrap_or(&0),
        by_kind.get(&("EC2NodeClass", false)).unwrap_or(&0),
        rules.len() - uncovered.len(),
        rules.len()
    );
    assert!(problems.is_empty(), "{summary}{problems}");
    eprintln!("{summary}");
}

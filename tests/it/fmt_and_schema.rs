//! `kbp fmt` and `kbp schema` through the real binary, without an emulator: fmt's check mode writes nothing
//! and names what would change, rewriting keeps every comment and the values and is idempotent, invalid TOML
//! is a diagnostic with its place; the schema is a valid JSON Schema that every shipped blueprint meets and
//! wrong blueprints do not.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Output;

use serde_json::Value as Json;

use crate::support::{kbp_offline, repo, stderr, stdout};

fn assert_exit(out: &Output, code: i32, what: &str) {
    assert_eq!(out.status.code(), Some(code), "{what}\nstdout:\n{}\nstderr:\n{}", stdout(out), stderr(out));
    assert!(!stderr(out).contains("panicked"), "{what} panicked:\n{}", stderr(out));
}

fn shipped_blueprints() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(repo().join("blueprints"))
        .expect("blueprints/ exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 4, "the shipped blueprints: {files:?}");
    files
}

/// A blueprint as someone might write it by hand, with comments everywhere fmt has to keep them.
const HANDWRITTEN: &str = r#"# A blueprint written by hand.
[cluster]
name="fmt-test"      # the name
  region = "us-west-2"


# Between the tables, above [vpc].
[vpc]
azs = [ "us-west-2a",
   "us-west-2b" ]   # two zones
# Under the last key of [vpc].


# About the default pool.
[node_pools.default]
# Above the limits.
limits = {cpu=100}   
requirements = [
  # Only arm64 nodes.
  { key = "kubernetes.io/arch", operator = "In", values = ["arm64"] },
]
"#;

/// HANDWRITTEN in canonical form.
const CANONICAL: &str = r#"# A blueprint written by hand.
[cluster]
name = "fmt-test" # the name
region = "us-west-2"

# Between the tables, above [vpc].
[vpc]
azs = ["us-west-2a", "us-west-2b"] # two zones
# Under the last key of [vpc].

# About the default pool.
[node_pools.default]
# Above the limits.
limits = { cpu = 100 }
requirements = [
  # Only arm64 nodes.
  { key = "kubernetes.io/arch", operator = "In", values = ["arm64"] },
]
"#;

fn toml_as_json(text: &str) -> Json {
    toml::from_str(text).unwrap_or_else(|e| panic!("not TOML: {e}\n{text}"))
}

#[test]
fn fmt_check_passes_on_the_shipped_blueprints_and_writes_nothing() {
    let files = shipped_blueprints();
    let before: Vec<String> = files.iter().map(|f| fs::read_to_string(f).unwrap()).collect();
    let mut args = vec!["fmt", "--check", "--diff"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    let out = kbp_offline(&args, repo());
    assert_exit(&out, 0, "kbp fmt --check on the shipped blueprints (run `kbp fmt blueprints/*.toml`)");
    assert_eq!(stdout(&out), "", "nothing would change");
    let after: Vec<String> = files.iter().map(|f| fs::read_to_string(f).unwrap()).collect();
    assert_eq!(before, after);
}

#[test]
fn fmt_check_names_what_would_change_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("hand.toml"), HANDWRITTEN).unwrap();
    fs::write(dir.path().join("tidy.toml"), CANONICAL).unwrap();

    let out = kbp_offline(&["fmt", "--check", "hand.toml", "tidy.toml"], dir.path());
    assert_exit(&out, 1, "fmt --check with a file to reformat");
    assert_eq!(stdout(&out), "hand.toml\n", "only the file that would change is named");
    assert!(stderr(&out).contains("1 of 2 files is not in canonical form"), "{}", stderr(&out));

    let out = kbp_offline(&["fmt", "--check", "--diff", "hand.toml"], dir.path());
    assert_exit(&out, 1, "fmt --check --diff");
    let diff = stdout(&out);
    assert!(diff.starts_with("--- hand.toml\n+++ hand.toml\n@@ "), "{diff}");
    assert!(diff.contains("\n-name=\"fmt-test\"      # the name\n"), "{diff}");
    assert!(diff.contains("\n+name = \"fmt-test\" # the name\n"), "{diff}");

    assert_eq!(fs::read_to_string(dir.path().join("hand.toml")).unwrap(), HANDWRITTEN, "--check wrote");
    assert_eq!(fs::read_to_string(dir.path().join("tidy.toml")).unwrap(), CANONICAL);
    let names: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 2, "no temp file left: {names:?}");

    let out = kbp_offline(&["fmt", "--check", "tidy.toml"], dir.path());
    assert_exit(&out, 0, "fmt --check on a canonical file");
    assert_eq!(stdout(&out), "");
}

#[test]
fn fmt_rewrites_keeping_comments_values_and_permissions_and_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hand.toml");
    fs::write(&file, HANDWRITTEN).unwrap();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o640)).unwrap();

    let out = kbp_offline(&["fmt", "hand.toml"], dir.path());
    assert_exit(&out, 0, "kbp fmt");
    assert_eq!(stdout(&out), "hand.toml\n", "the changed file is named");
    let text = fs::read_to_string(&file).unwrap();
    assert_eq!(text, CANONICAL);
    for comment in [
        "# A blueprint written by hand.",
        "name = \"fmt-test\" # the name",
        "# Between the tables, above [vpc].\n[vpc]",
        "azs = [\"us-west-2a\", \"us-west-2b\"] # two zones",
        "# two zones\n# Under the last key of [vpc].\n\n# About the default pool.\n[node_pools.default]",
        "# Above the limits.\nlimits",
        "  # Only arm64 nodes.",
    ] {
        assert!(text.contains(comment), "lost {comment:?}:\n{text}");
    }
    assert_eq!(toml_as_json(&text), toml_as_json(HANDWRITTEN), "the values changed");
    assert_eq!(fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o640, "the mode changed");

    let out = kbp_offline(&["fmt", "hand.toml"], dir.path());
    assert_exit(&out, 0, "kbp fmt on its own output");
    assert_eq!(stdout(&out), "", "nothing changes the second time");
    assert_eq!(fs::read_to_string(&file).unwrap(), CANONICAL);

    let out = kbp_offline(&["validate", "hand.toml"], dir.path());
    assert_exit(&out, 0, "the formatted blueprint is still valid");
}

#[test]
fn fmt_through_a_symlink_rewrites_the_file_and_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("real.toml"), HANDWRITTEN).unwrap();
    std::os::unix::fs::symlink("real.toml", dir.path().join("link.toml")).unwrap();
    let out = kbp_offline(&["fmt", "link.toml"], dir.path());
    assert_exit(&out, 0, "kbp fmt through a link");
    assert!(fs::symlink_metadata(dir.path().join("link.toml")).unwrap().file_type().is_symlink());
    assert_eq!(fs::read_to_string(dir.path().join("real.toml")).unwrap(), CANONICAL);
}

#[test]
fn fmt_refuses_invalid_toml_with_its_place_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let broken = "[cluster]\nname = = \"x\"\n";
    fs::write(dir.path().join("bad.toml"), broken).unwrap();
    fs::write(dir.path().join("hand.toml"), HANDWRITTEN).unwrap();
    for args in [&["fmt", "bad.toml", "hand.toml"][..], &["fmt", "--check", "bad.toml"]] {
        let out = kbp_offline(args, dir.path());
        assert_exit(&out, 1, &format!("kbp {args:?} with invalid TOML"));
        let err = stderr(&out);
        assert!(err.contains("TOML syntax"), "{err}");
        assert!(err.contains("bad.toml:2:8"), "file:line:col in {err}");
        assert!(err.contains("help: kbp fmt formats only valid TOML"), "a hint in {err}");
    }
    assert_eq!(fs::read_to_string(dir.path().join("bad.toml")).unwrap(), broken);
    // The valid file given beside it is formatted all the same.
    assert_eq!(fs::read_to_string(dir.path().join("hand.toml")).unwrap(), CANONICAL);

    let out = kbp_offline(&["fmt", "missing.toml"], dir.path());
    assert_exit(&out, 1, "kbp fmt on a missing file");
    assert!(stderr(&out).contains("cannot read missing.toml"), "{}", stderr(&out));
}

/// The schema `kbp schema` prints, checked against the JSON Schema 2020-12 meta-schema.
fn schema() -> Json {
    let out = kbp_offline(&["schema"], repo());
    assert_exit(&out, 0, "kbp schema");
    let schema: Json = serde_json::from_slice(&out.stdout).expect("kbp schema prints JSON");
    assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
    if let Err(e) = jsonschema::meta::validate(&schema) {
        panic!("not a valid JSON Schema: {e} at {}", e.instance_path());
    }
    schema
}

/// The schema's complaints about a blueprint, one per line with where.
fn complaints(validator: &jsonschema::Validator, text: &str) -> String {
    let instance = toml_as_json(text);
    validator.iter_errors(&instance).map(|e| format!("{}: {e}\n", e.instance_path())).collect()
}

#[test]
fn schema_is_valid_json_schema_that_every_shipped_blueprint_meets() {
    let validator = jsonschema::draft202012::new(&schema()).expect("the schema compiles");
    for file in shipped_blueprints() {
        let errors = complaints(&validator, &fs::read_to_string(&file).unwrap());
        assert!(errors.is_empty(), "{} does not meet the schema:\n{errors}", file.display());
    }
    assert_eq!(complaints(&validator, CANONICAL), "");
}

#[test]
fn schema_refuses_unknown_keys_wrong_types_and_missing_fields() {
    let validator = jsonschema::draft202012::new(&schema()).expect("the schema compiles");
    let cluster = "[cluster]\nname = \"sbx\"\nregion = \"us-west-2\"\n";
    for (text, at) in [
        (format!("{cluster}nmae = \"typo\"\n"), "/cluster"),
        (format!("{cluster}[karpenter]\nreplicas = \"two\"\n"), "/karpenter/replicas"),
        (format!("{cluster}[node_group]\ndesired_size = 1000\n"), "/node_group/desired_size"),
        (format!("{cluster}[karpenter]\nidentity = \"magic\"\n"), "/karpenter/identity"),
        (format!("{cluster}[vpc]\nazs = 7\n"), "/vpc/azs"),
        (
            format!("{cluster}[[node_pools.p.requirements]]\nkey = \"k\"\noperater = \"In\"\n"),
            "/node_pools/p/requirements/0",
        ),
        (
            format!("{cluster}[node_classes.c.root_volume]\nencrypted = \"yes\"\n"),
            "/node_classes/c/root_volume/encrypted",
        ),
        ("[cluster]\nname = \"sbx\"\n".to_string(), "/cluster"),
        (format!("{cluster}[surprise]\n"), ""),
    ] {
        let errors = complaints(&validator, &text);
        assert!(
            errors.lines().any(|l| l.starts_with(&format!("{at}: "))),
            "expected a complaint at {at:?} for\n{text}\ngot:\n{errors}"
        );
    }
    // The fixture with one mistake of each kind fails too (an unknown key, a string for an integer).
    let broken = fs::read_to_string(repo().join("tests/fixtures/blueprints/broken.toml")).unwrap();
    let errors = complaints(&validator, &broken);
    assert!(errors.contains("/node_group: ") && errors.contains("/karpenter/replicas: "), "{errors}");
}

#[test]
fn schema_out_writes_the_same_schema_to_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = kbp_offline(&["schema", "--out", "kbp.schema.json"], dir.path());
    assert_exit(&out, 0, "kbp schema --out");
    assert_eq!(stdout(&out), "");
    let written: Json = serde_json::from_str(&fs::read_to_string(dir.path().join("kbp.schema.json")).unwrap()).unwrap();
    assert_eq!(written, schema());
    let mode = fs::metadata(dir.path().join("kbp.schema.json")).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644, "a schema is for editors to read, not private");

    let out = kbp_offline(&["schema", "--out", "no/such/dir/kbp.schema.json"], dir.path());
    assert_exit(&out, 1, "kbp schema --out into a missing directory");
    assert!(stderr(&out).contains("cannot write no/such/dir/kbp.schema.json"), "{}", stderr(&out));
}

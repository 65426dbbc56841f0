use std::path::Path;

use proptest::prelude::*;

use super::{format_file, format_str, same_document};

fn fmt(text: &str) -> String {
    match format_str("t.toml", text) {
        Ok(out) => out,
        Err(d) => panic!("refused:\n{text}\n---\n{}", d.render(false)),
    }
}

/// Formats `text`, checks the result is `want`, keeps the values and formats to itself.
fn check(text: &str, want: &str) {
    let out = fmt(text);
    assert_eq!(out, want, "from:\n{text}");
    assert!(same_document(text, &out), "values changed:\n{text}\n---\n{out}");
    assert_eq!(fmt(&out), out, "not idempotent:\n{out}");
}

#[test]
fn key_value_spacing_and_indentation() {
    check("a=1\n  b   =\t\"x\"   \n\tc.d . e = true\n", "a = 1\nb = \"x\"\nc.d.e = true\n");
    check("[ a . b ]   \nx=1\n[[ c ]]\ny = 2\n", "[a.b]\nx = 1\n\n[[c]]\ny = 2\n");
}

#[test]
fn one_blank_line_between_tables_and_none_under_a_header() {
    check("[a]\n\n\nx = 1\n[b]\n[c]\n\n\n\ny = 2\n\n\n", "[a]\nx = 1\n\n[b]\n\n[c]\ny = 2\n");
    check("top = 1\n[a]\nx = 1\n", "top = 1\n\n[a]\nx = 1\n");
    check("\n\n\n[a]\nx = 1", "[a]\nx = 1\n");
}

#[test]
fn blank_lines_between_keys_are_kept_one() {
    check("[a]\nx = 1\n\n\n\ny = 2\nz = 3\n", "[a]\nx = 1\n\ny = 2\nz = 3\n");
}

#[test]
fn comments_keep_their_place_and_text() {
    let text = "# head\n#   of the file\n\n[a]   #   on the header   \n  # above x\nx = 1    # after x\n# after the last key of a\n\n# above b\n[b]\n#no space after the hash\ny = [1, 2] # after an array\n# the end   \n";
    let want = "# head\n#   of the file\n\n[a] #   on the header\n# above x\nx = 1 # after x\n# after the last key of a\n\n# above b\n[b]\n#no space after the hash\ny = [1, 2] # after an array\n# the end\n";
    check(text, want);
    // A comment block right above a header stays with it; a blank line is added above, not between them.
    check("[a]\nx = 1\n# about b\n[b]\n", "[a]\nx = 1\n\n# about b\n[b]\n");
    check("# about a\n[a]\n", "# about a\n[a]\n");
}

#[test]
fn short_arrays_go_on_one_line_and_long_ones_one_item_per_line() {
    check("a = [\n  1,\n  2 ,3,\n]\n", "a = [1, 2, 3]\n");
    check("a = [ [ 1,2 ] , { x = 1,y=2 } ]\n", "a = [[1, 2], { x = 1, y = 2 }]\n");
    let long: Vec<String> = (0..12).map(|i| format!("\"item-{i:04}\"")).collect();
    let text = format!("values = [{}]\n", long.join(","));
    let want = format!("values = [\n{}]\n", long.iter().map(|v| format!("  {v},\n")).collect::<String>());
    check(&text, &want);
    check("e = [ ]\nt = { }\n", "e = []\nt = {}\n");
}

#[test]
fn arrays_with_comments_keep_them_one_item_per_line() {
    let text =
        "a = [ # first\n      1,\n   2, # two\n\n\n  # before three\n3 # three, before its comma\n, 4 ] # after\n";
    let want = "a = [ # first\n  1,\n  2, # two\n\n  # before three\n  3, # three, before its comma\n  4,\n] # after\n";
    check(text, want);
    check("a = [\n  # nothing yet\n]\n", "a = [\n  # nothing yet\n]\n");
    check("a = [[1, # one\n2], [3]]\n", "a = [\n  [\n    1, # one\n    2,\n  ],\n  [3],\n]\n");
}

#[test]
fn inline_tables_are_one_line_unless_they_hold_comments() {
    check("t = {a=1,   b = { c = [ 1 ] }, d . e = 2}\n", "t = { a = 1, b = { c = [1] }, d.e = 2 }\n");
    check("t = {\n  a = 1,\n  b = 2\n}\n", "t = { a = 1, b = 2 }\n");
    check("t = { # why\n    a = 1, # one\n b = 2 }\n", "t = { # why\n  a = 1, # one\n  b = 2,\n}\n");
    // A comment in an array inside stays there, and the pairs on one line (TOML 1.0).
    check("t = { a = [1, # one\n2], b = 2 }\n", "t = { a = [\n  1, # one\n  2,\n], b = 2 }\n");
}

#[test]
fn values_are_written_as_they_were() {
    let text = "a = 'literal'\nb = \"\"\"\nline   \n  indented\"\"\"\nc = 1_000\nd = 0x1F\ne = nan\nf = 1979-05-27T07:32:00Z\ng = \"\\u00e9\"\n";
    check(text, text);
}

#[test]
fn ends_with_one_newline_and_empty_stays_empty() {
    check("a = 1", "a = 1\n");
    check("a = 1\n\n\n\n", "a = 1\n");
    check("", "");
    check("\n \n\t\n", "");
    check("# only a comment", "# only a comment\n");
    check("a = 1\r\nb = 2 # two\r\n\r\n[t]\r\n", "a = 1\nb = 2 # two\n\n[t]\n");
    // The text of a multi-line string is its own, line ends included.
    check("s = \"\"\"\r\nx\r\n\"\"\"\r\n", "s = \"\"\"\r\nx\r\n\"\"\"\n");
}

#[test]
fn a_syntax_error_is_a_diagnostic_with_a_place_and_a_hint() {
    let d = format_str("bad.toml", "[cluster]\nname = = \"x\"\n").unwrap_err();
    let first = &d.items()[0];
    let p = first.position.as_ref().unwrap();
    assert_eq!((p.line, p.column), (2, 8), "{}", d.render(false));
    assert!(first.message.starts_with("TOML syntax"), "{}", first.message);
    assert!(first.hint.as_deref().unwrap().contains("nothing was written"));
    let d = format_str("dup.toml", "a = 1\na = 2\n").unwrap_err();
    assert!(d.has_errors());
}

#[test]
fn a_key_toml_edit_would_move_is_refused_where_it_is() {
    let d = format_str("t.toml", "[t]\na.b = 1\nc = 2\na.d = 3\n").unwrap_err();
    let item = &d.items()[0];
    assert!(item.message.contains("would move `a.d` above `c`"), "{}", item.message);
    assert_eq!(item.position.as_ref().map(|p| (p.line, p.column, p.span.len())), Some((4, 3, 1)));
    let d = format_str("t.toml", "x = { a.b = 1, c = 2, a.d = 3 }\n").unwrap_err();
    assert!(d.items()[0].message.contains("`a.d`"), "{}", d.items()[0].message);
    // Together, they stay as they are.
    check("[t]\na.b = 1\na.d = 3\nc = 2\n", "[t]\na.b = 1\na.d = 3\nc = 2\n");
}

fn toml_files_in(dir: &str) -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no blueprints in {}", dir.display());
    files
}

#[test]
fn shipped_blueprints_are_canonical() {
    for path in toml_files_in("blueprints") {
        let f = format_file(&path).unwrap_or_else(|d| panic!("{}", d.render(false)));
        assert!(!f.changed(), "{} is not canonical; run `kbp fmt {}`", path.display(), path.display());
    }
}

#[test]
fn formatting_keeps_the_values_of_every_blueprint_and_fixture() {
    for path in toml_files_in("blueprints").into_iter().chain(toml_files_in("tests/fixtures/blueprints")) {
        let f = format_file(&path).unwrap_or_else(|d| panic!("{}", d.render(false)));
        assert!(same_document(&f.original, &f.canonical), "{}", path.display());
        assert_eq!(fmt(&f.canonical), f.canonical, "{} is not idempotent", path.display());
        for comment in f.original.lines().filter_map(|l| l.find('#').map(|i| l[i..].trim_end())) {
            assert!(f.canonical.contains(comment), "{} lost {comment:?}", path.display());
        }
    }
}

/// Whitespace TOML allows between tokens on one line.
fn space() -> impl Strategy<Value = String> {
    prop_oneof![Just(""), Just(" "), Just("   "), Just("\t")].prop_map(str::to_string)
}

/// What may stand between two lines: nothing, blank lines, indented comments.
fn between() -> impl Strategy<Value = String> {
    prop::collection::vec(prop_oneof![Just("\n"), Just("  \n"), Just("# c  \n"), Just("\t# d\n")], 0..3)
        .prop_map(|v| v.concat())
}

fn scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        (0i64..1000).prop_map(|i| i.to_string()),
        "[a-z #]{0,12}".prop_map(|s| format!("\"{s}\"")),
        Just("true".to_string()),
        Just("1.5".to_string()),
    ]
}

/// A value, with whitespace, newlines and comments wherever TOML allows them.
fn value() -> impl Strategy<Value = String> {
    scalar().prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            (prop::collection::vec((between(), inner.clone(), space()), 0..6), space(), any::<bool>()).prop_map(
                |(items, end, comma)| {
                    let items: Vec<String> = items.into_iter().map(|(b, v, s)| format!("{b}{v}{s}")).collect();
                    let comma = if comma && !items.is_empty() { "," } else { "" };
                    format!("[{}{comma}{end}\n]", items.join(","))
                }
            ),
            prop::collection::vec((space(), inner), 0..4).prop_map(|pairs| {
                let pairs: Vec<String> =
                    pairs.iter().enumerate().map(|(i, (s, v))| format!("{s}k{i}{s}={s}{v}")).collect();
                format!("{{{}}}", pairs.join(","))
            }),
        ]
    })
}

/// Lines of `key = value`, each with what comes before it and maybe a comment after it.
fn pairs() -> impl Strategy<Value = String> {
    let pair = (between(), space(), value(), space(), prop::option::of("# [a-z ]{0,8}"));
    prop::collection::vec(pair, 0..4).prop_map(|pairs| {
        let mut s = String::new();
        for (i, (before, sp, v, after, comment)) in pairs.iter().enumerate() {
            let comment = comment.as_deref().unwrap_or("");
            s.push_str(&format!("{before}{sp}key{i}{sp}={sp}{v}{after}{comment}\n"));
        }
        s
    })
}

/// A document: keys at the top, then tables, with any whitespace and comments around them.
fn document() -> impl Strategy<Value = String> {
    let tables = prop::collection::vec((between(), space(), any::<bool>(), pairs()), 0..4);
    (pairs(), tables).prop_map(|(top, tables)| {
        let mut doc = top;
        for (i, (before, sp, array, pairs)) in tables.iter().enumerate() {
            let header = if *array { format!("[[{sp}t{i}{sp}]]") } else { format!("[{sp}t{i}{sp}.x{sp}]") };
            doc.push_str(&format!("{before}{sp}{header}{sp}\n{pairs}"));
        }
        doc
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn formatting_keeps_values_and_is_idempotent(doc in document()) {
        prop_assume!(doc.parse::<toml::Table>().is_ok());
        let out = format_str("p.toml", &doc).map_err(|d| TestCaseError::fail(d.render(false)))?;
        prop_assert!(same_document(&doc, &out), "values changed:\n{}\n---\n{}", doc, out);
        let again = format_str("p.toml", &out).map_err(|d| TestCaseError::fail(d.render(false)))?;
        prop_assert_eq!(&again, &out, "not idempotent, from:\n{}", doc);
        prop_assert!(out.lines().all(|l| l == l.trim_end()), "trailing whitespace:\n{}", out);
        prop_assert!(out.is_empty() || (out.ends_with('\n') && !out.ends_with("\n\n")), "{:?}", out);
    }
}

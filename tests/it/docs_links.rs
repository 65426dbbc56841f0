//! The user's documentation holds together: every relative link in README.md and docs/*.md names a file of the
//! repository, and every `#anchor` (in the same file or another) names one of that file's headings, as GitHub
//! makes anchors of them. Links inside code blocks are text, not links, and are left alone.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::support::repo;

/// README.md and every Markdown file under docs/.
fn documents() -> Vec<PathBuf> {
    let mut files = vec![repo().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .expect("docs/ exists")
        .map(|e| e.expect("a docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// The lines of `text` outside fenced code blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|line| {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// GitHub's anchor for a heading: lower case, backticks and punctuation other than `-` and `_` dropped, spaces
/// turned into `-`; a repeated heading gets `-1`, `-2`, … in order.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for line in prose(text) {
        let Some(title) = line.strip_prefix('#').map(|t| t.trim_start_matches('#')) else { continue };
        if !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut unique = slug.clone();
        let mut n = 0;
        while seen.contains(&unique) {
            n += 1;
            unique = format!("{slug}-{n}");
        }
        seen.insert(unique);
    }
    seen
}

/// Every inline link target `[text](target)` of `text`, outside code blocks and code spans.
fn links(text: &str) -> Vec<String> {
    let link = regex::Regex::new(r"\]\(([^)\s]+)\)").expect("a valid pattern");
    let span = regex::Regex::new(r"`[^`]*`").expect("a valid pattern");
    prose(text)
        .into_iter()
        .flat_map(|line| {
            let line = span.replace_all(line, "");
            link.captures_iter(&line).map(|c| c[1].to_string()).collect::<Vec<_>>()
        })
        .collect()
}

/// Where `target`, linked from the file `from`, leads wrong; `None` when it leads somewhere.
fn broken(from: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (file, anchor) = match target.split_once('#') {
        Some((file, anchor)) => (file, Some(anchor)),
        None => (target, None),
    };
    let path = if file.is_empty() { from.to_path_buf() } else { from.parent().expect("a directory").join(file) };
    if !path.exists() {
        return Some(format!("{target}: no file {}", path.display()));
    }
    let anchor = anchor?;
    let text = std::fs::read_to_string(&path).ok()?;
    (path.extension().is_some_and(|e| e == "md") && !anchors(&text).contains(anchor))
        .then(|| format!("{target}: {} has no heading with the anchor #{anchor}", path.display()))
}

#[test]
fn every_link_in_the_readme_and_docs_leads_to_a_file_and_heading_that_exist() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for file in documents() {
        let text = std::fs::read_to_string(&file).expect("a readable document");
        for target in links(&text) {
            checked += 1;
            if let Some(problem) = broken(&file, &target) {
                problems.push(format!("{}: {problem}", file.strip_prefix(repo()).unwrap_or(&file).display()));
            }
        }
    }
    assert!(checked > 20, "the documents link to each other ({checked} links seen)");
    assert!(problems.is_empty(), "broken links:\n{}", problems.join("\n"));
}

#[test]
fn the_link_checker_sees_a_missing_file_and_a_missing_heading() {
    let readme = repo().join("README.md");
    assert!(broken(&readme, "docs/no-such-file.md").is_some());
    assert!(broken(&readme, "#no-such-heading").is_some());
    assert!(broken(&readme, "#two-commands").is_none(), "{:?}", anchors(&std::fs::read_to_string(&readme).unwrap()));
    assert_eq!(
        anchors("# A `b` (c)\n## A b c\n```\n# not a heading\n```\n"),
        ["a-b-c", "a-b-c-1"].map(String::from).into()
    );
    assert_eq!(links("[x](a.md) `[y](b.md)`\n```\n[z](c.md)\n```\n[w](d.md#e)"), ["a.md", "d.md#e"]);
}

/// The README stays a user's guide: the full references live in docs/.
#[test]
fn the_readme_is_at_most_600_lines() {
    let lines = std::fs::read_to_string(repo().join("README.md")).unwrap().lines().count();
    assert!(lines <= 600, "README.md has {lines} lines; move reference material to docs/");
}

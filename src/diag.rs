//! Diagnostics: errors and warnings about user input, each with a place (file:line:col), the field it concerns,
//! what was expected and a hint. Rendered for a terminal (with source excerpts, via codespan-reporting), as one
//! line each (`file:line:col: error: message`), or serialized as JSON.
//!
//! A [`Diagnostics`] owns the texts its items point into (the blueprint file, each `--set` argument), so rendering
//! needs nothing else. It does not decide what is wrong; the blueprint stage does.

use std::fmt;
use std::ops::Range;
use std::path::Path;

use codespan_reporting::diagnostic::{Diagnostic as Report, Label, Severity as ReportSeverity};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{self, termcolor};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// Index of a source text inside its [`Diagnostics`].
pub type SourceId = usize;

/// A text diagnostics can point into: a file, or a pseudo file such as one `--set` argument.
#[derive(Debug, Clone)]
pub struct Source {
    pub name: String,
    pub text: String,
}

/// Where in a source something is: byte span, and 1-based line and column (in characters) of its start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Position {
    pub span: Range<usize>,
    pub line: usize,
    pub column: usize,
}

/// A second place a diagnostic points at, such as the other one of two overlapping subnets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Related {
    pub message: String,
    pub file: String,
    #[serde(flatten)]
    pub position: Position,
    #[serde(skip)]
    pub source: SourceId,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    pub file: String,
    /// Absent for problems that concern a file as a whole (it cannot be read).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub position: Option<Position>,
    /// The field concerned, such as `node_pools.gpu.requirements[1].values`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// What would have been accepted, such as "an integer from 1 to 100".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<Related>,
    #[serde(skip)]
    pub source: Option<SourceId>,
}

impl fmt::Display for Diagnostic {
    /// The one-line form: `file:line:col: error: message`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let severity = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        match &self.position {
            Some(p) => write!(f, "{}:{}:{}: {severity}: {}", self.file, p.line, p.column, self.message),
            None => write!(f, "{}: {severity}: {}", self.file, self.message),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Diagnostics {
    pub items: Vec<Diagnostic>,
    #[serde(skip)]
    pub sources: Vec<Source>,
}

/// Adds details to the diagnostic just pushed; returned by [`Diagnostics::error`] and [`Diagnostics::warning`].
pub struct Builder<'a> {
    diags: &'a mut Diagnostics,
    item: usize,
}

impl Builder<'_> {
    fn item(&mut self) -> &mut Diagnostic {
        &mut self.diags.items[self.item]
    }

    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.item().path = Some(path.into());
        self
    }

    pub fn expected(mut self, expected: impl Into<String>) -> Self {
        self.item().expected = Some(expected.into());
        self
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.item().hint = Some(hint.into());
        self
    }

    pub fn hint_opt(self, hint: Option<String>) -> Self {
        match hint {
            Some(h) => self.hint(h),
            None => self,
        }
    }

    pub fn related(self, source: SourceId, span: Range<usize>, message: impl Into<String>) -> Self {
        let (file, position) = self.diags.locate(source, span);
        let related = Related { message: message.into(), file, position, source };
        self.diags.items[self.item].related.push(related);
        self
    }
}

impl Diagnostics {
    pub fn new() -> Self {
        Self::default()
    }

    /// A diagnostics holding one error: `path` cannot be read.
    pub fn io(path: &Path, e: &std::io::Error) -> Self {
        let item = Diagnostic {
            severity: Severity::Error,
            message: format!("cannot read {}: {e}", path.display()),
            file: path.display().to_string(),
            position: None,
            path: None,
            expected: None,
            hint: None,
            related: Vec::new(),
            source: None,
        };
        Diagnostics { items: vec![item], sources: Vec::new() }
    }

    pub fn add_source(&mut self, name: impl Into<String>, text: impl Into<String>) -> SourceId {
        self.sources.push(Source { name: name.into(), text: text.into() });
        self.sources.len() - 1
    }

    pub fn source(&self, id: SourceId) -> &Source {
        &self.sources[id]
    }

    pub fn error(&mut self, source: SourceId, span: Range<usize>, message: impl Into<String>) -> Builder<'_> {
        self.push(Severity::Error, source, span, message.into())
    }

    pub fn warning(&mut self, source: SourceId, span: Range<usize>, message: impl Into<String>) -> Builder<'_> {
        self.push(Severity::Warning, source, span, message.into())
    }

    fn push(&mut self, severity: Severity, source: SourceId, span: Range<usize>, message: String) -> Builder<'_> {
        let (file, position) = self.locate(source, span);
        let item = Diagnostic {
            severity,
            message,
            file,
            position: Some(position),
            path: None,
            expected: None,
            hint: None,
            related: Vec::new(),
            source: Some(source),
        };
        self.items.push(item);
        let item = self.items.len() - 1;
        Builder { diags: self, item }
    }

    /// Clamps `span` into the source (on character boundaries) and computes its line and column.
    fn locate(&self, source: SourceId, span: Range<usize>) -> (String, Position) {
        let Some(src) = self.sources.get(source) else {
            return (format!("<source {source}>"), Position { span, line: 1, column: 1 });
        };
        let text = src.text.as_str();
        let floor = |mut i: usize| {
            i = i.min(text.len());
            while !text.is_char_boundary(i) {
                i -= 1;
            }
            i
        };
        let start = floor(span.start);
        let end = floor(span.end).max(start);
        let before = &text[..start];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = text[line_start..start].chars().count() + 1;
        (src.name.clone(), Position { span: start..end, line, column })
    }

    pub fn has_errors(&self) -> bool {
        self.items.iter().any(|d| d.severity == Severity::Error)
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Orders items by source and position, so a reader meets them top to bottom.
    pub fn sort(&mut self) {
        self.items.sort_by_key(|d| (d.source, d.position.as_ref().map(|p| p.span.start), d.severity));
    }

    /// Renders every item for a terminal: `file:line:col`, the source excerpt, what was expected and the hint.
    pub fn render(&self, color: bool) -> String {
        let mut files = SimpleFiles::new();
        for s in &self.sources {
            files.add(s.name.as_str(), s.text.as_str());
        }
        let config = term::Config::default();
        let mut out = Vec::new();
        for d in &self.items {
            let report = self.report(d);
            let written = if color {
                term::emit(&mut termcolor::Ansi::new(&mut out), &config, &files, &report)
            } else {
                term::emit(&mut termcolor::NoColor::new(&mut out), &config, &files, &report)
            };
            // codespan only fails on spans outside their file, which `locate` rules out; keep the item anyway.
            if written.is_err() {
                out.extend_from_slice(format!("{d}\n").as_bytes());
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    fn report(&self, d: &Diagnostic) -> Report<usize> {
        let severity = match d.severity {
            Severity::Error => ReportSeverity::Error,
            Severity::Warning => ReportSeverity::Warning,
        };
        let mut report = Report::new(severity).with_message(&d.message);
        if let (Some(source), Some(p)) = (d.source, &d.position) {
            let label = Label::primary(source, p.span.clone());
            report = report.with_label(match &d.expected {
                Some(e) => label.with_message(format!("expected {e}")),
                None => label,
            });
        }
        for r in &d.related {
            report = report.with_label(Label::secondary(r.source, r.position.span.clone()).with_message(&r.message));
        }
        let mut notes = Vec::new();
        if let Some(path) = &d.path {
            notes.push(format!("field: {path}"));
        }
        if let Some(hint) = &d.hint {
            notes.push(format!("help: {hint}"));
        }
        report.with_notes(notes)
    }
}

impl fmt::Display for Diagnostics {
    /// One line per item.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.items.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Diagnostics {
        let mut d = Diagnostics::new();
        let file = d.add_source("bp.toml", "[cluster]\nname = 7\nregión = \"x\"\n");
        d.error(file, 17..18, "expected a string, found an integer")
            .path("cluster.name")
            .expected("a string")
            .hint("quote it: \"7\"");
        d.warning(file, 29..32, "odd").related(file, 0..9, "table starts here");
        d
    }

    #[test]
    fn one_line_form_has_file_line_col() {
        let d = sample();
        assert_eq!(d.items[0].to_string(), "bp.toml:2:8: error: expected a string, found an integer");
        // Columns count characters, not bytes: `ó` is two bytes.
        assert_eq!(d.items[1].to_string(), "bp.toml:3:10: warning: odd");
        assert_eq!(d.items[1].related[0].position.line, 1);
    }

    #[test]
    fn render_shows_excerpt_expected_and_hint() {
        let out = sample().render(false);
        assert!(out.contains("bp.toml:2:8"), "{out}");
        assert!(out.contains("name = 7"), "{out}");
        assert!(out.contains("expected a string"), "{out}");
        assert!(out.contains("help: quote it"), "{out}");
        assert!(out.contains("field: cluster.name"), "{out}");
        assert!(sample().render(true).contains("\u{1b}["));
    }

    #[test]
    fn spans_outside_the_text_are_clamped() {
        let mut d = Diagnostics::new();
        let s = d.add_source("x", "ab");
        d.error(s, 5..9, "past the end");
        assert_eq!(d.items[0].position.as_ref().map(|p| p.span.clone()), Some(2..2));
        assert!(d.render(false).contains("past the end"));
    }

    #[test]
    fn json_has_position_and_omits_empty_fields() {
        let json = serde_json::to_value(sample()).expect("serializable");
        let first = &json["items"][0];
        assert_eq!(first["line"], 2);
        assert_eq!(first["column"], 8);
        assert_eq!(first["span"]["start"], 17);
        assert_eq!(first["severity"], "error");
        assert!(first.get("related").is_none());
        assert!(json.get("sources").is_none());
    }

    #[test]
    fn io_error_has_no_position() {
        let e = std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let d = Diagnostics::io(Path::new("a.toml"), &e);
        assert_eq!(d.to_string(), "a.toml: error: cannot read a.toml: gone");
        assert!(d.render(false).contains("cannot read"));
    }
}

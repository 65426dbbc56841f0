//! Diagnostics: errors and warnings about user input, each with a place (file:line:col), the field it concerns,
//! what was expected and a hint. Rendered for a terminal (with source excerpts, via codespan-reporting; see
//! `render`), as one line each (`file:line:col: error: message`), or serialized as JSON.
//!
//! A [`Diagnostics`] owns the texts its items point into (the blueprint file, each `--set` argument), so rendering
//! needs nothing else. It does not decide what is wrong; the blueprint stage does.
//!
//! Its cost is linear in what it holds: places are found through a line index built once per text, it keeps at
//! most [`KEPT`] items of each severity (counting the rest), and a terminal is shown at most [`SHOWN`].

mod excerpt;
mod lines;
mod render;

use std::fmt;
use std::ops::Range;
use std::path::Path;

use serde::Serialize;

use lines::LineIndex;

/// How many diagnostics text output shows, errors first; a last line counts the others.
pub const SHOWN: usize = 50;

/// How many errors, and how many warnings, a [`Diagnostics`] keeps; further ones are only counted. Two bytes of
/// blueprint (`1,` in an array of strings) can make a diagnostic of a few hundred bytes, so keeping every one of
/// them would let a 1 MiB blueprint take hundreds of MB; no one reads past the first thousands anyway.
pub const KEPT: usize = 10_000;

/// How bad a diagnostic is: errors stop the command, warnings are shown and let it go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The input cannot be used as it is; the command fails.
    Error,
    /// Probably not what the user meant, or something that will fail later in AWS or Karpenter; the command goes on.
    Warning,
}

/// Index of a source text inside its [`Diagnostics`].
pub type SourceId = usize;

/// A text diagnostics can point into: a file, or a pseudo file such as one `--set` argument.
#[derive(Debug, Clone)]
pub struct Source {
    /// What messages call the source: the blueprint's path, or `--set <argument>`.
    pub name: String,
    /// The whole text, as read.
    pub text: String,
    lines: LineIndex,
}

/// Where in a source something is: byte span, and 1-based line and column (in characters) of its start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Position {
    /// Byte range in the source text, end exclusive.
    pub span: Range<usize>,
    /// 1-based line of the span's start.
    pub line: usize,
    /// 1-based column of the span's start, in characters.
    pub column: usize,
}

/// A second place a diagnostic points at, such as the other one of two overlapping subnets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Related {
    /// What this place has to do with the diagnostic.
    pub message: String,
    /// Name of the source the place is in.
    pub file: String,
    /// Where in that source.
    #[serde(flatten)]
    pub position: Position,
    /// Which of the [`Diagnostics`]' sources the place is in, for rendering excerpts.
    #[serde(skip)]
    pub source: SourceId,
}

/// One error or warning about user input, at a place in a source (or about a file as a whole).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong, in one sentence.
    pub message: String,
    /// Name of the source it concerns (a file path, or `--set <argument>`).
    pub file: String,
    /// Absent for problems that concern a file as a whole (it cannot be read, it is too large).
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
    /// Other places that bear on the problem, shown with their own excerpts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<Related>,
    /// The source the position is in; `None` for a problem about a file as a whole.
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

/// The diagnostics of one run, with the source texts they point into.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Diagnostics {
    /// The diagnostics kept ([`Self::items`]). Private, so that only [`Self::error`] and [`Self::warning`] add
    /// to them and the cap of [`KEPT`] holds.
    items: Vec<Diagnostic>,
    /// The texts the items point into, indexed by [`SourceId`] ([`Self::source`]).
    #[serde(skip)]
    sources: Vec<Source>,
    /// Errors and warnings kept by [`Diagnostics::error`] and [`Diagnostics::warning`], and those only counted.
    #[serde(skip)]
    kept: [usize; 2],
    #[serde(skip)]
    dropped: [usize; 2],
}

/// How many errors and warnings there are in all, and how many of them are in `items`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Errors in all, kept and only counted.
    pub errors: usize,
    /// Warnings in all, kept and only counted.
    pub warnings: usize,
    /// How many of them `items` holds (fewer than `errors + warnings` past [`KEPT`]).
    pub listed: usize,
}

/// Adds details to the diagnostic just pushed; returned by [`Diagnostics::error`] and [`Diagnostics::warning`].
/// Past [`KEPT`] the diagnostic was only counted, and the details go nowhere.
pub struct Builder<'a> {
    diags: &'a mut Diagnostics,
    item: Option<usize>,
}

impl Builder<'_> {
    fn set(self, f: impl FnOnce(&mut Diagnostic)) -> Self {
        if let Some(i) = self.item {
            f(&mut self.diags.items[i]);
        }
        self
    }

    /// The dotted field the diagnostic concerns, such as `node_pools.gpu.limits.cpu`.
    pub fn path(self, path: impl Into<String>) -> Self {
        self.set(|d| d.path = Some(path.into()))
    }

    /// What would have been accepted, such as "an integer from 1 to 100".
    pub fn expected(self, expected: impl Into<String>) -> Self {
        self.set(|d| d.expected = Some(expected.into()))
    }

    /// What the user should do about it.
    pub fn hint(self, hint: impl Into<String>) -> Self {
        self.set(|d| d.hint = Some(hint.into()))
    }

    /// As [`Self::hint`], when there is a hint.
    pub fn hint_opt(self, hint: Option<String>) -> Self {
        match hint {
            Some(h) => self.hint(h),
            None => self,
        }
    }

    /// Points at a second place in source `source`, such as the other of two overlapping CIDRs.
    pub fn related(self, source: SourceId, span: Range<usize>, message: impl Into<String>) -> Self {
        if self.item.is_none() {
            return self;
        }
        let (file, position) = self.diags.locate(source, span);
        let related = Related { message: message.into(), file, position, source };
        self.set(|d| d.related.push(related))
    }
}

fn slot(severity: Severity) -> usize {
    match severity {
        Severity::Error => 0,
        Severity::Warning => 1,
    }
}

impl Diagnostics {
    /// No diagnostics and no sources.
    pub fn new() -> Self {
        Self::default()
    }

    /// A diagnostics holding one error about the file `file` as a whole.
    pub fn whole_file(file: impl Into<String>, message: impl Into<String>, hint: Option<String>) -> Self {
        let item = Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            file: file.into(),
            position: None,
            path: None,
            expected: None,
            hint,
            related: Vec::new(),
            source: None,
        };
        Diagnostics { items: vec![item], kept: [1, 0], ..Default::default() }
    }

    /// A diagnostics holding one error: `path` cannot be read.
    pub fn io(path: &Path, e: &std::io::Error) -> Self {
        Self::whole_file(path.display().to_string(), format!("cannot read {}: {e}", path.display()), None)
    }

    /// Registers a text diagnostics may point into; returns its ID for [`Self::error`] and [`Self::warning`].
    pub fn add_source(&mut self, name: impl Into<String>, text: impl Into<String>) -> SourceId {
        let text = text.into();
        let lines = LineIndex::new(&text);
        self.sources.push(Source { name: name.into(), text, lines });
        self.sources.len() - 1
    }

    /// The diagnostics kept, at most [`KEPT`] of each severity, in the order they were found until [`Self::sort`].
    pub fn items(&self) -> &[Diagnostic] {
        &self.items
    }

    /// The diagnostics kept, to change what they say (a hint for all): a slice, so none is added past the cap.
    pub fn items_mut(&mut self) -> &mut [Diagnostic] {
        &mut self.items
    }

    /// The source registered as `id`; panics on an ID this value did not hand out.
    pub fn source(&self, id: SourceId) -> &Source {
        &self.sources[id]
    }

    /// Adds an error at `span` of `source`; chain the returned builder to add the field, a hint and so on.
    pub fn error(&mut self, source: SourceId, span: Range<usize>, message: impl Into<String>) -> Builder<'_> {
        self.push(Severity::Error, source, span, message.into())
    }

    /// Adds a warning at `span` of `source`; chain the returned builder to add the field, a hint and so on.
    pub fn warning(&mut self, source: SourceId, span: Range<usize>, message: impl Into<String>) -> Builder<'_> {
        self.push(Severity::Warning, source, span, message.into())
    }

    fn push(&mut self, severity: Severity, source: SourceId, span: Range<usize>, message: String) -> Builder<'_> {
        if self.kept[slot(severity)] == KEPT {
            self.dropped[slot(severity)] += 1;
            return Builder { diags: self, item: None };
        }
        self.kept[slot(severity)] += 1;
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
        let item = Some(self.items.len() - 1);
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
        let (line, column) = src.lines.line_column(text, start);
        (src.name.clone(), Position { span: start..end, line, column })
    }

    /// Whether there is at least one error, kept or only counted.
    pub fn has_errors(&self) -> bool {
        self.counts().errors > 0
    }

    /// Whether there is nothing to report (kept or only counted).
    pub fn is_empty(&self) -> bool {
        self.items.is_empty() && self.dropped == [0, 0]
    }

    /// How many errors and warnings there are in all, and how many are listed in `items`.
    pub fn counts(&self) -> Counts {
        let errors = self.items.iter().filter(|d| d.severity == Severity::Error).count();
        Counts {
            errors: errors + self.dropped[0],
            warnings: self.items.len() - errors + self.dropped[1],
            listed: self.items.len(),
        }
    }

    /// Orders items by source and position, so a reader meets them top to bottom.
    pub fn sort(&mut self) {
        self.items.sort_by_key(|d| (d.source, d.position.as_ref().map(|p| p.span.start), d.severity));
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

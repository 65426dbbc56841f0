//! Diagnostics for a terminal: each with its source excerpt (drawn by codespan-reporting from an [`Excerpts`]),
//! what was expected and the hint; at most [`SHOWN`] of them, errors first, then a line counting the rest. Text
//! from the blueprint (keys, values) is printed with its control characters made visible, so that a blueprint
//! cannot send escape sequences to the terminal.

use codespan_reporting::diagnostic::{Diagnostic as Report, Label, Severity as ReportSeverity};
use codespan_reporting::term::{self, termcolor};

use super::excerpt::{Excerpts, Wanted};
use super::{Diagnostic, Diagnostics, Severity, SHOWN};

impl Diagnostics {
    /// Renders at most [`SHOWN`] items for a terminal: `file:line:col`, the source excerpt, what was expected and
    /// the hint, then how many more there are.
    pub fn render(&self, color: bool) -> String {
        self.render_at_most(SHOWN, color)
    }

    /// As [`Diagnostics::render`], showing at most `limit` items.
    pub fn render_at_most(&self, limit: usize, color: bool) -> String {
        let shown = self.pick(limit);
        let config = term::Config::default();
        let mut out = Vec::new();
        for d in shown.iter().map(|i| &self.items[*i]) {
            let (files, report) = self.report(d);
            let written = if color {
                term::emit(&mut termcolor::Ansi::new(&mut out), &config, &files, &report)
            } else {
                term::emit(&mut termcolor::NoColor::new(&mut out), &config, &files, &report)
            };
            // codespan only fails on spans outside their file, which `locate` and `Excerpts` rule out; keep the
            // item anyway.
            if written.is_err() {
                out.extend_from_slice(format!("{}\n", visible(&d.to_string())).as_bytes());
            }
        }
        let counts = self.counts();
        let errors = shown.iter().filter(|i| self.items[**i].severity == Severity::Error).count();
        let more = (counts.errors - errors, counts.warnings - (shown.len() - errors));
        out.extend_from_slice(more_line(more).as_bytes());
        String::from_utf8_lossy(&out).into_owned()
    }

    /// The items to show, in document order: the first `limit` errors (they are what stops the command), then
    /// warnings while there is room.
    fn pick(&self, limit: usize) -> Vec<usize> {
        let of = |severity: Severity| self.items.iter().enumerate().filter(move |(_, d)| d.severity == severity);
        let mut shown: Vec<usize> =
            of(Severity::Error).chain(of(Severity::Warning)).map(|(i, _)| i).take(limit).collect();
        shown.sort_unstable();
        shown
    }

    /// The codespan report of `d` and the excerpts it is drawn from.
    fn report(&self, d: &Diagnostic) -> (Excerpts<'_>, Report<usize>) {
        let severity = match d.severity {
            Severity::Error => ReportSeverity::Error,
            Severity::Warning => ReportSeverity::Warning,
        };
        let primary = d.source.zip(d.position.as_ref());
        let wanted: Vec<Wanted> = primary
            .map(|(source, p)| Wanted { source, span: p.span.clone() })
            .into_iter()
            .chain(d.related.iter().map(|r| Wanted { source: r.source, span: r.position.span.clone() }))
            .collect();
        let (files, ranges) = Excerpts::new(&self.sources, &wanted);
        let mut ranges = ranges.into_iter();
        let mut report = Report::new(severity).with_message(visible(&d.message));
        let mut notes = Vec::new();
        if let Some((source, p)) = primary {
            match ranges.next().flatten() {
                Some(range) => {
                    let label = Label::primary(source, range);
                    report = report.with_label(match &d.expected {
                        Some(e) => label.with_message(visible(&format!("expected {e}"))),
                        None => label,
                    });
                }
                None => notes.push(format!("at {}:{}:{}", d.file, p.line, p.column)),
            }
        }
        for (r, range) in d.related.iter().zip(ranges) {
            match range {
                Some(range) => {
                    report = report.with_label(Label::secondary(r.source, range).with_message(visible(&r.message)))
                }
                None => {
                    notes.push(format!("{}: {}:{}:{}", visible(&r.message), r.file, r.position.line, r.position.column))
                }
            }
        }
        if let Some(path) = &d.path {
            notes.push(format!("field: {}", visible(path)));
        }
        if let Some(hint) = &d.hint {
            notes.push(format!("help: {}", visible(hint)));
        }
        (files, report.with_notes(notes))
    }
}

/// The line after the shown items, counting the ones not shown; empty when all were shown.
fn more_line((errors, warnings): (usize, usize)) -> String {
    let count = |n: usize, what: &str| format!("{n} more {what}{}", if n == 1 { "" } else { "s" });
    let what = match (errors, warnings) {
        (0, 0) => return String::new(),
        (e, 0) => count(e, "error"),
        (0, w) => count(w, "warning"),
        (e, w) => format!("{} and {}", count(e, "error"), count(w, "warning")),
    };
    let advice = if errors > 0 { "fix these first, or run" } else { "run" };
    format!("… and {what}, not shown: {advice} `kbp validate --json` to list them\n")
}

/// Longer texts (messages quoting a huge value) are shortened in the middle for a terminal; JSON has them whole.
const LONG_TEXT: usize = 480;

/// `text` as a terminal should get it: control characters other than line breaks and tabs escaped (`\u{1b}`),
/// and the middle of a text longer than [`LONG_TEXT`] bytes left out.
fn visible(text: &str) -> String {
    let text = if text.len() > LONG_TEXT {
        let head = floor(text, LONG_TEXT / 2);
        let tail = ceil(text, text.len() - LONG_TEXT / 4);
        format!("{}…{}", &text[..head], &text[tail..])
    } else {
        text.to_string()
    };
    if !text.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return text;
    }
    text.chars()
        .map(|c| if c.is_control() && c != '\n' && c != '\t' { c.escape_default().to_string() } else { c.to_string() })
        .collect()
}

fn floor(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::KEPT;

    #[test]
    fn at_most_shown_items_errors_first_then_a_count_of_the_rest() {
        let mut d = Diagnostics::new();
        let text = "x\n".repeat(200);
        let s = d.add_source("t", text.as_str());
        for i in 0..60 {
            d.warning(s, 2 * i..2 * i + 1, format!("w{i}"));
        }
        for i in 60..120 {
            d.error(s, 2 * i..2 * i + 1, format!("e{i}"));
        }
        let out = d.render(false);
        assert_eq!(out.matches("\nerror: ").count() + usize::from(out.starts_with("error: ")), SHOWN, "{out}");
        assert!(!out.contains("warning: "), "{out}");
        assert!(out.ends_with("… and 10 more errors and 60 more warnings, not shown: fix these first, or run `kbp validate --json` to list them\n"), "{out}");
        let few = d.render_at_most(70, false);
        assert_eq!(few.matches("warning: ").count(), 10, "{few}");
        // Shown in document order: the first warning shown comes before the first error.
        assert!(few.find("w0").expect("w0 shown") < few.find("e60").expect("e60 shown"));
        assert!(few.ends_with("… and 50 more warnings, not shown: run `kbp validate --json` to list them\n"));
    }

    #[test]
    fn past_kept_items_are_counted_not_kept() {
        let mut d = Diagnostics::new();
        let s = d.add_source("t", "x");
        for _ in 0..KEPT + 5 {
            d.error(s, 0..1, "e").path("p").hint("h");
        }
        d.warning(s, 0..1, "w");
        let c = d.counts();
        assert_eq!((c.errors, c.warnings, c.listed), (KEPT + 5, 1, KEPT + 1));
        assert!(d.has_errors());
    }

    #[test]
    fn a_long_line_is_cut_around_the_label() {
        let mut d = Diagnostics::new();
        let text = format!("values = [{}\"bad\", {}]\n", "1, ".repeat(50_000), "2, ".repeat(50_000));
        let at = text.find("\"bad\"").expect("present");
        let s = d.add_source("t", text.as_str());
        d.error(s, at..at + 5, "this one").expected("an integer");
        let out = d.render(false);
        assert!(out.len() < 1000, "{} bytes:\n{out}", out.len());
        assert!(out.contains(&format!("t:1:{}", at + 1)), "{out}");
        let excerpt = out.lines().find(|l| l.contains("\"bad\"")).expect("the line is shown");
        assert!(excerpt.starts_with("1 │ …") && excerpt.ends_with('…'), "{out}");
        assert!(out.contains("^^^^^ expected an integer"), "{out}");
    }

    #[test]
    fn a_label_over_many_lines_keeps_its_first_line_and_a_far_related_one_becomes_a_note() {
        let mut d = Diagnostics::new();
        let text = format!("[t]\n{}end = 1\n{}\n", "a = 1\n".repeat(10_000), "x".repeat(5000));
        let s = d.add_source("t", text.as_str());
        let far = text.len() - 100;
        d.error(s, 0..text.len() - 5001, "a whole table").related(s, far..far + 1, "far along").related(
            s,
            far - 2000..far - 1999,
            "too far from the first",
        );
        let out = d.render(false);
        assert!(out.lines().count() < 20, "{out}");
        assert!(out.contains("t:1:1"), "{out}");
        assert!(out.contains("far along"), "{out}");
        assert!(out.contains("t:10003:4902") || out.contains("10003 │"), "{out}");
        assert!(out.contains("too far from the first: t:10003:2902"), "{out}");
    }

    #[test]
    fn control_characters_reach_the_terminal_escaped() {
        let mut d = Diagnostics::new();
        let s = d.add_source("t", "\"\u{1b}[2J\" = 1\n");
        d.error(s, 0..7, "unknown field `\u{1b}[2J`").hint("\u{7}");
        let out = d.render(false);
        assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "{out:?}");
        assert!(out.contains("unknown field `\\u{1b}[2J`"), "{out}");
    }

    #[test]
    fn a_long_message_is_shortened_in_the_middle() {
        let mut d = Diagnostics::new();
        let s = d.add_source("t", "x");
        d.error(s, 0..1, format!("`{}` is not a name", "é".repeat(100_000)));
        let out = d.render(false);
        assert!(out.len() < 2000 && out.contains("é…é") && out.contains("` is not a name"), "{out}");
        assert!(d.items[0].message.len() > 100_000, "the message itself is whole");
    }
}

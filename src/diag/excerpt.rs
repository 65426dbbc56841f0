//! The source excerpt of one diagnostic, cut to a size a terminal can show. codespan-reporting prints every line
//! a label touches, in full, and walks every line of a multi-line label; a label over a long table, or any label
//! on a line of a megabyte (inline tables make one-line blueprints), would cost and print all of it, once per
//! diagnostic. So a label keeps at most [`MAX_LABEL_LINES`] lines, and a long line is cut to a window around its
//! labels, marked `…`. codespan still does the drawing; this is the `Files` it draws from: only the lines one
//! diagnostic needs, under their real line numbers and columns.

use std::collections::BTreeMap;
use std::ops::Range;

use codespan_reporting::files::{Error, Files};

use super::{Source, SourceId};

/// A label over more lines is cut to its first line.
const MAX_LABEL_LINES: usize = 8;
/// Lines up to this many bytes are shown whole.
const LONG_LINE: usize = 160;
/// On a longer line, the bytes kept before the first and after the last labelled byte.
const CONTEXT: usize = 40;
/// A label longer than this on one line is cut to it.
const LONG_LABEL: usize = 80;
/// Labelled bytes of one line must lie within this distance; a secondary label that would stretch the window
/// further is left out (the caller names its place in a note instead).
const MAX_SPREAD: usize = 2 * LONG_LABEL;
const ELLIPSIS: &str = "…";

/// A place a label wants to show: a span of a source, already on character boundaries.
pub(super) struct Wanted {
    pub source: SourceId,
    pub span: Range<usize>,
}

/// The excerpts of one diagnostic, one per source it points into.
pub(super) struct Excerpts<'a> {
    files: Vec<File<'a>>,
}

struct File<'a> {
    id: SourceId,
    source: &'a Source,
    text: String,
    lines: Vec<Line>,
}

/// One line of an excerpt: `range` in the excerpt text (with its `…` marks), showing the real bytes `window`
/// of the real line `real`, from excerpt offset `at`.
struct Line {
    real: usize,
    range: Range<usize>,
    window: Range<usize>,
    at: usize,
}

/// A label cut to size: real bytes and lines.
struct Cut {
    source: SourceId,
    span: Range<usize>,
    lines: Range<usize>,
}

impl<'a> Excerpts<'a> {
    /// Builds the excerpts for `wanted` (the primary label first) and returns, for each label, its range in the
    /// excerpt, or None when it is left out (its source is unknown, or it lies too far along a long line from
    /// the labels before it).
    pub(super) fn new(sources: &'a [Source], wanted: &[Wanted]) -> (Excerpts<'a>, Vec<Option<Range<usize>>>) {
        // (source, line) → the labelled bytes of that line, lowest and highest.
        let mut needs: BTreeMap<(SourceId, usize), (usize, usize)> = BTreeMap::new();
        let mut cuts = Vec::new();
        for w in wanted {
            let cut = sources.get(w.source).map(|s| cut(s, w));
            let fits = cut.as_ref().is_some_and(|c| {
                let points = points(&sources[c.source], c);
                let widened: Vec<_> = points
                    .iter()
                    .map(|(line, lo, hi)| {
                        let (a, b) = needs.get(&(c.source, *line)).copied().unwrap_or((*lo, *hi));
                        ((c.source, *line), (a.min(*lo), b.max(*hi)))
                    })
                    .collect();
                let ok = widened.iter().all(|(_, (lo, hi))| hi - lo <= MAX_SPREAD);
                if ok {
                    needs.extend(widened);
                }
                ok
            });
            cuts.push(cut.filter(|_| fits));
        }
        // codespan prints a single unlabelled line between two shown ones rather than a break; it must exist.
        let keys: Vec<_> = needs.keys().copied().collect();
        for pair in keys.windows(2) {
            let ((s, a), (t, b)) = (pair[0], pair[1]);
            if s == t && b == a + 2 {
                if let Some(r) = sources[s].lines.line_range(&sources[s].text, a + 1) {
                    needs.insert((s, a + 1), (r.start, r.start));
                }
            }
        }
        let mut files: Vec<File<'a>> = Vec::new();
        for ((id, real), (lo, hi)) in needs {
            if files.last().is_none_or(|f| f.id != id) {
                files.push(File { id, source: &sources[id], text: String::new(), lines: Vec::new() });
            }
            if let Some(file) = files.last_mut() {
                file.push_line(real, lo, hi);
            }
        }
        let excerpts = Excerpts { files };
        let ranges = cuts
            .into_iter()
            .map(|c| {
                let c = c?;
                let file = excerpts.file(c.source).ok()?;
                Some(file.to_excerpt(c.lines.start, c.span.start)?..file.to_excerpt(c.lines.end, c.span.end)?)
            })
            .collect();
        (excerpts, ranges)
    }

    fn file(&self, id: SourceId) -> Result<&File<'a>, Error> {
        self.files.iter().find(|f| f.id == id).ok_or(Error::FileMissing)
    }
}

/// The label's span, at most [`MAX_LABEL_LINES`] lines, and at most [`LONG_LABEL`] bytes when on one line.
fn cut(source: &Source, w: &Wanted) -> Cut {
    let (text, index) = (source.text.as_str(), &source.lines);
    let (mut start, mut end) = (w.span.start, w.span.end);
    let first = index.line(start);
    let mut last = index.line(end);
    let first_range = index.line_range(text, first).unwrap_or(0..0);
    if last - first >= MAX_LABEL_LINES {
        (end, last) = (first_range.end, first);
    }
    // A span may begin or end on the line break itself, which no window shows.
    start = start.min(first_range.end);
    if last == first {
        end = end.clamp(start, first_range.end);
        if end - start > LONG_LABEL {
            end = floor(text, start + LONG_LABEL);
        }
    } else {
        end = end.min(index.line_range(text, last).map_or(end, |r| r.end));
    }
    Cut { source: w.source, span: start..end, lines: first..last }
}

/// For every line of a cut label, the labelled bytes codespan draws on it: the span on a single line; the start
/// and the end on the first and last lines of a longer one, and nothing in particular in between.
fn points(source: &Source, c: &Cut) -> Vec<(usize, usize, usize)> {
    if c.lines.start == c.lines.end {
        return vec![(c.lines.start, c.span.start, c.span.end)];
    }
    let mut out = vec![(c.lines.start, c.span.start, c.span.start)];
    for line in c.lines.start + 1..c.lines.end {
        let begin = source.lines.line_range(&source.text, line).map_or(0, |r| r.start);
        out.push((line, begin, begin));
    }
    out.push((c.lines.end, c.span.end, c.span.end));
    out
}

/// `at`, or the closest character boundary before it.
fn floor(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

impl File<'_> {
    /// Adds real line `real`, whole when short, else the window around bytes `lo..hi`.
    fn push_line(&mut self, real: usize, lo: usize, hi: usize) {
        let text = self.source.text.as_str();
        let whole = self.source.lines.line_range(text, real).unwrap_or(text.len()..text.len());
        let window = if whole.len() <= LONG_LINE {
            whole.clone()
        } else {
            floor(text, lo.saturating_sub(CONTEXT).max(whole.start))..floor(text, (hi + CONTEXT).min(whole.end))
        };
        let begin = self.text.len();
        if window.start > whole.start {
            self.text.push_str(ELLIPSIS);
        }
        let at = self.text.len();
        // Control characters (an escape sequence in a key) would act on the terminal; `?` keeps byte offsets.
        for c in text[window.clone()].chars() {
            if c.is_control() && c != '\t' {
                self.text.extend(std::iter::repeat_n('?', c.len_utf8()));
            } else {
                self.text.push(c);
            }
        }
        if window.end < whole.end {
            self.text.push_str(ELLIPSIS);
        }
        self.lines.push(Line { real, range: begin..self.text.len(), window, at });
        self.text.push('\n');
    }

    fn line(&self, real: usize) -> Result<&Line, Error> {
        let i = self.lines.partition_point(|l| l.real < real);
        self.lines
            .get(i)
            .filter(|l| l.real == real)
            .ok_or(Error::LineTooLarge { given: real, max: self.lines.last().map_or(0, |l| l.real) })
    }

    /// Where real byte `at` of real line `real` is in the excerpt.
    fn to_excerpt(&self, real: usize, at: usize) -> Option<usize> {
        let line = self.line(real).ok()?;
        Some(line.at + at.clamp(line.window.start, line.window.end) - line.window.start)
    }
}

impl<'a> Files<'a> for Excerpts<'a> {
    type FileId = SourceId;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: SourceId) -> Result<&'a str, Error> {
        Ok(self.file(id)?.source.name.as_str())
    }

    fn source(&'a self, id: SourceId) -> Result<&'a str, Error> {
        Ok(self.file(id)?.text.as_str())
    }

    fn line_index(&'a self, id: SourceId, byte_index: usize) -> Result<usize, Error> {
        let file = self.file(id)?;
        let i = file.lines.partition_point(|l| l.range.start <= byte_index).saturating_sub(1);
        file.lines.get(i).map(|l| l.real).ok_or(Error::IndexTooLarge { given: byte_index, max: file.text.len() })
    }

    fn line_range(&'a self, id: SourceId, line_index: usize) -> Result<Range<usize>, Error> {
        Ok(self.file(id)?.line(line_index)?.range.clone())
    }

    /// The column in the real line, not in the excerpt.
    fn column_number(&'a self, id: SourceId, line_index: usize, byte_index: usize) -> Result<usize, Error> {
        let file = self.file(id)?;
        let line = file.line(line_index)?;
        let real = line.window.start + byte_index.saturating_sub(line.at).min(line.window.len());
        Ok(file.source.lines.line_column(&file.source.text, real).1)
    }
}

//! Line and column lookup in one source text, built once per text so that placing a diagnostic costs a binary
//! search rather than a scan from the start of the file (which made many diagnostics quadratic).
//!
//! Columns count characters. Counting them from the start of a line would again be a scan, as long as the
//! line (a blueprint of inline tables can be one line of a megabyte), so the index also keeps the number of
//! characters before every [`MARK`]-th byte.

/// Bytes between two character-count marks: counting the characters of a line costs at most this much.
const MARK: usize = 256;

#[derive(Debug, Clone, Default)]
pub(crate) struct LineIndex {
    /// Byte offset of the start of every line; the text after a final newline is an (empty) line too.
    starts: Vec<usize>,
    /// `chars_at[i]`: the number of characters in the first `i * MARK` bytes.
    chars_at: Vec<usize>,
}

/// Whether `b` starts a character (is not a UTF-8 continuation byte).
fn starts_char(b: u8) -> bool {
    b & 0xC0 != 0x80
}

impl LineIndex {
    pub(crate) fn new(text: &str) -> LineIndex {
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        starts.extend(bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i + 1));
        let mut chars_at = Vec::with_capacity(bytes.len() / MARK + 1);
        let mut count = 0;
        for chunk in bytes.chunks(MARK) {
            chars_at.push(count);
            count += chunk.iter().filter(|b| starts_char(**b)).count();
        }
        chars_at.push(count);
        LineIndex { starts, chars_at }
    }

    /// The 0-based line that holds byte `at` (the last line for offsets past the end).
    pub(crate) fn line(&self, at: usize) -> usize {
        self.starts.partition_point(|s| *s <= at).saturating_sub(1)
    }

    /// The byte range of line `line` without its line break (`\n` or `\r\n`); None past the last line.
    pub(crate) fn line_range(&self, text: &str, line: usize) -> Option<std::ops::Range<usize>> {
        let start = *self.starts.get(line)?;
        let mut end = self.starts.get(line + 1).map_or(text.len(), |next| next - 1);
        if text.as_bytes()[start..end].ends_with(b"\r") {
            end -= 1;
        }
        Some(start..end)
    }

    /// The number of characters in `text[..at]`; `at` must be a character boundary.
    fn chars_before(&self, text: &str, at: usize) -> usize {
        let mark = at / MARK;
        let counted = self.chars_at.get(mark).copied().unwrap_or(0);
        counted + text.as_bytes()[mark * MARK..at].iter().filter(|b| starts_char(**b)).count()
    }

    /// 1-based line and column (in characters) of byte `at`, a character boundary of `text`.
    pub(crate) fn line_column(&self, text: &str, at: usize) -> (usize, usize) {
        let line = self.line(at);
        let column = self.chars_before(text, at) - self.chars_before(text, self.starts[line]) + 1;
        (line + 1, column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The obvious scan, to compare against.
    fn scan(text: &str, at: usize) -> (usize, usize) {
        let before = &text[..at];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        (before.matches('\n').count() + 1, text[line_start..at].chars().count() + 1)
    }

    #[test]
    fn agrees_with_a_scan_at_every_boundary() {
        let long = "é".repeat(3 * MARK);
        for text in ["", "\n", "a\nbc\n\ndé€\r\nx", long.as_str(), &format!("ab\n{long}\nz\n{long}")] {
            let index = LineIndex::new(text);
            for at in (0..=text.len()).filter(|i| text.is_char_boundary(*i)) {
                assert_eq!(index.line_column(text, at), scan(text, at), "{at} in {text:?}");
            }
        }
    }

    #[test]
    fn line_ranges_exclude_the_line_break() {
        let text = "ab\r\ncd\n\nlast";
        let index = LineIndex::new(text);
        let lines: Vec<&str> = (0..4).map(|l| &text[index.line_range(text, l).expect("a line")]).collect();
        assert_eq!(lines, ["ab", "cd", "", "last"]);
        assert_eq!(index.line_range(text, 4), None);
        assert_eq!(index.line(text.len() + 5), 3);
    }
}

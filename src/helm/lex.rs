//! Go `text/template`'s lexer: text and `{{ … }}` actions, with `{{- ` and ` -}}` trimming the whitespace beside
//! them and `{{/* … */}}` comments dropped. Inside an action, spaces are tokens: they separate arguments
//! (`.a .b` is two, `.a.b` one).

use super::TemplateError;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Text(String),
    Open,
    Close,
    Space,
    Ident(String),
    /// One `.name` segment of a field chain.
    Field(String),
    Dot,
    Variable(String),
    Str(String),
    Char(char),
    Number(String),
    Bool(bool),
    Nil,
    Pipe,
    LParen,
    RParen,
    Declare,
    Assign,
    Comma,
}

#[derive(Debug, Clone)]
pub(super) struct Token {
    pub tok: Tok,
    pub line: usize,
    pub col: usize,
}

pub(super) fn lex(name: &str, text: &str) -> Result<Vec<Token>, TemplateError> {
    Lexer { name, src: text.as_bytes(), text, pos: 0, out: Vec::new() }.run()
}

struct Lexer<'a> {
    name: &'a str,
    src: &'a [u8],
    text: &'a str,
    pos: usize,
    out: Vec<Token>,
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

impl Lexer<'_> {
    fn at(&self, pos: usize) -> (usize, usize) {
        let before = &self.text[..pos.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let col = before.rfind('\n').map(|i| pos - i).unwrap_or(pos + 1);
        (line, col)
    }

    fn push(&mut self, tok: Tok, pos: usize) {
        let (line, col) = self.at(pos);
        self.out.push(Token { tok, line, col });
    }

    fn error(&self, pos: usize, message: impl Into<String>) -> TemplateError {
        let (line, col) = self.at(pos);
        TemplateError::at(self.name, line, col, message)
    }

    fn run(mut self) -> Result<Vec<Token>, TemplateError> {
        let mut trim_next = false;
        while self.pos < self.src.len() {
            let start = self.pos;
            let open = self.text[start..].find("{{").map(|i| start + i);
            let end = open.unwrap_or(self.src.len());
            let mut text = &self.text[start..end];
            if trim_next {
                text = text.trim_start_matches(|c: char| c.is_ascii() && is_space(c as u8));
            }
            let Some(open) = open else {
                if !text.is_empty() {
                    self.push(Tok::Text(text.to_string()), start);
                }
                break;
            };
            // `{{- ` trims the text before it; the dash must be followed by a space (`{{-3}}` is minus three).
            let trims_left =
                self.src.get(open + 2) == Some(&b'-') && self.src.get(open + 3).is_some_and(|b| is_space(*b));
            if trims_left {
                text = text.trim_end_matches(|c: char| c.is_ascii() && is_space(c as u8));
            }
            if !text.is_empty() {
                self.push(Tok::Text(text.to_string()), start);
            }
            self.pos = open + if trims_left { 3 } else { 2 };
            trim_next = self.action(open)?;
        }
        Ok(self.out)
    }

    /// After `{{`: the action's tokens up to `}}`. Returns whether it ended with ` -}}`.
    fn action(&mut self, open: usize) -> Result<bool, TemplateError> {
        // A comment: `{{/*` … `*/}}`, with optional trim markers.
        let rest = &self.text[self.pos..];
        let after_space = rest.trim_start_matches(|c: char| c.is_ascii() && is_space(c as u8));
        if after_space.starts_with("/*") {
            let skipped = rest.len() - after_space.len();
            let Some(close) = after_space.find("*/") else {
                return Err(self.error(open, "unclosed comment"));
            };
            self.pos += skipped + close + 2;
            let tail = &self.text[self.pos..];
            if tail.starts_with("}}") {
                self.pos += 2;
                return Ok(false);
            }
            if tail.starts_with(" -}}") || tail.starts_with("\t-}}") || tail.starts_with("\n-}}") {
                self.pos += 4;
                return Ok(true);
            }
            return Err(self.error(self.pos, "comment ends before closing delimiter"));
        }
        self.push(Tok::Open, open);
        loop {
            let Some(&b) = self.src.get(self.pos) else {
                return Err(self.error(open, "unclosed action"));
            };
            let here = self.pos;
            if is_space(b) {
                while self.src.get(self.pos).is_some_and(|b| is_space(*b)) {
                    self.pos += 1;
                }
                // ` -}}` closes the action and trims the text after it.
                if self.text[self.pos..].starts_with("-}}") {
                    self.pos += 3;
                    self.push(Tok::Close, here);
                    return Ok(true);
                }
                if self.text[self.pos..].starts_with("}}") {
                    self.pos += 2;
                    self.push(Tok::Close, here);
                    return Ok(false);
                }
                self.push(Tok::Space, here);
                continue;
            }
            if self.text[self.pos..].starts_with("}}") {
                self.pos += 2;
                self.push(Tok::Close, here);
                return Ok(false);
            }
            match b {
                b'|' => self.single(Tok::Pipe),
                b'(' => self.single(Tok::LParen),
                b')' => self.single(Tok::RParen),
                b',' => self.single(Tok::Comma),
                b'=' => self.single(Tok::Assign),
                b':' if self.src.get(self.pos + 1) == Some(&b'=') => {
                    self.pos += 2;
                    self.push(Tok::Declare, here);
                }
                b'"' => {
                    let text = self.quoted()?;
                    self.push(Tok::Str(text), here);
                }
                b'`' => {
                    let Some(end) = self.text[self.pos + 1..].find('`') else {
                        return Err(self.error(here, "unterminated raw quoted string"));
                    };
                    let text = self.text[self.pos + 1..self.pos + 1 + end].to_string();
                    self.pos += end + 2;
                    self.push(Tok::Str(text), here);
                }
                b'\'' => {
                    let c = self.char_constant()?;
                    self.push(Tok::Char(c), here);
                }
                b'$' => {
                    self.pos += 1;
                    let name = self.word();
                    self.push(Tok::Variable(format!("${name}")), here);
                }
                b'.' => {
                    if self.src.get(self.pos + 1).is_some_and(|b| b.is_ascii_digit()) {
                        let n = self.number();
                        self.push(Tok::Number(n), here);
                        continue;
                    }
                    self.pos += 1;
                    let name = self.word();
                    if name.is_empty() {
                        self.push(Tok::Dot, here);
                    } else {
                        self.push(Tok::Field(name), here);
                    }
                }
                b'0'..=b'9' | b'-' | b'+' => {
                    let n = self.number();
                    if n.is_empty() || n == "-" || n == "+" {
                        return Err(self.error(here, format!("unexpected {:?} in command", b as char)));
                    }
                    self.push(Tok::Number(n), here);
                }
                b if b == b'_' || b.is_ascii_alphabetic() || b >= 0x80 => {
                    let word = self.word();
                    let tok = match word.as_str() {
                        "true" => Tok::Bool(true),
                        "false" => Tok::Bool(false),
                        "nil" => Tok::Nil,
                        _ => Tok::Ident(word),
                    };
                    self.push(tok, here);
                }
                other => return Err(self.error(here, format!("unrecognized character in action: {:?}", other as char))),
            }
        }
    }

    fn single(&mut self, tok: Tok) {
        let here = self.pos;
        self.pos += 1;
        self.push(tok, here);
    }

    fn word(&mut self) -> String {
        let start = self.pos;
        while let Some(c) = self.text[self.pos..].chars().next() {
            if c == '_' || c.is_alphanumeric() {
                self.pos += c.len_utf8();
            } else {
                break;
            }
        }
        self.text[start..self.pos].to_string()
    }

    fn number(&mut self) -> String {
        let start = self.pos;
        if matches!(self.src.get(self.pos), Some(b'-' | b'+')) {
            self.pos += 1;
        }
        while let Some(&b) = self.src.get(self.pos) {
            let exponent_sign = matches!(b, b'-' | b'+')
                && matches!(self.src.get(self.pos - 1), Some(b'e' | b'E' | b'p' | b'P'))
                && !self.text[start..self.pos].starts_with("0x");
            if b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || exponent_sign {
                self.pos += 1;
            } else {
                break;
            }
        }
        self.text[start..self.pos].to_string()
    }

    fn quoted(&mut self) -> Result<String, TemplateError> {
        let start = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            let Some(c) = self.text[self.pos..].chars().next() else {
                return Err(self.error(start, "unterminated quoted string"));
            };
            self.pos += c.len_utf8();
            match c {
                '"' => return Ok(out),
                '\n' => return Err(self.error(start, "unterminated quoted string")),
                '\\' => out.push(self.escape(start)?),
                c => out.push(c),
            }
        }
    }

    fn escape(&mut self, start: usize) -> Result<char, TemplateError> {
        let Some(c) = self.text[self.pos..].chars().next() else {
            return Err(self.error(start, "unterminated quoted string"));
        };
        self.pos += c.len_utf8();
        let hex = |lexer: &mut Self, digits: usize| -> Result<char, TemplateError> {
            let code = lexer.text.get(lexer.pos..lexer.pos + digits).and_then(|h| u32::from_str_radix(h, 16).ok());
            lexer.pos += digits;
            code.and_then(char::from_u32).ok_or_else(|| lexer.error(start, "invalid escape in quoted string"))
        };
        Ok(match c {
            'n' => '\n',
            't' => '\t',
            'r' => '\r',
            'a' => '\u{7}',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'v' => '\u{b}',
            '\\' => '\\',
            '"' => '"',
            '\'' => '\'',
            'x' => hex(self, 2)?,
            'u' => hex(self, 4)?,
            'U' => hex(self, 8)?,
            _ => return Err(self.error(start, format!("unknown escape sequence \\{c} in quoted string"))),
        })
    }

    fn char_constant(&mut self) -> Result<char, TemplateError> {
        let start = self.pos;
        self.pos += 1;
        let Some(c) = self.text[self.pos..].chars().next() else {
            return Err(self.error(start, "unterminated character constant"));
        };
        self.pos += c.len_utf8();
        let c = if c == '\\' { self.escape(start)? } else { c };
        if self.src.get(self.pos) != Some(&b'\'') {
            return Err(self.error(start, "malformed character constant"));
        }
        self.pos += 1;
        Ok(c)
    }
}

//! Go `text/template`'s grammar: text, actions with pipelines, `if`/`else if`/`with`/`range` with `else`,
//! `break`/`continue`, `define`, `template` and `block`. A file parses into its own body plus the templates it
//! defines. Functions are resolved here, as Go does: a template naming one kbp lacks fails to parse, whether or
//! not the branch would run.

use std::collections::BTreeMap;
use std::rc::Rc;

use super::lex::{lex, Tok, Token};
use super::value::Value;
use super::TemplateError;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Pos {
    pub line: usize,
    pub col: usize,
}

#[derive(Debug)]
pub(super) enum Node {
    Text(String),
    Action(Pipe),
    If(Branch),
    With(Branch),
    Range(Branch),
    Template { pos: Pos, name: String, pipe: Option<Pipe> },
    Break,
    Continue,
}

#[derive(Debug)]
pub(super) struct Branch {
    pub pipe: Pipe,
    pub body: Vec<Node>,
    pub otherwise: Option<Vec<Node>>,
}

#[derive(Debug)]
pub(super) struct Pipe {
    pub pos: Pos,
    pub decl: Vec<String>,
    /// `$x = …` rather than `$x := …`.
    pub assign: bool,
    pub cmds: Vec<Command>,
}

#[derive(Debug)]
pub(super) struct Command {
    pub pos: Pos,
    pub args: Vec<Arg>,
}

#[derive(Debug)]
pub(super) enum Arg {
    Dot,
    Nil,
    /// `.a.b`
    Field(Vec<String>),
    /// `$x.a.b` (`$x` alone has no fields)
    Variable(String, Vec<String>),
    Function(String),
    /// `(pipeline).a.b`
    Chain(Box<Pipe>, Vec<String>),
    Literal(Value),
}

impl std::fmt::Display for Arg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let fields = |f: &mut std::fmt::Formatter<'_>, fields: &[String]| {
            fields.iter().try_for_each(|name| write!(f, ".{name}"))
        };
        match self {
            Arg::Dot => f.write_str("."),
            Arg::Nil => f.write_str("nil"),
            Arg::Field(names) => fields(f, names),
            Arg::Variable(name, names) => {
                f.write_str(name)?;
                fields(f, names)
            }
            Arg::Function(name) => f.write_str(name),
            Arg::Chain(_, names) => {
                f.write_str("(…)")?;
                fields(f, names)
            }
            Arg::Literal(Value::Str(s)) => write!(f, "{s:?}"),
            Arg::Literal(v) => write!(f, "{v}"),
        }
    }
}

/// A parsed file: its body and the templates it defines (`define` and `block`).
pub(super) struct Parsed {
    pub body: Vec<Node>,
    pub defines: BTreeMap<String, Rc<Vec<Node>>>,
}

pub(super) fn parse(name: &str, text: &str, known: &dyn Fn(&str) -> bool) -> Result<Parsed, TemplateError> {
    let tokens = lex(name, text)?;
    let mut parser = Parser { name, tokens, i: 0, known, defines: BTreeMap::new(), range_depth: 0 };
    let (body, end) = parser.list()?;
    if let Some((word, pos)) = end {
        return Err(parser.error(pos, format!("unexpected {{{{{word}}}}}")));
    }
    Ok(Parsed { body, defines: parser.defines })
}

/// The `{{end}}` or `{{else}}` that closed a list, with where it was.
type Ending = (String, Pos);

struct Parser<'a> {
    name: &'a str,
    tokens: Vec<Token>,
    i: usize,
    known: &'a dyn Fn(&str) -> bool,
    defines: BTreeMap<String, Rc<Vec<Node>>>,
    range_depth: usize,
}

impl Parser<'_> {
    fn error(&self, pos: Pos, message: impl Into<String>) -> TemplateError {
        TemplateError::at(self.name, pos.line, pos.col, message)
    }

    fn pos(&self) -> Pos {
        match self.tokens.get(self.i).or(self.tokens.last()) {
            Some(t) => Pos { line: t.line, col: t.col },
            None => Pos { line: 1, col: 1 },
        }
    }

    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.i).map(|t| &t.tok)
    }

    fn next(&mut self) -> Option<Tok> {
        let tok = self.tokens.get(self.i).map(|t| t.tok.clone());
        self.i += 1;
        tok
    }

    fn skip_space(&mut self) {
        while self.peek() == Some(&Tok::Space) {
            self.i += 1;
        }
    }

    fn expect_close(&mut self, context: &str) -> Result<(), TemplateError> {
        self.skip_space();
        let pos = self.pos();
        match self.next() {
            Some(Tok::Close) => Ok(()),
            other => Err(self.error(pos, format!("unexpected {} in {context}", describe(other.as_ref())))),
        }
    }

    /// Nodes up to an `{{end}}` or `{{else …}}` (returned with its position) or the end of the text.
    fn list(&mut self) -> Result<(Vec<Node>, Option<Ending>), TemplateError> {
        let mut nodes = Vec::new();
        while let Some(tok) = self.next() {
            match tok {
                Tok::Text(text) => nodes.push(Node::Text(text)),
                Tok::Open => {
                    self.skip_space();
                    let pos = self.pos();
                    let keyword = match self.peek() {
                        Some(Tok::Ident(word)) => Some(word.clone()),
                        _ => None,
                    };
                    match keyword.as_deref() {
                        Some("end") => {
                            self.i += 1;
                            self.expect_close("end")?;
                            return Ok((nodes, Some(("end".into(), pos))));
                        }
                        Some("else") => {
                            self.i += 1;
                            return Ok((nodes, Some(("else".into(), pos))));
                        }
                        Some("if") => {
                            self.i += 1;
                            nodes.push(Node::If(self.branch("if", pos)?));
                        }
                        Some("with") => {
                            self.i += 1;
                            nodes.push(Node::With(self.branch("with", pos)?));
                        }
                        Some("range") => {
                            self.i += 1;
                            self.range_depth += 1;
                            let branch = self.branch("range", pos);
                            self.range_depth -= 1;
                            nodes.push(Node::Range(branch?));
                        }
                        Some(word @ ("break" | "continue")) => {
                            if self.range_depth == 0 {
                                return Err(self.error(pos, format!("{{{{{word}}}}} outside {{{{range}}}}")));
                            }
                            self.i += 1;
                            self.expect_close(word)?;
                            nodes.push(if word == "break" { Node::Break } else { Node::Continue });
                        }
                        Some("define") => {
                            self.i += 1;
                            let name = self.template_name("define")?;
                            self.expect_close("define clause")?;
                            let (body, end) = self.list()?;
                            self.require_end(end, "define", pos)?;
                            self.defines.insert(name, Rc::new(body));
                        }
                        Some(word @ ("template" | "block")) => {
                            let word = word.to_string();
                            self.i += 1;
                            let name = self.template_name(&word)?;
                            self.skip_space();
                            let pipe =
                                if self.peek() == Some(&Tok::Close) { None } else { Some(self.pipeline(&word)?) };
                            self.expect_close(&word)?;
                            if word == "block" {
                                let (body, end) = self.list()?;
                                self.require_end(end, "block", pos)?;
                                self.defines.insert(name.clone(), Rc::new(body));
                            }
                            nodes.push(Node::Template { pos, name, pipe });
                        }
                        _ => {
                            let pipe = self.pipeline("command")?;
                            self.expect_close("command")?;
                            nodes.push(Node::Action(pipe));
                        }
                    }
                }
                other => {
                    return Err(self.error(self.pos(), format!("unexpected {}", describe(Some(&other)))));
                }
            }
        }
        Ok((nodes, None))
    }

    fn require_end(&self, end: Option<Ending>, what: &str, start: Pos) -> Result<(), TemplateError> {
        match end {
            Some((word, _)) if word == "end" => Ok(()),
            Some((word, pos)) => Err(self.error(pos, format!("unexpected {{{{{word}}}}} in {what}"))),
            None => Err(self.error(start, format!("unexpected EOF: {{{{{what}}}}} has no {{{{end}}}}"))),
        }
    }

    fn template_name(&mut self, context: &str) -> Result<String, TemplateError> {
        self.skip_space();
        let pos = self.pos();
        match self.next() {
            Some(Tok::Str(name)) => Ok(name),
            other => Err(self.error(pos, format!("unexpected {} in {context} clause", describe(other.as_ref())))),
        }
    }

    /// `if`/`with`/`range`: pipeline, body, optional `else` (or `else if`/`else with`), `end`.
    fn branch(&mut self, kind: &str, start: Pos) -> Result<Branch, TemplateError> {
        let pipe = self.pipeline(kind)?;
        self.expect_close(kind)?;
        let (body, end) = self.list()?;
        let otherwise = match end {
            Some((word, _)) if word == "end" => None,
            Some((_, else_pos)) => {
                self.skip_space();
                match self.peek().cloned() {
                    // `{{else if …}}` is `{{else}}{{if …}}…{{end}}` sharing the outer `{{end}}`.
                    Some(Tok::Ident(chained)) if (chained == "if" || chained == "with") && kind != "range" => {
                        self.i += 1;
                        let nested = self.branch(&chained, else_pos)?;
                        Some(vec![if chained == "if" { Node::If(nested) } else { Node::With(nested) }])
                    }
                    _ => {
                        self.expect_close("else")?;
                        let (otherwise, end) = self.list()?;
                        self.require_end(end, kind, start)?;
                        Some(otherwise)
                    }
                }
            }
            None => return Err(self.error(start, format!("unexpected EOF: {{{{{kind}}}}} has no {{{{end}}}}"))),
        };
        Ok(Branch { pipe, body, otherwise })
    }

    fn pipeline(&mut self, context: &str) -> Result<Pipe, TemplateError> {
        self.skip_space();
        let pos = self.pos();
        let mut decl = Vec::new();
        let mut assign = false;
        // `$x :=`, `$x =`, `$i, $v :=`
        let save = self.i;
        let mut names = Vec::new();
        loop {
            match self.peek() {
                Some(Tok::Variable(name)) if !self.chained_after() => {
                    names.push(name.clone());
                    self.i += 1;
                    self.skip_space();
                    match self.peek() {
                        Some(Tok::Declare) | Some(Tok::Assign) => {
                            assign = self.peek() == Some(&Tok::Assign);
                            self.i += 1;
                            decl = names;
                            break;
                        }
                        Some(Tok::Comma) if context == "range" && names.len() == 1 => {
                            self.i += 1;
                            self.skip_space();
                            continue;
                        }
                        _ => {
                            self.i = save;
                            break;
                        }
                    }
                }
                _ => {
                    self.i = save;
                    break;
                }
            }
        }
        let mut cmds = Vec::new();
        loop {
            self.skip_space();
            cmds.push(self.command()?);
            self.skip_space();
            if self.peek() == Some(&Tok::Pipe) {
                self.i += 1;
                continue;
            }
            break;
        }
        if cmds.iter().any(|c| c.args.is_empty()) {
            return Err(self.error(pos, format!("missing value for {context}")));
        }
        Ok(Pipe { pos, decl, assign, cmds })
    }

    /// Whether the token after the current one continues it as a field chain (`$x.a`).
    fn chained_after(&self) -> bool {
        matches!(self.tokens.get(self.i + 1).map(|t| &t.tok), Some(Tok::Field(_)))
    }

    fn command(&mut self) -> Result<Command, TemplateError> {
        let pos = self.pos();
        let mut args = Vec::new();
        loop {
            self.skip_space();
            match self.peek() {
                None | Some(Tok::Close) | Some(Tok::Pipe) | Some(Tok::RParen) => break,
                _ => args.push(self.operand()?),
            }
        }
        Ok(Command { pos, args })
    }

    fn fields(&mut self) -> Vec<String> {
        let mut names = Vec::new();
        while let Some(Tok::Field(name)) = self.peek() {
            names.push(name.clone());
            self.i += 1;
        }
        names
    }

    fn operand(&mut self) -> Result<Arg, TemplateError> {
        let pos = self.pos();
        let tok = self.next();
        Ok(match tok {
            Some(Tok::Dot) => Arg::Dot,
            Some(Tok::Nil) => Arg::Nil,
            Some(Tok::Bool(b)) => Arg::Literal(Value::Bool(b)),
            Some(Tok::Str(s)) => Arg::Literal(Value::str(s)),
            Some(Tok::Char(c)) => Arg::Literal(Value::Int(c as i64)),
            Some(Tok::Number(n)) => {
                Arg::Literal(number(&n).ok_or_else(|| self.error(pos, format!("bad number syntax: {n:?}")))?)
            }
            Some(Tok::Field(name)) => {
                let mut names = vec![name];
                names.extend(self.fields());
                Arg::Field(names)
            }
            Some(Tok::Variable(name)) => Arg::Variable(name, self.fields()),
            Some(Tok::Ident(name)) => {
                if !(self.known)(&name) {
                    return Err(self.error(pos, format!("function {name:?} not defined")));
                }
                Arg::Function(name)
            }
            Some(Tok::LParen) => {
                let pipe = self.pipeline("parenthesized pipeline")?;
                self.skip_space();
                let close = self.pos();
                if self.next() != Some(Tok::RParen) {
                    return Err(self.error(close, "unclosed left paren"));
                }
                Arg::Chain(Box::new(pipe), self.fields())
            }
            other => return Err(self.error(pos, format!("unexpected {} in operand", describe(other.as_ref())))),
        })
    }
}

fn describe(tok: Option<&Tok>) -> String {
    match tok {
        None => "EOF".into(),
        Some(Tok::Close) => "\"}}\"".into(),
        Some(Tok::RParen) => "\")\"".into(),
        Some(Tok::Ident(w)) => format!("<{w}>"),
        Some(Tok::Str(s)) => format!("{s:?}"),
        Some(other) => format!("{other:?}"),
    }
}

/// A Go number constant: an `int` when it is an integer (decimal, `0x`, `0o`, `0b`, `_` separators), else a
/// `float64`.
fn number(text: &str) -> Option<Value> {
    let clean = text.replace('_', "");
    let (negative, digits) = match clean.strip_prefix('-') {
        Some(rest) => (true, rest.to_string()),
        None => (false, clean.trim_start_matches('+').to_string()),
    };
    let lower = digits.to_ascii_lowercase();
    let int = if let Some(hex) = lower.strip_prefix("0x") {
        i64::from_str_radix(hex, 16).ok()
    } else if let Some(oct) = lower.strip_prefix("0o") {
        i64::from_str_radix(oct, 8).ok()
    } else if let Some(bin) = lower.strip_prefix("0b") {
        i64::from_str_radix(bin, 2).ok()
    } else if lower.len() > 1 && lower.starts_with('0') && lower.chars().all(|c| c.is_ascii_digit()) {
        i64::from_str_radix(&lower[1..], 8).ok()
    } else {
        lower.parse::<i64>().ok()
    };
    if let Some(n) = int {
        return Some(Value::Int(if negative { -n } else { n }));
    }
    let float: f64 = lower.parse().ok()?;
    Some(Value::Float(if negative { -float } else { float }))
}

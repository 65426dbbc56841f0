//! Executing parsed templates: Go `text/template`'s evaluation (dot, variables and their scopes, field chains,
//! pipelines, short-circuit `and`/`or`, `range` over lists, maps and counts) plus the functions Helm adds that
//! need the template set itself: `include`, `tpl`, and the `template` action.

use std::collections::BTreeMap;
use std::rc::Rc;

use super::funcs;
use super::parse::{parse, Arg, Branch, Command, Node, Pipe, Pos};
use super::value::Value;
use super::TemplateError;

/// How deep `include`/`template` may nest: a chart that includes itself fails here instead of overflowing the
/// stack (Helm stops such a chart too).
const MAX_INCLUDE_DEPTH: usize = 100;

/// A named template and the file it was parsed from.
pub(super) struct Template {
    pub file: String,
    pub body: Rc<Vec<Node>>,
}

/// Every template of a chart: each file's body (by path) and every `define`d name, shared by all files, as in
/// Helm, where any file may include what another defines.
#[derive(Default)]
pub struct TemplateSet {
    templates: BTreeMap<String, Template>,
}

impl TemplateSet {
    /// Parses one file and adds it and its defines. Later definitions of a name replace earlier ones, as Go's
    /// `template.AddParseTree` does in the order Helm parses files.
    pub fn add(&mut self, file: &str, text: &str) -> Result<(), TemplateError> {
        let parsed = parse(file, text, &funcs::known)?;
        for (name, body) in parsed.defines {
            self.templates.insert(name, Template { file: file.to_string(), body });
        }
        self.templates.insert(file.to_string(), Template { file: file.to_string(), body: Rc::new(parsed.body) });
        Ok(())
    }

    /// Whether a template (a file or a `define`) of that name was added.
    pub fn has(&self, name: &str) -> bool {
        self.templates.contains_key(name)
    }

    /// Executes the named template with `data` as dot and `$`.
    pub fn execute(&self, name: &str, data: &Value) -> Result<String, TemplateError> {
        let template = self
            .templates
            .get(name)
            .ok_or_else(|| TemplateError::plain(format!("no template {name:?} in the chart")))?;
        let mut exec =
            Exec { set: self, file: template.file.clone(), vars: vec![("$".into(), data.clone())], depth: 0 };
        let mut out = String::new();
        exec.walk(&template.body, data, &mut out)?;
        Ok(out)
    }
}

enum Flow {
    Normal,
    Break,
    Continue,
}

struct Exec<'s> {
    set: &'s TemplateSet,
    file: String,
    vars: Vec<(String, Value)>,
    depth: usize,
}

impl Exec<'_> {
    fn error(&self, pos: Pos, message: impl Into<String>) -> TemplateError {
        TemplateError::at(&self.file, pos.line, pos.col, message)
    }

    fn walk(&mut self, nodes: &[Node], dot: &Value, out: &mut String) -> Result<Flow, TemplateError> {
        for node in nodes {
            match node {
                Node::Text(text) => out.push_str(text),
                Node::Action(pipe) => {
                    let value = self.pipe(pipe, dot)?;
                    if pipe.decl.is_empty() {
                        out.push_str(&value.printed());
                    }
                }
                Node::If(branch) | Node::With(branch) => {
                    let is_with = matches!(node, Node::With(_));
                    let mark = self.vars.len();
                    let value = self.pipe(&branch.pipe, dot)?;
                    let flow = if value.truthy() {
                        let inner = if is_with { value } else { dot.clone() };
                        self.walk(&branch.body, &inner, out)?
                    } else if let Some(otherwise) = &branch.otherwise {
                        self.walk(otherwise, dot, out)?
                    } else {
                        Flow::Normal
                    };
                    self.vars.truncate(mark);
                    if !matches!(flow, Flow::Normal) {
                        return Ok(flow);
                    }
                }
                Node::Range(branch) => self.range(branch, dot, out)?,
                Node::Template { pos, name, pipe } => {
                    let data = match pipe {
                        Some(pipe) => self.pipe(pipe, dot)?,
                        None => Value::Nil,
                    };
                    let text = self.include(*pos, name, &data)?;
                    out.push_str(&text);
                }
                Node::Break => return Ok(Flow::Break),
                Node::Continue => return Ok(Flow::Continue),
            }
        }
        Ok(Flow::Normal)
    }

    fn range(&mut self, branch: &Branch, dot: &Value, out: &mut String) -> Result<(), TemplateError> {
        let mark = self.vars.len();
        let value = self.pipe_value(&branch.pipe, dot)?;
        let items: Vec<(Value, Value)> = match &value {
            Value::List(items) => {
                items.borrow().iter().enumerate().map(|(i, v)| (Value::Int(i as i64), v.clone())).collect()
            }
            Value::Map(entries) => entries.borrow().iter().map(|(k, v)| (Value::str(k), v.clone())).collect(),
            Value::Int(n) => (0..*n).map(|i| (Value::Int(i), Value::Int(i))).collect(),
            Value::Nil => Vec::new(),
            other => {
                return Err(self.error(branch.pipe.pos, format!("range can't iterate over {other}")));
            }
        };
        if items.is_empty() {
            if let Some(otherwise) = &branch.otherwise {
                self.walk(otherwise, dot, out)?;
            }
            self.vars.truncate(mark);
            return Ok(());
        }
        for (key, item) in items {
            let inner_mark = self.vars.len();
            match branch.pipe.decl.as_slice() {
                [] => {}
                [one] => self.vars.push((one.clone(), if matches!(value, Value::Int(_)) { key } else { item.clone() })),
                [k, v, ..] => {
                    self.vars.push((k.clone(), key));
                    self.vars.push((v.clone(), item.clone()));
                }
            }
            let flow = self.walk(&branch.body, &item, out)?;
            self.vars.truncate(inner_mark);
            if matches!(flow, Flow::Break) {
                break;
            }
        }
        self.vars.truncate(mark);
        Ok(())
    }

    /// A pipeline's value, declaring or assigning its variables.
    fn pipe(&mut self, pipe: &Pipe, dot: &Value) -> Result<Value, TemplateError> {
        let value = self.pipe_value(pipe, dot)?;
        if let Some(name) = pipe.decl.first() {
            if pipe.assign {
                match self.vars.iter_mut().rev().find(|(n, _)| n == name) {
                    Some(slot) => slot.1 = value.clone(),
                    None => return Err(self.error(pipe.pos, format!("undefined variable: {name}"))),
                }
            } else {
                self.vars.push((name.clone(), value.clone()));
            }
        }
        Ok(value)
    }

    fn pipe_value(&mut self, pipe: &Pipe, dot: &Value) -> Result<Value, TemplateError> {
        let mut value: Option<Value> = None;
        for cmd in &pipe.cmds {
            value = Some(self.command(cmd, dot, value)?);
        }
        Ok(value.unwrap_or(Value::Nil))
    }

    fn command(&mut self, cmd: &Command, dot: &Value, last: Option<Value>) -> Result<Value, TemplateError> {
        let (first, rest) = cmd.args.split_first().ok_or_else(|| self.error(cmd.pos, "empty command"))?;
        match first {
            Arg::Function(name) => self.call(cmd.pos, name, rest, dot, last),
            Arg::Field(names) => {
                let args = self.args(rest, dot, last)?;
                self.fields(cmd.pos, dot.clone(), names, args)
            }
            Arg::Variable(name, names) => {
                let value = self.variable(cmd.pos, name)?;
                if names.is_empty() {
                    self.no_args(cmd.pos, first, rest, &last)?;
                    return Ok(value);
                }
                let args = self.args(rest, dot, last)?;
                self.fields(cmd.pos, value, names, args)
            }
            Arg::Chain(pipe, names) => {
                let value = self.pipe_value(pipe, dot)?;
                if names.is_empty() {
                    self.no_args(cmd.pos, first, rest, &last)?;
                    return Ok(value);
                }
                let args = self.args(rest, dot, last)?;
                self.fields(cmd.pos, value, names, args)
            }
            Arg::Nil => Err(self.error(cmd.pos, "nil is not a command")),
            Arg::Dot | Arg::Literal(_) => {
                self.no_args(cmd.pos, first, rest, &last)?;
                self.arg(cmd.pos, first, dot)
            }
        }
    }

    fn no_args(&self, pos: Pos, first: &Arg, rest: &[Arg], last: &Option<Value>) -> Result<(), TemplateError> {
        if rest.is_empty() && last.is_none() {
            Ok(())
        } else {
            Err(self.error(pos, format!("can't give argument to non-function {first}")))
        }
    }

    fn args(&mut self, args: &[Arg], dot: &Value, last: Option<Value>) -> Result<Vec<Value>, TemplateError> {
        let mut values = Vec::with_capacity(args.len() + 1);
        for arg in args {
            values.push(self.arg(Pos { line: 0, col: 0 }, arg, dot)?);
        }
        values.extend(last);
        Ok(values)
    }

    fn arg(&mut self, pos: Pos, arg: &Arg, dot: &Value) -> Result<Value, TemplateError> {
        match arg {
            Arg::Dot => Ok(dot.clone()),
            Arg::Nil => Ok(Value::Nil),
            Arg::Literal(v) => Ok(v.clone()),
            Arg::Field(names) => self.fields(pos, dot.clone(), names, Vec::new()),
            Arg::Variable(name, names) => {
                let value = self.variable(pos, name)?;
                self.fields(pos, value, names, Vec::new())
            }
            Arg::Chain(pipe, names) => {
                let value = self.pipe_value(pipe, dot)?;
                self.fields(pos, value, names, Vec::new())
            }
            Arg::Function(name) => self.call(pos, name, &[], dot, None),
        }
    }

    fn variable(&self, pos: Pos, name: &str) -> Result<Value, TemplateError> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| self.error(pos, format!("undefined variable: {name}")))
    }

    /// `.a.b.c` on `receiver`; `args` go to the last name, which must then be a method.
    fn fields(
        &self,
        pos: Pos,
        mut receiver: Value,
        names: &[String],
        mut args: Vec<Value>,
    ) -> Result<Value, TemplateError> {
        for (i, name) in names.iter().enumerate() {
            let last = i + 1 == names.len();
            let these = if last { std::mem::take(&mut args) } else { Vec::new() };
            receiver = self.field(pos, &receiver, name, these)?;
        }
        if !args.is_empty() {
            return Err(self.error(pos, "can't give argument to non-function"));
        }
        Ok(receiver)
    }

    fn field(&self, pos: Pos, receiver: &Value, name: &str, args: Vec<Value>) -> Result<Value, TemplateError> {
        let value = match receiver {
            Value::Map(entries) => entries.borrow().get(name).cloned().unwrap_or(Value::Nil),
            Value::Struct(s) => match s.fields.get(name) {
                Some(v) => v.clone(),
                None => {
                    return Err(self.error(pos, format!("can't evaluate field {name} in type {}", s.type_name)));
                }
            },
            // `.Capabilities.APIVersions` is Helm's VersionSet, a []string with a Has method.
            Value::List(items) if name == "Has" => {
                let [Value::Str(wanted)] = args.as_slice() else {
                    return Err(self.error(pos, "wrong number of args for Has: want 1"));
                };
                return Ok(Value::Bool(items.borrow().iter().any(|v| v.as_str() == Some(wanted))));
            }
            Value::Nil => return Err(self.error(pos, format!("nil pointer evaluating interface {{}}.{name}"))),
            other => {
                return Err(self.error(pos, format!("can't evaluate field {name} in type {}", other.type_name())));
            }
        };
        match value {
            Value::Method(method) => {
                (method.call)(&args).map_err(|e| self.error(pos, format!("error calling {name}: {e}")))
            }
            value if args.is_empty() => Ok(value),
            _ => Err(self.error(pos, format!("{name} is not a method but has arguments"))),
        }
    }

    fn call(
        &mut self,
        pos: Pos,
        name: &str,
        rest: &[Arg],
        dot: &Value,
        last: Option<Value>,
    ) -> Result<Value, TemplateError> {
        match name {
            // Go evaluates `and`/`or` arguments only as far as needed.
            "and" | "or" => {
                if rest.is_empty() && last.is_none() {
                    return Err(self.error(pos, format!("wrong number of args for {name}: want at least 1 got 0")));
                }
                let mut value = Value::Nil;
                for arg in rest {
                    value = self.arg(pos, arg, dot)?;
                    if value.truthy() != (name == "and") {
                        return Ok(value);
                    }
                }
                Ok(last.unwrap_or(value))
            }
            "include" => {
                let args = self.args(rest, dot, last)?;
                let (Some(Value::Str(target)), data) = (args.first(), args.get(1).cloned().unwrap_or(Value::Nil))
                else {
                    return Err(self.error(pos, "error calling include: include needs a template name"));
                };
                self.include(pos, target, &data).map(Value::str)
            }
            "tpl" => {
                let args = self.args(rest, dot, last)?;
                let (Some(Value::Str(text)), Some(data)) = (args.first(), args.get(1)) else {
                    return Err(self.error(pos, "error calling tpl: tpl needs a string and a context"));
                };
                self.tpl(pos, text, data).map(Value::str)
            }
            _ => {
                let args = self.args(rest, dot, last)?;
                funcs::call(name, &args).map_err(|e| self.error(pos, format!("error calling {name}: {e}")))
            }
        }
    }

    fn include(&mut self, pos: Pos, name: &str, data: &Value) -> Result<String, TemplateError> {
        let template = self
            .set
            .templates
            .get(name)
            .ok_or_else(|| self.error(pos, format!("error calling include: template {name:?} not defined")))?;
        if self.depth >= MAX_INCLUDE_DEPTH {
            return Err(self.error(pos, format!("rendering template has a nested reference name: {name}")));
        }
        let mut inner = Exec {
            set: self.set,
            file: template.file.clone(),
            vars: vec![("$".into(), data.clone())],
            depth: self.depth + 1,
        };
        let mut out = String::new();
        inner.walk(&template.body, data, &mut out)?;
        Ok(out)
    }

    /// Helm's `tpl`: the text is a template of its own that sees every template the chart defines.
    fn tpl(&mut self, pos: Pos, text: &str, data: &Value) -> Result<String, TemplateError> {
        if self.depth >= MAX_INCLUDE_DEPTH {
            return Err(self.error(pos, "tpl nests too deeply"));
        }
        let name = format!("{} (tpl)", self.file);
        let parsed = parse(&name, text, &funcs::known)?;
        let mut inner =
            Exec { set: self.set, file: name, vars: vec![("$".into(), data.clone())], depth: self.depth + 1 };
        let mut out = String::new();
        inner.walk(&parsed.body, data, &mut out)?;
        Ok(out.replace("<no value>", ""))
    }
}

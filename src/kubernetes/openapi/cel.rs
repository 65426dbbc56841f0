//! The CEL rules of a schema (`x-kubernetes-validations`), evaluated as the API server evaluates them when an
//! object is created: each rule at the schema node that declares it, with `self` bound to the value there (after
//! the schema's defaults are applied), and a rule that is false or fails to evaluate refuses the object with
//! the rule's own message. Transition rules (those that read `oldSelf`) only run on updates, so they are skipped
//! here; a field the object does not have runs none of its rules.
//!
//! The interpreter is the `cel` crate with its strings extension (`split`, `indexOf`, …); the Kubernetes CEL
//! library functions the crate lacks are added in [`environment`]. A rule that calls a function neither
//! provides is reported as a kbp limitation, never passed silently.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use cel::common::types::{CelList, CelString};
use cel::common::value::Val;
use cel::{Context, Env, ExecutionError, Program, Value as CelValue};
use serde_json::Value;

use super::defaults::with_defaults;
use super::go_regex::compiled;
use crate::kubernetes::violation::{child, Violation};

/// One `x-kubernetes-validations` entry.
pub struct Rule<'a> {
    pub rule: &'a str,
    pub message: String,
    /// `fieldPath`: where under the node the error is reported (`.spec.x`), when the rule says.
    pub field_path: Option<&'a str>,
}

/// The rules declared on `schema` itself (not on its properties).
pub fn rules_of(schema: &Value) -> Vec<Rule<'_>> {
    schema
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|rule| {
            let text = rule.get("rule").and_then(Value::as_str).unwrap_or_default();
            let message = match (rule.get("message"), rule.get("messageExpression")) {
                (Some(Value::String(message)), _) => message.clone(),
                (_, Some(Value::String(expression))) => format!("messageExpression: {expression}"),
                _ => format!("failed rule: {text}"),
            };
            Rule { rule: text, message, field_path: rule.get("fieldPath").and_then(Value::as_str) }
        })
        .collect()
}

/// The CEL rules (`x-kubernetes-validations`) of a schema: (path, rule, message), paths written like violation
/// paths with `[*]` for any list item and `.*` for any map value. The path is empty for rules on the root.
pub fn cel_rules(schema: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    collect_cel_rules(schema, "", &mut out);
    out
}

fn collect_cel_rules(schema: &Value, path: &str, out: &mut Vec<(String, String, String)>) {
    for rule in rules_of(schema) {
        out.push((path.to_string(), rule.rule.to_string(), rule.message));
    }
    for (name, sub) in schema.get("properties").and_then(Value::as_object).into_iter().flatten() {
        collect_cel_rules(sub, &child(path, name), out);
    }
    if let Some(values) = schema.get("additionalProperties").filter(|a| a.is_object()) {
        collect_cel_rules(values, &if path.is_empty() { "*".to_string() } else { format!("{path}.*") }, out);
    }
    if let Some(items) = schema.get("items").filter(|i| i.is_object()) {
        collect_cel_rules(items, &format!("{path}[*]"), out);
    }
}

/// Whether a rule is a transition rule: it reads `oldSelf`, so the server runs it only when an object is updated.
pub fn is_transition(rule: &str) -> bool {
    let bytes = rule.as_bytes();
    rule.match_indices("oldSelf").any(|(at, _)| {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + "oldSelf".len()).copied();
        let ident = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_');
        !ident(before) && !ident(after)
    })
}

/// Evaluates the rules declared on `schema` against `value` (found at `path`), reporting each that refuses it.
pub(super) fn check(schema: &Value, value: &Value, path: &str, out: &mut Vec<Violation>) {
    let rules: Vec<Rule> = rules_of(schema).into_iter().filter(|r| !is_transition(r.rule)).collect();
    if rules.is_empty() {
        return;
    }
    // The server defaults the object before the rules see it; the defaults themselves are not validated.
    let value = &with_defaults(schema, value);
    for rule in rules {
        let at = match rule.field_path {
            Some(field) => format!("{path}{field}").trim_start_matches('.').to_string(),
            None => path.to_string(),
        };
        match evaluate(rule.rule, value) {
            Ok(true) => {}
            Ok(false) => out.push(Violation::new(at, rule.message)),
            Err(Failure::Limitation(why)) => out.push(Violation::new(
                at,
                format!(
                    "kbp limitation, not an error in the value: the CRD rule `{}` cannot be evaluated here ({why}), \
                     so the value was not checked against it",
                    rule.rule
                ),
            )),
            Err(Failure::Evaluation(why)) => {
                out.push(Violation::new(at, format!("{} (the rule failed to evaluate: {why})", rule.message)))
            }
        }
    }
}

enum Failure {
    /// kbp's interpreter cannot run the rule (an unknown function, a syntax it does not read).
    Limitation(String),
    /// The rule ran into an error on this value (a missing field, `int()` of a non-number): the server refuses
    /// the object with the error.
    Evaluation(String),
}

/// Runs one rule with `self` bound to `value`.
fn evaluate(rule: &str, value: &Value) -> Result<bool, Failure> {
    let program = program(rule)?;
    let mut context = Context::with_env(Arc::clone(environment()));
    context.add_variable("self", value).map_err(|e| Failure::Limitation(e.to_string()))?;
    match program.execute(&context) {
        Ok(CelValue::Bool(verdict)) => Ok(verdict),
        Ok(other) => Err(Failure::Evaluation(format!("it gave {other:?}, not a bool"))),
        Err(ExecutionError::UndeclaredReference(name)) if name.as_str() != "self" => {
            Err(Failure::Limitation(format!("`{name}` is not a function kbp's CEL library has")))
        }
        Err(e) => Err(Failure::Evaluation(e.to_string())),
    }
}

/// The compiled form of a rule, compiled once per process.
fn program(rule: &str) -> Result<Arc<Program>, Failure> {
    type Compiled = Result<Arc<Program>, String>;
    static CACHE: OnceLock<Mutex<HashMap<String, Compiled>>> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Default::default).lock().unwrap_or_else(PoisonError::into_inner);
    cache
        .entry(rule.to_string())
        .or_insert_with(|| environment().compile(rule).map(Arc::new).map_err(|e| e.to_string().replace('\n', " ")))
        .clone()
        .map_err(|e| Failure::Limitation(format!("it does not parse: {e}")))
}

/// Whether `rule` compiles with kbp's CEL library.
#[cfg(test)]
pub(super) fn compiles(rule: &str) -> bool {
    program(rule).is_ok()
}

/// The standard library, the strings extension, and the Kubernetes library functions the crate lacks.
fn environment() -> &'static Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Env::stdlib();
        let declared = env
            .add_extension(cel::extensions::strings)
            .and_then(|()| cel::add_member_overload!(env, fn find: (CelString, CelString) -> Result<CelString>))
            .and_then(|()| {
                cel::add_member_overload!(env, fn find_all: (CelString, CelString) -> Result<CelList>, name = "findAll")
            });
        // The declarations are fixed; one that clashes is a bug of this module, found by its tests.
        declared.expect("the Kubernetes CEL library functions are declared once");
        Arc::new(env)
    })
}

fn regex(pattern: &CelString<'_>, function: &str) -> Result<regex::Regex, ExecutionError> {
    compiled(pattern.as_ref()).map_err(|e| ExecutionError::function_error(function, e))
}

/// Kubernetes' regex library: `s.find(re)`, the first match of `re` in `s`, or `''`.
fn find(this: &CelString<'_>, pattern: &CelString<'_>) -> Result<CelString<'static>, ExecutionError> {
    let re = regex(pattern, "find")?;
    Ok(CelString::from(re.find(this.as_ref()).map(|m| m.as_str().to_string()).unwrap_or_default()))
}

/// Kubernetes' regex library: `s.findAll(re)`, every match of `re` in `s`.
fn find_all(this: &CelString<'_>, pattern: &CelString<'_>) -> Result<CelList<'static>, ExecutionError> {
    let re = regex(pattern, "findAll")?;
    let found: Vec<Box<dyn Val>> = re
        .find_iter(this.as_ref())
        .map(|m| Box::new(CelString::from(m.as_str().to_string())) as Box<dyn Val>)
        .collect();
    Ok(CelList::from(found))
}

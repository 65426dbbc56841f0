//! The CEL rules of a schema (`x-kubernetes-validations`), evaluated as the API server evaluates them when an
//! object is created: each rule at the schema node that declares it, with `self` bound to the value there (after
//! the schema's defaults are applied), and a rule that is false or fails to evaluate refuses the object with
//! the rule's own message. Transition rules (those that read `oldSelf`) only run on updates, so they are skipped
//! here; a field the object does not have runs none of its rules.
//!
//! The interpreter is the `cel` crate with its strings extension (`split`, `indexOf`, …); the Kubernetes CEL
//! library functions the crate lacks are added in [`environment`], and so is `matches`: the crate's compiles the
//! pattern on every call and reads it with the regex crate's syntax, where kbp's reads Go's (as the server does)
//! and compiles each pattern once. A rule that calls a function neither
//! provides is reported as a kbp limitation, never passed silently.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use cel::common::types::{CelBool, CelList, CelString};
use cel::common::value::Val;
use cel::parser::{Expression, PrattParser};
use cel::{Context, Env, ExecutionError, Value as CelValue};
use serde_json::Value;

use super::defaults::with_defaults;
use super::go_regex::compiled;
use crate::kubernetes::violation::{child, Violation};

/// One `x-kubernetes-validations` entry.
pub(super) struct Rule<'a> {
    pub rule: &'a str,
    pub message: Cow<'a, str>,
    /// `fieldPath`: where under the node the error is reported (`.spec.x`), when the rule says.
    pub field_path: Option<&'a str>,
}

/// The rules declared on `schema` itself (not on its properties).
pub(super) fn rules_of(schema: &Value) -> Vec<Rule<'_>> {
    schema
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|rule| {
            let text = rule.get("rule").and_then(Value::as_str).unwrap_or_default();
            let message = match (rule.get("message"), rule.get("messageExpression")) {
                (Some(Value::String(message)), _) => Cow::Borrowed(message.as_str()),
                (_, Some(Value::String(expression))) => Cow::Owned(format!("messageExpression: {expression}")),
                _ => Cow::Owned(format!("failed rule: {text}")),
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
        out.push((path.to_string(), rule.rule.to_string(), rule.message.into_owned()));
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

/// What the rules of schema nodes said of the values they judged, so that a value met again at the same node
/// (the same requirement key in fifty NodePools) is judged once: per (node, value as JSON), the violations the
/// rules reported, as (`fieldPath` of the rule, message). Rules are pure functions of `self`, so the verdict
/// cannot differ. Nodes are told apart by address: a table must not outlive the schemas it was filled from,
/// which [`super::Validator`] ensures by borrowing them for as long as it keeps the table.
#[derive(Default)]
pub(super) struct Verdicts {
    seen: HashMap<(usize, String), Vec<Refusal>>,
}

/// A rule's refusal: its `fieldPath`, if any, and what it says.
type Refusal = (Option<String>, String);

/// Evaluates the rules declared on `schema` against `value` (found at `path`), reporting each that refuses it.
/// The value is defaulted and converted to CEL once, and every rule of the node runs on that one binding.
pub(super) fn check(schema: &Value, value: &Value, path: &str, out: &mut Vec<Violation>, verdicts: &mut Verdicts) {
    if schema.get("x-kubernetes-validations").is_none() {
        return;
    }
    let key = (std::ptr::from_ref(schema) as usize, value.to_string());
    let found = match verdicts.seen.get(&key) {
        Some(found) => found,
        None => verdicts.seen.entry(key).or_insert(judge(schema, value)),
    };
    for (field_path, message) in found {
        let at = match field_path {
            Some(field) => format!("{path}{field}").trim_start_matches('.').to_string(),
            None => path.to_string(),
        };
        out.push(Violation::new(at, message.clone()));
    }
}

/// Runs the rules of `schema` on `value`: what each that refuses it says, and the `fieldPath` it says it of.
fn judge(schema: &Value, value: &Value) -> Vec<Refusal> {
    let rules: Vec<Rule> = rules_of(schema).into_iter().filter(|r| !is_transition(r.rule)).collect();
    if rules.is_empty() {
        return Vec::new();
    }
    // The server defaults the object before the rules see it; the defaults themselves are not validated.
    let bound = bind(&with_defaults(schema, value));
    let mut found = Vec::new();
    for rule in rules {
        let verdict = match &bound {
            Ok(context) => evaluate(rule.rule, context),
            Err(why) => Err(Failure::Limitation(why.clone())),
        };
        let message = match verdict {
            Ok(true) => continue,
            Ok(false) => rule.message.into_owned(),
            Err(Failure::Limitation(why)) => format!(
                "kbp limitation, not an error in the value: the CRD rule `{}` cannot be evaluated here ({why}), \
                 so the value was not checked against it",
                rule.rule
            ),
            Err(Failure::Evaluation(why)) => format!("{} (the rule failed to evaluate: {why})", rule.message),
        };
        found.push((rule.field_path.map(str::to_string), message));
    }
    found
}

enum Failure {
    /// kbp's interpreter cannot run the rule (an unknown function, a syntax it does not read).
    Limitation(String),
    /// The rule ran into an error on this value (a missing field, `int()` of a non-number): the server refuses
    /// the object with the error.
    Evaluation(String),
}

/// A context with `self` bound to `value`, shared by the rules of one schema node.
fn bind(value: &Value) -> Result<Context<'static, 'static>, String> {
    let mut context = Context::with_env(Arc::clone(environment()));
    context.add_variable("self", value).map_err(|e| e.to_string())?;
    Ok(context)
}

/// Runs one rule in `context` (`self` bound).
fn evaluate(rule: &str, context: &Context) -> Result<bool, Failure> {
    let program = program(rule)?;
    match CelValue::resolve(&program, context) {
        Ok(CelValue::Bool(verdict)) => Ok(verdict),
        Ok(other) => Err(Failure::Evaluation(format!("it gave {other:?}, not a bool"))),
        Err(ExecutionError::UndeclaredReference(name)) if name.as_str() != "self" => {
            Err(Failure::Limitation(format!("`{name}` is not a function kbp's CEL library has")))
        }
        Err(e) => Err(Failure::Evaluation(e.to_string())),
    }
}

/// The parsed form of a rule, parsed once per process. The crate's Pratt parser gives the same tree as its
/// ANTLR one (the standard macros expanded) in a tenth of the time, which is most of a cold `kbp validate`.
fn program(rule: &str) -> Result<Arc<Expression>, Failure> {
    type Compiled = Result<Arc<Expression>, String>;
    static CACHE: OnceLock<Mutex<HashMap<String, Compiled>>> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Default::default).lock().unwrap_or_else(PoisonError::into_inner);
    let compiled = match cache.get(rule) {
        Some(compiled) => compiled.clone(),
        None => {
            let compiled =
                PrattParser::default().parse(rule).map(Arc::new).map_err(|e| e.to_string().replace('\n', " "));
            cache.insert(rule.to_string(), compiled.clone());
            compiled
        }
    };
    compiled.map_err(|e| Failure::Limitation(format!("it does not parse: {e}")))
}

/// Whether `rule` parses, to the tree the crate's reference (ANTLR) parser gives it.
#[cfg(test)]
pub(super) fn parses_as_the_reference_parser(rule: &str) -> bool {
    let reference = environment().compile(rule).map(|p| format!("{:?}", p.expression()));
    matches!((program(rule), reference), (Ok(ours), Ok(theirs)) if format!("{ours:?}") == theirs)
}

/// The standard library, the strings extension, and the Kubernetes library functions the crate lacks.
fn environment() -> &'static Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Env::stdlib();
        let declared = env
            .add_extension(cel::extensions::strings)
            .and_then(|()| cel::add_overload!(env, fn matches: (CelString, CelString) -> Result<CelBool>, id = "matches"))
            .and_then(|()| cel::add_member_overload!(env, fn matches: (CelString, CelString) -> Result<CelBool>))
            .and_then(|()| cel::add_member_overload!(env, fn find: (CelString, CelString) -> Result<CelString>))
            .and_then(|()| {
                cel::add_member_overload!(env, fn find_all: (CelString, CelString) -> Result<CelList>, name = "findAll")
            });
        // The declarations are fixed; one that clashes is a bug of this module, found by its tests.
        declared.expect("the Kubernetes CEL library functions are declared once");
        Arc::new(env)
    })
}

fn regex(pattern: &CelString<'_>, function: &str) -> Result<Arc<regex::Regex>, ExecutionError> {
    compiled(pattern.as_ref()).map_err(|e| ExecutionError::function_error(function, e))
}

/// `s.matches(re)` (and `matches(s, re)`): whether `re` matches anywhere in `s`.
fn matches(this: &CelString<'_>, pattern: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    Ok(CelBool::from(regex(pattern, "matches")?.is_match(this.as_ref())))
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

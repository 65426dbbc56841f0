//! What a template sees: Go's dynamic values as Helm hands them over. Maps and lists are shared and mutable,
//! as Go maps and slices are: charts rely on it (Karpenter's `karpenter.patchLabelSelector` `set`s a key on a
//! map it reached through `.Values`, and the Deployment rendered afterwards shows it). Numbers read from YAML or
//! JSON are Go `float64`s, as Helm's values are; integer literals in a template and counts are `int`s.
//! Maps are ordered by key, as Go's `range`, `fmt` and `encoding/json` visit them.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;

use super::gofmt;

/// A Go `map[string]interface{}`, ordered by key as text/template's `range` visits it.
pub type Map = BTreeMap<String, Value>;

/// A method of a Go value a template can call, such as `.Capabilities.APIVersions.Has "policy/v1"`.
pub struct Method {
    /// The method's name, as the template writes it after the dot.
    pub name: &'static str,
    /// What calling it does: the call's arguments in, the result or a template error message out.
    pub call: Box<MethodFn>,
}

/// A method body: the call's arguments in, the result or an error message (without position) out.
pub type MethodFn = dyn Fn(&[Value]) -> Result<Value, String>;

/// A Go struct: fields a template may read; reading one it lacks is an error, unlike a map's missing key.
pub struct Struct {
    /// The Go type name errors and `typeOf` print, such as `chartutil.Capabilities`.
    pub type_name: &'static str,
    /// The exported fields, by their Go names (`KubeVersion`, `APIVersions`).
    pub fields: Map,
    /// What the struct's `String()` method returns, when it has one (`.Capabilities.KubeVersion` prints
    /// `v1.33.0`).
    pub shown: Option<String>,
}

/// A Go value a template handles; lists and maps are shared (cloning one clones the reference, as in Go).
#[derive(Clone)]
pub enum Value {
    /// Go's `nil`: a missing map key, an unset value.
    Nil,
    /// A Go `bool`.
    Bool(bool),
    /// A Go `int`: integer literals in templates, lengths and counts.
    Int(i64),
    /// A Go `float64`: every number read from YAML or JSON values.
    Float(f64),
    /// A Go `string`.
    Str(Rc<str>),
    /// A Go `[]interface{}`, shared and mutable.
    List(Rc<RefCell<Vec<Value>>>),
    /// A Go `map[string]interface{}`, shared and mutable.
    Map(Rc<RefCell<Map>>),
    /// A Go struct such as `.Capabilities` or `.Release`, read-only.
    Struct(Rc<Struct>),
    /// A method bound to its receiver, called with arguments from the template.
    Method(Rc<Method>),
}

impl Value {
    /// A Go string holding `text`.
    pub fn str(text: impl AsRef<str>) -> Value {
        Value::Str(Rc::from(text.as_ref()))
    }

    /// A new list of `items`, not shared with anything yet.
    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Rc::new(RefCell::new(items)))
    }

    /// A new map of `entries`, not shared with anything yet.
    pub fn map(entries: Map) -> Value {
        Value::Map(Rc::new(RefCell::new(entries)))
    }

    /// A bound method named `name` that runs `call`.
    pub fn method(name: &'static str, call: impl Fn(&[Value]) -> Result<Value, String> + 'static) -> Value {
        Value::Method(Rc::new(Method { name, call: Box::new(call) }))
    }

    /// Go's `reflect.Kind` name, as sprig's `kindOf` reports it.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Nil => "invalid",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float64",
            Value::Str(_) => "string",
            Value::List(_) => "slice",
            Value::Map(_) => "map",
            Value::Struct(_) => "struct",
            Value::Method(_) => "func",
        }
    }

    /// Go's type name, as error messages and sprig's `typeOf` print it.
    pub fn type_name(&self) -> String {
        match self {
            Value::Nil => "<nil>".into(),
            Value::List(_) => "[]interface {}".into(),
            Value::Map(_) => "map[string]interface {}".into(),
            Value::Struct(s) => s.type_name.into(),
            other => other.kind().into(),
        }
    }

    /// text/template's truth: false, zero, nil and empty strings, lists and maps are false.
    pub fn truthy(&self) -> bool {
        match self {
            Value::Nil => false,
            Value::Bool(b) => *b,
            Value::Int(n) => *n != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::List(l) => !l.borrow().is_empty(),
            Value::Map(m) => !m.borrow().is_empty(),
            Value::Struct(_) | Value::Method(_) => true,
        }
    }

    /// The text of a string; `None` for any other type (no conversion).
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The value as a template action prints it: like `fmt.Print`, but nothing at all prints as `<no value>`
    /// (which Helm then removes from the output).
    pub fn printed(&self) -> String {
        match self {
            Value::Nil => "<no value>".into(),
            other => other.to_string(),
        }
    }

    /// Deep copy (sprig's `deepCopy`): nothing shared with the original.
    pub fn deep_copy(&self) -> Value {
        match self {
            Value::List(l) => Value::list(l.borrow().iter().map(Value::deep_copy).collect()),
            Value::Map(m) => Value::map(m.borrow().iter().map(|(k, v)| (k.clone(), v.deep_copy())).collect()),
            other => other.clone(),
        }
    }

    /// From JSON (and so from YAML): numbers become `float64`, as in Helm's values.
    pub fn from_json(json: &serde_json::Value) -> Value {
        match json {
            serde_json::Value::Null => Value::Nil,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => Value::Float(n.as_f64().unwrap_or(0.0)),
            serde_json::Value::String(s) => Value::str(s),
            serde_json::Value::Array(items) => Value::list(items.iter().map(Value::from_json).collect()),
            serde_json::Value::Object(entries) => {
                Value::map(entries.iter().map(|(k, v)| (k.clone(), Value::from_json(v))).collect())
            }
        }
    }

    /// To JSON, as Go's `encoding/json` sees the value (structs by their fields; methods are left out).
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Nil | Value::Method(_) => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Int(n) => serde_json::Value::from(*n),
            Value::Float(f) => gofmt::json_number(*f),
            Value::Str(s) => serde_json::Value::String(s.to_string()),
            Value::List(l) => serde_json::Value::Array(l.borrow().iter().map(Value::to_json).collect()),
            Value::Map(m) => {
                serde_json::Value::Object(m.borrow().iter().map(|(k, v)| (k.clone(), v.to_json())).collect())
            }
            Value::Struct(s) => serde_json::Value::Object(
                s.fields
                    .iter()
                    .filter(|(_, v)| !matches!(v, Value::Method(_)))
                    .map(|(k, v)| (k.clone(), v.to_json()))
                    .collect(),
            ),
        }
    }
}

/// `fmt.Sprint`'s `%v`.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Nil => f.write_str("<nil>"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(n) => write!(f, "{n}"),
            Value::Float(x) => f.write_str(&gofmt::float_v(*x)),
            Value::Str(s) => f.write_str(s),
            Value::List(l) => {
                f.write_str("[")?;
                for (i, item) in l.borrow().iter().enumerate() {
                    if i > 0 {
                        f.write_str(" ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            Value::Map(m) => {
                f.write_str("map[")?;
                for (i, (k, v)) in m.borrow().iter().enumerate() {
                    if i > 0 {
                        f.write_str(" ")?;
                    }
                    write!(f, "{k}:{v}")?;
                }
                f.write_str("]")
            }
            Value::Struct(s) => match &s.shown {
                Some(shown) => f.write_str(shown),
                None => {
                    f.write_str("{")?;
                    for (i, v) in s.fields.values().filter(|v| !matches!(v, Value::Method(_))).enumerate() {
                        if i > 0 {
                            f.write_str(" ")?;
                        }
                        write!(f, "{v}")?;
                    }
                    f.write_str("}")
                }
            },
            Value::Method(m) => write!(f, "{}", m.name),
        }
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({self})", self.type_name())
    }
}

/// Go's `==` on two values of the same basic kind (text/template's `eq`); maps and lists are not comparable.
pub fn basic_equal(a: &Value, b: &Value) -> Result<bool, String> {
    Ok(match (a, b) {
        (Value::Nil, Value::Nil) => true,
        (Value::Nil, _) | (_, Value::Nil) => false,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x == y,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Int(_) | Value::Float(_) | Value::Bool(_) | Value::Str(_), _) => {
            return Err("incompatible types for comparison".into())
        }
        _ => return Err(format!("non-comparable type {}", a.type_name())),
    })
}

/// Equality of whole values (sprig's `deepEqual`, `has`, `uniq`, `without`).
pub fn deep_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::List(x), Value::List(y)) => {
            let (x, y) = (x.borrow(), y.borrow());
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(a, b)| deep_equal(a, b))
        }
        (Value::Map(x), Value::Map(y)) => {
            let (x, y) = (x.borrow(), y.borrow());
            x.len() == y.len() && x.iter().zip(y.iter()).all(|((ka, va), (kb, vb))| ka == kb && deep_equal(va, vb))
        }
        _ => basic_equal(a, b).unwrap_or(false),
    }
}

//! Schema patterns are written for the API server, in Go's RE2 syntax; the regex crate reads almost the same
//! language. [`go_pattern`] rewrites the few constructs the two read differently, and [`compiled`] keeps each
//! pattern compiled once per process.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use regex::Regex;

/// The compiled form of a schema pattern, compiled once per process. Shared, not cloned: a cloned `Regex`
/// starts with an empty match cache and would build its automaton again on every use.
pub(super) fn compiled(pattern: &str) -> Result<Arc<Regex>, String> {
    type Compiled = Result<Arc<Regex>, String>;
    static CACHE: OnceLock<Mutex<HashMap<String, Compiled>>> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Default::default).lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(compiled) = cache.get(pattern) {
        return compiled.clone();
    }
    let compiled = Regex::new(&go_pattern(pattern)).map(Arc::new).map_err(|e| e.to_string().replace('\n', " "));
    cache.insert(pattern.to_string(), compiled.clone());
    compiled
}

/// Rewrites a pattern written for the API server (Go's RE2 syntax) so the regex crate reads it the same way:
/// Go's `\d`, `\s` and `\w` are ASCII-only where the regex crate's are Unicode, and a `[` inside a character
/// class is a literal in Go but opens a nested class here.
pub(super) fn go_pattern(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(escaped) = chars.next() else {
                    out.push('\\');
                    break;
                };
                let ascii = match escaped {
                    'd' => Some(("0-9", false)),
                    'D' => Some(("0-9", true)),
                    's' => Some((r"\t\n\f\r ", false)),
                    'S' => Some((r"\t\n\f\r ", true)),
                    'w' => Some(("0-9A-Za-z_", false)),
                    'W' => Some(("0-9A-Za-z_", true)),
                    _ => None,
                };
                match ascii {
                    Some((set, false)) if in_class => out.push_str(set),
                    Some((set, negated)) if !in_class => {
                        out.push_str(if negated { "[^" } else { "[" });
                        out.push_str(set);
                        out.push(']');
                    }
                    _ => {
                        out.push('\\');
                        out.push(escaped);
                    }
                }
            }
            '[' if in_class => {
                if chars.peek() == Some(&':') {
                    // A POSIX class such as [:alpha:] means the same in both syntaxes.
                    out.push('[');
                    for posix in chars.by_ref() {
                        out.push(posix);
                        if posix == ']' {
                            break;
                        }
                    }
                } else {
                    out.push_str(r"\[");
                }
            }
            '[' => {
                in_class = true;
                out.push('[');
                if chars.peek() == Some(&'^') {
                    out.extend(chars.next());
                }
                // A ']' right after the opening bracket is a literal in both syntaxes.
                if chars.peek() == Some(&']') {
                    chars.next();
                    out.push_str(r"\]");
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            _ => out.push(c),
        }
    }
    out
}

//! Helm's rendering of a chart, in process: Go `text/template` (`lex`, `parse`, `exec`), the functions Helm
//! gives templates (`funcs`: the builtins, sprig, Helm's own) and the Go text forms they produce (`gofmt`,
//! `yaml`, `semver`).
//!
//! Written here rather than taken from a crate: the Go-template crates for Rust hold values by copy, and charts
//! rely on Go's maps being shared (Karpenter's chart patches `.Values.affinity` through `set` on a map it reached
//! by `range`), and on Helm's numbers being `float64`s.
//!
//! Knows nothing of kbp: it takes a chart, values, a release and capabilities and returns objects, and imports
//! nothing of the crate, so every stage may use it (the blueprint stage reads values files with its YAML reader,
//! `kubernetes` renders the controller with it).

mod api_versions;
pub mod chart;
mod exec;
pub(crate) mod funcs;
mod gofmt;
pub mod goyaml;
mod lex;
mod parse;
mod semver;
pub mod value;
pub mod values;
mod yaml;

#[cfg(test)]
mod tests;

pub use exec::TemplateSet;
pub use funcs::{to_json_text, to_yaml};
pub use value::{Map, Value};

/// A chart template that does not parse or does not execute, at its file, line and column.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", self.describe())]
pub struct TemplateError {
    /// The template file (`<chart>/templates/<file>`); `None` for an error not tied to a file.
    pub file: Option<String>,
    /// 1-based line in `file`; 0 when unknown.
    pub line: usize,
    /// 1-based column in `file`; 0 when unknown.
    pub col: usize,
    /// What is wrong, in text/template's or Helm's words where kbp mirrors them.
    pub message: String,
}

impl TemplateError {
    /// An error at `line`:`col` of the template file `file`.
    pub fn at(file: &str, line: usize, col: usize, message: impl Into<String>) -> Self {
        TemplateError { file: Some(file.to_string()), line, col, message: message.into() }
    }

    /// An error tied to no file or position.
    pub fn plain(message: impl Into<String>) -> Self {
        TemplateError { file: None, line: 0, col: 0, message: message.into() }
    }

    fn describe(&self) -> String {
        match &self.file {
            Some(file) if self.line > 0 => format!("{file}:{}:{}: {}", self.line, self.col, self.message),
            Some(file) => format!("{file}: {}", self.message),
            None => self.message.clone(),
        }
    }
}

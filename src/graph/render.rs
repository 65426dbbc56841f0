//! render
use super::ResourceGraph;
pub fn to_dot(_g: &ResourceGraph) -> String { String::new() }
pub fn to_json(_g: &ResourceGraph) -> serde_json::Value { serde_json::Value::Null }

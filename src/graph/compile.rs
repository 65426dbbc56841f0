//! compile
use crate::blueprint::Blueprint;
use super::{GraphError, ResourceGraph};
pub fn compile(_bp: &Blueprint) -> Result<ResourceGraph, GraphError> { ResourceGraph::from_resources(vec![]) }

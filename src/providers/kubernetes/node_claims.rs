//! The NodeClaims Karpenter runs for a NodePool (label `karpenter.sh/nodepool`), for a plan that deletes or
//! replaces the pool: Karpenter drains and terminates each of them when its pool goes.

use serde_json::Value;

use super::session::Session;
use crate::graph::Attrs;
use crate::providers::{Context, Result};

/// The names of the NodeClaims of NodePool `pool`, in the cluster `attrs` names (a node pool's state entry).
pub async fn of_pool(cx: &Context, attrs: &Attrs, pool: &str) -> Result<Vec<String>> {
    let session = Session::open(cx, attrs).await?;
    let selector = format!("karpenter.sh/nodepool={pool}");
    let claims = session.list("karpenter.sh/v1", "NodeClaim", None, Some(&selector), None).await?;
    let mut names: Vec<String> =
        claims.iter().filter_map(|c| c["metadata"]["name"].as_str().map(str::to_string)).collect();
    names.sort();
    Ok(names)
}

/// The Kubernetes name of a node pool, from its state entry's manifest.
pub fn pool_name(attrs: &Attrs) -> Option<&str> {
    attrs
        .get("manifest")
        .and_then(|m| m["metadata"]["name"].as_str())
        .or_else(|| attrs.get("name").and_then(Value::as_str))
}

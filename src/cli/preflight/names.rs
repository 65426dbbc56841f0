//! Preflight: every account- or region-unique name the stack is about to create (IAM roles, policies and
//! instance profiles, the EKS cluster, the SQS queue, the EventBridge rules, the KMS alias) is free, or is
//! already this stack's (tagged `kbp:stack` with its name: kbp adopts it when its create answers "already
//! exists"). A name held by anyone else would fail that create half-way through an apply.
//!
//! The names are read from the compiled graph, as the providers read them: each kind's descriptor says which
//! attribute holds the unique name it claims ([`UniqueName`]), and its provider says who holds one
//! ([`Provider::name_holder`], with the read call the provider uses, under the preflight timeout). A name state
//! already holds for the same address is the stack's own and is not asked about.
//!
//! [`Provider::name_holder`]: crate::providers::Provider::name_holder

use futures::future::join_all;
use serde_json::Value;

use super::{unchanged, Caller, Problem};
use crate::graph::{Address, Resource, ResourceGraph};
use crate::providers::preflight::{Holder, UniqueName};
use crate::providers::{Context, Registry};
use crate::state::State;

/// A unique name the stack will create.
struct Claim<'a> {
    resource: &'a Resource,
    /// What it is, for people: `IAM role`.
    what: &'static str,
    name: String,
}

pub(super) async fn check(
    cx: &Context,
    registry: &Registry,
    graph: &ResourceGraph,
    state: &State,
    me: impl Caller,
    importing: &[String],
) -> Vec<Problem> {
    let claims: Vec<Claim> = graph
        .resources()
        .filter(|r| !importing.contains(&r.address.to_string()))
        .filter_map(|r| claim(r, registry.get(&r.kind)?.descriptor().unique_name()?, state))
        .collect();
    if claims.is_empty() {
        return Vec::new();
    }
    // An IAM policy's ARN holds the account: the holders are asked once the caller is known (`cx.caller()`).
    let _ = me.await;
    let checked = join_all(claims.iter().map(|c| async move {
        let provider = registry.get(&c.resource.kind)?;
        match provider.name_holder(cx, &c.name, &c.resource.attrs).await {
            Ok(Holder::Nobody) => None,
            Ok(Holder::Stack(Some(stack))) if stack == cx.stack => None,
            Ok(Holder::Stack(tagged)) => Some(taken(c, &cx.stack, tagged.as_deref())),
            Err(e) => {
                let what = format!("cannot check whether {} {} is free", c.what, c.name);
                Some(Problem::call(
                    &what,
                    e,
                    "kbp reads it to know whether it may create it; check the permissions kbp runs with",
                ))
            }
        }
    }))
    .await;
    checked.into_iter().flatten().collect()
}

/// The unique name `r` will create, if it has one and state does not already hold the resource under it.
fn claim<'a>(r: &'a Resource, unique: UniqueName, state: &State) -> Option<Claim<'a>> {
    // A name only known once something else exists (a reference) cannot be asked about now.
    let name = r.attrs.get(unique.attr).and_then(Value::as_str)?;
    (!unchanged(state, r, unique.attr)).then(|| Claim { resource: r, what: unique.what, name: name.to_string() })
}

fn taken(c: &Claim<'_>, stack: &str, tagged: Option<&str>) -> Problem {
    let tagged = tagged.map(|other| format!(" (it is tagged kbp:stack={other})")).unwrap_or_default();
    let address = &c.resource.address;
    let field = if *address == Address::new("iam_role", "karpenter_node") {
        Some("karpenter.node_role_name")
    } else if *address == Address::new("iam_role", "karpenter_controller") {
        Some("karpenter.controller_role_name")
    } else {
        None
    };
    let rename = match field {
        Some(field) => format!("set {field} to another name (or choose another cluster.name)"),
        None => "choose another cluster.name (kbp derives this name from it)".to_string(),
    };
    Problem::new(
        format!("{} {} already exists and does not belong to stack {stack}{tagged}", c.what, c.name),
        format!("{rename}, or delete the {} if nothing uses it any more", c.what),
    )
}

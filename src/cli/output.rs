//! `kbp output`: what a user needs to reach and configure the stack, read from state (no AWS call).

use serde_json::{json, Value};

use super::args::{Global, OutputArgs};
use super::common;
use super::state::load_state;
use crate::graph::Address;
use crate::state::State;

/// (name, address, output) of every value `kbp output` shows.
const OUTPUTS: &[(&str, &str, &str)] = &[
    ("cluster_name", "eks_cluster.main", "name"),
    ("cluster_endpoint", "eks_cluster.main", "endpoint"),
    ("cluster_certificate_authority_data", "eks_cluster.main", "certificate_authority_data"),
    ("cluster_oidc_issuer", "eks_cluster.main", "oidc_issuer"),
    ("karpenter_controller_role_arn", "iam_role.karpenter_controller", "arn"),
    ("karpenter_node_role_name", "iam_role.karpenter_node", "name"),
    ("interruption_queue_name", "sqs_queue.interruption", "name"),
    ("interruption_queue_url", "sqs_queue.interruption", "url"),
];

pub(super) async fn run(a: OutputArgs, _g: &Global) -> u8 {
    let state = match load_state(&a.query).await {
        Ok(s) => s,
        Err(e) => return common::report(&e),
    };
    let values = collect(&state, &a);
    if let Some(name) = &a.name {
        let Some(value) = values.get(name) else {
            let known: Vec<&str> = values.as_object().into_iter().flatten().map(|(k, _)| k.as_str()).collect();
            eprintln!("error: no output named `{name}`\n  hint: the outputs are {}", known.join(", "));
            return common::FAILED;
        };
        match (value, a.raw) {
            (Value::Null, _) => {
                eprintln!("error: `{name}` is not known yet: the stack has not created it\n  hint: run `kbp apply`");
                return common::FAILED;
            }
            (Value::String(s), true) => println!("{s}"),
            (other, _) => println!("{other}"),
        }
        return 0;
    }
    if a.query.json {
        println!("{}", serde_json::to_string_pretty(&values).unwrap_or_default());
    } else {
        let width = OUTPUTS.iter().map(|(n, _, _)| n.len()).max().unwrap_or(0).max("kubeconfig_command".len());
        for (name, v) in values.as_object().into_iter().flatten() {
            let shown = match v {
                Value::String(s) => s.clone(),
                Value::Null => "(not created yet)".to_string(),
                other => other.to_string(),
            };
            println!("{name:width$} = {shown}");
        }
    }
    0
}

fn collect(state: &State, a: &OutputArgs) -> Value {
    let mut out = serde_json::Map::new();
    for (name, address, output) in OUTPUTS {
        let value = address.parse::<Address>().ok().and_then(|a| state.output(&a, output));
        out.insert(name.to_string(), value.unwrap_or(Value::Null));
    }
    // The same selection of state as this command's, so the suggestion finds the same stack.
    let selector = match (&a.query.blueprint, &a.query.state) {
        (Some(file), _) => format!(" -f {}", file.display()),
        (None, Some(location)) => format!(" --state {location}"),
        (None, None) => String::new(),
    };
    let kubeconfig = out.get("cluster_name").and_then(Value::as_str).map(|_| format!("kbp kubeconfig{selector}"));
    out.insert("kubeconfig_command".to_string(), json!(kubeconfig));
    Value::Object(out)
}

//! Preflight: every account- or region-unique name the stack is about to create (IAM roles, policies and
//! instance profiles, the EKS cluster, the SQS queue, the EventBridge rules, the KMS alias) is free, or is
//! already this stack's (tagged `kbp:stack` with its name: kbp adopts it when its create answers "already
//! exists"). A name held by anyone else would fail that create half-way through an apply.
//!
//! The names are read from the compiled graph, as the providers read them; a name state already holds for the
//! same address is the stack's own and is not asked about. Each kind is looked up with the read call its
//! provider uses, under the preflight timeout.

use std::collections::HashMap;

use aws_sdk_ec2::error::{ProvideErrorMetadata, SdkError};
use futures::future::join_all;
use serde_json::Value;

use super::{quick, unchanged, Caller, Problem};
use crate::graph::kinds;
use crate::graph::{Address, Resource, ResourceGraph};
use crate::providers::attrs::absent_if_gone;
use crate::providers::tags::STACK;
use crate::providers::{Context, ProviderError};
use crate::state::State;

/// A unique name the stack will create.
struct Claim<'a> {
    resource: &'a Resource,
    /// What it is, for people: `IAM role`.
    what: &'static str,
    name: String,
}

/// Whoever holds a name: nobody, or a resource tagged with this `kbp:stack` (or untagged).
enum Holder {
    Nobody,
    Stack(Option<String>),
}

pub(super) async fn check(
    cx: &Context,
    graph: &ResourceGraph,
    state: &State,
    me: impl Caller,
    importing: &[String],
) -> Vec<Problem> {
    let claims: Vec<Claim> = graph
        .resources()
        .filter(|r| !importing.contains(&r.address.to_string()))
        .filter_map(|r| claim(r, state))
        .collect();
    let checked = join_all(claims.iter().map(|c| {
        let me = me.clone();
        async move {
            match holder(cx, c, me).await {
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
        }
    }))
    .await;
    checked.into_iter().flatten().collect()
}

/// The unique name `r` will create, if it has one and state does not already hold the resource under it.
fn claim<'a>(r: &'a Resource, state: &State) -> Option<Claim<'a>> {
    let (what, key) = match r.kind.as_str() {
        kinds::IAM_ROLE => ("IAM role", "name"),
        kinds::IAM_POLICY => ("IAM policy", "name"),
        kinds::IAM_INSTANCE_PROFILE => ("IAM instance profile", "name"),
        kinds::EKS_CLUSTER => ("EKS cluster", "name"),
        kinds::SQS_QUEUE => ("SQS queue", "name"),
        kinds::EVENT_RULE => ("EventBridge rule", "name"),
        kinds::KMS_KEY => ("KMS alias", "alias"),
        _ => return None,
    };
    // A name only known once something else exists (a reference) cannot be asked about now.
    let name = r.attrs.get(key).and_then(Value::as_str)?;
    (!unchanged(state, r, key)).then(|| Claim { resource: r, what, name: name.to_string() })
}

async fn holder(cx: &Context, c: &Claim<'_>, me: impl Caller) -> Result<Holder, ProviderError> {
    let name = c.name.as_str();
    let found = match c.resource.kind.as_str() {
        kinds::IAM_ROLE => {
            let r = cx.iam().get_role().role_name(name).customize().config_override(quick!(aws_sdk_iam));
            read("iam:GetRole", r.send().await)?.map(|out| iam_holder(out.role.as_ref().map(|r| r.tags())))
        }
        kinds::IAM_POLICY => {
            // The ARN follows from the name, the path and the account; without a caller there is no account,
            // and preflight reports that instead.
            let Ok(me) = me.await else { return Ok(Holder::Nobody) };
            let path = c.resource.attrs.get("path").and_then(Value::as_str).unwrap_or("/");
            let arn = format!("arn:{}:iam::{}:policy{path}{name}", me.partition, me.account);
            let r = cx.iam().get_policy().policy_arn(&arn).customize().config_override(quick!(aws_sdk_iam));
            read("iam:GetPolicy", r.send().await)?.map(|out| iam_holder(out.policy.as_ref().map(|p| p.tags())))
        }
        kinds::IAM_INSTANCE_PROFILE => {
            let r = cx.iam().get_instance_profile().instance_profile_name(name).customize();
            let r = read("iam:GetInstanceProfile", r.config_override(quick!(aws_sdk_iam)).send().await)?;
            r.map(|out| iam_holder(out.instance_profile.as_ref().map(|p| p.tags())))
        }
        kinds::EKS_CLUSTER => {
            let r = cx.eks().describe_cluster().name(name).customize().config_override(quick!(aws_sdk_eks));
            read("eks:DescribeCluster", r.send().await)?.map(|out| holder_of(out.cluster.and_then(|c| c.tags)))
        }
        kinds::SQS_QUEUE => match queue_url(cx, name).await? {
            None => None,
            Some(url) => {
                let r = cx.sqs().list_queue_tags().queue_url(url).customize().config_override(quick!(aws_sdk_sqs));
                read("sqs:ListQueueTags", r.send().await)?.map(|out| holder_of(out.tags))
            }
        },
        kinds::EVENT_RULE => {
            let r = cx.eventbridge().describe_rule().name(name).customize();
            match read("events:DescribeRule", r.config_override(quick!(aws_sdk_eventbridge)).send().await)? {
                None => None,
                Some(rule) => {
                    let r = cx.eventbridge().list_tags_for_resource().resource_arn(rule.arn.unwrap_or_default());
                    let r = r.customize().config_override(quick!(aws_sdk_eventbridge)).send().await;
                    let tags = read("events:ListTagsForResource", r)?
                        .map(|out| out.tags().iter().map(|t| (t.key().to_string(), t.value().to_string())).collect());
                    Some(holder_of(tags))
                }
            }
        }
        kinds::KMS_KEY => alias_holder(cx, name).await?,
        _ => None,
    };
    Ok(found.unwrap_or(Holder::Nobody))
}

/// The answer of a read, `None` when what it reads does not exist.
fn read<O, E>(op: &str, r: Result<O, SdkError<E>>) -> Result<Option<O>, ProviderError>
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    absent_if_gone(r.map_err(|e| ProviderError::from_sdk(op, e)))
}

fn holder_of(tags: Option<HashMap<String, String>>) -> Holder {
    Holder::Stack(tags.unwrap_or_default().remove(STACK))
}

fn iam_holder(tags: Option<&[aws_sdk_iam::types::Tag]>) -> Holder {
    let stack = tags.unwrap_or_default().iter().find(|t| t.key() == STACK);
    Holder::Stack(stack.map(|t| t.value().to_string()))
}

async fn queue_url(cx: &Context, name: &str) -> Result<Option<String>, ProviderError> {
    let r = cx.sqs().get_queue_url().queue_name(name).customize().config_override(quick!(aws_sdk_sqs));
    Ok(read("sqs:GetQueueUrl", r.send().await)?.and_then(|out| out.queue_url))
}

/// Whoever holds KMS alias `alias`: the key it names, by that key's tags.
async fn alias_holder(cx: &Context, alias: &str) -> Result<Option<Holder>, ProviderError> {
    let r = cx.kms().describe_key().key_id(alias).customize().config_override(quick!(aws_sdk_kms));
    let Some(id) = read("kms:DescribeKey", r.send().await)?.and_then(|k| k.key_metadata).map(|m| m.key_id) else {
        return Ok(None);
    };
    let r = cx.kms().list_resource_tags().key_id(id).customize().config_override(quick!(aws_sdk_kms));
    match r.send().await.map_err(|e| ProviderError::from_sdk("kms:ListResourceTags", e)) {
        Ok(out) => {
            let tags = out.tags().iter().map(|t| (t.tag_key().to_string(), t.tag_value().to_string())).collect();
            Ok(Some(holder_of(Some(tags))))
        }
        // Another account's key, or an AWS-managed one: not the stack's.
        Err(e) if e.code.contains("AccessDenied") => Ok(Some(Holder::Stack(None))),
        Err(e) => Err(e),
    }
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

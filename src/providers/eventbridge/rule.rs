//! `aws_eventbridge_rule`: a rule on the default event bus and its one target (Karpenter's queue). The name
//! cannot change in place; the pattern, description, state (ENABLED or DISABLED), target and tags can. The
//! state is read back, so a rule disabled by hand is drift that the next apply enables again.
//!
//! PutRule creates or overwrites, so a create first checks that a rule of that name is not someone else's.
//! It also leaves the tags of an existing rule alone, which is why updates tag through Tag/UntagResource.

use std::collections::BTreeMap;

use async_trait::async_trait;
use aws_sdk_eventbridge::operation::describe_rule::DescribeRuleOutput;
use aws_sdk_eventbridge::types::{RuleState, Tag, Target};
use serde_json::{json, Value};

use super::targets;
use crate::graph::{kinds, Attrs};
use crate::providers::attrs::absent_if_gone;
use crate::providers::preflight::{quick, read, Holder};
use crate::providers::send::{send, send_pages};
use crate::providers::tagged::{self, found, owned_by_tags, Search};
use crate::providers::Found;
use crate::providers::{contract, contract::Constraint};
use crate::providers::{
    spec, stack_tags, tags, Applied, Context, Descriptor, Desired, Observed, Provider, ProviderError, Result,
    WithoutState,
};

pub(crate) struct Rule;

const KIND: &str = kinds::EVENT_RULE;

/// The attributes the compiler emits, references resolved ([`crate::graph::kinds`]).
type Spec = crate::graph::kinds::event_rule::Rule<String>;

/// What AWS accepts of what this kind sends ([`contract`]).
const SENDS: &[Constraint] = &[
    Constraint::new(
        "name",
        contract::Rule::Name {
            api: "EventBridge rule name",
            max: 64,
            chars: contract::EVENTS_NAME,
            unique: contract::Unique::InAccount("EventBridge rule"),
        },
    ),
    Constraint::new(
        "description",
        contract::Rule::Text { api: "EventBridge rule description", max: 512, chars: contract::ANY },
    ),
    contract::tags_of("EventBridge rule"),
];

#[async_trait]
impl Provider for Rule {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(KIND, WithoutState::Tags, SENDS).force_new(&["name"]).imported_by("its rule name")
    }

    async fn name_holder(&self, cx: &Context, name: &str, _attrs: &Attrs) -> Result<Holder> {
        let r = cx.eventbridge().describe_rule().name(name).customize();
        let Some(rule) = read("events:DescribeRule", r.config_override(quick!(aws_sdk_eventbridge)).send().await)?
        else {
            return Ok(Holder::Nobody);
        };
        let r = cx.eventbridge().list_tags_for_resource().resource_arn(rule.arn.unwrap_or_default());
        let r = r.customize().config_override(quick!(aws_sdk_eventbridge)).send().await;
        let tags = read("events:ListTagsForResource", r)?
            .map(|out| out.tags().iter().map(|t| (t.key().to_string(), t.value().to_string())).collect::<Vec<_>>());
        Ok(Holder::tagged(tags.unwrap_or_default()))
    }

    /// The rules on the default bus tagged for the stack (kbp names them after it): from the stack's tag query,
    /// or else every rule named after the stack, its tags read on its own. Rules on other buses are not kbp's.
    async fn tagged(&self, cx: &Context, search: &Search<'_>) -> Result<Vec<Found>> {
        if let Some(tagged) = search.in_tag_query(cx, "events").await {
            return Ok(tagged
                .into_iter()
                .filter_map(|(resource, address)| {
                    let name = resource.strip_prefix("rule/").filter(|n| !n.contains('/'))?;
                    Some(found(KIND, name, address, String::new(), Vec::new()))
                })
                .collect());
        }
        let rules = send_pages(
            cx,
            "events:ListRules",
            |token| cx.eventbridge().list_rules().name_prefix(search.stack()).set_next_token(token).send(),
            |page| {
                let rules = page.rules().iter().filter_map(|r| Some((r.name()?.to_string(), r.arn()?.to_string())));
                (rules.collect::<Vec<_>>(), page.next_token().map(str::to_string))
            },
        );
        let listed = rules.await?.into_iter().map(|(name, arn)| tagged::Listed { id: name, tags_at: arn, name: None });
        owned_by_tags(search.owner, KIND, listed, |arn| async move { list_tags(cx, &arn).await }).await
    }

    /// A pattern written as a JSON string compares as the object `read` parses it into.
    fn canonical(&self, mut desired: Attrs) -> Attrs {
        if let Some(pattern) = desired.get_mut("event_pattern") {
            if let Some(parsed) = pattern.as_str().and_then(|s| serde_json::from_str::<Value>(s).ok()) {
                *pattern = parsed;
            }
        }
        desired
    }

    async fn read(&self, cx: &Context, name: &str, prior: &Attrs) -> Result<Option<Observed>> {
        let Some(rule) = describe(cx, name).await? else { return Ok(None) };
        let listed = Listed {
            arn: rule_arn(&rule, name)?,
            description: rule.description,
            event_pattern: rule.event_pattern,
            state: rule.state,
        };
        observe(cx, name, listed, prior, Known::default()).await
    }

    /// The rules in one ListRules by their names' common prefix. What it leaves out is read in a batch too where
    /// it can be: a rule whose target last time was the queue `arn` and that ListRuleNamesByTarget(`arn`) still
    /// names keeps it (one call for every rule of the queue), and tags the stack's tag query confirms are not
    /// read again ([`stack_tags`]). Any other rule's targets and tags are read on their own. What the batch
    /// does not see until an update or a read of that one rule: a second target added by hand beside kbp's, or
    /// kbp's target given another ID with the same queue.
    async fn read_many(&self, cx: &Context, items: &[(String, Attrs)]) -> Result<Vec<Option<Observed>>> {
        let names: Vec<&str> = items.iter().map(|(name, _)| name.as_str()).collect();
        let prefix = common_prefix(&names);
        let listed = send_pages(
            cx,
            "events:ListRules",
            |token| {
                let prefix = Some(prefix.to_string()).filter(|p| !p.is_empty());
                cx.eventbridge().list_rules().set_name_prefix(prefix).set_next_token(token).send()
            },
            |page| (page.rules.unwrap_or_default(), page.next_token),
        )
        .await?;
        let targeted = targeted(cx, items).await?;
        let reads = items.iter().map(|(name, prior)| {
            let rule = listed.iter().find(|r| r.name() == Some(name.as_str())).cloned();
            let targeted = &targeted;
            async move {
                let Some(rule) = rule else { return Ok(None) };
                let arn = rule.arn.ok_or_else(|| no_arn("events:ListRules", name))?;
                let known = Known {
                    targets: kept_target(prior, |queue| targeted.get(queue).is_some_and(|rules| rules.contains(name))),
                    tags: stack_tags::confirmed(cx, &arn, prior).await,
                };
                let listed =
                    Listed { arn, description: rule.description, event_pattern: rule.event_pattern, state: rule.state };
                observe(cx, name, listed, prior, known).await
            }
        });
        futures::future::try_join_all(reads).await
    }

    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        let spec: Spec = spec::parse(KIND, desired.attrs)?;
        let Some(rule) = describe(cx, &spec.name).await? else { return Ok(None) };
        Ok(owned(cx, &rule_arn(&rule, &spec.name)?).await?.then_some(spec.name))
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        let spec: Spec = spec::parse(KIND, desired.attrs)?;
        if let Some(rule) = describe(cx, &spec.name).await? {
            // This stack's own rule (a create retried after kbp died mid-call): bring it to the spec.
            if owned(cx, &rule_arn(&rule, &spec.name)?).await? {
                return self.update(cx, &spec.name, desired.attrs, desired).await;
            }
            return Err(taken(cx, &spec.name));
        }
        let all_tags = to_sdk("events:PutRule", &desired.tags())?;
        let arn = put_rule(cx, &spec, Some(all_tags)).await?;
        targets::put(cx, &spec.name, &spec.target_id, &spec.target_arn).await?;
        Ok(Applied { id: spec.name.clone(), outputs: outputs(&spec.name, &arn) })
    }

    async fn update(&self, cx: &Context, name: &str, _prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        let spec: Spec = spec::parse(KIND, desired.attrs)?;
        let arn = put_rule(cx, &spec, None).await?;
        let current = targets::list(cx, name).await?.ok_or_else(|| vanished(name))?;
        let stale: Vec<String> =
            current.iter().filter(|t| t.id() != spec.target_id).map(|t| t.id().to_string()).collect();
        if !stale.is_empty() {
            targets::remove(cx, name, &stale).await?;
        }
        if !current.iter().any(|t| t.id() == spec.target_id && t.arn() == spec.target_arn) {
            targets::put(cx, name, &spec.target_id, &spec.target_arn).await?;
        }
        retag(cx, &arn, &desired.tags()).await?;
        Ok(Applied { id: name.to_string(), outputs: outputs(name, &arn) })
    }

    /// Targets first: AWS refuses to delete a rule that still has any.
    async fn delete(&self, cx: &Context, name: &str, _prior: &Attrs) -> Result<()> {
        let Some(current) = targets::list(cx, name).await? else { return Ok(()) };
        let ids: Vec<String> = current.iter().map(|t| t.id().to_string()).collect();
        if !ids.is_empty() {
            targets::remove(cx, name, &ids).await?;
        }
        let r = send(cx, "events:DeleteRule", &[], || cx.eventbridge().delete_rule().name(name).send()).await;
        absent_if_gone(r).map(drop)
    }
}

/// What DescribeRule and ListRules both say of a rule.
struct Listed {
    arn: String,
    description: Option<String>,
    event_pattern: Option<String>,
    state: Option<RuleState>,
}

/// What a batch already knows of a rule's targets and tags; `None` for what must be read.
#[derive(Default)]
struct Known {
    targets: Option<Vec<Target>>,
    tags: Option<BTreeMap<String, String>>,
}

/// What `read` reports of the rule `name`, with its targets and tags read unless `known`; `None` when it is
/// gone meanwhile.
async fn observe(cx: &Context, name: &str, rule: Listed, prior: &Attrs, known: Known) -> Result<Option<Observed>> {
    let found = match known.targets {
        Some(found) => found,
        None => match targets::list(cx, name).await? {
            Some(found) => found,
            None => return Ok(None),
        },
    };
    let tags = match known.tags {
        Some(tags) => tags,
        None => match list_tags(cx, &rule.arn).await? {
            Some(tags) => tags,
            None => return Ok(None),
        },
    };
    let event_pattern = match &rule.event_pattern {
        Some(text) => parse_pattern(name, text)?,
        None => Value::Null,
    };
    let target = reported_target(&found, prior.get("target_id").and_then(Value::as_str));
    let mut attrs = Attrs::new();
    attrs.insert("name".into(), json!(name));
    attrs.insert("description".into(), json!(rule.description));
    attrs.insert("event_pattern".into(), event_pattern);
    attrs.insert("state".into(), json!(rule.state.as_ref().map(RuleState::as_str)));
    attrs.insert("target_id".into(), json!(target.map(Target::id)));
    attrs.insert("target_arn".into(), json!(target.map(Target::arn)));
    attrs.insert("tags".into(), Value::Object(tags::user_tags(tags)));
    Ok(Some(Observed { attrs, outputs: outputs(name, &rule.arn) }))
}

/// The rules that target each queue kbp's rules targeted last time, by the queue's ARN: one
/// ListRuleNamesByTarget per queue (karpenter-mng has one queue for all its rules).
async fn targeted(cx: &Context, items: &[(String, Attrs)]) -> Result<BTreeMap<String, Vec<String>>> {
    let queues: std::collections::BTreeSet<&str> =
        items.iter().filter_map(|(_, prior)| prior.get("target_arn").and_then(Value::as_str)).collect();
    let lists = queues.into_iter().map(|queue| async move {
        Ok::<_, ProviderError>((queue.to_string(), targets::rules_targeting(cx, queue).await?))
    });
    Ok(futures::future::try_join_all(lists).await?.into_iter().collect())
}

/// The target a rule still has by the batch's answer: kbp's target of last time (`target_id` → `target_arn`
/// in `prior`) when `still_targets(target_arn)` says the rule still targets that queue; `None` (read the rule's
/// targets) otherwise.
fn kept_target(prior: &Attrs, still_targets: impl Fn(&str) -> bool) -> Option<Vec<Target>> {
    let id = prior.get("target_id").and_then(Value::as_str)?;
    let arn = prior.get("target_arn").and_then(Value::as_str)?;
    if !still_targets(arn) {
        return None;
    }
    Target::builder().id(id).arn(arn).build().ok().map(|t| vec![t])
}

/// The longest prefix all `names` share: ListRules takes one prefix.
fn common_prefix<'a>(names: &[&'a str]) -> &'a str {
    let Some(first) = names.first() else { return "" };
    let mut len = first.len();
    for name in &names[1..] {
        len = first.bytes().zip(name.bytes()).take(len).take_while(|(a, b)| a == b).count();
    }
    // Rule names are ASCII, but a prefix must still end on a character boundary.
    while !first.is_char_boundary(len) {
        len -= 1;
    }
    &first[..len]
}

/// Creates or overwrites the rule (on the default bus, in the spec's state) and returns its ARN. `tags` only take effect
/// when the rule is new.
async fn put_rule(cx: &Context, spec: &Spec, tags: Option<Vec<Tag>>) -> Result<String> {
    let op = "events:PutRule";
    let pattern = pattern_to_aws(op, &spec.event_pattern)?;
    let out = send(cx, op, &[], || {
        let call = cx
            .eventbridge()
            .put_rule()
            .name(&spec.name)
            .event_pattern(&pattern)
            .state(RuleState::from(spec.state.as_str()));
        call.set_description(spec.description.clone()).set_tags(tags.clone()).send()
    })
    .await?;
    out.rule_arn.ok_or_else(|| {
        ProviderError::new(op, "", "AWS's response has no rule ARN")
            .with_hint("retry; if it persists, the endpoint (AWS_ENDPOINT_URL?) may not be a real EventBridge API")
    })
}

/// The rule, or `None` when there is no rule of that name on the default bus.
async fn describe(cx: &Context, name: &str) -> Result<Option<DescribeRuleOutput>> {
    let r = send(cx, "events:DescribeRule", &[], || cx.eventbridge().describe_rule().name(name).send()).await;
    absent_if_gone(r)
}

fn rule_arn(rule: &DescribeRuleOutput, name: &str) -> Result<String> {
    rule.arn().map(str::to_string).ok_or_else(|| no_arn("events:DescribeRule", name))
}

fn no_arn(op: &str, name: &str) -> ProviderError {
    ProviderError::new(op, "", format!("AWS described rule {name} without its ARN"))
        .with_hint("retry; if it persists, the endpoint (AWS_ENDPOINT_URL?) may not be a real EventBridge API")
}

/// The target `read` reports: the one kbp manages (by the ID last applied) if it is there, else the only or
/// first one. Extra targets are removed by the next update.
fn reported_target<'a>(found: &'a [Target], managed_id: Option<&str>) -> Option<&'a Target> {
    found.iter().find(|t| Some(t.id()) == managed_id).or_else(|| found.first())
}

/// The pattern as the JSON string PutRule takes; a string attribute must itself be a JSON object.
fn pattern_to_aws(op: &str, pattern: &Value) -> Result<String> {
    let object = match pattern {
        Value::String(s) => serde_json::from_str::<Value>(s).ok().filter(Value::is_object),
        Value::Object(_) => Some(pattern.clone()),
        _ => None,
    };
    object.map(|o| o.to_string()).ok_or_else(|| {
        ProviderError::new(
            op,
            "InvalidEventPatternException",
            format!("the event pattern is not a JSON object: {pattern}"),
        )
        .with_hint("write the pattern as a table, such as { source = [\"aws.ec2\"], detail-type = [\"...\"] }")
    })
}

fn parse_pattern(name: &str, text: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| {
        ProviderError::new("events:DescribeRule", "", format!("the event pattern of rule {name} is not JSON: {e}"))
            .with_hint("fix or delete the rule in the EventBridge console, then run kbp again")
    })
}

/// All tags on the rule, kbp's included; `None` when the rule is gone.
async fn list_tags(cx: &Context, arn: &str) -> Result<Option<BTreeMap<String, String>>> {
    let r = send(cx, "events:ListTagsForResource", &[], || {
        cx.eventbridge().list_tags_for_resource().resource_arn(arn).send()
    })
    .await;
    Ok(absent_if_gone(r)?.map(|out| out.tags().iter().map(|t| (t.key().to_string(), t.value().to_string())).collect()))
}

/// Whether the rule carries this stack's `kbp:stack` tag, so kbp may adopt it.
async fn owned(cx: &Context, arn: &str) -> Result<bool> {
    Ok(list_tags(cx, arn).await?.is_some_and(|t| t.get(tags::STACK) == Some(&cx.stack)))
}

/// Makes the rule's tags exactly `want`: UntagResource for keys no longer wanted, TagResource for the rest.
async fn retag(cx: &Context, arn: &str, want: &BTreeMap<String, String>) -> Result<()> {
    let eb = cx.eventbridge();
    let current = list_tags(cx, arn).await?.unwrap_or_default();
    let tags::TagChanges { set, remove } = tags::changes(&current, want);
    if !remove.is_empty() {
        let remove = Some(remove);
        let r = send(cx, "events:UntagResource", &[], || {
            eb.untag_resource().resource_arn(arn).set_tag_keys(remove.clone()).send()
        });
        r.await?;
    }
    if !set.is_empty() {
        let set = Some(to_sdk("events:TagResource", &set)?);
        send(cx, "events:TagResource", &[], || eb.tag_resource().resource_arn(arn).set_tags(set.clone()).send())
            .await?;
    }
    Ok(())
}

fn to_sdk(op: &str, tags: &BTreeMap<String, String>) -> Result<Vec<Tag>> {
    tags::to_sdk(op, tags, |k, v| Tag::builder().key(k).value(v).build())
}

fn outputs(name: &str, arn: &str) -> Attrs {
    Attrs::from_iter([
        ("id".to_string(), json!(name)),
        ("arn".to_string(), json!(arn)),
        ("name".to_string(), json!(name)),
    ])
}

fn taken(cx: &Context, name: &str) -> ProviderError {
    ProviderError::new(
        "events:PutRule",
        "ResourceAlreadyExistsException",
        format!("an EventBridge rule named `{name}` already exists and is not tagged kbp:stack={}", cx.stack),
    )
    .with_hint("it belongs to another stack or tool; delete it (targets first) or give the cluster another name")
}

fn vanished(name: &str) -> ProviderError {
    ProviderError::new("events:ListTargetsByRule", "ResourceNotFoundException", format!("rule {name} no longer exists"))
        .with_hint("run `kbp plan` again: the rule will be planned for creation")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(id: &str) -> Target {
        Target::builder().id(id).arn(format!("arn:aws:sqs:us-west-2:1:{id}")).build().unwrap()
    }

    #[test]
    fn reports_the_managed_target_else_the_first() {
        let found = [target("other"), target("managed")];
        assert_eq!(reported_target(&found, Some("managed")).map(Target::id), Some("managed"));
        assert_eq!(reported_target(&found, Some("gone")).map(Target::id), Some("other"));
        assert!(reported_target(&[], Some("managed")).is_none());
    }

    #[test]
    fn the_last_target_is_kept_only_while_the_rule_still_targets_its_queue() {
        let prior = Attrs::from_iter([
            ("target_id".to_string(), json!("q")),
            ("target_arn".to_string(), json!("arn:aws:sqs:us-west-2:1:q")),
        ]);
        let kept = kept_target(&prior, |queue| queue == "arn:aws:sqs:us-west-2:1:q").expect("still targeted");
        assert_eq!(kept.iter().map(|t| (t.id(), t.arn())).collect::<Vec<_>>(), [("q", "arn:aws:sqs:us-west-2:1:q")]);
        assert!(kept_target(&prior, |_| false).is_none(), "no longer targeted: its targets are read");
        assert!(kept_target(&Attrs::new(), |_| true).is_none(), "no target last time (an import): read");
    }

    #[test]
    fn rules_are_listed_by_the_prefix_their_names_share() {
        let names = ["sbx-SpotInterruption", "sbx-Rebalance", "sbx-ScheduledChange"];
        assert_eq!(common_prefix(&names), "sbx-");
        assert_eq!(common_prefix(&["sbx-Rebalance"]), "sbx-Rebalance");
        assert_eq!(common_prefix(&["a-x", "b-x"]), "", "nothing shared: every rule is listed");
        assert_eq!(common_prefix(&[]), "");
    }

    #[test]
    fn patterns_go_out_as_json_objects_only() {
        let p = json!({"source": ["aws.ec2"]});
        assert_eq!(pattern_to_aws("op", &p).unwrap(), p.to_string());
        assert_eq!(pattern_to_aws("op", &Value::String(p.to_string())).unwrap(), p.to_string());
        assert!(pattern_to_aws("op", &json!(["aws.ec2"])).is_err());
        assert!(pattern_to_aws("op", &json!("not json")).is_err());
    }

    #[test]
    fn canonical_parses_a_string_pattern() {
        let p = json!({"source": ["aws.health"]});
        let a = Rule.canonical(Attrs::from_iter([("event_pattern".to_string(), Value::String(p.to_string()))]));
        assert_eq!(a["event_pattern"], p);
    }
}

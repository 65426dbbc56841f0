//! A kind added through the providers alone. A small provider written here, `example_log_group` (a CloudWatch
//! Logs log group with a retention), implements `Provider` and is added to the registry beside the built-in
//! kinds: nothing else of kbp is told about it. Plan, the walk, refresh, finding a stack by its tags and destroy
//! then handle it as they handle every kind, and the emulator, read back with the SDK, shows what they did.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;

use crate::support::*;
use kbp::exec::{self, Outcome};
use kbp::graph::{Address, Attrs, Resource, ResourceGraph};
use kbp::plan::{self, Action, Plan};
use kbp::providers::contract::{self, Chars, Constraint, Rule, Unique};
use kbp::providers::preflight::Holder;
use kbp::providers::send::send;
use kbp::providers::tagged::{Owner, Search};
use kbp::providers::{
    Applied, Context, Descriptor, Desired, Found, Observed, Provider, ProviderError, Registry, Result, WithoutState,
};
use kbp::state::{State, StateHandle};

const KIND: &str = "example_log_group";
const STACK: &str = "s9";

/// What AWS accepts of what the new kind sends: a name unique in the account and region, and tags.
const SENDS: &[Constraint] = &[
    Constraint::new(
        "name",
        Rule::Name { api: "log group name", max: 512, chars: LOG_GROUP_NAME, unique: Unique::InAccount("log group") },
    ),
    contract::tags_of("log group"),
];

/// CloudWatch Logs group names: `[.\-_/#A-Za-z0-9]`.
const LOG_GROUP_NAME: Chars =
    Chars { allows: |c| c.is_ascii_alphanumeric() || "._-/#".contains(c), described: "letters, digits and `._-/#`" };

/// The new kind: its ID is the group's name.
struct ExampleLogGroup;

impl ExampleLogGroup {
    async fn described(cx: &Context, name: &str) -> Result<Option<aws_sdk_cloudwatchlogs::types::LogGroup>> {
        let out = send(cx, "logs:DescribeLogGroups", &[], || {
            cx.logs().describe_log_groups().log_group_name_prefix(name).send()
        })
        .await?;
        Ok(out.log_groups().iter().find(|g| g.log_group_name() == Some(name)).cloned())
    }

    async fn tags(cx: &Context, arn: &str) -> Result<BTreeMap<String, String>> {
        let arn = arn.trim_end_matches(":*");
        let out =
            send(cx, "logs:ListTagsForResource", &[], || cx.logs().list_tags_for_resource().resource_arn(arn).send())
                .await?;
        Ok(out.tags().cloned().unwrap_or_default().into_iter().collect())
    }

    async fn retain(cx: &Context, name: &str, attrs: &Attrs) -> Result<()> {
        let days = attrs.get("retention_in_days").and_then(|d| d.as_i64()).unwrap_or(30) as i32;
        send(cx, "logs:PutRetentionPolicy", &[], || {
            cx.logs().put_retention_policy().log_group_name(name).retention_in_days(days).send()
        })
        .await?;
        Ok(())
    }

    fn name(desired: &Desired<'_>) -> Result<String> {
        let name = desired.attrs.get("name").and_then(|n| n.as_str());
        name.map(str::to_string).ok_or_else(|| ProviderError::new(KIND, "", "no name"))
    }
}

#[async_trait]
impl Provider for ExampleLogGroup {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(KIND, WithoutState::Tags, SENDS).force_new(&["name"])
    }

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let Some(g) = Self::described(cx, id).await? else { return Ok(None) };
        let attrs = json!({ "name": id, "retention_in_days": g.retention_in_days() });
        let outputs = json!({ "id": id });
        Ok(Some(Observed {
            attrs: attrs.as_object().cloned().unwrap_or_default(),
            outputs: outputs.as_object().cloned().unwrap_or_default(),
        }))
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        let name = Self::name(desired)?;
        let tags: std::collections::HashMap<String, String> = desired.tags().into_iter().collect();
        send(cx, "logs:CreateLogGroup", &[], || {
            cx.logs().create_log_group().log_group_name(&name).set_tags(Some(tags.clone())).send()
        })
        .await?;
        Self::retain(cx, &name, desired.attrs).await?;
        Ok(Applied { outputs: [("id".to_string(), json!(name))].into_iter().collect(), id: name })
    }

    async fn update(&self, cx: &Context, id: &str, _prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        Self::retain(cx, id, desired.attrs).await?;
        Ok(Applied { id: id.to_string(), outputs: [("id".to_string(), json!(id))].into_iter().collect() })
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        kbp::providers::send::remove(cx, "logs:DeleteLogGroup", &[], || {
            cx.logs().delete_log_group().log_group_name(id).send()
        })
        .await
    }

    async fn tagged(&self, cx: &Context, search: &Search<'_>) -> Result<Vec<Found>> {
        let out = send(cx, "logs:DescribeLogGroups", &[], || cx.logs().describe_log_groups().send()).await?;
        let mut found = Vec::new();
        for g in out.log_groups() {
            let (Some(name), Some(arn)) = (g.log_group_name(), g.log_group_arn().or(g.arn())) else { continue };
            if search.owner.owns_map(&Self::tags(cx, arn).await?) {
                found.push(kbp::providers::tagged::found(KIND, name, None, String::new(), Vec::new()));
            }
        }
        Ok(found)
    }

    async fn name_holder(&self, cx: &Context, name: &str, _attrs: &Attrs) -> Result<Holder> {
        let Some(g) = Self::described(cx, name).await? else { return Ok(Holder::Nobody) };
        let arn = g.log_group_arn().or(g.arn()).unwrap_or_default();
        Ok(Holder::tagged(Self::tags(cx, arn).await?))
    }
}

async fn walk(cx: &Arc<Context>, registry: &Registry, p: &Plan, state: State) -> (Outcome, State) {
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let handle = Arc::new(StateHandle::in_memory(state));
    let w = exec::Walk {
        cx: cx.clone(),
        registry,
        state: handle.clone(),
        parallelism: 4,
        events: tx,
        interrupt: Default::default(),
        sweep: None,
    };
    let outcome = exec::walk(p, w).await;
    (outcome, handle.snapshot())
}

fn actions(p: &Plan) -> Vec<(String, Action)> {
    p.changes.iter().map(|c| (c.address.to_string(), c.action)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kind_added_through_the_providers_alone_is_planned_made_found_by_its_tags_and_destroyed() {
    init_tracing();
    let em = Emulator::start_without_kubernetes();
    let cx = Arc::new(Context::from_sdk(em.sdk_config().await, STACK, REGION));
    let logs = aws_sdk_cloudwatchlogs::Client::new(&em.sdk_config().await);
    let mut registry = Registry::builtin();
    registry.add(ExampleLogGroup);
    assert_eq!(registry.get(KIND).map(|p| p.descriptor().without_state), Some(WithoutState::Tags));

    // Taken before it is made: whoever holds a unique name is the provider's to say.
    let held = ExampleLogGroup.name_holder(&cx, "s9-app", &Attrs::new()).await.unwrap();
    assert_eq!(held, Holder::Nobody);

    // Plan and apply: one create, made with kbp's tags and the desired retention.
    let address = Address::new("example_log_group", "app");
    let resource = Resource::new(address.clone(), KIND, json!({ "name": "s9-app", "retention_in_days": 7 }));
    let graph = ResourceGraph::from_resources(vec![resource]).unwrap();
    let p = plan::diff::diff(&graph, &State::new(STACK, REGION), &registry, &[]);
    assert_eq!(actions(&p), [(address.to_string(), Action::Create)]);
    let (outcome, state) = walk(&cx, &registry, &p, State::new(STACK, REGION)).await;
    assert!(outcome.ok(), "{outcome:?}\n{}", em.log());
    assert_eq!(state.get(&address).and_then(|s| s.id.clone()).as_deref(), Some("s9-app"));
    let groups = logs.describe_log_groups().log_group_name_prefix("s9-app").send().await.unwrap();
    let group = &groups.log_groups()[0];
    assert_eq!(group.retention_in_days(), Some(7));
    let arn = group.log_group_arn().or(group.arn()).unwrap().trim_end_matches(":*").to_string();
    let tags = logs.list_tags_for_resource().resource_arn(&arn).send().await.unwrap();
    assert_eq!(tags.tags().and_then(|t| t.get("kbp:stack")).map(String::as_str), Some(STACK));

    // Refreshed, it is unchanged; a retention changed in the blueprint is an update in place.
    let refreshed = plan::refresh(cx.clone(), &registry, &state, Some(&graph), 4).await.unwrap();
    assert!(plan::diff::diff(&graph, &refreshed.state, &registry, &refreshed.gone).changes.is_empty());
    let longer = Resource::new(address.clone(), KIND, json!({ "name": "s9-app", "retention_in_days": 14 }));
    let longer = ResourceGraph::from_resources(vec![longer]).unwrap();
    let p = plan::diff::diff(&longer, &refreshed.state, &registry, &refreshed.gone);
    assert_eq!(actions(&p), [(address.to_string(), Action::Update)]);
    let (outcome, state) = walk(&cx, &registry, &p, refreshed.state).await;
    assert!(outcome.ok(), "{outcome:?}");
    let groups = logs.describe_log_groups().log_group_name_prefix("s9-app").send().await.unwrap();
    assert_eq!(groups.log_groups()[0].retention_in_days(), Some(14));
    assert_eq!(
        ExampleLogGroup.name_holder(&cx, "s9-app", &Attrs::new()).await.unwrap(),
        Holder::Stack(Some(STACK.into()))
    );

    // State lost: the stack's search by tags finds it among everything else the registry's kinds look for.
    let owner = Owner { name: STACK, id: None };
    let found = kbp::teardown::stack(&cx, &registry, owner).await.unwrap();
    let ours: Vec<(&str, &str)> = found.iter().map(|f| (f.kind, f.id.as_str())).collect();
    assert_eq!(ours, [(KIND, "s9-app")]);

    // Destroyed from what the tags found, as `kbp destroy --from-tags` does; state's own copy goes the same way.
    let mut lost = State::new(STACK, REGION);
    let added = kbp::teardown::discover::merge(&mut lost, &found);
    let p = plan::diff::diff_destroy(&ResourceGraph::default(), &lost, &registry);
    assert_eq!(p.changes.len(), 1, "{:?}", actions(&p));
    assert!(added.contains(&p.changes[0].address));
    let (outcome, _) = walk(&cx, &registry, &p, lost).await;
    assert!(outcome.ok(), "{outcome:?}");
    let groups = logs.describe_log_groups().log_group_name_prefix("s9-app").send().await.unwrap();
    assert!(groups.log_groups().is_empty(), "the log group is gone");
    assert!(kbp::teardown::stack(&cx, &registry, owner).await.unwrap().is_empty());
    drop(state);
}

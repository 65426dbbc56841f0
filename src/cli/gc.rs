//! `kbp gc`: sandbox stacks past their time to live, found by their tags and destroyed, concurrently, as
//! completely as `kbp destroy --from-tags` does. A stack without a TTL is only touched when named.

use std::sync::Arc;

use anyhow::Context as _;
use time::OffsetDateTime;

use super::args::{GcArgs, Global, RunArgs};
use super::common::{self, FAILED};
use super::destroy::destroy_by_tags;
use crate::teardown::{self, StackInfo};
use crate::ui::{json, say, Ui};

/// Why a stack is (or is not) collected.
fn verdict(s: &StackInfo, a: &GcArgs, now: OffsetDateTime) -> Option<&'static str> {
    let named = a.stacks.contains(&s.name);
    let expired = s.expires.is_some_and(|e| e <= now);
    let old_enough = match (a.older_than, s.created) {
        (None, _) => true,
        (Some(age), Some(created)) => now - created >= age,
        (Some(_), None) => false,
    };
    match (named, expired, old_enough) {
        (true, _, _) => Some("named"),
        (false, true, true) => Some("expired"),
        _ => None,
    }
}

/// A stack's name, with its ID when it has one: `sbx (id 1f2e…)`.
fn shown(name: &str, id: Option<&str>) -> String {
    match id {
        Some(id) => format!("{name} (id {id})"),
        None => name.to_string(),
    }
}

/// How long ago the stack's cluster was made, when known: only `--older-than` has it read (a DescribeCluster per
/// stack), and a stack without a cluster has none.
fn age(s: &StackInfo, now: OffsetDateTime) -> Option<String> {
    s.created.map(|c| {
        humantime::format_duration(std::time::Duration::from_secs((now - c).whole_seconds().max(0) as u64)).to_string()
    })
}

/// A destroyed stack's state in this directory (the default place, `.kbp/<name>.state.json`), if it holds the
/// stack in this region, is emptied (a new serial, no resources), so the next plan starts afresh instead of
/// refreshing what is gone. Another region's or stack's state is left alone. Returns where it was.
async fn forget_local_state(name: &str, id: Option<&str>, region: &str) -> anyhow::Result<Option<String>> {
    let location = crate::state::location::default_local(name);
    let crate::state::Location::Local { path } = &location else { return Ok(None) };
    if !path.exists() {
        return Ok(None);
    }
    let locked = common::lock_state_if(&location, name, region, "gc").await?;
    let Some(mut locked) = locked else { return Ok(None) };
    // Another stack of the same name (another lineage) keeps its state.
    if id.is_some_and(|id| id != locked.state.lineage) {
        locked.guard.release().await?;
        return Ok(None);
    }
    locked.state.resources.clear();
    locked.state.serial += 1;
    locked.backend.persist(&locked.state).await?;
    let described = locked.backend.describe();
    locked.guard.release().await?;
    Ok(Some(described))
}

pub(super) async fn run(a: GcArgs, g: &Global) -> u8 {
    let ui = Ui::new(a.json, g.no_color);
    let result = async {
        let region = common::default_region(a.region.as_deref()).await?;
        let run = RunArgs {
            parallelism: 10,
            json: a.json,
            kubeconfig: None,
            context: None,
            progress_interval: std::time::Duration::from_secs(30),
        };
        let cx = common::context("", &region, &run).await;
        super::preflight::identity(&cx).await?;
        let now = OffsetDateTime::now_utc();
        let with_age = a.older_than.is_some();
        let stacks = teardown::stacks(&cx, with_age).await.context("looking for kbp stacks")?;
        let mut doomed = Vec::new();
        let mut rows = Vec::new();
        for s in &stacks {
            let why = verdict(s, &a, now);
            if let Some(why) = why {
                doomed.push((s.name.clone(), s.id.clone(), why));
            }
            rows.push(serde_json::json!({
                "name": s.name, "id": s.id, "owner": s.owner, "age": age(s, now),
                "expires": s.expires.and_then(|e| e.format(&time::format_description::well_known::Rfc3339).ok()),
                "action": why.map(|w| format!("destroy ({w})")).unwrap_or_else(|| "keep".into()),
            }));
        }
        for named in a.stacks.iter().filter(|n| !stacks.iter().any(|s| &s.name == *n)) {
            doomed.push((named.clone(), None, "named"));
            rows.push(serde_json::json!({ "name": named, "action": "destroy (named)" }));
        }
        if a.json {
            json::emit(&json::Line::Stacks { region: &region, stacks: &rows });
        } else if rows.is_empty() {
            println!("No kbp stacks in {region}.");
        } else {
            // The AGE column only with --older-than: without it no creation time was read.
            let age_column = |text: &str| if with_age { format!("{text:<10} ") } else { String::new() };
            println!("{:<28} {}{:<22} {:<50} ACTION", "STACK", age_column("AGE"), "EXPIRES", "OWNER");
            for r in &rows {
                let text = |k: &str| r[k].as_str().unwrap_or("-").to_string();
                println!(
                    "{:<28} {}{:<22} {:<50} {}",
                    text("name"),
                    age_column(&text("age")),
                    text("expires"),
                    text("owner"),
                    text("action")
                );
            }
        }
        if a.dry_run || doomed.is_empty() {
            return Ok(0);
        }
        let names: Vec<String> = doomed.iter().map(|(n, id, _)| shown(n, id.as_deref())).collect();
        if !a.auto_approve && !common::confirm(&format!("\nDestroy {}?", names.join(", ")))? {
            eprintln!("gc cancelled.");
            return Ok(FAILED);
        }
        let results = futures::future::join_all(doomed.iter().map(|(name, id, _)| {
            let run = run.clone();
            let region = region.clone();
            async move {
                let mut cx = common::context(name, &region, &run).await;
                cx.destroying = true;
                let (ok, n) = destroy_by_tags(Arc::new(cx), name, id.as_deref(), &run, ui).await?;
                Ok::<_, anyhow::Error>((name.clone(), id.clone(), ok, n))
            }
        }))
        .await;
        let (mut destroyed, mut incomplete) = (Vec::new(), Vec::new());
        for r in results {
            match r {
                Ok((name, id, true, n)) => {
                    say(format!("Destroyed stack {} ({n} resources).", shown(&name, id.as_deref())));
                    destroyed.push(name.clone());
                    match forget_local_state(&name, id.as_deref(), &region).await {
                        Ok(Some(described)) => say(format!("Emptied its state {described}: nothing of it is left.")),
                        Ok(None) => {}
                        Err(e) => eprintln!("warning: the stack is gone but its state could not be emptied: {e:#}"),
                    }
                }
                Ok((name, id, false, _)) => {
                    incomplete.push(name.clone());
                    eprintln!(
                        "Stack {}: some resources could not be deleted; run `kbp gc --stack {name}` again.",
                        shown(&name, id.as_deref())
                    );
                }
                Err(e) => {
                    common::report(&e);
                }
            }
        }
        let ok = destroyed.len() == doomed.len();
        json::summarize(serde_json::json!({ "destroyed": destroyed, "incomplete": incomplete }));
        Ok(if ok { 0 } else { FAILED })
    };
    result.await.unwrap_or_else(|e: anyhow::Error| common::report(&e))
}

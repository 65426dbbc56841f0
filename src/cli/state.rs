//! `kbp state …`: what state holds (`list`, `show`, `pull`), without touching AWS; and changing it by hand
//! (`push`, `rm`, `mv`, `migrate`), each under the state lock.

use std::path::PathBuf;

use anyhow::{bail, Context as _};

use super::args::{Global, StateCommand, StateQuery};
use super::common::{self, FAILED};
use crate::graph::Address;
use crate::state::{self, edit, Backend, Location, State, Status};

pub(super) async fn run(c: StateCommand, _g: &Global) -> u8 {
    let r = match c {
        StateCommand::List(q) => list(&q).await,
        StateCommand::Show { address, query } => show(&address, &query).await,
        StateCommand::Pull(q) => pull(&q).await,
        StateCommand::Push { file, force, query } => push(&file, force, &query).await,
        StateCommand::Rm { addresses, query } => rm(&addresses, &query).await,
        StateCommand::Mv { from, to, query } => mv(&from, &to, &query).await,
        StateCommand::Migrate { to, force, query } => migrate(to, force, &query).await,
    };
    r.unwrap_or_else(|e| common::report(&e))
}

/// The state a query names: `--state`/`KBP_STATE`, else the blueprint's (`-f`), else the only one in `.kbp/`.
pub(super) fn locate(q: &StateQuery) -> anyhow::Result<Location> {
    let bp = match &q.blueprint {
        Some(path) => Some(crate::blueprint::load(path, &q.sets).map_err(|d| anyhow::anyhow!("{}", d.render(false)))?),
        None => None,
    };
    match (&q.state, &bp) {
        (Some(given), Some(bp)) => return Ok(given.clone().in_region(&bp.cluster.region)),
        (Some(given), None) => return Ok(given.clone()),
        (None, Some(bp)) => return Ok(common::state_location(None, bp)),
        (None, None) => {}
    }
    let found: Vec<PathBuf> = std::fs::read_dir(".kbp")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().ends_with(".state.json"))
                .collect()
        })
        .unwrap_or_default();
    match found.as_slice() {
        [one] => Ok(Location::Local { path: one.clone() }),
        [] => {
            bail!("no state found in .kbp/\n  hint: pass --state LOCATION (a path or s3://BUCKET/KEY) or -f BLUEPRINT")
        }
        many => bail!(
            "several states in .kbp/ ({})\n  hint: pass --state LOCATION or -f BLUEPRINT",
            many.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// The state a query names, which must exist.
pub(super) async fn load_state(q: &StateQuery) -> anyhow::Result<State> {
    let location = locate(q)?;
    let backend = state::open(&location).await?;
    backend
        .load()
        .await?
        .with_context(|| format!("no state at {location}\n  hint: run `kbp apply` first, or check --state"))
}

/// The state a query names, locked for `operation`, which must exist.
async fn locked(q: &StateQuery, operation: &str) -> anyhow::Result<(Box<dyn Backend>, state::LockGuard, State)> {
    let location = locate(q)?;
    let backend = state::open(&location).await?;
    let guard = backend.lock(operation, q.lock_timeout).await?;
    let s = backend.load().await?.with_context(|| format!("no state at {location}"))?;
    Ok((backend, guard, s))
}

async fn list(q: &StateQuery) -> anyhow::Result<u8> {
    let s = load_state(q).await?;
    if q.json {
        let items: Vec<_> = s
            .resources
            .values()
            .map(|r| serde_json::json!({"address": r.address, "kind": r.kind, "id": r.id, "status": r.status}))
            .collect();
        println!("{}", serde_json::to_string_pretty(&items)?);
        return Ok(0);
    }
    let width = s.resources.keys().map(|a| a.to_string().len()).max().unwrap_or(0);
    for r in s.resources.values() {
        let id = match (&r.status, &r.id) {
            (Status::Creating { .. }, _) => "(create interrupted)".to_string(),
            (_, Some(id)) => id.clone(),
            (_, None) => "-".to_string(),
        };
        println!("{:width$}  {:32}  {id}", r.address.to_string(), r.kind);
    }
    Ok(0)
}

async fn show(address: &str, q: &StateQuery) -> anyhow::Result<u8> {
    let a: Address = address.parse()?;
    let s = load_state(q).await?;
    let Some(r) = s.get(&a) else {
        let close = s
            .resources
            .keys()
            .map(|k| k.to_string())
            .min_by_key(|k| strsim::levenshtein(k, address))
            .map(|k| format!("\n  hint: did you mean {k}?"))
            .unwrap_or_default();
        eprintln!("error: {address} is not in state{close}");
        return Ok(FAILED);
    };
    if q.json {
        println!("{}", serde_json::to_string_pretty(r)?);
    } else {
        println!("# {}  ({})", r.address, r.kind);
        println!("id           = {}", r.id.as_deref().unwrap_or("-"));
        println!(
            "status       = {}",
            match &r.status {
                Status::Ready => "ready",
                Status::Creating { .. } => "create interrupted",
            }
        );
        println!("dependencies = [{}]", r.dependencies.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", "));
        println!("attributes   = {}", serde_json::to_string_pretty(&r.attributes)?);
        println!("outputs      = {}", serde_json::to_string_pretty(&r.outputs)?);
    }
    Ok(0)
}

async fn pull(q: &StateQuery) -> anyhow::Result<u8> {
    let s = load_state(q).await?;
    println!("{}", serde_json::to_string_pretty(&s)?);
    Ok(0)
}

async fn push(file: &std::path::Path, force: bool, q: &StateQuery) -> anyhow::Result<u8> {
    let text = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    let pushed: State = serde_json::from_slice(&text).map_err(|e| {
        anyhow::anyhow!(
            "{} is not a kbp state document: {e}\n  hint: push a file written by `kbp state pull`",
            file.display()
        )
    })?;
    let location = locate(q)?;
    let backend = state::open(&location).await?;
    let guard = backend.lock("state push", q.lock_timeout).await?;
    let current = match backend.load().await {
        Err(state::StateError::Moved { .. } | state::StateError::Corrupt { .. }) if force => None,
        other => other?,
    };
    edit::check_push(current.as_ref(), &pushed, force)?;
    backend.persist(&pushed).await?;
    guard.release().await?;
    println!("Pushed {} to {location} (stack {}, serial {}).", file.display(), pushed.stack, pushed.serial);
    Ok(0)
}

fn addresses(texts: &[String]) -> anyhow::Result<Vec<Address>> {
    texts.iter().map(|t| t.parse::<Address>().map_err(|e| anyhow::anyhow!("`{t}`: {e}"))).collect()
}

async fn rm(texts: &[String], q: &StateQuery) -> anyhow::Result<u8> {
    let wanted = addresses(texts)?;
    let (backend, guard, mut s) = locked(q, "state rm").await?;
    let removed = edit::remove(&mut s, &wanted)?;
    s.serial += 1;
    backend.persist(&s).await?;
    guard.release().await?;
    for r in &removed {
        println!(
            "Removed {} ({} {}) from state; it still exists in AWS.",
            r.address,
            r.kind,
            r.id.as_deref().unwrap_or("-")
        );
    }
    Ok(0)
}

async fn mv(from: &str, to: &str, q: &StateQuery) -> anyhow::Result<u8> {
    let [from, to]: [Address; 2] =
        addresses(&[from.to_string(), to.to_string()])?.try_into().expect("invariant: two addresses in, two out");
    let (backend, guard, mut s) = locked(q, "state mv").await?;
    edit::rename(&mut s, &from, &to)?;
    s.serial += 1;
    backend.persist(&s).await?;
    guard.release().await?;
    println!("Moved {from} to {to}.");
    Ok(0)
}

async fn migrate(to: Location, force: bool, q: &StateQuery) -> anyhow::Result<u8> {
    let from = locate(q)?;
    // A bucket named without a region is taken to be beside the source bucket, else in the AWS configuration's.
    let to = match &from {
        Location::S3(state::location::S3Location { region: Some(region), .. }) => to.in_region(region),
        _ => to,
    };
    let (source, destination) = (state::open(&from).await?, state::open(&to).await?);
    let moved = edit::migrate(source.as_ref(), destination.as_ref(), force, q.lock_timeout).await?;
    for advice in destination.advice().await {
        eprintln!("warning: {advice}");
    }
    println!(
        "Moved the state of stack {} (serial {}, lineage {}) from {from} to {to}; {from} now points there.",
        moved.stack, moved.serial, moved.lineage
    );
    println!("  Use it with --state {to} (or KBP_STATE), or in the blueprint's [state] table.");
    Ok(0)
}

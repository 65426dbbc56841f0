//! `kbp state list` and `kbp state show`: what state holds, without touching AWS.

use std::path::PathBuf;

use anyhow::{bail, Context as _};

use super::args::{Global, StateCommand, StateQuery};
use super::common::{self, FAILED};
use crate::graph::Address;
use crate::state::{Backend, LocalBackend, State, Status};

pub async fn run(c: StateCommand, _g: &Global) -> u8 {
    let r = match c {
        StateCommand::List(q) => list(&q),
        StateCommand::Show { address, query } => show(&address, &query),
    };
    r.unwrap_or_else(|e| common::report(&e))
}

fn locate(q: &StateQuery) -> anyhow::Result<PathBuf> {
    if let Some(p) = &q.state {
        return Ok(p.clone());
    }
    if let Some(bp) = &q.blueprint {
        let bp = crate::blueprint::load(bp, &q.sets).map_err(|d| anyhow::anyhow!("{}", d.render(false)))?;
        return Ok(common::state_path(None, &bp.cluster.name));
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
        [one] => Ok(one.clone()),
        [] => bail!("no state found in .kbp/\n  hint: pass --state PATH or -f BLUEPRINT"),
        many => bail!(
            "several states in .kbp/ ({})\n  hint: pass --state PATH or -f BLUEPRINT",
            many.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        ),
    }
}

pub(super) fn load_state(q: &StateQuery) -> anyhow::Result<State> {
    let path = locate(q)?;
    LocalBackend::new(&path).load()?.with_context(|| format!("no state at {}", path.display()))
}

fn list(q: &StateQuery) -> anyhow::Result<u8> {
    let s = load_state(q)?;
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

fn show(address: &str, q: &StateQuery) -> anyhow::Result<u8> {
    let a: Address = address.parse()?;
    let s = load_state(q)?;
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

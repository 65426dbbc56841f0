//! `kbp import BLUEPRINT ADDRESS ID`: read an existing AWS resource by its ID and write it into state at an
//! address of the blueprint, under the state lock (`--dry-run`: read and show, write nothing). What is refused
//! and why is [`crate::plan::import`]'s; this strings it together and shows the result.

use anyhow::Context as _;

use super::args::{Global, ImportArgs};
use super::common;
use crate::graph::{Address, ResourceGraph};
use crate::plan::{import, render};
use crate::providers::{Context, Registry};
use crate::state::edit;

pub(super) async fn run(a: ImportArgs, g: &Global) -> u8 {
    let (bp, graph) = match common::load(&a.bp, crate::color::enabled(g.no_color, crate::color::Stream::Stderr)) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let color = !a.json && crate::color::enabled(g.no_color, crate::color::Stream::Stdout);
    run_loaded(&a, &bp, &graph, color).await.unwrap_or_else(|e| common::report(&e))
}

async fn run_loaded(
    a: &ImportArgs,
    bp: &crate::blueprint::Blueprint,
    graph: &ResourceGraph,
    color: bool,
) -> anyhow::Result<u8> {
    let address: Address = a.address.parse().map_err(|e| {
        anyhow::anyhow!(
            "`{}` is not an address: {e}\n  hint: addresses look like `iam_role.cluster` or `subnet.private[\"us-west-2a\"]`; `kbp graph --format json` lists them",
            a.address
        )
    })?;
    let (name, region) = (&bp.cluster.name, &bp.cluster.region);
    let locked = common::lock_stack(&a.state, bp, "import").await?;
    let registry = Registry::builtin();
    // What the blueprint and state alone refuse is refused before any AWS call.
    let (resource, provider) = import::target(graph, &locked.state, &registry, &address)?;
    let cx = Context::load(name, region).await;
    super::preflight::identity(&cx).await?;
    let imported =
        import::read(&cx, &registry, graph, &locked.state, (resource, provider.as_ref()), a.id.trim()).await?;

    if a.json {
        let doc = serde_json::json!({
            "address": imported.resource.address,
            "kind": imported.resource.kind,
            "id": imported.resource.id,
            "dry_run": a.dry_run,
            "resource": imported.resource,
            "change": imported.change,
            "uses": imported.uses,
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        let r = &imported.resource;
        println!("Read {} {} for {}.\n", r.kind, r.id.as_deref().unwrap_or("-"), r.address);
        for u in &imported.uses {
            println!(
                "  = {} ({}, {}): checked, and recorded with it",
                u.address,
                u.kind,
                u.id.as_deref().unwrap_or("-")
            );
        }
        if !imported.uses.is_empty() {
            println!();
        }
        match &imported.change {
            Some(c) => {
                println!("The next apply changes it to match the blueprint:\n");
                print!("{}", render::change(c, &render::Style { color }));
            }
            None => println!("It matches the blueprint: the next apply leaves it as it is.\n"),
        }
    }
    if a.dry_run {
        locked.guard.release().await?;
        if !a.json {
            println!("Dry run: state {} is unchanged.", locked.backend.describe());
        }
        return Ok(0);
    }
    let mut state = locked.state;
    for used in imported.uses {
        edit::insert(&mut state, used)?;
    }
    edit::insert(&mut state, imported.resource)?;
    state.serial += 1;
    locked.backend.persist(&state).await.context("writing the imported resource into state")?;
    locked.guard.release().await?;
    if !a.json {
        println!(
            "Imported {address} into state {}. `kbp plan` shows what the next apply changes across the stack.",
            locked.backend.describe()
        );
    }
    Ok(0)
}

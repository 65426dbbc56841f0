//! `kbp simulate`: what Karpenter would launch for a workload with the blueprint's NodePools, and what it costs,
//! before any cluster exists. Loads the blueprint and the workload files, the region's catalog (the cache, AWS,
//! or `--catalog FILE`), runs the pure [`crate::simulate`] and prints a table or the `simulation` event. Exit 1
//! when a pod cannot be placed, so a CI stage can guard a NodePool change.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::json;

use super::args::{Global, SimulateArgs};
use super::common::{self, FAILED};
use crate::simulate::catalog::Catalog;
use crate::simulate::cost::usd;
use crate::simulate::resources::cores;
use crate::simulate::workload::{self, Workload};
use crate::simulate::{Simulation, HOURS_PER_MONTH};
use crate::ui::json;

pub(super) async fn run(a: SimulateArgs, g: &Global) -> u8 {
    let (bp, _graph) =
        match common::load_with(&a.bp, crate::color::enabled(g.no_color, crate::color::Stream::Stderr), false) {
            Ok(loaded) => loaded,
            Err(code) => return code,
        };
    let mut work = Workload::default();
    for file in &a.workload {
        match read_workload(file) {
            Ok(w) => {
                work.groups.extend(w.groups);
                work.skipped.extend(w.skipped);
            }
            Err(e) => return common::report(&e),
        }
    }
    if work.groups.iter().all(|g| g.daemon) {
        return common::report(&anyhow::anyhow!(
            "the workload has no pods to place ({} read)\n  hint: give Deployments, StatefulSets, Jobs or Pods, or [[workload]] tables",
            a.workload.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        ));
    }
    let region = bp.cluster.region.clone();
    let (catalog, from_cache, warnings) = match &a.catalog {
        Some(path) => match read_catalog(path, &region) {
            Ok(c) => (c, true, vec![]),
            Err(e) => return common::report(&e),
        },
        None => {
            let sdk = crate::aws::load(Some(&region), None).await;
            match crate::catalog::load(&sdk, &region, a.refresh_catalog).await {
                Ok(l) => (l.catalog, l.from_cache, l.warnings.iter().map(ToString::to_string).collect()),
                Err(e) => return common::report(&anyhow::anyhow!(e)),
            }
        }
    };
    for w in &warnings {
        eprintln!("warning: {w}");
        json::problem(crate::diag::Severity::Warning, w);
    }
    let simulation = crate::simulate::simulate(&catalog, &bp, &work);
    let code = if simulation.pending_pods > 0 { FAILED } else { 0 };
    if a.json {
        let about = json!({ "region": catalog.region, "fetched_at": catalog.fetched_at, "from_cache": from_cache });
        json::emit(&json::Line::Simulation { simulation: &simulation, catalog: &about });
        json::summarize(json!({
            "nodes": simulation.nodes.len(),
            "pending_pods": simulation.pending_pods,
            "monthly_cost": simulation.monthly_cost,
        }));
    } else {
        print!("{}", render(&simulation, &catalog, &work));
    }
    if simulation.pending_pods > 0 {
        eprintln!(
            "error: {} pod(s) cannot be scheduled by any NodePool\n  hint: each pool's reason is listed above; change the pools' requirements, taints or limits, or the pods' constraints",
            simulation.pending_pods
        );
    }
    code
}

fn read_workload(path: &Path) -> anyhow::Result<Workload> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        anyhow::anyhow!("cannot read the workload {}: {e}\n  hint: give a YAML or .toml file", path.display())
    })?;
    Ok(workload::parse(&path.display().to_string(), &text)?)
}

/// The catalog in `path`, which must be `region`'s: another region's types are in other zones, and every pod
/// would be pending for no reason the user could see.
fn read_catalog(path: &Path, region: &str) -> anyhow::Result<Catalog> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        anyhow::anyhow!(
            "cannot read the catalog {}: {e}\n  hint: give a catalog file kbp wrote (its cache) or leave out --catalog",
            path.display()
        )
    })?;
    let catalog: Catalog = serde_json::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{}:{}:{}: not an instance-type catalog: {e}\n  hint: give a catalog file kbp wrote (its cache, `catalog/<region>.json`)",
            path.display(),
            e.line(),
            e.column()
        )
    })?;
    if catalog.region != region {
        anyhow::bail!(
            "{} is the catalog of {}, and the blueprint's cluster is in {region}\n  hint: give a catalog of {region} \
             (`kbp simulate` caches one as `catalog/{region}.json` when it reads the region from AWS)",
            path.display(),
            catalog.region
        );
    }
    Ok(catalog)
}

fn money(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), usd)
}

/// The table: pools, then pod groups, then why pods are pending, then the total.
fn render(s: &Simulation, catalog: &Catalog, work: &Workload) -> String {
    let mut out = String::new();
    let rows: Vec<[String; 7]> = s
        .node_pools
        .iter()
        .map(|p| {
            let list = |m: &std::collections::BTreeMap<String, u32>| {
                m.iter()
                    .map(|(k, n)| if *n > 1 { format!("{n}× {k}") } else { k.clone() })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            [
                p.name.clone(),
                p.weight.to_string(),
                p.nodes.to_string(),
                if p.nodes == 0 { "-".into() } else { list(&p.instance_types) },
                if p.nodes == 0 { "-".into() } else { list(&p.capacity_types) },
                if p.nodes == 0 { "-".into() } else { cores(p.capacity.cpu_milli) },
                if p.nodes == 0 { "-".into() } else { money(p.hourly_cost.map(|h| h * HOURS_PER_MONTH)) },
            ]
        })
        .collect();
    table(&mut out, ["NODEPOOL", "WEIGHT", "NODES", "INSTANCE TYPES", "CAPACITY TYPE", "VCPU", "$/MONTH"], &rows);
    out.push('\n');
    let rows: Vec<[String; 4]> = s
        .groups
        .iter()
        .map(|g| {
            let placed =
                in_pool_order(s, &g.node_pools).map(|(p, n)| format!("{p} {n}")).collect::<Vec<_>>().join(", ");
            [
                g.name.clone(),
                g.replicas.to_string(),
                if placed.is_empty() { "-".into() } else { placed },
                g.pending.to_string(),
            ]
        })
        .collect();
    table(&mut out, ["POD GROUP", "PODS", "PLACED ON", "PENDING"], &rows);
    for g in s.groups.iter().filter(|g| g.pending > 0) {
        let _ = writeln!(out, "\n{} pending in {}: no NodePool takes them:", g.pending, g.name);
        for (pool, why) in in_pool_order(s, &g.reasons) {
            let _ = writeln!(out, "  {pool}: {why}");
        }
    }
    if !work.skipped.is_empty() {
        let _ = writeln!(out, "\nnot workloads, skipped: {}", work.skipped.join(", "));
    }
    let _ = writeln!(
        out,
        "\n{} nodes for {} pods, {} pending; {} an hour, {} a month ({} prices of {})",
        s.nodes.len(),
        s.groups.iter().map(|g| g.replicas).sum::<u32>() - s.pending_pods,
        s.pending_pods,
        money(s.hourly_cost),
        money(s.monthly_cost),
        catalog.region,
        catalog.fetched_at.get(..10).unwrap_or(&catalog.fetched_at),
    );
    if !s.unpriced.is_empty() {
        let _ = writeln!(out, "no price in the catalog for: {}", s.unpriced.join(", "));
    }
    out
}

/// `by_pool`'s entries, heaviest NodePool first (as Karpenter tries them).
fn in_pool_order<'a, T>(
    s: &'a Simulation,
    by_pool: &'a std::collections::BTreeMap<String, T>,
) -> impl Iterator<Item = (&'a String, &'a T)> {
    let rank = |name: &str| s.node_pools.iter().position(|p| p.name == name).unwrap_or(usize::MAX);
    let mut entries: Vec<(&String, &T)> = by_pool.iter().collect();
    entries.sort_by_key(|(name, _)| rank(name));
    entries.into_iter()
}

fn table<const N: usize>(out: &mut String, head: [&str; N], rows: &[[String; N]]) {
    let mut widths = head.map(|h| h.chars().count());
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut l = String::new();
        for (i, (c, w)) in cells.iter().zip(widths).enumerate() {
            if i + 1 == N {
                l.push_str(c);
            } else {
                let _ = write!(l, "{c:<w$}  ");
            }
        }
        l.trim_end().to_string()
    };
    let _ = writeln!(out, "{}", line(head.to_vec()));
    for r in rows {
        let _ = writeln!(out, "{}", line(r.iter().map(String::as_str).collect()));
    }
}

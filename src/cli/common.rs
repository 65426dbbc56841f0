//! What the commands share: loading a blueprint (printing its diagnostics), finding and locking state, loading
//! AWS configuration, refreshing, and asking for confirmation.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

use anyhow::{bail, Context as _};

use super::args::{BlueprintArgs, RunArgs, StateArgs};
use crate::blueprint::{self, Blueprint};
use crate::diag::Severity;
use crate::graph::{self, ResourceGraph};

use crate::providers::Context;
use crate::state::{self, Backend, Location, LockGuard, State};
use crate::ui::json;

/// Exit code for errors.
pub(super) const FAILED: u8 = 1;

/// Reports an error: on stderr, and as a `problem` event when stdout is the `--json` stream.
pub(super) fn report(e: &anyhow::Error) -> u8 {
    // A failed preflight is several problems: each is an error of its own, with its hint.
    if let Some(failed) = e.downcast_ref::<super::preflight::Failed>() {
        for p in &failed.0 {
            eprintln!("error: {}\n  hint: {}", p.message, p.hint);
            json::emit(&json::Line::Problem { severity: Severity::Error, message: &p.message, hint: Some(&p.hint) });
        }
        return FAILED;
    }
    let text = format!("{e:#}");
    eprintln!("error: {text}");
    json::problem(Severity::Error, &text);
    FAILED
}

/// The plan `mode` asks for of the stack `loaded` against `state` (the stored state with the blueprint's moves
/// carried out, [`crate::plan::make::moved_state`]), narrowed and forced as `shaping` says: how `kbp plan` and
/// `kbp apply` ask [`crate::plan::make()`] for one.
pub(super) async fn make_plan(
    mode: crate::plan::Mode,
    cx: Arc<Context>,
    (blueprint, graph): (&Blueprint, &ResourceGraph),
    (state, moved): (&State, Vec<crate::plan::Moved>),
    shaping: &super::args::Shaping,
    run: &RunArgs,
) -> anyhow::Result<crate::plan::make::Made> {
    let registry = crate::providers::Registry::builtin();
    crate::plan::make(crate::plan::Request {
        mode,
        cx,
        registry: &registry,
        blueprint,
        graph,
        state,
        moved,
        refresh: shaping.refresh,
        parallelism: run.parallelism as usize,
        replace: &shaping.replace,
        targets: &shaping.targets,
    })
    .await
}

/// Reports a blueprint's diagnostics: rendered on stderr, and each as a `diagnostic` event under `--json`.
/// `color` is the command's choice (off under `--json` and `--no-color`); whether stderr shows colour at all is
/// [`crate::color`]'s decision, as everywhere.
pub(super) fn show_diagnostics(d: &crate::diag::Diagnostics, color: bool) {
    eprint!("{}", d.render(color && crate::color::enabled(false, crate::color::Stream::Stderr)));
    for item in d.items() {
        json::emit(&json::Line::Diagnostic(item));
    }
}

/// Parses, validates and compiles; on invalid input prints every diagnostic and returns the exit code.
pub(super) fn load(args: &BlueprintArgs, color: bool) -> Result<(Blueprint, ResourceGraph), u8> {
    load_with(args, color, true)
}

/// As [`load`]; `check_crds` false leaves out the check of the NodePools and EC2NodeClasses against the CRDs
/// (and any chart pull for it).
pub(super) fn load_with(args: &BlueprintArgs, color: bool, check_crds: bool) -> Result<(Blueprint, ResourceGraph), u8> {
    let mut loaded =
        blueprint::check_layered(&args.blueprint, &args.layers.overlays, &args.layers.sets).map_err(|d| {
            show_diagnostics(&d, color);
            FAILED
        })?;
    let crds = if check_crds { super::crd_check::fetched(&mut loaded) } else { super::crd_check::at_hand(&loaded) };
    super::crd_check::name_fields(&mut loaded, crds.as_ref());
    let graph = graph::compile(&loaded.blueprint).map_err(|e| {
        report(&anyhow::anyhow!(
            "the blueprint compiles to an invalid graph: {e}\n  hint: this is a kbp bug; please report it with the blueprint"
        ))
    })?;
    let addresses: Vec<String> = graph.in_order().iter().map(|r| r.address.to_string()).collect();
    loaded.imports(&addresses).map_err(|d| {
        show_diagnostics(&d, color);
        FAILED
    })?;
    super::aws_contract::check(&loaded, &graph).map_err(|d| {
        show_diagnostics(&d, color);
        FAILED
    })?;
    if let Some(crds) = crds.as_ref().filter(|_| check_crds) {
        super::crd_check::check(&loaded, &graph, crds).map_err(|d| {
            show_diagnostics(&d, color);
            FAILED
        })?;
    }
    super::chart_check::check(&mut loaded, &graph);
    if loaded.has_errors() {
        show_diagnostics(&loaded.warnings, color);
        return Err(FAILED);
    }
    if !loaded.warnings.items().is_empty() {
        show_diagnostics(&loaded.warnings, color);
    }
    Ok((loaded.blueprint, graph))
}

/// Prints what the blueprint should reconsider (a plan's `warnings`) on stderr.
pub(super) fn warn(warnings: &[String]) {
    for w in warnings {
        eprintln!("warning: {w}");
        json::problem(Severity::Warning, w);
    }
}

/// Where the stack's state lives: `--state` (or `KBP_STATE`), else the blueprint's `[state]` table, else the
/// default local file. A bucket without a region is taken to be in the stack's.
pub(super) fn state_location(explicit: Option<&Location>, bp: &Blueprint) -> Location {
    explicit.cloned().unwrap_or_else(|| Location::of_blueprint(bp)).in_region(&bp.cluster.region)
}

/// The blueprint's stack state, where [`state_location`] says, locked for `operation`.
pub(super) async fn lock_stack(state: &StateArgs, bp: &Blueprint, operation: &str) -> anyhow::Result<Locked> {
    let location = state_location(state.state.as_ref(), bp);
    lock_state(&location, state.lock_timeout, &bp.cluster.name, &bp.cluster.region, operation).await
}

/// Refuses a plan that would make a second copy of a stack AWS already holds: no state was found at `location`,
/// yet refresh found resources carrying this stack's tags. Most likely kbp runs where it does not see the
/// stack's state (another directory, another `--state`); `--adopt` says the state is truly lost.
pub(super) fn refuse_second_copy(
    locked: &Locked,
    adopted: &[crate::state::ResourceState],
    adopt: bool,
) -> anyhow::Result<()> {
    if locked.existed || adopted.is_empty() || adopt {
        return Ok(());
    }
    let some: Vec<String> = adopted
        .iter()
        .take(3)
        .map(|r| format!("{} {}", r.address, r.id.as_deref().unwrap_or("")).trim_end().to_string())
        .collect();
    bail!(
        "stack `{}` already exists in AWS ({} resources tagged kbp:stack={}, such as {}), but kbp found no state at {}\n  hint: run kbp where the stack's state is: beside the blueprint that made it (`--chdir DIR`), or name it with --state LOCATION (or KBP_STATE); if the state is lost, --adopt rebuilds it from the tags",
        locked.state.stack,
        adopted.len(),
        locked.state.stack,
        some.join(", "),
        locked.backend.describe()
    );
}

/// State locked for `operation`: the lock guard, the backend, and the state (new if there is none yet).
pub(super) struct Locked {
    pub guard: LockGuard,
    pub backend: Box<dyn Backend>,
    pub state: State,
    /// Whether a state existed (a new state's lineage is not fixed until its first write).
    pub existed: bool,
    /// Where it lives.
    pub location: Location,
}

/// Opens the state at `location` and locks it for `operation`; a state of another stack there is refused.
/// What the user should know about the backend (a bucket without versioning) is printed as warnings.
pub(super) async fn lock_state(
    location: &Location,
    lock_timeout: std::time::Duration,
    stack: &str,
    region: &str,
    operation: &str,
) -> anyhow::Result<Locked> {
    let (backend, guard, loaded) = open_locked(location, lock_timeout, operation).await?;
    let existed = loaded.is_some();
    let state = loaded.unwrap_or_else(|| State::new(stack, region));
    if state.stack != stack {
        bail!(
            "state {} belongs to stack `{}`, not `{stack}`\n  hint: pass --state for this stack's own state (or set `key` in the blueprint's [state] table)",
            backend.describe(),
            state.stack
        );
    }
    let mut state = state;
    if state.region != region {
        if !state.resources.is_empty() {
            bail!(
                "state {} holds stack `{stack}` in region {}, but the blueprint says {region}: kbp never moves a stack between regions (it would plan a second stack and orphan the first)\n  hint: set cluster.region back to {}; to move the stack, `kbp destroy` it with the old region first, or give the new one another cluster.name",
                backend.describe(),
                state.region,
                state.region
            );
        }
        // Nothing is left where the state was: it may follow the blueprint.
        state.region = region.to_string();
    }
    Ok(Locked { guard, backend, state, existed, location: location.clone() })
}

/// The state at `location`, locked for `operation`, if it holds `stack` in `region` (else nothing, unlocked).
pub(super) async fn lock_state_if(
    location: &Location,
    stack: &str,
    region: &str,
    operation: &str,
) -> anyhow::Result<Option<Locked>> {
    let (backend, guard, loaded) = open_locked(location, std::time::Duration::ZERO, operation).await?;
    match loaded {
        Some(state) if state.stack == stack && state.region == region => {
            Ok(Some(Locked { guard, backend, state, existed: true, location: location.clone() }))
        }
        _ => {
            guard.release().await?;
            Ok(None)
        }
    }
}

async fn open_locked(
    location: &Location,
    lock_timeout: std::time::Duration,
    operation: &str,
) -> anyhow::Result<(Box<dyn Backend>, LockGuard, Option<State>)> {
    let backend = state::open(location).await?;
    let guard = backend.lock(operation, lock_timeout).await?;
    let loaded = backend.load().await?;
    for advice in backend.advice().await {
        eprintln!("warning: {advice}");
        json::problem(Severity::Warning, &advice);
    }
    Ok((backend, guard, loaded))
}

pub(super) async fn aws(stack: &str, region: &str, run: &RunArgs) -> Arc<Context> {
    Arc::new(context(stack, region, run).await)
}

/// The provider context, still open to settings (destroy mode, sandbox tags) before it is shared.
pub(super) async fn context(stack: &str, region: &str, run: &RunArgs) -> Context {
    Context::load(stack, region).await.with_cluster_access(run.cluster_access())
}

/// `kbp:owner` (who applies, from STS) and `kbp:expires` (`ttl` from now, RFC 3339 UTC) for a sandbox stack.
pub(super) async fn lifetime_tags(
    cx: &Context,
    ttl: std::time::Duration,
) -> anyhow::Result<std::collections::BTreeMap<String, String>> {
    use crate::providers::tags::{EXPIRES, OWNER};
    let me = crate::providers::sts::caller_identity::lookup(cx).await.context("asking STS who applies the sandbox")?;
    let owner = me.arn;
    let expires = time::OffsetDateTime::now_utc() + ttl;
    let expires = expires
        .replace_nanosecond(0)
        .unwrap_or(expires)
        .format(&time::format_description::well_known::Rfc3339)
        .context("formatting the expiry")?;
    Ok([(OWNER.to_string(), owner), (EXPIRES.to_string(), expires)].into())
}

/// The region the AWS configuration names (profile, `AWS_REGION`), for commands that take no blueprint.
pub(super) async fn default_region(explicit: Option<&str>) -> anyhow::Result<String> {
    if let Some(r) = explicit {
        return Ok(r.to_string());
    }
    match aws_config::load_defaults(aws_config::BehaviorVersion::latest()).await.region() {
        Some(r) => Ok(r.to_string()),
        None => bail!("no region\n  hint: pass --region, or set AWS_REGION / the profile's region"),
    }
}

/// Asks on the terminal; refuses (with what to do) when there is no terminal to ask on.
pub(super) fn confirm(question: &str) -> anyhow::Result<bool> {
    if !std::io::stdin().is_terminal() {
        bail!("refusing to continue without confirmation: stdin is not a terminal\n  hint: pass --auto-approve (CI) after reviewing `kbp plan`");
    }
    eprint!("{question}\n  Only 'yes' will be accepted: ");
    std::io::stderr().flush().ok();
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).context("reading the answer")?;
    Ok(line.trim() == "yes")
}

/// The blueprint file, absolute, when its own `cluster.name` names the stack (no `--set cluster.name`, no
/// overlay that sets it): what state records, and what [`refuse_renamed_cluster`] compares.
pub(super) fn naming_blueprint(args: &super::args::BlueprintArgs) -> Option<String> {
    if args.layers.sets.iter().any(|s| s.trim_start().starts_with("cluster.name")) || !args.layers.overlays.is_empty() {
        return None;
    }
    std::fs::canonicalize(&args.blueprint).ok().map(|p| p.display().to_string())
}

/// Refuses to plan a new stack (no state at `locked`) from a blueprint whose `cluster.name` was changed in the
/// file: a local state beside the new one, made from the same file under its old name, still holds resources.
/// EKS cannot rename a cluster, so such a plan would create a second stack and leave the first one running.
pub(super) fn refuse_renamed_cluster(locked: &Locked, naming: Option<&str>, new_stack: bool) -> anyhow::Result<()> {
    let (Some(naming), false, false) = (naming, locked.existed, new_stack) else { return Ok(()) };
    let Location::Local { path } = &locked.location else { return Ok(()) };
    let Some(dir) = path.parent() else { return Ok(()) };
    let Ok(entries) = std::fs::read_dir(if dir.as_os_str().is_empty() { std::path::Path::new(".") } else { dir })
    else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let other = entry.path();
        if other == *path || !other.to_string_lossy().ends_with(".state.json") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&other) else { continue };
        let Ok(doc) = serde_json::from_str::<serde_json::Value>(&text) else { continue };
        let held = doc["resources"].as_array().is_some_and(|r| !r.is_empty());
        if held && doc["blueprint"].as_str() == Some(naming) {
            let old = doc["stack"].as_str().unwrap_or("?");
            bail!(
                "cluster.name is now `{}`, but the state at {} holds stack `{old}`, made from this blueprint under its old name\n  \
                 hint: EKS cannot rename a cluster, so this would make a second stack and leave `{old}` running; destroy \
                 it first (`kbp destroy {} --set cluster.name={old}`), set cluster.name back, or pass --new-stack to \
                 make `{}` beside it on purpose",
                locked.state.stack,
                other.display(),
                naming,
                locked.state.stack
            );
        }
    }
    Ok(())
}

//! Blueprint: TOML text → typed, validated [`Blueprint`] with defaults applied. Owns the blueprint schema (field
//! names, types, defaults, docs), `--set` overrides, and every check that can be made without AWS; also the
//! canonical text of a blueprint (`format`, for `kbp fmt`). It does not know what resources a blueprint becomes
//! (that is `graph`).
//!
//! The stages, in order, each collecting every problem it finds:
//! 1. `tree`: parse the TOML with spans (syntax errors stop here, as later stages would only guess), once the
//!    text is known to be within the size limit (`limits`);
//! 2. `overrides`: graft `--set path=value` arguments onto the tree, then check it is within the nesting and
//!    count limits;
//! 3. `walk`: check the tree against the `schema` (unknown keys, types, ranges, value rules), fill in literal
//!    defaults, and index where every field was written;
//! 4. `defaults`: fill in computed defaults and build the typed [`Blueprint`];
//! 5. `validate`: rules across fields, pointing at the fields through the index.

mod advisories;
pub(crate) mod chart_values;
pub mod crd_fields;
mod defaults;
pub mod format;
pub mod limits;
mod manifest_paths;
mod markdown;
pub mod model;
mod overrides;
pub(crate) mod rules;
mod schema;

pub(crate) use schema::default_at;
mod tree;
mod validate;
pub mod versions;

/// The path of field `key` under `parent`, as diagnostics and the field index spell it (`cluster.tags."a.b/c"`).
pub(crate) use tree::child as field_child;

pub(crate) use validate::allows_spot;
mod walk;

pub use advisories::advisories;
pub use markdown::reference_markdown;
pub use model::*;
pub use schema::json_schema::json_schema;

use std::path::Path;

use crate::diag::Diagnostics;

/// A blueprint that passed every check, with the warnings found on the way; from [`check_partial`], one that
/// may not have, with its errors among them.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The typed blueprint, defaults applied and paths made absolute.
    pub blueprint: Blueprint,
    /// Warnings found while loading (and, from [`check_partial`], the errors).
    pub warnings: Diagnostics,
    /// Where each `[[import]]` table's `to` is written (source and span), in order.
    import_at: Vec<(usize, std::ops::Range<usize>)>,
    /// Where each `[[moved]]` block's `to` is written.
    moved_at: Vec<(usize, std::ops::Range<usize>)>,
    /// Where every field was written, to report what the CRDs refuse in the rendered objects.
    index: std::sync::Arc<tree::Index>,
}

/// A problem the CRDs find in a rendered NodePool or EC2NodeClass.
pub struct ManifestProblem<'a> {
    /// The object's kind: `NodePool` or `EC2NodeClass`.
    pub kind: &'a str,
    /// The object's name, its key under `[node_pools]` or `[node_classes]`.
    pub name: &'a str,
    /// What the CRD refuses and where in the rendered object, in the CRD's own words.
    pub violation: crate::kubernetes::violation::Violation,
}

impl Loaded {
    /// Checks that every `[[import]]` and `[[moved]]` table's `to` is one of `addresses` (the compiled graph's):
    /// the blueprint alone cannot say which addresses it compiles to. The diagnostics name `import[i].to` (or
    /// `moved[i].to`) with its place.
    pub fn imports(&self, addresses: &[String]) -> Result<(), Diagnostics> {
        let mut diags = self.warnings.clone();
        let imports = self.blueprint.import.iter().map(|b| &b.to).zip(&self.import_at).enumerate();
        let moves = self.blueprint.moved.iter().map(|b| &b.to).zip(&self.moved_at).enumerate();
        let blocks = imports.map(|(i, b)| ("import", i, b)).chain(moves.map(|(i, b)| ("moved", i, b)));
        for (table, i, (to, place)) in blocks {
            if addresses.contains(to) || self.index.is_rejected(&format!("{table}[{i}].to")) {
                continue;
            }
            let (source, span) = place.clone();
            let close = rules::closest(to, addresses.iter().map(String::as_str));
            let hint = match close {
                Some(a) => format!("did you mean `{a}`? `kbp graph --format json` lists every address"),
                None => "`kbp graph --format json` lists every address".to_string(),
            };
            diags
                .error(source, span, format!("`{to}` is not an address of this blueprint"))
                .path(format!("{table}[{i}].to"))
                .expected("an address the blueprint compiles to")
                .hint(hint);
        }
        diags.sort();
        if diags.has_errors() {
            Err(diags)
        } else {
            Ok(())
        }
    }
}

/// A value the stack would send AWS, derived from the blueprint, that AWS would refuse (`providers::contract`
/// judges them), for [`Loaded::derived_problems`].
#[derive(Debug, Clone, PartialEq)]
pub struct DerivedProblem {
    /// The fields it comes from, most likely first: the first the user wrote is the one pointed at (a computed
    /// default has no place of its own, so the field it is computed from follows it).
    pub fields: Vec<String>,
    /// What AWS would refuse about the value, naming the value.
    pub message: String,
    /// What to change in the blueprint.
    pub hint: String,
}

impl Loaded {
    /// The derived values AWS would refuse, as blueprint diagnostics at the field each comes from. Err holds
    /// the errors and the warnings.
    pub fn derived_problems(&self, problems: &[DerivedProblem]) -> Result<(), Diagnostics> {
        let mut diags = self.warnings.clone();
        for p in problems {
            let written = p.fields.iter().find(|f| self.index.get(f).is_some());
            let Some(field) = written.or_else(|| p.fields.first()) else { continue };
            if self.index.is_rejected(field) {
                continue;
            }
            let (source, span) = self.index.locate(field).map_or((0, 0..0), |at| (at.source, at.span.clone()));
            // A value computed from another field can also be set outright: say so.
            let hint = match p.fields.first() {
                Some(first) if first != field => format!("{}, or set `{first}`", p.hint),
                _ => p.hint.clone(),
            };
            diags.error(source, span, p.message.clone()).path(field.clone()).expected("a value AWS accepts").hint(hint);
        }
        diags.sort();
        if diags.has_errors() {
            Err(diags)
        } else {
            Ok(())
        }
    }
}

impl Loaded {
    /// The CRDs' verdict on the rendered objects as blueprint diagnostics: each at the field that wrote it, with
    /// the CRD's own message. `crds` names the CRDs and where they came from. Err holds the errors and the warnings.
    pub fn manifest_problems(&self, problems: &[ManifestProblem], crds: &str) -> Result<(), Diagnostics> {
        let mut diags = self.warnings.clone();
        // What a refused value outside an object's own table became (a placeholder cluster name in a selector
        // term) is no finding of the CRD's.
        let rendered_from_refused = ["cluster", "karpenter", "vpc"].iter().any(|t| self.index.has_rejected_in(t));
        for p in problems.iter().filter(|_| !rendered_from_refused) {
            let (path, place) = manifest_paths::locate(&self.index, p.kind, p.name, &p.violation.path);
            let table = manifest_paths::table(p.kind, p.name);
            if self.index.is_rejected(&path) || self.errors_within(&table) {
                continue;
            }
            let (source, span) = place.map_or((0, 0..0), |at| (at.source, at.span.clone()));
            diags
                .error(source, span, format!("{} `{}`: {}: {}", p.kind, p.name, p.violation.path, p.violation.message))
                .path(path)
                .hint(format!("the API server would refuse it: this is what {crds} says"));
        }
        diags.sort();
        if diags.has_errors() {
            Err(diags)
        } else {
            Ok(())
        }
    }

    /// Where the field at `path` was written (source and span), or the start of the blueprint.
    pub(crate) fn place(&self, path: &str) -> (usize, std::ops::Range<usize>) {
        self.index.locate(path).map_or((0, 0..0), |at| (at.source, at.span.clone()))
    }

    /// Whether the blueprint has errors (only a blueprint from [`check_partial`] can).
    pub fn has_errors(&self) -> bool {
        self.warnings.has_errors()
    }

    /// Whether an error concerns the field at `path` or one inside it.
    fn errors_within(&self, path: &str) -> bool {
        self.warnings.items().iter().filter(|d| d.severity == crate::diag::Severity::Error).any(|d| {
            d.path.as_deref().is_some_and(|p| {
                p.strip_prefix(path).is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
            })
        })
    }

    /// Records that the CRD checks of the node classes and pools could not run, and why.
    pub fn crd_checks_skipped(&mut self, why: &str, hint: &str) {
        let place = self.index.locate("karpenter").map_or((0, 0..0), |at| (at.source, at.span.clone()));
        self.warnings
            .warning(place.0, place.1, format!("the NodePools and EC2NodeClasses were not checked against the Karpenter CRDs (their schema and CEL rules): {why}"))
            .path("karpenter")
            .hint(hint);
    }
}

/// Reads, parses and validates the blueprint at `path`, applying `sets` (`path=value` overrides) first.
pub fn load(path: &Path, sets: &[String]) -> Result<Blueprint, Diagnostics> {
    check(path, sets).map(|l| l.blueprint)
}

/// As [`load`], for text already in memory; `name` is what diagnostics call the file.
pub fn load_str(name: &str, text: &str, sets: &[String]) -> Result<Blueprint, Diagnostics> {
    check_str(name, text, sets).map(|l| l.blueprint)
}

/// As [`load`], keeping the warnings (things the APIs accept that will not work as probably meant).
pub fn check(path: &Path, sets: &[String]) -> Result<Loaded, Diagnostics> {
    check_layered(path, &[], sets)
}

/// As [`check`], with `overlays` laid over the blueprint in order (`-f prod.toml`): a later file's tables merge
/// into the earlier ones' key by key, its other values replace theirs, and each diagnostic names the file that
/// set the value. Paths in the blueprint (`crds_dir`, the state file) stay relative to the first file.
pub fn check_layered(path: &Path, overlays: &[std::path::PathBuf], sets: &[String]) -> Result<Loaded, Diagnostics> {
    complete(check_partial(path, overlays, sets)?)
}

/// As [`check_layered`], but a blueprint with errors is still built as far as it can be (each refused value
/// replaced by its default or a placeholder, and marked refused) and returned with the errors among its
/// diagnostics: for `kbp validate`, which asks the CRDs and AWS's constraints about what the errors leave alone
/// in the same run. Err only when nothing can be built (a syntax error, a limit passed).
pub fn check_partial(path: &Path, overlays: &[std::path::PathBuf], sets: &[String]) -> Result<Loaded, Diagnostics> {
    let mut texts = vec![(path.display().to_string(), limits::read(path)?)];
    for o in overlays {
        texts.push((o.display().to_string(), limits::read(o)?));
    }
    let layers: Vec<(&str, &str)> = texts.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
    let mut loaded = build(&layers, sets)?;
    // Paths in a blueprint are relative to the blueprint, not to wherever kbp runs; made absolute, so they mean
    // the same after `--chdir` and in the attributes a plan records.
    let base = path.parent().unwrap_or(Path::new(""));
    let beside = |relative: &Path| {
        let joined = base.join(relative);
        std::path::absolute(&joined).unwrap_or(joined).display().to_string()
    };
    chart_values::read(&mut loaded, base);
    let bp = &mut loaded.blueprint;
    if !bp.karpenter.chart.starts_with("oci://") {
        bp.karpenter.chart = beside(Path::new(&bp.karpenter.chart));
    }
    if let Some(dir) = &bp.karpenter.crds_dir {
        bp.karpenter.crds_dir = Some(beside(Path::new(dir)));
    }
    // A local state beside the blueprint: one state per stack, whichever directory kbp runs in.
    if bp.state.backend != "s3" {
        let file = bp.state.path.clone().unwrap_or_else(|| model::default_state_file(&bp.cluster.name));
        bp.state.path = Some(beside(Path::new(&file)));
    }
    Ok(loaded)
}

/// As [`load_str`], keeping the warnings. On failure the diagnostics hold the errors and the warnings.
pub fn check_str(name: &str, text: &str, sets: &[String]) -> Result<Loaded, Diagnostics> {
    let mut loaded = build(&[(name, text)], sets)?;
    chart_values::read(&mut loaded, Path::new(""));
    complete(loaded)
}

/// `loaded` if it has no errors, else its diagnostics.
fn complete(loaded: Loaded) -> Result<Loaded, Diagnostics> {
    if loaded.has_errors() {
        Err(loaded.warnings)
    } else {
        Ok(loaded)
    }
}

/// The stages in order, the blueprint built whenever the schema walk gets through, errors or not: the first
/// `(name, text)` overlaid by the others in order (see [`check_layered`]), then `sets`.
fn build(layers: &[(&str, &str)], sets: &[String]) -> Result<Loaded, Diagnostics> {
    let mut diags = Diagnostics::new();
    let mut root: Option<tree::Node> = None;
    for &(name, text) in layers {
        limits::check_size(name, text)?;
        let file = diags.add_source(name, text);
        let parsed = tree::parse(file, text, &mut diags);
        match &mut root {
            None => root = Some(parsed),
            Some(base) => tree::overlay(base, parsed),
        }
    }
    let Some(mut root) = root else { return Err(diags) };
    for set in sets {
        overrides::apply(&mut root, set, &mut diags);
    }
    if diags.has_errors() || !limits::check_depth(&root, &mut diags) || !limits::check_counts(&root, &mut diags) {
        diags.sort();
        return Err(diags);
    }
    let mut index = tree::Index::default();
    let doc = walk::walk(&root, &mut diags, &mut index);
    let blueprint = defaults::complete(doc, &mut index, &mut diags);
    if let Some(bp) = &blueprint {
        validate::validate(bp, &index, &mut diags);
    }
    diags.sort();
    let Some(blueprint) = blueprint else { return Err(diags) };
    let at = |path: String| index.locate(&path).map_or((0, 0..0), |p| (p.source, p.span.clone()));
    let import_at = (0..blueprint.import.len()).map(|i| at(format!("import[{i}].to"))).collect();
    let moved_at = (0..blueprint.moved.len()).map(|i| at(format!("moved[{i}].to"))).collect();
    Ok(Loaded { blueprint, warnings: diags, import_at, moved_at, index: std::sync::Arc::new(index) })
}

/// The effective blueprint, every default spelled out, as TOML that loads back to the same [`Blueprint`]
/// (`kbp validate --print`).
pub fn to_toml(bp: &Blueprint) -> String {
    let mut out = match toml::to_string(bp) {
        Ok(text) => text,
        // Every model type maps onto TOML; reaching this means a model change broke that.
        Err(e) => return format!("# kbp cannot render this blueprint as TOML: {e}\n"),
    };
    // The model drops disabled add-ons; without saying so here, loading the output would bring them back.
    for name in schema::DEFAULT_ADDONS.iter().filter(|n| !bp.addons.contains_key(**n)) {
        out.push_str(&format!("\n[addons.{name}]\nenabled = false\n"));
    }
    out
}

#[cfg(test)]
mod tests;

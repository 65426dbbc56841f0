//! The blueprint's NodePools and EC2NodeClasses, rendered as apply would send them, checked by the Karpenter
//! CRDs of the blueprint's release (structural schema and every CEL rule), offline: the CRDs come from
//! `karpenter.crds_dir` or kbp's chart cache (`kbp init` fills it). Without them the checks are reported as not
//! run, never passed silently.

use serde_json::Value;

use crate::blueprint::crd_fields;
use crate::blueprint::{Loaded, ManifestProblem};
use crate::diag::Diagnostics;
use crate::graph::value::{resolve, UNKNOWN};
use crate::graph::{kinds, ResourceGraph};
use crate::kubernetes::oci::{self, OfflineCrds};
use crate::kubernetes::{openapi, validate};

/// The NodePool and EC2NodeClass manifests of `graph`, values known only after apply left as [`UNKNOWN`].
pub fn custom_objects(graph: &ResourceGraph) -> Vec<Value> {
    graph
        .in_order()
        .into_iter()
        .filter(|r| r.kind == kinds::EC2_NODE_CLASS || r.kind == kinds::NODE_POOL)
        .filter_map(|r| r.attrs.get("manifest"))
        .map(|manifest| resolve(manifest, &|_: &crate::graph::Address, _: &str| None).0)
        .collect()
}

/// The release's CRDs, as read offline, and where from.
pub struct Crds {
    /// The CustomResourceDefinition documents.
    pub objects: Vec<Value>,
    /// The file, chart or directory they were read from, for messages.
    pub source: String,
}

/// The CRDs of the blueprint's Karpenter release from `karpenter.crds_dir` or kbp's cache, without the
/// network. When they cannot be had, a warning on `loaded` says which checks will not run and how to get them.
pub fn offline(loaded: &mut Loaded) -> Option<Crds> {
    let k = &loaded.blueprint.karpenter;
    let version = k.version.clone();
    match oci::offline_crds(&k.chart, &k.version, k.crds_dir.as_deref()) {
        Ok(OfflineCrds::Found(objects, source)) => Some(Crds { objects, source }),
        Ok(OfflineCrds::Missing(place)) => {
            loaded.crd_checks_skipped(
                &format!("the CRDs of Karpenter {version} are neither in karpenter.crds_dir nor in kbp's cache ({place})"),
                "run `kbp init BLUEPRINT` once where the chart's registry is reachable, or set karpenter.crds_dir to a directory holding the CRDs",
            );
            None
        }
        Err(e) => {
            let text = e.to_string();
            let (message, hint) = text.split_once("\n  hint: ").unwrap_or((&text, "check karpenter.crds_dir"));
            loaded.crd_checks_skipped(message, hint);
            None
        }
    }
}

/// The CRDs for a command that goes to AWS anyway: offline when they are at hand, else pulled into the cache
/// now (as apply would), so that the node classes' and pools' fields are named by the CRDs, never guessed.
pub fn fetched(loaded: &mut Loaded) -> Option<Crds> {
    let k = &loaded.blueprint.karpenter;
    let bp = &loaded.blueprint;
    let has_crd_fields =
        bp.node_classes.values().any(|c| !c.spec.is_empty()) || bp.node_pools.values().any(|p| !p.spec.is_empty());
    if k.crds_dir.is_none() && has_crd_fields {
        if let (Ok(handle), Ok(chart)) = (tokio::runtime::Handle::try_current(), k.chart.parse::<oci::ChartRef>()) {
            let version = k.version.trim_start_matches('v').to_string();
            let pulled = tokio::task::block_in_place(|| {
                handle.block_on(async { oci::ChartCache::default_location()?.chart(&chart, &version).await })
            });
            if let Err(e) = pulled {
                tracing::debug!("the Karpenter chart could not be pulled for the CRD checks: {e}");
            }
        }
    }
    offline(loaded)
}

/// The CRDs when they are at hand offline, saying nothing when they are not (for output without CRD checks).
pub fn at_hand(loaded: &Loaded) -> Option<Crds> {
    let k = &loaded.blueprint.karpenter;
    match oci::offline_crds(&k.chart, &k.version, k.crds_dir.as_deref()) {
        Ok(OfflineCrds::Found(objects, source)) => Some(Crds { objects, source }),
        _ => None,
    }
}

/// Names the node classes' and pools' other fields by the CRDs, in place.
pub fn name_fields(loaded: &mut Loaded, crds: Option<&Crds>) {
    crd_fields::name_all(&mut loaded.blueprint, crds.map(|c| c.objects.as_slice()));
}

/// Checks the custom objects of `graph` against `crds`; a problem is an error at the blueprint field behind it.
pub fn check(loaded: &Loaded, graph: &ResourceGraph, crds: &Crds) -> Result<(), Diagnostics> {
    let version = &loaded.blueprint.karpenter.version;
    let objects = custom_objects(graph);
    let mut problems = Vec::new();
    let mut validator = openapi::Validator::new(&crds.objects);
    for object in &objects {
        let kind = object["kind"].as_str().unwrap_or("?");
        let name = object["metadata"]["name"].as_str().unwrap_or("?");
        for violation in validate::custom_object(&mut validator, object, UNKNOWN) {
            problems.push(ManifestProblem { kind, name, violation });
        }
    }
    loaded.manifest_problems(&problems, &format!("the Karpenter {version} CRD (read from {})", crds.source))
}

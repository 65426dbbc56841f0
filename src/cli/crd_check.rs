//! The blueprint's NodePools and EC2NodeClasses, rendered as apply would send them, checked by the Karpenter
//! CRDs of the blueprint's release (structural schema and every CEL rule), offline: the CRDs come from
//! `karpenter.crds_dir` or kbp's chart cache (`kbp init` fills it). Without them the checks are reported as not
//! run, never passed silently.

use serde_json::Value;

use crate::blueprint::{Loaded, ManifestProblem};
use crate::diag::Diagnostics;
use crate::graph::value::{resolve, UNKNOWN};
use crate::graph::{kinds, ResourceGraph};
use crate::kubernetes::oci::{self, OfflineCrds};
use crate::kubernetes::validate;

/// The NodePool and EC2NodeClass manifests of `graph`, values known only after apply left as [`UNKNOWN`].
pub fn custom_objects(graph: &ResourceGraph) -> Vec<Value> {
    graph
        .in_order()
        .into_iter()
        .filter(|r| r.kind == kinds::EC2_NODE_CLASS || r.kind == kinds::NODE_POOL)
        .filter_map(|r| {
            let resolved = resolve(&Value::Object(r.attrs.clone()), &|_: &crate::graph::Address, _: &str| None).0;
            resolved.get("manifest").cloned()
        })
        .collect()
}

/// Checks the custom objects of `graph` against the CRDs; a problem is an error at the blueprint field behind
/// it. When the CRDs cannot be had offline, a warning on `loaded` says which checks did not run and how to get
/// them.
pub fn check(loaded: &mut Loaded, graph: &ResourceGraph) -> Result<(), Diagnostics> {
    let k = &loaded.blueprint.karpenter;
    let found = oci::offline_crds(&k.chart, &k.version, k.crds_dir.as_deref());
    let version = k.version.clone();
    let (crds, source) = match found {
        Ok(OfflineCrds::Found(crds, source)) => (crds, source),
        Ok(OfflineCrds::Missing(place)) => {
            loaded.crd_checks_skipped(
                &format!("the CRDs of Karpenter {version} are neither in karpenter.crds_dir nor in kbp's cache ({place})"),
                "run `kbp init BLUEPRINT` once where the chart's registry is reachable, or set karpenter.crds_dir to a directory holding the CRDs",
            );
            return Ok(());
        }
        Err(e) => {
            let text = e.to_string();
            let (message, hint) = text.split_once("\n  hint: ").unwrap_or((&text, "check karpenter.crds_dir"));
            loaded.crd_checks_skipped(message, hint);
            return Ok(());
        }
    };
    let objects = custom_objects(graph);
    let mut problems = Vec::new();
    for object in &objects {
        let kind = object["kind"].as_str().unwrap_or("?");
        let name = object["metadata"]["name"].as_str().unwrap_or("?");
        for violation in validate::custom_object(&crds, object, UNKNOWN) {
            problems.push(ManifestProblem { kind, name, violation });
        }
    }
    loaded.manifest_problems(&problems, &format!("the Karpenter {version} CRD (read from {source})"))
}

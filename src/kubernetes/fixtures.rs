//! Test data shared by the unit tests of the manifest checks.

use std::path::PathBuf;

use serde_json::Value;

/// Karpenter's published v1.14.1 chart, from the shared reference data beside the CRDs.
pub(crate) fn karpenter_chart() -> crate::helm::chart::Chart {
    let crds = std::env::var_os("KBP_KARPENTER_CRDS_DIR").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/reference/karpenter-v1.14.1/crds")
    });
    let dir = crds.join("../chart/karpenter");
    crate::helm::chart::Chart::from_dir(&dir).unwrap_or_else(|e| {
        panic!("Karpenter's chart is expected in {} (beside KBP_KARPENTER_CRDS_DIR): {e}", dir.display())
    })
}

/// The official Karpenter CRDs (v1.14.1), read from the shared reference data; never copied into the project.
pub(crate) fn karpenter_crds() -> Vec<Value> {
    let dir = std::env::var_os("KBP_KARPENTER_CRDS_DIR").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/reference/karpenter-v1.14.1/crds")
    });
    ["karpenter.k8s.aws_ec2nodeclasses.yaml", "karpenter.sh_nodeclaims.yaml", "karpenter.sh_nodepools.yaml"]
        .iter()
        .map(|file| {
            let path = dir.join(file);
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
                panic!(
                    "the Karpenter v1.14.1 CRDs are expected in {} (set KBP_KARPENTER_CRDS_DIR to their directory): \
                     cannot read {}: {e}",
                    dir.display(),
                    path.display()
                )
            });
            serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{} is not YAML: {e}", path.display()))
        })
        .collect()
}

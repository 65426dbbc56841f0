//! `kbp init`: fetch once what the blueprint's checks need, as `terraform init` fetches providers — the Karpenter
//! chart of the blueprint's release, into kbp's cache, so that `kbp validate` checks the NodePools and
//! EC2NodeClasses against its CRDs offline from then on.

use super::args::{Global, InitArgs};
use super::common::{self, FAILED};
use crate::blueprint;
use crate::kubernetes::oci;

pub(super) async fn run(a: InitArgs, g: &Global) -> u8 {
    let loaded = match blueprint::check_layered(&a.bp.blueprint, &a.bp.layers.overlays, &a.bp.layers.sets) {
        Ok(loaded) => loaded,
        Err(d) => {
            eprint!("{}", d.render(crate::color::enabled(g.no_color, crate::color::Stream::Stderr)));
            return FAILED;
        }
    };
    let k = &loaded.blueprint.karpenter;
    let version = k.version.trim_start_matches('v').to_string();
    let result = oci::release_crds(&k.chart, &version, k.crds_dir.as_deref());
    match result.await {
        Ok((crds, place)) => {
            let names: Vec<&str> = crds.iter().filter_map(|c| c.pointer("/metadata/name")?.as_str()).collect();
            println!("Karpenter {version}: {} CRDs ({}) from {place}", names.len(), names.join(", "));
            0
        }
        Err(e) => common::report(&anyhow::anyhow!(e)),
    }
}

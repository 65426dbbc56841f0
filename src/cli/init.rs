//! `kbp init`: fetch once what the blueprint's checks need, as `terraform init` fetches providers — the Karpenter
//! chart of the blueprint's release, into kbp's cache, so that `kbp validate` checks the NodePools and
//! EC2NodeClasses against its CRDs offline from then on.

use super::args::{Global, InitArgs};
use super::common::{self, FAILED};
use crate::blueprint;
use crate::kubernetes::oci;

pub async fn run(a: InitArgs, g: &Global) -> u8 {
    let loaded = match blueprint::check(&a.bp.blueprint, &a.bp.sets) {
        Ok(loaded) => loaded,
        Err(d) => {
            eprint!("{}", d.render(!g.no_color));
            return FAILED;
        }
    };
    let k = &loaded.blueprint.karpenter;
    let version = k.version.trim_start_matches('v').to_string();
    let result = async {
        let (crds, place) = match &k.crds_dir {
            Some(dir) => (oci::crds_from_dir(std::path::Path::new(dir))?, format!("karpenter.crds_dir {dir}")),
            None => {
                let chart: oci::ChartRef = k.chart.parse()?;
                let cache = oci::ChartCache::default_location()?;
                let archive = cache.chart(&chart, &version).await?;
                (oci::crds_from_chart(&archive)?, cache.place_of(&chart, &version)?.display().to_string())
            }
        };
        Ok::<_, oci::OciError>((crds, place))
    };
    match result.await {
        Ok((crds, place)) => {
            let names: Vec<&str> = crds.iter().filter_map(|c| c.pointer("/metadata/name")?.as_str()).collect();
            println!("Karpenter {version}: {} CRDs ({}) from {place}", names.len(), names.join(", "));
            0
        }
        Err(e) => common::report(&anyhow::anyhow!(e)),
    }
}

//! Preflight: the Karpenter CRDs apply will install can be read, from where the blueprint says they come:
//! `karpenter.crds_dir` holds CRD YAML, or the release's chart can be had from its registry.
//!
//! The chart goes through the same cache apply reads it from ([`oci::ChartCache`]): a chart already cached is
//! not asked for again (an offline machine with a warm cache passes), and one that is not is pulled now, within
//! the preflight timeout, so apply finds it there. The Karpenter chart is tens of kilobytes, and asking for its
//! manifest alone would not say whether the chart holds CRDs.

use super::Problem;
use crate::blueprint::Blueprint;
use crate::kubernetes::oci::{self, OciError};

pub(super) async fn check(bp: &Blueprint) -> Option<Problem> {
    let k = &bp.karpenter;
    let version = k.version.trim_start_matches('v');
    let pulled = oci::release_crds(&k.chart, version, k.crds_dir.as_deref());
    let limit = crate::aws::preflight_timeout_config().operation_timeout();
    let limited = match limit {
        Some(limit) => tokio::time::timeout(limit, pulled).await,
        None => Ok(pulled.await),
    };
    match limited {
        Ok(Ok(_)) => None,
        Ok(Err(e)) if k.crds_dir.is_some() => {
            Some(problem("the Karpenter CRDs cannot be read from karpenter.crds_dir", &e))
        }
        Ok(Err(e)) => Some(problem("the Karpenter CRDs cannot be had from karpenter.chart", &e)),
        Err(_) => Some(Problem::new(
            format!(
                "the Karpenter chart {} {version} could not be pulled within KBP_AWS_PREFLIGHT_TIMEOUT ({})",
                k.chart,
                humantime::format_duration(limit.unwrap_or_default())
            ),
            "check network access to the registry (DNS, proxy, firewall), or set karpenter.crds_dir to a \
             directory holding the CRDs for air-gapped use",
        )),
    }
}

/// An [`OciError`] (written `message\n  hint: hint`) as a problem of `what`.
fn problem(what: &str, e: &OciError) -> Problem {
    let text = e.to_string();
    let (message, hint) =
        text.split_once("\n  hint: ").unwrap_or((&text, "check karpenter.chart and karpenter.crds_dir"));
    Problem::new(format!("{what}: {message}"), hint)
}

//! What applying a plan reads besides the plan itself, carried inside a saved plan with its digest: `kbp apply
//! PLAN` then works in a directory holding nothing but the plan file (a CI job without the checkout), and
//! applies exactly what was reviewed, never what a directory or a registry holds by then.
//!
//! Every blueprint value (the chart's values included) is in the plan's resources already; Karpenter's chart
//! (its templates, rendered at apply once AWS has given every value) and its CRDs are read from
//! `karpenter.chart` or `karpenter.crds_dir`, so they are the inputs carried here.

use serde::{Deserialize, Serialize};

use super::{Action, Plan};
use crate::graph::compile::kinds;
use crate::providers::kubernetes::{ChartBundle, CrdBundle};

/// What a saved plan carries besides the resources, so that `kbp apply PLAN` installs exactly what was
/// planned: the CRDs and the chart as read when planning.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Inputs {
    /// The CRDs of the release, when the plan installs or updates them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crds: Option<CrdBundle>,
    /// Karpenter's chart, when the plan installs or updates the controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart: Option<ChartBundle>,
}

impl Inputs {
    /// Whether the plan carries nothing (no CRDs, no chart).
    pub fn is_empty(&self) -> bool {
        self.crds.is_none() && self.chart.is_none()
    }
}

/// The change of the plan that installs a resource of `kind`, if it has one: with its desired attributes.
fn installing<'p>(p: &'p Plan, kind: &str) -> Option<&'p crate::graph::Resource> {
    let installs =
        |a: &Action| matches!(a, Action::Create | Action::Update | Action::Replace | Action::ReplaceCreateFirst);
    let change = p.changes.iter().find(|c| c.kind == kind && installs(&c.action))?;
    p.resources.iter().find(|r| r.address == change.address)
}

fn crds_change(p: &Plan) -> Option<&crate::graph::Resource> {
    installing(p, kinds::KARPENTER_CRDS)
}

/// Reads what applying `p` needs into it, before it is saved. A failure here fails the plan, not the apply
/// job that would have found the directory missing after changing half the stack.
pub async fn carry(p: &mut Plan) -> anyhow::Result<()> {
    if let Some(r) = crds_change(p) {
        let bundle = CrdBundle::collect(&r.attrs)
            .await
            .map_err(|e| anyhow::anyhow!("reading Karpenter's CRDs to save with the plan: {e}"))?;
        p.inputs.crds = Some(bundle);
    }
    if let Some(r) = installing(p, kinds::KARPENTER_CONTROLLER) {
        let bundle = ChartBundle::collect(&r.attrs)
            .await
            .map_err(|e| anyhow::anyhow!("reading Karpenter's chart to save with the plan: {e}"))?;
        p.inputs.chart = Some(bundle);
    }
    Ok(())
}

/// Checks, before anything changes, that a saved plan carries every input it needs and that each is intact.
pub fn check(p: &Plan) -> Result<(), String> {
    if crds_change(p).is_some() {
        let Some(bundle) = &p.inputs.crds else {
            return Err("the plan installs Karpenter's CRDs but does not carry them (saved by an older kbp)".into());
        };
        bundle.verify()?;
    }
    if installing(p, kinds::KARPENTER_CONTROLLER).is_some() {
        let Some(bundle) = &p.inputs.chart else {
            return Err(
                "the plan installs the Karpenter controller but does not carry its chart (saved by an older kbp)"
                    .into(),
            );
        };
        bundle.verify()?;
    }
    Ok(())
}

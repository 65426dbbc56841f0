//! `kbp render`: every manifest kbp would apply in the cluster, validated, as YAML documents: the CRDs, the
//! controller as Karpenter's chart renders it with the stack's values, the node classes and pools.

use std::path::Path;

use anyhow::bail;
use serde_json::Value;

use super::args::{Global, RenderArgs};
use super::common;
use crate::graph::kinds;
use crate::graph::kinds::karpenter_controller::Controller;
use crate::graph::kinds::Input;
use crate::graph::value::{resolve, UNKNOWN};
use crate::graph::Attrs;
use crate::kubernetes::{manifests, validate};
use crate::providers::spec;

pub(super) async fn run(a: RenderArgs, g: &Global) -> u8 {
    let (bp, graph) =
        match common::load_with(&a.bp, crate::color::enabled(g.no_color, crate::color::Stream::Stderr), !a.skip_crds) {
            Ok(x) => x,
            Err(code) => return code,
        };
    let result = async {
        // Values only AWS knows come from the stack's state where there is one; none yet is no error.
        let location = common::state_location(a.state.as_ref(), &bp);
        let state = crate::state::open(&location).await?.load().await?;
        let lookup =
            |address: &crate::graph::Address, output: &str| state.as_ref().and_then(|s| s.output(address, output));
        let attrs_of = |kind: &str| -> Vec<Attrs> {
            graph
                .in_order()
                .into_iter()
                .filter(|r| r.kind == kind)
                .map(|r| resolve(&Value::Object(r.attrs.clone()), &lookup).0.as_object().cloned().unwrap_or_default())
                .collect()
        };
        if a.chart_values {
            for attrs in attrs_of(kinds::KARPENTER_CONTROLLER) {
                print!("{}", chart_values(&attrs)?);
            }
            return Ok(0);
        }
        let crds = match (a.skip_crds, attrs_of(kinds::KARPENTER_CRDS).first()) {
            (false, Some(attrs)) => Some(
                crate::providers::kubernetes::CrdBundle::collect(attrs).await.map(|b| b.documents).map_err(|e| {
                    let hint = e.hint.as_deref().map(|h| format!("\n  hint: {h}")).unwrap_or_default();
                    anyhow::anyhow!("{e}{hint}\n  hint: --skip-crds prints the rest without them")
                })?,
            ),
            _ => None,
        };
        let mut objects: Vec<Value> = crds.clone().unwrap_or_default();
        for attrs in attrs_of(kinds::KARPENTER_CONTROLLER) {
            let s = spec::parse::<Controller<Input>>(kinds::KARPENTER_CONTROLLER, &attrs)?;
            let (chart, _) = crate::kubernetes::oci::release_chart(&s.chart, &s.version).await?;
            objects.extend(manifests::controller(&chart, &s.chart_settings())?);
        }
        for kind in [kinds::EC2_NODE_CLASS, kinds::NODE_POOL] {
            objects.extend(attrs_of(kind).into_iter().filter_map(|attrs| attrs.get("manifest").cloned()));
        }
        let problems = validate::all(crds.as_deref(), &objects, UNKNOWN);
        if !problems.is_empty() {
            bail!(
                "{} would be refused by the API server:\n{}\n  hint: fix the blueprint field behind each path",
                source(&a.bp.blueprint),
                problems.join("\n")
            );
        }
        print!("{}", manifests::to_yaml_stream(&objects));
        Ok(0)
    };
    result.await.unwrap_or_else(|e: anyhow::Error| common::report(&e))
}

/// The controller's chart values as a Helm values file, headed by the `helm template` command that renders the
/// same objects from them (the namespace kbp creates aside: `helm --create-namespace` does not render it).
fn chart_values(attrs: &Attrs) -> anyhow::Result<String> {
    let s = spec::parse::<Controller<Input>>(kinds::KARPENTER_CONTROLLER, attrs)?;
    let settings = s.chart_settings();
    let chart = &s.chart;
    let version = if chart.starts_with("oci://") { format!(" --version {}", s.version) } else { String::new() };
    let apis: String = settings.api_versions.iter().map(|v| format!(" --api-versions {v}")).collect();
    Ok(format!(
        "# The values kbp gives Karpenter's chart. The same controller, rendered by Helm:\n\
         #   helm template {} {chart}{version} --namespace {} --kube-version {}{apis} --include-crds -f THIS_FILE\n{}",
        manifests::RELEASE,
        settings.namespace,
        settings.kube_version,
        serde_norway::to_string(&settings.values)?
    ))
}

fn source(path: &Path) -> String {
    path.display().to_string()
}

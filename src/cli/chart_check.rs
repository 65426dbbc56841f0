//! The blueprint's chart values checked by Karpenter's chart itself, offline (a local chart, or the chart in
//! kbp's cache): keys the chart does not read, the controller rendered with every value (a template that fails
//! fails here, not at apply), and the service account it runs as, which kbp's identity must grant. Without the
//! chart at hand nothing is said here: the CRD checks already name what `kbp init` would bring.

use serde_json::Value;

use crate::blueprint::{chart_values, Loaded};
use crate::graph::kinds::karpenter_controller::Controller;
use crate::graph::kinds::Input;
use crate::graph::value::resolve;
use crate::graph::{kinds, ResourceGraph};
use crate::kubernetes::{manifests, oci};
use crate::providers::spec;

/// Adds to `loaded` what the chart at hand says of the blueprint's values (see the module documentation); with
/// no chart at hand, nothing.
pub fn check(loaded: &mut Loaded, graph: &ResourceGraph) {
    let k = &loaded.blueprint.karpenter;
    let Ok(Some((chart, place))) = oci::offline_chart(&k.chart, &k.version) else { return };
    let name = chart.metadata["name"].as_str().unwrap_or("karpenter").to_string();
    let version = chart.metadata["version"].as_str().unwrap_or_default().to_string();
    chart_values::against_chart(loaded, &chart, &format!("the chart {name} {version}"));
    let Some(controller) = graph.in_order().into_iter().find(|r| r.kind == kinds::KARPENTER_CONTROLLER) else { return };
    let attrs = resolve(&Value::Object(controller.attrs.clone()), &|_: &crate::graph::Address, _: &str| None).0;
    let Some(attrs) = attrs.as_object() else { return };
    let rendered = spec::parse::<Controller<Input>>(kinds::KARPENTER_CONTROLLER, attrs)
        .map_err(|e| e.to_string())
        .and_then(|s| manifests::controller(&chart, &s.chart_settings()).map_err(|e| e.to_string()));
    match rendered {
        Ok(objects) => {
            let pod = objects.iter().find(|o| o["kind"] == "Deployment").map(|d| &d["spec"]["template"]["spec"]);
            if let Some(account) = pod.map(|p| p["serviceAccountName"].as_str().unwrap_or("default")) {
                chart_values::service_account(loaded, account);
            }
        }
        Err(e) => {
            let (source, span) = loaded.place("karpenter.values");
            loaded
                .warnings
                .error(source, span, format!("{place} does not render with the blueprint's values: {e}"))
                .path("karpenter.values")
                .hint("check karpenter.values and karpenter.values_files against the chart's values.yaml");
        }
    }
}

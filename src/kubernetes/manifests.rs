//! The Karpenter controller's objects: Karpenter's own Helm chart rendered in process (`crate::helm`) with
//! one stack's values, as `helm template` renders it, plus the namespace when it is not one Kubernetes owns
//! (`helm --create-namespace`). Rendering is pure: the same chart and values give the same objects, in Helm's
//! install order.
//!
//! The values are the `karpenter_controller` resource's `values` attribute: what kbp sets (cluster, queue,
//! identity, the controller node group's selector and toleration, the blueprint's replicas, resources, log level
//! and image repository) under the user's values files and inline values.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::helm::chart::{Capabilities, Chart, Release};

/// A resource's attributes as the graph holds them (plain JSON here: this module knows nothing of the graph).
pub type Attrs = serde_json::Map<String, Value>;

/// Release name of the controller: its objects are named after it (`karpenter`, `karpenter-core`, …) unless
/// the values override the names.
pub const RELEASE: &str = "karpenter";
/// The controller's health when every replica of its current generation is available (the `health` attribute).
pub const AVAILABLE: &str = "available";
/// A NodePool's or EC2NodeClass's health when Karpenter counts it Ready, or has not yet judged its current
/// generation (the `health` attribute of `k8s_node_pool` and `k8s_ec2_node_class`).
pub const READY: &str = "ready";
/// Namespaces Kubernetes itself owns: kbp puts the controller in them but never creates or deletes them.
const SYSTEM_NAMESPACES: &[&str] = &["kube-system", "default", "kube-public", "kube-node-lease"];

/// Why the controller's manifests could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The chart failed to render with these values (the chart error, as text).
    #[error("Karpenter's chart does not render: {0}")]
    Chart(String),
}

/// What the chart is rendered with: the `karpenter_controller` resource's attributes.
#[derive(Debug, Clone, PartialEq)]
pub struct ControllerValues {
    /// Namespace of the Helm release and the controller (`karpenter.namespace`).
    pub namespace: String,
    /// The cluster's Kubernetes version (`.Capabilities.KubeVersion`).
    pub kube_version: String,
    /// API versions the cluster serves beyond Kubernetes' own (`karpenter.api_versions`), for the chart's checks.
    pub api_versions: Vec<String>,
    /// The chart's values, layered (what kbp sets, then the user's); no references left.
    pub values: Value,
}

/// Every object of the controller, in install order: the namespace kbp creates (if any), then the chart's.
pub fn controller(chart: &Chart, settings: &ControllerValues) -> Result<Vec<Value>, RenderError> {
    let release = Release { name: RELEASE.into(), namespace: settings.namespace.clone(), service: "kbp".into() };
    let capabilities =
        Capabilities { kube_version: settings.kube_version.clone(), api_versions: settings.api_versions.clone() };
    let output =
        chart.render(&settings.values, &release, &capabilities).map_err(|e| RenderError::Chart(e.to_string()))?;
    let mut objects = Vec::new();
    if !SYSTEM_NAMESPACES.contains(&settings.namespace.as_str()) {
        objects.push(json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": { "name": settings.namespace, "labels": { "app.kubernetes.io/managed-by": "kbp" } },
        }));
    }
    for rendered in output.objects {
        let mut object = rendered.object;
        // Helm installs a namespaced object the chart leaves without a namespace into the release's; a kind kbp
        // has no API type for (a chart's custom resource) is taken to be namespaced, as most are.
        let namespaced = super::builtin::namespaced(&object).unwrap_or(true);
        if namespaced && object.pointer("/metadata/namespace").is_none() {
            if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
                metadata.insert("namespace".into(), json!(settings.namespace));
            }
        }
        objects.push(object);
    }
    Ok(objects)
}

/// The controller's Deployment among its objects: `(namespace, name)`.
pub fn deployment(objects: &[Value]) -> Option<(String, String)> {
    let d = objects.iter().find(|o| o["kind"] == "Deployment")?;
    Some((d["metadata"]["namespace"].as_str()?.to_string(), d["metadata"]["name"].as_str()?.to_string()))
}

/// `(repository, tag)` of an image reference (`repository:tag`, maybe `@digest`), the digest dropped.
pub fn split_image_reference(image: &str) -> Option<(&str, &str)> {
    let named = image.split_once('@').map_or(image, |(named, _digest)| named);
    named.rsplit_once(':').filter(|(repository, tag)| !repository.is_empty() && !tag.contains('/'))
}

/// Every YAML document in `text` that is not empty, as JSON.
pub fn documents(text: &str) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    for doc in serde_norway::Deserializer::from_str(text) {
        let value = Value::deserialize(doc).map_err(|e| e.to_string())?;
        if !value.is_null() {
            out.push(value);
        }
    }
    Ok(out)
}

/// Manifests as a stream of YAML documents, as `helm template` prints them.
pub fn to_yaml_stream(objects: &[Value]) -> String {
    let mut out = String::new();
    for o in objects {
        out.push_str("---\n");
        match serde_norway::to_string(o) {
            Ok(text) => out.push_str(&text),
            Err(e) => out.push_str(&format!("# kbp cannot print this object as YAML: {e}\n")),
        }
    }
    out
}

#[cfg(test)]
mod tests;

//! `k8s_karpenter_controller`: the attributes the compiler emits for the Karpenter controller and its provider
//! reads ([`super`]).
//!
//! Besides what renders the chart (`values` and the release settings), the spec names the settings a refresh
//! reads back from the Deployment and its service account, each as the values say it: drift in the cluster
//! shows against them. The user's values may put anything where kbp puts a number or a string (`cpu = 1`), so
//! those are plain JSON; the four that come from other resources' outputs are `R`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::in_cluster::ClusterAccess;
use crate::kubernetes::manifests::ControllerValues;

/// The Karpenter controller: Karpenter's chart rendered with `values` and applied in the cluster `R` names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Controller<R> {
    /// The Karpenter release (`karpenter.version`): the chart's version.
    pub version: String,
    /// Where the chart is: an `oci://` reference or a local directory (`karpenter.chart`).
    pub chart: String,
    /// The namespace the controller runs in, created by kbp unless Kubernetes owns it.
    pub namespace: String,
    /// The cluster's Kubernetes version, as the chart sees it (`.Capabilities.KubeVersion`).
    pub kube_version: String,
    /// The API versions the chart may test for (`.Capabilities.APIVersions`).
    pub api_versions: Vec<String>,
    /// How long to wait for the Deployment to become available, a duration (`10m`).
    pub rollout_timeout: String,
    /// The Deployment's replicas, as the values say (`/replicas`).
    pub replicas: Value,
    /// The controller image's repository, as the values say (`/controller/image/repository`).
    pub image: Value,
    /// The controller's log level, as the values say (`/logLevel`).
    pub log_level: Value,
    /// The controller container's CPU limit, as the values say.
    pub cpu: Value,
    /// The controller container's memory limit, as the values say.
    pub memory: Value,
    /// The EKS cluster Karpenter launches nodes for (`/settings/clusterName`).
    pub cluster_name: R,
    /// The endpoint Karpenter's nodes join the cluster at (`/settings/clusterEndpoint`).
    pub cluster_endpoint: R,
    /// The SQS queue Karpenter reads interruption events from; none without interruption handling.
    pub interruption_queue: Option<R>,
    /// The IAM role of the controller's service account (IRSA); none with EKS Pod Identity.
    pub service_account_role_arn: Option<R>,
    /// The chart's values, layered: what kbp sets, then the user's values files and inline values. It holds
    /// references (the cluster, the queue, the role) until the engine resolves them.
    pub values: Value,
    /// The Deployment's health a refresh must find for no change to be due (`available`).
    pub health: String,
    /// The cluster the controller is installed in.
    pub cluster: ClusterAccess<R>,
}

impl<R> Controller<R> {
    /// What Karpenter's chart is rendered with ([`crate::kubernetes::manifests::controller`]).
    pub fn chart_settings(&self) -> ControllerValues {
        ControllerValues {
            namespace: self.namespace.clone(),
            kube_version: self.kube_version.clone(),
            api_versions: self.api_versions.clone(),
            values: self.values.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Attrs;

    fn compiled() -> Attrs {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints");
        let bp = crate::blueprint::load(&dir.join("minimal.toml"), &["cluster.version=1.34".to_string()]).unwrap();
        let graph = crate::graph::compile(&bp).unwrap();
        let r = graph.resources().find(|r| r.kind == super::super::KARPENTER_CONTROLLER).unwrap();
        r.attrs.clone()
    }

    /// The attributes read as a spec, references left as they are (as a plan reads them).
    fn read(attrs: &Attrs) -> Result<Controller<crate::graph::kinds::Input>, serde_json::Error> {
        serde_json::from_value(Value::Object(attrs.clone()))
    }

    #[test]
    fn the_chart_is_rendered_for_the_clusters_kubernetes_version() {
        let s = read(&compiled()).unwrap();
        assert_eq!(s.chart_settings().kube_version, "1.34");
        assert_eq!(s.chart_settings().values, s.values);
    }

    #[test]
    fn a_controller_without_its_kubernetes_version_is_refused_rather_than_rendered_for_another() {
        let mut attrs = compiled();
        attrs.remove("kube_version");
        let e = read(&attrs).unwrap_err();
        assert!(e.to_string().contains("kube_version"), "{e}");
    }
}

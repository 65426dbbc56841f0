//! `k8s_karpenter_crds`: the CRDs of the pinned Karpenter release (NodePool, NodeClaim, EC2NodeClass), taken
//! from the release's chart (OCI artifact, cached) or a local directory, applied before anything that uses
//! them and waited on until the API server reports them Established.
//!
//! The provider ID is the CRD names, comma-separated. Each CRD is annotated with the release it came from, so
//! a refresh sees which version is installed.

use async_trait::async_trait;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::runtime::wait::{conditions, Condition};
use kube::Api;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::session::{destroy_wait, error, ObjectRef, Session};
use crate::graph::kinds::karpenter_crds::Crds;
use crate::graph::kinds::Input;
use crate::graph::{compile::kinds, Attrs};
use crate::kubernetes::oci;
use crate::providers::spec;
use crate::providers::wait::{Budget, Poll, Wait};
use crate::providers::{
    Applied, Context, Descriptor, Desired, Observed, Provider, ProviderError, Result, Typical, WithoutState,
};

pub(crate) struct KarpenterCrds;

const KIND: &str = kinds::KARPENTER_CRDS;

/// The attributes the compiler emits for the CRDs, references resolved ([`crate::graph::kinds`]).
type Spec = Crds<String>;

const CRD_API: &str = "apiextensions.k8s.io/v1";
const CRD: &str = "CustomResourceDefinition";
/// Which Karpenter release an installed CRD came from.
pub(crate) const VERSION_ANNOTATION: &str = "kbp.dev/karpenter-version";

/// The CRDs of one release as a saved plan carries them, so `kbp apply PLAN` needs neither the checkout's
/// `crds_dir` nor the chart's registry, and applies exactly what was planned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrdBundle {
    /// The Karpenter release they belong to.
    pub version: String,
    /// Where they were read when the plan was made (`karpenter.crds_dir …` or the chart's reference).
    pub source: String,
    /// SHA-256 of `documents` as JSON: a plan file edited or cut short is refused before anything changes.
    pub sha256: String,
    /// The CRD manifests, each as JSON.
    pub documents: Vec<Value>,
}

impl CrdBundle {
    /// Reads the CRDs `attrs` name, as [`load`] would without a bundle. The cluster may not exist yet (a plan):
    /// its references stay as they are.
    pub async fn collect(attrs: &Attrs) -> Result<CrdBundle> {
        let s: Crds<Input> = spec::parse(KIND, attrs)?;
        let (documents, source) = read(&s).await?;
        Ok(CrdBundle { version: s.version, source, sha256: digest(&documents), documents })
    }

    /// Whether the documents are still those the digest was taken of.
    pub fn verify(&self) -> std::result::Result<(), String> {
        super::unchanged(&self.sha256, &digest(&self.documents), "its CRDs do not match their digest")
    }
}

fn digest(documents: &[Value]) -> String {
    super::json_digest(&documents)
}

/// The CRDs `attrs` name: those of the saved plan being applied when it carries them, else from `crds_dir` if
/// set, else from the chart at `version`.
async fn load(cx: &Context, s: &Spec) -> Result<Vec<Value>> {
    if let Some(bundle) = cx.saved_crds.as_deref().filter(|b| b.version == s.version) {
        return Ok(bundle.documents.clone());
    }
    read(s).await.map(|(crds, _)| crds)
}

/// The CRDs of `s`'s release and where they were read: `crds_dir` if set, else the chart's.
async fn read<R>(s: &Crds<R>) -> Result<(Vec<Value>, String)> {
    let loaded = oci::release_crds(&s.chart, &s.version, s.crds_dir.as_deref()).await;
    loaded.map_err(|e| ProviderError::new("karpenter:crds", "", e.to_string()))
}

fn name_of(crd: &Value) -> String {
    crd["metadata"]["name"].as_str().unwrap_or_default().to_string()
}

fn observed_attrs(version: Value, prior: &Attrs) -> Attrs {
    let mut attrs = prior.clone();
    attrs.insert("version".into(), version);
    attrs
}

impl KarpenterCrds {
    async fn install(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let version = json!(s.version);
        let crds = load(cx, &s).await?;
        let session = Session::open(cx, desired.attrs).await?;
        let mut names = Vec::new();
        for mut crd in crds {
            crd["metadata"]["annotations"][VERSION_ANNOTATION] = version.clone();
            // Status is the server's; an apply may not carry it.
            if let Some(o) = crd.as_object_mut() {
                o.remove("status");
            }
            session.apply(&crd).await?;
            names.push(name_of(&crd));
        }
        // Read typed, judged by kube-runtime's own condition, waited on under kbp's budget and progress report.
        let api: Api<CustomResourceDefinition> = Api::all(session.client.clone());
        for name in &names {
            let r = ObjectRef::new(CRD_API, CRD, None, name);
            let what = format!("CRD {name} to be established");
            Wait::new("kubernetes:apply", &what, Budget::minutes(2))
                .reporting(cx, Some(desired.address))
                .until(|| async {
                    let crd = api.get_opt(name).await.map_err(|e| error("kubernetes:get", &r, e))?;
                    Ok(match crd {
                        _ if conditions::is_crd_established().matches_object(crd.as_ref()) => Poll::Done(()),
                        Some(_) => Poll::Pending("not established yet".into()),
                        None => Poll::Pending("not found".into()),
                    })
                })
                .await?;
        }
        Ok(Applied {
            id: names.join(","),
            outputs: json!({ "names": names, "version": version }).as_object().cloned().unwrap_or_default(),
        })
    }
}

#[async_trait]
impl Provider for KarpenterCrds {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(KIND, WithoutState::GoesWith(kinds::EKS_CLUSTER), &[])
            .force_new(&["cluster"])
            .sources(&["crds_dir", "chart"])
            .takes(Typical { create: 3, update: 3, delete: 3 })
    }

    async fn read(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<Option<Observed>> {
        let session = Session::open(cx, prior).await?;
        let mut versions = Vec::new();
        for name in id.split(',').filter(|n| !n.is_empty()) {
            let crd = session.get(&ObjectRef::new(CRD_API, CRD, None, name)).await?;
            versions.push(crd.map(|c| c["metadata"]["annotations"][VERSION_ANNOTATION].clone()));
        }
        if versions.iter().all(Option::is_none) {
            return Ok(None);
        }
        // One missing, or CRDs of mixed releases: report something no blueprint asks for, so it is re-applied.
        let first = versions[0].clone().unwrap_or(Value::Null);
        let version = if versions.iter().all(|v| v.as_ref() == Some(&first)) { first } else { json!("(incomplete)") };
        let names: Vec<&str> = id.split(',').collect();
        Ok(Some(Observed {
            attrs: observed_attrs(version.clone(), prior),
            outputs: json!({ "names": names, "version": version }).as_object().cloned().unwrap_or_default(),
        }))
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        self.install(cx, desired).await
    }

    async fn update(&self, cx: &Context, id: &str, prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        let applied = self.install(cx, desired).await?;
        // A CRD the new release no longer ships goes, with its objects.
        let kept: Vec<&str> = applied.id.split(',').collect();
        let session = Session::open(cx, prior).await?;
        for gone in id.split(',').filter(|n| !n.is_empty() && !kept.contains(n)) {
            session.delete(&ObjectRef::new(CRD_API, CRD, None, gone), false).await?;
        }
        Ok(applied)
    }

    async fn delete(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<()> {
        let session = Session::open(cx, prior).await?;
        let address = crate::graph::Address::new("karpenter_crds", "main");
        let hint = "the API server is still deleting the CRD's objects, whose finalizers hold it";
        let budget =
            if cx.destroying { Budget { timeout: destroy_wait(), ..Budget::minutes(5) } } else { Budget::minutes(5) };
        for name in id.split(',').filter(|n| !n.is_empty()) {
            let r = ObjectRef::new(CRD_API, CRD, None, name);
            let crd = session.get(&r).await?;
            match session.delete_and_wait(&r, false, &address, budget, hint).await {
                // In a destroy, objects whose controller is gone (NodeClaims of an uninstalled Karpenter) keep
                // their finalizers forever; drop them, the sweep removes their instances.
                Err(e) if cx.destroying && e.code.is_empty() => {
                    let Some(crd) = crd else { continue };
                    let group = crd["spec"]["group"].as_str().unwrap_or_default();
                    let kind = crd["spec"]["names"]["kind"].as_str().unwrap_or_default();
                    let versions = crd["spec"]["versions"].as_array().cloned().unwrap_or_default();
                    let version = versions.iter().find(|v| v["storage"] == true).and_then(|v| v["name"].as_str());
                    let api_version = format!("{group}/{}", version.unwrap_or("v1"));
                    for o in session.list(&api_version, kind, None, None, None).await? {
                        let held = ObjectRef::of(&o)?;
                        tracing::warn!("{held}: nothing removes its finalizers any more; dropping them");
                        session.remove_finalizers(&held).await?;
                    }
                    session.wait_gone(&r, &address, Budget::minutes(1), hint).await?;
                }
                other => other?,
            }
        }
        Ok(())
    }
}

//! `k8s_karpenter_controller`: the Karpenter controller, Karpenter's chart rendered with the stack's values
//! (`kubernetes::manifests`) and server-side applied object by object in dependency order (namespace, then
//! identity, RBAC, service and budget, then the Deployment); then kbp waits for the Deployment to be Available
//! and, if it is not, says why (pending pods, their events, image pull errors).
//!
//! The provider ID is `<namespace>/<Deployment name>`. A refresh reads the settings back from the Deployment
//! (replicas, image, environment, resources) and its service account (IRSA role), so a hand edit shows as drift.

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::session::{ObjectRef, Session};
use crate::graph::kinds::karpenter_controller;
use crate::graph::kinds::Input;
use crate::graph::{compile::kinds, Address, Attrs};
use crate::helm::chart::Chart;
use crate::kubernetes::manifests::{self, RELEASE};
use crate::kubernetes::oci;
use crate::providers::spec;
use crate::providers::wait::{Budget, Poll, Wait};
use crate::providers::{
    Applied, Context, Descriptor, Desired, Observed, Provider, ProviderError, Result, Typical, WithoutState,
};

pub(crate) struct Controller;

const KIND: &str = kinds::KARPENTER_CONTROLLER;
/// Its typical times, which its waits expect too ([`Budget::expecting`]).
const TYPICAL: Typical = Typical { create: 20, update: 20, delete: 10 };

/// The attributes the compiler emits for the controller, references resolved ([`crate::graph::kinds`]).
type Spec = karpenter_controller::Controller<String>;

/// Pulling the image and passing the readiness probe takes a minute or two on a fresh node; usually less
/// ([`TYPICAL`]), which the wait expects.
const ROLLOUT: Budget = Budget {
    timeout: Duration::from_secs(10 * 60),
    first_interval: Duration::from_millis(250),
    max_interval: Duration::from_secs(10),
    expected: None,
}
.expecting(TYPICAL.create);
const DELETE: Budget = Budget::minutes(5);

fn address() -> Address {
    Address::new("karpenter_controller", "main")
}

/// Karpenter's chart as a saved plan carries it (every file but the CRDs, which [`super::CrdBundle`] carries),
/// so `kbp apply PLAN` renders the controller from exactly the chart that was planned, with neither the
/// checkout's chart directory nor the registry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChartBundle {
    /// `karpenter.chart` and `karpenter.version` when the plan was made.
    pub chart: String,
    /// The release the files are of (`karpenter.version`).
    pub version: String,
    /// SHA-256 of `files` as JSON: a plan file edited or cut short is refused before anything changes.
    pub sha256: String,
    /// The chart's files by path, its CRDs left out (they are the CRDs' resource's): what the plan renders from.
    pub files: BTreeMap<String, String>,
}

impl ChartBundle {
    /// Reads the chart `attrs` name. The cluster may not exist yet (a plan): its references stay as they are.
    pub async fn collect(attrs: &Attrs) -> Result<ChartBundle> {
        let s: karpenter_controller::Controller<Input> = spec::parse(KIND, attrs)?;
        let chart = load_chart(&s.chart, &s.version).await?;
        let files: BTreeMap<String, String> =
            chart.files.into_iter().filter(|(k, _)| !k.starts_with("crds/")).collect();
        Ok(ChartBundle { chart: s.chart, version: s.version, sha256: files_digest(&files), files })
    }

    /// Whether the files are still those the digest was taken of.
    pub fn verify(&self) -> std::result::Result<(), String> {
        super::unchanged(&self.sha256, &files_digest(&self.files), "its chart does not match its digest")
    }
}

fn files_digest(files: &BTreeMap<String, String>) -> String {
    super::json_digest(files)
}

async fn load_chart(chart: &str, version: &str) -> Result<Chart> {
    let (chart, _) = oci::release_chart(chart, version).await.map_err(|e| {
        let message = e.to_string();
        let (message, hint) = message.split_once("\n  hint: ").unwrap_or((&message, "check karpenter.chart"));
        ProviderError::new("karpenter:chart", "", message).with_hint(hint)
    })?;
    Ok(chart)
}

/// The controller's objects: the chart `s` names (the saved plan's, else local, cached or pulled) rendered
/// with its values.
async fn render<R>(cx: &Context, s: &karpenter_controller::Controller<R>) -> Result<Vec<Value>> {
    let settings = s.chart_settings();
    let saved = cx.saved_chart.as_deref().filter(|b| b.chart == s.chart && b.version == s.version);
    let chart = match saved {
        Some(bundle) => Chart::from_files(bundle.files.clone())
            .map_err(|e| ProviderError::new("karpenter:chart", "", format!("the plan's chart: {e}")))?,
        None => load_chart(&s.chart, &s.version).await?,
    };
    manifests::controller(&chart, &settings).map_err(|e| {
        ProviderError::new("karpenter:render", "", e.to_string())
            .with_hint("check karpenter.values and karpenter.values_files against the chart's values.yaml")
    })
}

/// The controller's objects as the attributes last applied (`prior`) rendered them; none when they do not render.
/// Their settings are read whole, as state recorded them (a refresh may have left a setting absent).
async fn render_prior(cx: &Context, prior: &Attrs) -> Vec<Value> {
    match spec::parse::<karpenter_controller::Controller<Input>>(KIND, prior) {
        Ok(s) => render(cx, &s).await.unwrap_or_default(),
        Err(_) => Vec::new(),
    }
}

/// Objects earlier kbp releases applied and the templates no longer render: gone from the render of the prior
/// attributes too, so only this list can remove them from a cluster set up before.
fn retired() -> [ObjectRef; 2] {
    // A Role on node leases, which the chart never granted.
    let lease = |kind| ObjectRef::new("rbac.authorization.k8s.io/v1", kind, Some("kube-node-lease"), "karpenter-lease");
    [lease("RoleBinding"), lease("Role")]
}

/// Deletes the [`retired`] objects that exist and carry kbp's label (a namesake someone else made stays).
async fn remove_retired(session: &Session<'_>) -> Result<()> {
    for r in retired() {
        let ours =
            session.get(&r).await?.is_some_and(|o| o["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "kbp");
        if ours {
            session.delete(&r, false).await?;
        }
    }
    Ok(())
}

const TIERS: usize = 3;

/// When an object can be applied: the namespace first (what lives in it is refused before it exists), the
/// Deployment last (its pods need the service account, and start with the RBAC they use in place), everything
/// else at once in between. One tier's objects are applied concurrently.
fn tier_of(object: &Value) -> usize {
    match object["kind"].as_str() {
        Some("Namespace") => 0,
        Some("Deployment") => 2,
        _ => 1,
    }
}

fn deployment_ref(namespace: &str, name: &str) -> ObjectRef {
    ObjectRef::new("apps/v1", "Deployment", Some(namespace), name)
}

/// `(namespace, Deployment name)` of a provider ID.
fn split_id(id: &str) -> (&str, &str) {
    id.split_once('/').unwrap_or((id, RELEASE))
}

/// Whether the Deployment has rolled out its current generation, as `kubectl rollout status` judges it: every
/// replica updated, no old replica left (a terminating one still counts in `status.replicas`), every updated one
/// available. Else what is pending.
fn rollout(d: &Value) -> Result<(), String> {
    let wanted = d["spec"]["replicas"].as_u64().unwrap_or(1);
    let s = &d["status"];
    let count = |k: &str| s[k].as_u64().unwrap_or(0);
    let current = s["observedGeneration"].as_u64() >= d["metadata"]["generation"].as_u64();
    let (updated, available, total) = (count("updatedReplicas"), count("availableReplicas"), count("replicas"));
    if current && updated >= wanted && total <= updated && available >= updated {
        return Ok(());
    }
    let old = total.saturating_sub(updated);
    let old = if old > 0 { format!(", {old} old pending termination") } else { String::new() };
    Err(format!("{available}/{wanted} replicas available, {updated}/{wanted} updated{old}"))
}

impl Controller {
    async fn install(&self, cx: &Context, desired: &Desired<'_>, prior: Option<&Attrs>) -> Result<Applied> {
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let objects = render(cx, &s).await?;
        let session = Session::open(cx, desired.attrs).await?;
        for tier in 0..TIERS {
            let applies = objects.iter().filter(|o| tier_of(o) == tier).map(|o| session.apply(o));
            futures::future::try_join_all(applies).await?;
        }
        // Objects an earlier render had and this one does not (a namespace change, a dropped role).
        if let Some(prior) = prior {
            let now: Vec<ObjectRef> = objects.iter().map(ObjectRef::of).collect::<Result<_, _>>()?;
            for old in render_prior(cx, prior).await.iter().rev() {
                let r = ObjectRef::of(old)?;
                if !now.contains(&r) {
                    session.delete(&r, false).await?;
                }
            }
            remove_retired(&session).await?;
        }
        let (namespace, name) = manifests::deployment(&objects).ok_or_else(|| {
            ProviderError::new("karpenter:render", "", "Karpenter's chart rendered no Deployment")
                .with_hint("check karpenter.chart: it must be Karpenter's chart")
        })?;
        let timeout = humantime::parse_duration(&s.rollout_timeout).unwrap_or(ROLLOUT.timeout);
        self.wait_available(&session, &namespace, &name, desired.address, Budget { timeout, ..ROLLOUT }).await?;
        Ok(Applied {
            id: format!("{namespace}/{name}"),
            outputs: json!({ "namespace": namespace, "deployment": name, "objects": objects.len() })
                .as_object()
                .cloned()
                .unwrap_or_default(),
        })
    }

    async fn wait_available(
        &self,
        session: &Session<'_>,
        namespace: &str,
        name: &str,
        address: &Address,
        budget: Budget,
    ) -> Result<()> {
        let r = deployment_ref(namespace, name);
        let what = format!("the Karpenter controller ({r}) to be available");
        let waited = Wait::new("kubernetes:rollout", &what, budget)
            .reporting(session.cx, Some(address))
            .until(|| async {
                Ok(match session.get(&r).await? {
                    Some(d) => match rollout(&d) {
                        Ok(()) => Poll::Done(()),
                        Err(pending) => Poll::Pending(pending),
                    },
                    None => Poll::Pending("Deployment not found".into()),
                })
            })
            .await;
        match waited {
            Err(mut e) if e.code.is_empty() => {
                e.message.push_str(&why_not_ready(session, namespace).await);
                Err(e.with_hint(
                    "the controller pods run only on the controller node group (label and taint \
                     karpenter.sh/controller=true); check that group is ACTIVE with nodes, and the image can be pulled \
                     from the nodes (karpenter.image)",
                ))
            }
            other => other,
        }
    }
}

/// The pods of the controller that are not ready, with their phase, container state and events.
async fn why_not_ready(session: &Session<'_>, namespace: &str) -> String {
    let selector = format!("app.kubernetes.io/instance={RELEASE}");
    let pods = match session.list("v1", "Pod", Some(namespace), Some(&selector), None).await {
        Ok(pods) => pods,
        Err(e) => return format!("\n  (could not list the controller pods: {e})"),
    };
    if pods.is_empty() {
        return "\n  no controller pods exist (is the ReplicaSet failing? check `kubectl describe deployment`)".into();
    }
    let mut out = String::new();
    for pod in pods.iter().filter(|p| !pod_ready(p)) {
        let name = pod["metadata"]["name"].as_str().unwrap_or("?");
        out.push_str(&format!("\n  pod {name}: {}", pod["status"]["phase"].as_str().unwrap_or("Unknown")));
        for c in pod["status"]["containerStatuses"].as_array().into_iter().flatten() {
            if let Some(w) = c["state"]["waiting"].as_object() {
                let reason = w.get("reason").and_then(Value::as_str).unwrap_or("");
                let message = w.get("message").and_then(Value::as_str).unwrap_or("");
                out.push_str(&format!("\n    container {}: {reason} {message}", c["name"].as_str().unwrap_or("?")));
            }
        }
        let fields = format!("involvedObject.name={name}");
        if let Ok(events) = session.list("v1", "Event", Some(namespace), None, Some(&fields)).await {
            for e in events.iter().filter(|e| e["type"] != "Normal") {
                out.push_str(&format!(
                    "\n    event {}: {}",
                    e["reason"].as_str().unwrap_or(""),
                    e["message"].as_str().unwrap_or("")
                ));
            }
        }
    }
    out
}

/// [`manifests::AVAILABLE`] when the Deployment has rolled out, else how many replicas are available and why the
/// first pod that is not ready is not, short enough for one line of a plan: `1/2 replicas available — pod
/// Pending: 2 node(s) had untolerated taint {dedicated: ctl}`.
async fn health(session: &Session<'_>, deployment: &Value, namespace: &str) -> String {
    if rollout(deployment).is_ok() {
        return manifests::AVAILABLE.to_string();
    }
    let wanted = deployment["spec"]["replicas"].as_u64().unwrap_or(1);
    let available = deployment["status"]["availableReplicas"].as_u64().unwrap_or(0);
    let count = format!("{available}/{wanted} replicas available");
    let selector = format!("app.kubernetes.io/instance={RELEASE}");
    let pods = session.list("v1", "Pod", Some(namespace), Some(&selector), None).await.unwrap_or_default();
    match pods.iter().find(|p| !pod_ready(p) && p["metadata"]["deletionTimestamp"].is_null()) {
        Some(pod) => format!("{count} — pod {}", pod_trouble(pod)),
        None if available < wanted => count,
        None => format!("{count}, rolling out"),
    }
}

/// Why a pod is not ready, in a few words: unscheduled (the scheduler's reason, without its node count and
/// preemption notes), a container waiting (its reason), or its phase.
fn pod_trouble(pod: &Value) -> String {
    let phase = pod["status"]["phase"].as_str().unwrap_or("Unknown");
    let conditions = pod["status"]["conditions"].as_array().cloned().unwrap_or_default();
    let unscheduled = conditions.iter().find(|c| c["type"] == "PodScheduled" && c["status"] == "False");
    if let Some(c) = unscheduled {
        let message = c["message"].as_str().unwrap_or("not scheduled");
        // "0/2 nodes are available: 2 node(s) had untolerated taint {…}. preemption: …"
        let reason = message.split_once("are available: ").map_or(message, |(_, r)| r);
        let reason = reason.split(". ").next().unwrap_or(reason).trim_end_matches('.');
        return format!("{phase}: {reason}");
    }
    let statuses = pod["status"]["containerStatuses"].as_array().cloned().unwrap_or_default();
    let waiting = statuses.iter().find_map(|c| c["state"]["waiting"]["reason"].as_str().map(str::to_string));
    match waiting {
        Some(reason) => format!("{phase}: {reason}"),
        None => format!("{phase}, not ready"),
    }
}

#[cfg(test)]
mod health_tests {
    use super::*;

    #[test]
    fn a_pod_that_cannot_run_says_why_in_a_few_words() {
        let pending = json!({"status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
            "message": "0/2 nodes are available: 2 node(s) had untolerated taint {dedicated: ctl}. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."}]}});
        assert_eq!(pod_trouble(&pending), "Pending: 2 node(s) had untolerated taint {dedicated: ctl}");
        let pulling = json!({"status": {"phase": "Pending", "containerStatuses": [{"state": {"waiting": {"reason": "ImagePullBackOff", "message": "long"}}}]}});
        assert_eq!(pod_trouble(&pulling), "Pending: ImagePullBackOff");
    }
}

fn pod_ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .is_some_and(|cs| cs.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"))
}

/// The controller settings as the Deployment and service account in the cluster say them.
fn observed(deployment: &Value, service_account: Option<&Value>, prior: &Attrs) -> Attrs {
    let mut attrs = prior.clone();
    let pod = &deployment["spec"]["template"]["spec"];
    let containers = pod["containers"].as_array().cloned().unwrap_or_default();
    let name = prior.get("values").and_then(|v| v.pointer("/controller/containerName")).and_then(Value::as_str);
    let container = containers
        .iter()
        .find(|c| c["name"] == name.unwrap_or("controller"))
        .or(containers.first())
        .cloned()
        .unwrap_or(Value::Null);
    let env: BTreeMap<&str, &Value> = container["env"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| Some((e["name"].as_str()?, &e["value"])))
        .collect();
    let env_value = |name: &str| env.get(name).map(|v| (*v).clone()).unwrap_or(Value::Null);
    attrs.insert("replicas".into(), deployment["spec"]["replicas"].clone());
    let image = container["image"].as_str().and_then(manifests::split_image_reference);
    if let Some((repository, _)) = image {
        attrs.insert("image".into(), json!(repository));
    }
    // The chart release that rendered the Deployment, as its `helm.sh/chart` label says (`<name>-<version>`);
    // the image tag is the values' to choose, so it says the release only where the label is missing.
    let chart_label = deployment["metadata"]["labels"]["helm.sh/chart"].as_str().and_then(chart_version);
    if let Some(version) = chart_label.or(image.map(|(_, tag)| tag)) {
        attrs.insert("version".into(), json!(version.replace('_', "+")));
    }
    attrs.insert("cluster_name".into(), env_value("CLUSTER_NAME"));
    attrs.insert("cluster_endpoint".into(), env_value("CLUSTER_ENDPOINT"));
    attrs.insert("interruption_queue".into(), env_value("INTERRUPTION_QUEUE"));
    attrs.insert("log_level".into(), env_value("LOG_LEVEL"));
    attrs.insert("cpu".into(), container["resources"]["limits"]["cpu"].clone());
    attrs.insert("memory".into(), container["resources"]["limits"]["memory"].clone());
    let role = service_account.map(|sa| sa["metadata"]["annotations"]["eks.amazonaws.com/role-arn"].clone());
    attrs.insert("service_account_role_arn".into(), role.unwrap_or(Value::Null));
    attrs
}

/// The version in a `helm.sh/chart` label: what follows the chart's name, from the first `-` before a digit.
fn chart_version(label: &str) -> Option<&str> {
    let at =
        label.char_indices().find(|&(i, c)| c == '-' && label[i + 1..].starts_with(|d: char| d.is_ascii_digit()))?.0;
    Some(&label[at + 1..])
}

#[async_trait]
impl Provider for Controller {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(KIND, WithoutState::GoesWith(kinds::EKS_CLUSTER), &[])
            .force_new(&["cluster"])
            .sources(&["chart"])
            .takes(TYPICAL)
    }

    async fn read(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<Option<Observed>> {
        let (namespace, name) = split_id(id);
        let session = Session::open(cx, prior).await?;
        let Some(deployment) = session.get(&deployment_ref(namespace, name)).await? else { return Ok(None) };
        let account = deployment["spec"]["template"]["spec"]["serviceAccountName"].as_str().unwrap_or("default");
        let sa = session.get(&ObjectRef::new("v1", "ServiceAccount", Some(namespace), account)).await?;
        let mut attrs = observed(&deployment, sa.as_ref(), prior);
        attrs.insert("namespace".into(), json!(namespace));
        attrs.insert("health".into(), json!(health(&session, &deployment, namespace).await));
        Ok(Some(Observed {
            attrs,
            outputs: json!({ "namespace": namespace, "deployment": name }).as_object().cloned().unwrap_or_default(),
        }))
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        self.install(cx, desired, None).await
    }

    async fn update(&self, cx: &Context, _id: &str, prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        self.install(cx, desired, Some(prior)).await
    }

    async fn delete(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<()> {
        let (namespace, name) = split_id(id);
        let session = Session::open(cx, prior).await?;
        // The Deployment first, waiting for its pods to stop (no controller acting while the rest goes). In a
        // destroy its NodePools and node classes are gone already, so there is nothing left for it to act on,
        // and the node group that runs its pods goes soon after: it is not waited for.
        let hint = "the controller pods are still terminating; check them with `kubectl get pods -n <namespace>`";
        if cx.destroying {
            session.delete(&deployment_ref(namespace, name), true).await?;
        } else {
            session.delete_and_wait(&deployment_ref(namespace, name), true, &address(), DELETE, hint).await?;
        }
        let objects: Vec<ObjectRef> =
            render_prior(cx, prior).await.iter().map(ObjectRef::of).collect::<Result<_, _>>()?;
        let (namespaces, rest): (Vec<ObjectRef>, Vec<ObjectRef>) =
            objects.into_iter().filter(|r| r.kind != "Deployment").partition(|r| r.kind == "Namespace");
        futures::future::try_join_all(rest.iter().map(|r| session.delete(r, false))).await?;
        for r in &namespaces {
            // In a destroy the cluster goes next: once the controller's pods have stopped, the namespace
            // controller's cleanup (seconds) need not be waited for.
            if cx.destroying {
                session.delete(r, false).await?;
            } else {
                let hint = "the namespace still holds objects; check `kubectl get all -n <namespace>`";
                session.delete_and_wait(r, false, &address(), DELETE, hint).await?;
            }
        }
        remove_retired(&session).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rollout_needs_the_current_generation_fully_available_and_no_old_pod_left() {
        let d = |gen: u64, observed: u64, updated: u64, available: u64, total: u64| {
            json!({ "metadata": { "generation": gen }, "spec": { "replicas": 2 },
                    "status": { "observedGeneration": observed, "updatedReplicas": updated,
                                "availableReplicas": available, "replicas": total } })
        };
        assert!(rollout(&d(2, 2, 2, 2, 2)).is_ok());
        assert!(rollout(&d(3, 2, 2, 2, 2)).is_err(), "an old generation's pods do not count");
        assert_eq!(rollout(&d(2, 2, 2, 1, 2)).unwrap_err(), "1/2 replicas available, 2/2 updated");
        // Two new pods and one old one still terminating: two are available, but not yet both new ones.
        assert_eq!(
            rollout(&d(2, 2, 2, 2, 3)).unwrap_err(),
            "2/2 replicas available, 2/2 updated, 1 old pending termination"
        );
    }

    fn rendered(attrs: &Attrs) -> Vec<Value> {
        let settings = manifests::ControllerValues {
            namespace: attrs["namespace"].as_str().unwrap().to_string(),
            kube_version: attrs["kube_version"].as_str().unwrap().to_string(),
            api_versions: Vec::new(),
            values: attrs["values"].clone(),
        };
        manifests::controller(&crate::kubernetes::fixtures::karpenter_chart(), &settings).unwrap()
    }

    #[test]
    fn each_object_is_applied_after_its_namespace_and_the_deployment_after_what_its_pods_use() {
        let objects = rendered(&sample_attrs());
        let tier = |kind: &str| tier_of(objects.iter().find(|o| o["kind"] == kind).unwrap());
        for o in &objects {
            if let Some(ns) = o["metadata"]["namespace"].as_str() {
                let home = objects.iter().find(|n| n["kind"] == "Namespace" && n["metadata"]["name"] == ns);
                assert!(home.is_none_or(|n| tier_of(n) < tier_of(o)), "{} before its namespace", o["kind"]);
            }
        }
        for used in ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"] {
            assert!(tier(used) < tier("Deployment"), "{used} after the Deployment");
        }
        assert!(objects.iter().all(|o| tier_of(o) < TIERS));
    }

    fn sample_attrs() -> Attrs {
        json!({
            "version": "1.14.1", "namespace": "karpenter", "kube_version": "1.34", "replicas": 2,
            "image": "public.ecr.aws/karpenter/controller", "log_level": "info", "cpu": "1", "memory": "1Gi",
            "cluster_name": "demo", "cluster_endpoint": "https://x", "interruption_queue": "demo",
            "service_account_role_arn": null, "cluster": { "name": "demo" },
            "values": {
                "settings": { "clusterName": "demo", "clusterEndpoint": "https://x", "interruptionQueue": "demo" },
                "replicas": 2, "logLevel": "info",
                "controller": {
                    "image": { "repository": "public.ecr.aws/karpenter/controller" },
                    "resources": { "requests": { "cpu": "1", "memory": "1Gi" }, "limits": { "cpu": "1", "memory": "1Gi" } },
                },
            },
        })
        .as_object()
        .cloned()
        .unwrap()
    }

    #[test]
    fn the_release_is_read_from_the_chart_label() {
        assert_eq!(chart_version("karpenter-1.15.0"), Some("1.15.0"));
        assert_eq!(chart_version("karpenter-crds-1.0.0-rc.1_build.7"), Some("1.0.0-rc.1_build.7"));
        assert_eq!(chart_version("karpenter"), None);
    }

    #[test]
    fn settings_read_back_from_the_rendered_deployment_match_the_attributes() {
        let attrs = sample_attrs();
        let objects = rendered(&attrs);
        let find = |kind: &str| objects.iter().find(|o| o["kind"] == kind).unwrap();
        let mut expected = attrs.clone();
        // The image's tag is the chart's.
        expected.insert("version".into(), json!("1.14.1"));
        assert_eq!(observed(find("Deployment"), Some(find("ServiceAccount")), &attrs), expected);
        let mut edited = find("Deployment").clone();
        edited["spec"]["replicas"] = json!(3);
        assert_eq!(observed(&edited, Some(find("ServiceAccount")), &attrs)["replicas"], 3);
    }
}

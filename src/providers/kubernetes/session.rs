//! One provider call's conversation with the cluster: discovery of the kind, server-side apply under kbp's field
//! manager, reads, deletes and the waits after them. Objects are plain JSON (`apiVersion`, `kind`, `metadata`);
//! the kind is looked up through the API server's discovery, so custom kinds work once their CRD is served.

use std::time::Duration;

use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PropagationPolicy};
use kube::core::GroupVersionKind;
use kube::discovery::Scope;
use kube::runtime::wait::{await_condition, conditions};
use serde_json::Value;

use crate::access::cluster::Cluster;
use crate::graph::kinds::in_cluster::ClusterAccess;
use crate::graph::{Address, Attrs};
use crate::providers::wait::{Budget, Poll, Wait};
use crate::providers::{Context, ProviderError, Result};

/// How long one watch of an object being deleted lasts before kbp looks at it again (and reports what holds it).
const WATCH_SECS: u64 = 10;

/// The field manager of everything kbp applies.
pub const FIELD_MANAGER: &str = "kbp";

/// The cluster a resource lives in, from its `cluster` attribute ([`ClusterAccess`]: name, endpoint, CA from the
/// EKS cluster).
pub fn cluster_of(cx: &Context, attrs: &Attrs) -> Result<Cluster> {
    let c = attrs.get("cluster").cloned().unwrap_or(Value::Null);
    match serde_json::from_value::<ClusterAccess<String>>(c) {
        Ok(c) => Ok(Cluster {
            name: c.name,
            region: cx.region.clone(),
            endpoint: c.endpoint,
            ca_data: c.certificate_authority_data,
        }),
        Err(_) => Err(ProviderError::new("kubernetes:connect", "", "the cluster's endpoint and CA are not known")
            .with_hint("the EKS cluster must be created first; run `kbp apply` again")),
    }
}

/// A reference to one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectRef {
    /// The object's `apiVersion` (`v1`, `karpenter.sh/v1`).
    pub api_version: String,
    /// The object's `kind`.
    pub kind: String,
    /// The object's namespace; `None` for a cluster-scoped object.
    pub namespace: Option<String>,
    /// The object's name.
    pub name: String,
}

impl ObjectRef {
    /// The reference to a manifest; an error if it lacks `apiVersion`, `kind` or `metadata.name`.
    pub fn of(object: &Value) -> Result<Self> {
        let text = |v: &Value| v.as_str().map(str::to_string);
        match (text(&object["apiVersion"]), text(&object["kind"]), text(&object["metadata"]["name"])) {
            (Some(api_version), Some(kind), Some(name)) => {
                Ok(ObjectRef { api_version, kind, namespace: text(&object["metadata"]["namespace"]), name })
            }
            _ => Err(ProviderError::new(
                "kubernetes:apply",
                "Invalid",
                "an object lacks apiVersion, kind or metadata.name",
            )),
        }
    }

    /// A reference from its parts.
    pub fn new(api_version: &str, kind: &str, namespace: Option<&str>, name: &str) -> Self {
        ObjectRef {
            api_version: api_version.into(),
            kind: kind.into(),
            namespace: namespace.map(str::to_string),
            name: name.into(),
        }
    }

    fn gvk(&self) -> GroupVersionKind {
        match self.api_version.split_once('/') {
            Some((group, version)) => GroupVersionKind::gvk(group, version, &self.kind),
            None => GroupVersionKind::gvk("", &self.api_version, &self.kind),
        }
    }
}

impl std::fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {ns}/{}", self.kind, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// A connection to one cluster's API server, through which the Kubernetes providers read, apply and delete.
pub struct Session<'a> {
    /// The run's context: its region, its credentials, and where waits are reported.
    pub cx: &'a Context,
    /// The client, authenticated for the cluster.
    pub client: kube::Client,
    /// The cluster's name, under which the context remembers what it serves.
    cluster: String,
}

impl<'a> Session<'a> {
    /// Connects to the cluster named in `attrs`.
    pub async fn open(cx: &'a Context, attrs: &Attrs) -> Result<Session<'a>> {
        let cluster = cluster_of(cx, attrs)?;
        let client = cx.kube(&cluster).await?;
        Ok(Session { cx, client, cluster: cluster.name })
    }

    /// The API of the object's kind, in its namespace (the client's default namespace when the object names
    /// none); `None` when the cluster does not serve the kind (a CRD not installed).
    async fn api(&self, obj: &ObjectRef, operation: &str) -> Result<Option<Api<DynamicObject>>> {
        let Some((resource, scope)) = self.resource(obj, operation).await? else { return Ok(None) };
        Ok(Some(match (scope, &obj.namespace) {
            (Scope::Namespaced, Some(ns)) => Api::namespaced_with(self.client.clone(), ns, &resource),
            (Scope::Namespaced, None) => Api::default_namespaced_with(self.client.clone(), &resource),
            (Scope::Cluster, _) => Api::all_with(self.client.clone(), &resource),
        }))
    }

    /// The resource behind the object's kind and its scope, from the API server's discovery (once per kind in a
    /// run: [`Context::served`]); `None` when the cluster does not serve the kind.
    async fn resource(&self, obj: &ObjectRef, operation: &str) -> Result<Option<(ApiResource, Scope)>> {
        let gvk = obj.gvk();
        if let Some(known) = self.cx.served(&self.cluster, &gvk) {
            return Ok(Some(known));
        }
        match kube::discovery::pinned_kind(&self.client, &gvk).await {
            Ok((resource, caps)) => {
                self.cx.remember_served(&self.cluster, &gvk, (resource.clone(), caps.scope.clone()));
                Ok(Some((resource, caps.scope)))
            }
            Err(kube::Error::Discovery(_)) => Ok(None),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(None),
            Err(e) => Err(error(operation, obj, e)),
        }
    }

    /// Server-side applies `object` as kbp's field manager, taking over fields others set (kbp owns what the
    /// blueprint says). Returns the object as the API server stored it.
    pub async fn apply(&self, object: &Value) -> Result<Value> {
        let r = ObjectRef::of(object)?;
        let op = "kubernetes:apply";
        let api = self.api(&r, op).await?.ok_or_else(|| {
            ProviderError::new(op, "NotFound", format!("the cluster does not serve {} {}", r.api_version, r.kind))
                .with_hint("its CRD is not installed or not established yet; run `kbp apply` again")
        })?;
        let patch: DynamicObject = serde_json::from_value(object.clone())
            .map_err(|e| ProviderError::new(op, "Invalid", format!("{r}: {e}")))?;
        let params = PatchParams::apply(FIELD_MANAGER).force();
        let applied = api.patch(&r.name, &params, &Patch::Apply(&patch)).await.map_err(|e| error(op, &r, e))?;
        serde_json::to_value(applied).map_err(|e| ProviderError::new(op, "", e.to_string()))
    }

    /// The object `r` names as the API server has it; `None` when there is none.
    pub async fn get(&self, r: &ObjectRef) -> Result<Option<Value>> {
        let op = "kubernetes:get";
        let Some(api) = self.api(r, op).await? else { return Ok(None) };
        match api.get_opt(&r.name).await.map_err(|e| error(op, r, e))? {
            Some(o) => Ok(Some(serde_json::to_value(o).map_err(|e| ProviderError::new(op, "", e.to_string()))?)),
            None => Ok(None),
        }
    }

    /// Objects of a kind in a namespace (`None`: all namespaces), filtered by label and field selectors; none
    /// when the cluster does not serve the kind.
    ///
    /// Each object carries `apiVersion` and `kind` (as asked): kube-apiserver leaves them out of list items.
    pub async fn list(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        labels: Option<&str>,
        fields: Option<&str>,
    ) -> Result<Vec<Value>> {
        let op = "kubernetes:list";
        let r = ObjectRef::new(api_version, kind, namespace, "");
        let Some((resource, scope)) = self.resource(&r, op).await? else { return Ok(vec![]) };
        let api: Api<DynamicObject> = match (scope, namespace) {
            (Scope::Namespaced, Some(ns)) => Api::namespaced_with(self.client.clone(), ns, &resource),
            _ => Api::all_with(self.client.clone(), &resource),
        };
        let mut params = ListParams::default();
        if let Some(l) = labels {
            params = params.labels(l);
        }
        if let Some(f) = fields {
            params = params.fields(f);
        }
        let list = match api.list(&params).await {
            Ok(list) => list,
            // Served when discovery was asked earlier in the run, and since removed (its CRD deleted).
            Err(kube::Error::Api(s)) if s.code == 404 => return Ok(vec![]),
            Err(e) => return Err(error(op, &r, e)),
        };
        let types = kube::core::TypeMeta { api_version: api_version.to_string(), kind: kind.to_string() };
        list.items
            .into_iter()
            .map(|mut o| {
                o.types.get_or_insert_with(|| types.clone());
                serde_json::to_value(o).map_err(|e| ProviderError::new(op, "", e.to_string()))
            })
            .collect()
    }

    /// Asks the API server to delete the object; `foreground` keeps it until its dependents are gone (a
    /// NodePool until its NodeClaims are). Already gone is fine.
    pub async fn delete(&self, r: &ObjectRef, foreground: bool) -> Result<()> {
        let op = "kubernetes:delete";
        let Some(api) = self.api(r, op).await? else { return Ok(()) };
        let mut params = DeleteParams::default();
        if foreground {
            params.propagation_policy = Some(PropagationPolicy::Foreground);
        }
        match api.delete(&r.name, &params).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
            Err(e) => Err(error(op, r, e)),
        }
    }

    /// Waits until the object no longer exists, reporting what holds it (its finalizers) under `address`. Each
    /// look that finds it still there watches it for a while, so its deletion is seen the moment the API server
    /// makes it rather than at the next look.
    pub async fn wait_gone(&self, r: &ObjectRef, address: &Address, budget: Budget, hint: &str) -> Result<()> {
        let what = format!("{r} to be deleted");
        let watch_secs = budget.timeout.as_secs().clamp(1, WATCH_SECS);
        let waited = Wait::new("kubernetes:delete", &what, budget)
            .reporting(self.cx, Some(address))
            .until(|| async {
                let Some(o) = self.get(r).await? else { return Ok(Poll::Done(())) };
                let Some(uid) = o["metadata"]["uid"].as_str() else { return Ok(Poll::Pending(holders(&o))) };
                let deleted = self.watch_until_deleted(r, uid, watch_secs).await?;
                Ok(if deleted { Poll::Done(()) } else { Poll::Pending(holders(&o)) })
            })
            .await;
        waited.map_err(|e| if e.code.is_empty() { e.with_hint(hint) } else { e })
    }

    /// Watches `r` for up to `secs` with kube-runtime's `await_condition` and `is_deleted`: true once it is gone
    /// or another object of its name has taken its place (a new `uid`). A watch that fails or is cut short is
    /// false: the caller looks again.
    async fn watch_until_deleted(&self, r: &ObjectRef, uid: &str, secs: u64) -> Result<bool> {
        let Some(api) = self.api(r, "kubernetes:watch").await? else { return Ok(true) };
        let gone = await_condition(api, &r.name, conditions::is_deleted(uid));
        Ok(matches!(tokio::time::timeout(Duration::from_secs(secs), gone).await, Ok(Ok(_))))
    }

    /// Deletes and waits until gone.
    pub async fn delete_and_wait(
        &self,
        r: &ObjectRef,
        foreground: bool,
        address: &Address,
        budget: Budget,
        hint: &str,
    ) -> Result<()> {
        self.delete(r, foreground).await?;
        self.wait_gone(r, address, budget, hint).await
    }
}

impl Session<'_> {
    /// Drops every finalizer of `r` (a merge patch), so the API server deletes it at once. Only for destroy,
    /// when the controller that owns the finalizers is gone and the cluster goes next anyway.
    pub async fn remove_finalizers(&self, r: &ObjectRef) -> Result<()> {
        let op = "kubernetes:patch";
        let Some(api) = self.api(r, op).await? else { return Ok(()) };
        let patch = serde_json::json!({ "metadata": { "finalizers": null } });
        match api.patch(&r.name, &kube::api::PatchParams::default(), &Patch::Merge(&patch)).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
            Err(e) => Err(error(op, r, e)),
        }
    }
}

/// In a destroy, how long to wait for finalizers before dropping them (`KBP_FINALIZER_WAIT`, a duration,
/// overrides it): the sweep that follows terminates the nodes anyway.
pub fn destroy_wait() -> Duration {
    std::env::var("KBP_FINALIZER_WAIT")
        .ok()
        .and_then(|v| humantime::parse_duration(&v).ok())
        .unwrap_or(Duration::from_secs(5 * 60))
}

/// In a destroy, whether `e` means the cluster cannot be reached (it is gone or going, or refuses kbp): the
/// objects go with the cluster, and the teardown sweep removes what they launched by its tags.
pub fn cluster_gone_in_destroy(cx: &Context, e: &ProviderError) -> bool {
    cx.destroying && (e.code == "Unreachable" || e.operation == "kubernetes:connect")
}

/// What keeps an object being deleted: its finalizers.
pub(crate) fn holders(o: &Value) -> String {
    let finalizers: Vec<&str> = o["metadata"]["finalizers"]
        .as_array()
        .map(|f| f.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if finalizers.is_empty() {
        "deleting".to_string()
    } else {
        format!("waiting on finalizers {}", finalizers.join(", "))
    }
}

/// A Kubernetes API error as a provider error, with what to do for the common refusals.
pub fn error(operation: &str, r: &ObjectRef, e: kube::Error) -> ProviderError {
    match e {
        kube::Error::Api(s) => {
            let reason = if s.reason.is_empty() { format!("HTTP{}", s.code) } else { s.reason.clone() };
            let mut message = format!("{r}: {}", s.message);
            // The causes, one per line with the field each is about, unless the message already says it
            // (the API server usually spells its causes out in the message; an admission webhook may not).
            for c in s.details.iter().flat_map(|d| &d.causes) {
                if s.message.contains(&c.message) && s.message.contains(&c.field) {
                    continue;
                }
                match c.field.is_empty() {
                    false => message.push_str(&format!("\n  {}: {}", c.field, c.message)),
                    true => message.push_str(&format!("\n  {}", c.message)),
                }
            }
            let err = ProviderError::new(operation, &reason, message);
            match s.code {
                401 => err.with_hint(
                    "the cluster does not accept kbp's token; check the AWS identity (`aws sts get-caller-identity`) \
                     has an access entry in the cluster",
                ),
                403 => err.with_hint("the identity lacks this Kubernetes permission; kbp needs cluster-admin"),
                422 => err.with_hint("the API server refused the object; check the blueprint field behind it"),
                _ => err,
            }
        }
        other => ProviderError::new(operation, "Unreachable", format!("{r}: {other}")).with_hint(
            "the cluster's API server did not answer; check the endpoint is reachable from here (public access, \
             CIDRs) or use --kubeconfig",
        ),
    }
}

/// Reading back after a wait: the budget for objects Karpenter finalizes (NodePools wait on the nodes).
pub const NODES_DRAIN: Budget = Budget {
    timeout: Duration::from_secs(15 * 60),
    first_interval: Duration::from_millis(500),
    max_interval: Duration::from_secs(10),
    expected: None,
};

#[cfg(test)]
mod tests {
    use super::*;

    /// A refusal as the API server sends it: its message, and its causes (field, message).
    fn refusal(message: &str, causes: &[(&str, &str)]) -> kube::Error {
        kube::Error::Api(Box::new(
            serde_json::from_value(serde_json::json!({
                "status": "Failure", "code": 422, "reason": "Invalid", "message": message,
                "details": {"causes": causes.iter().map(|(f, m)| serde_json::json!({"field": f, "message": m}))
                    .collect::<Vec<_>>()},
            }))
            .unwrap(),
        ))
    }

    #[test]
    fn a_refusal_names_each_cause_the_message_does_not_already_say_once() {
        let r = ObjectRef::new("karpenter.sh/v1", "NodePool", None, "default");
        let said = "NodePool.karpenter.sh \"default\" is invalid: spec.limits: Invalid value: \"object\": no";
        let e = error("kubernetes:apply", &r, refusal(said, &[("spec.limits", "Invalid value: \"object\": no")]));
        assert_eq!(e.to_string().matches("Invalid value").count(), 1, "{e}");
        let denied = "is forbidden: ValidatingAdmissionPolicy 'cap' denied request: too big";
        let e = error(
            "kubernetes:apply",
            &r,
            refusal(denied, &[("", "ValidatingAdmissionPolicy 'cap' denied request: too big")]),
        );
        assert_eq!(e.to_string().matches("too big").count(), 1, "{e}");
        let webhook = error(
            "kubernetes:apply",
            &r,
            refusal("admission webhook denied the request", &[("spec.weight", "must be even")]),
        );
        assert!(webhook.to_string().contains("\n  spec.weight: must be even"), "{webhook}");
        let unnamed = error("kubernetes:apply", &r, refusal("denied", &[("", "the reason")]));
        assert!(unnamed.to_string().contains("\n  the reason"), "{unnamed}");
    }
}

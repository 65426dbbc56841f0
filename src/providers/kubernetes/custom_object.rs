//! `k8s_ec2_node_class` and `k8s_node_pool`: one Karpenter object each, its manifest compiled from the
//! blueprint (`graph::compile::kubernetes`), server-side applied. A refresh reads the object and keeps only the
//! fields kbp applied, so the API server's defaults (and Karpenter's status) are not drift, while a hand edit
//! of an applied field is.
//!
//! Each also carries `health`, Karpenter's judgement of it from its `Ready` condition: a NodePool or
//! EC2NodeClass Karpenter counts not ready (no subnet matched, its class gone, …) provisions nothing, so it is a
//! change in plan and drift with the reason, and an apply that cannot make it ready fails naming it.
//!
//! Deletion waits for Karpenter's part: a NodePool is deleted in the foreground, so it stays until the
//! NodeClaims it owns are gone, which is how Karpenter drains and terminates its nodes; an EC2NodeClass keeps
//! Karpenter's finalizer until no node uses it.

use async_trait::async_trait;
use serde_json::{json, Map, Value};

use std::collections::HashMap;

use super::session::{cluster_of, ObjectRef, Session, NODES_DRAIN};
use crate::graph::kinds::{ec2_node_class::NodeClass, node_pool::NodePool};
use crate::graph::{compile::kinds, Address, Attrs};
use crate::kubernetes::manifests::READY;
use crate::providers::spec;
use crate::providers::wait::Budget;
use crate::providers::{
    Applied, Context, Descriptor, Desired, Observed, Provider, ProviderError, Result, Typical, WithoutState,
};

pub(crate) struct CustomObject {
    kind: &'static str,
    api_version: &'static str,
    object_kind: &'static str,
    /// The address type of these resources, to report waits under.
    address_type: &'static str,
    foreground: bool,
    /// The object as the desired attributes of this kind carry it, read through the kind's spec.
    manifest: fn(&Attrs) -> Result<Value>,
    delete_budget: Budget,
    delete_hint: &'static str,
    /// What to do about an object Karpenter counts not ready.
    not_ready_hint: &'static str,
}

pub(crate) fn node_class() -> CustomObject {
    CustomObject {
        kind: kinds::EC2_NODE_CLASS,
        api_version: "karpenter.k8s.aws/v1",
        object_kind: "EC2NodeClass",
        address_type: "ec2_node_class",
        foreground: false,
        manifest: |attrs| Ok(spec::parse::<NodeClass<String>>(kinds::EC2_NODE_CLASS, attrs)?.manifest),
        delete_budget: Budget::minutes(5),
        delete_hint: "Karpenter removes its finalizer once no node uses the class; if the controller is gone, \
                      nothing will: check `kubectl get nodeclaims` and the controller's pods",
        not_ready_hint: "Karpenter looks up the class's subnets, security groups, AMIs and instance profile in AWS: \
                         fix the selector or the AWS side the condition names (`kubectl describe ec2nodeclass`), \
                         then apply again",
    }
}

pub(crate) fn node_pool() -> CustomObject {
    CustomObject {
        kind: kinds::NODE_POOL,
        api_version: "karpenter.sh/v1",
        object_kind: "NodePool",
        address_type: "node_pool",
        foreground: true,
        manifest: |attrs| Ok(spec::parse::<NodePool<String>>(kinds::NODE_POOL, attrs)?.manifest),
        delete_budget: NODES_DRAIN,
        delete_hint: "Karpenter is still draining and terminating the pool's nodes (pods with a long grace period or \
                      a PodDisruptionBudget hold them); check `kubectl get nodeclaims`",
        not_ready_hint: "Karpenter launches no node for a NodePool it counts not ready, most often because its \
                         EC2NodeClass is not ready: fix what the condition names (`kubectl describe nodepool`), \
                         then apply again",
    }
}

/// `live` cut down to the shape of `applied`: the keys kbp set, recursively; lists of the same length element
/// by element, other lists whole.
fn project(live: &Value, applied: &Value) -> Value {
    match (live, applied) {
        (Value::Object(l), Value::Object(a)) => Value::Object(
            a.iter().filter_map(|(k, av)| l.get(k).map(|lv| (k.clone(), project(lv, av)))).collect::<Map<_, _>>(),
        ),
        (Value::Array(l), Value::Array(a)) if l.len() == a.len() => {
            Value::Array(l.iter().zip(a).map(|(lv, av)| project(lv, av)).collect())
        }
        _ => live.clone(),
    }
}

/// Karpenter's judgement of `live`: [`READY`] when its `Ready` condition is True, or when Karpenter has not
/// judged this generation yet (no condition, status Unknown, or a condition observed for an older generation: a
/// change just applied, a controller starting); else the conditions that are False, in one line:
/// `not ready: SubnetsReady is False (SubnetsNotFound: SubnetSelector did not match any Subnets)`.
fn health(live: &Value) -> String {
    let conditions = live["status"]["conditions"].as_array().cloned().unwrap_or_default();
    let Some(ready) = conditions.iter().find(|c| c["type"] == "Ready") else { return READY.to_string() };
    let generation = live["metadata"]["generation"].as_i64();
    let stale = matches!((ready["observedGeneration"].as_i64(), generation), (Some(seen), Some(now)) if seen < now);
    if ready["status"] != "False" || stale {
        return READY.to_string();
    }
    // Ready sums up the others ("UnhealthyDependents"); the False ones say why.
    let failed: Vec<&Value> = conditions.iter().filter(|c| c["status"] == "False" && c["type"] != "Ready").collect();
    let why = if failed.is_empty() { vec![ready] } else { failed };
    let said: Vec<String> = why
        .iter()
        .map(|c| {
            let kind = c["type"].as_str().unwrap_or("Ready");
            let detail: Vec<&str> = [&c["reason"], &c["message"]]
                .into_iter()
                .filter_map(|v| v.as_str().map(str::trim).filter(|t| !t.is_empty()))
                .collect();
            match detail.is_empty() {
                true => format!("{kind} is False"),
                false => format!("{kind} is False ({})", detail.join(": ")),
            }
        })
        .collect();
    format!("not ready: {}", said.join("; "))
}

/// What a refresh makes of the object `id` as the cluster has it (`None`: not there).
fn observed(id: &str, prior: &Attrs, live: Option<&Value>) -> Option<Observed> {
    let live = live?;
    // An object being deleted is as good as gone: it will not come back by itself.
    if !live["metadata"]["deletionTimestamp"].is_null() {
        return None;
    }
    let mut attrs = prior.clone();
    if let Some(applied) = prior.get("manifest") {
        attrs.insert("manifest".into(), project(live, applied));
    }
    attrs.insert("health".into(), json!(health(live)));
    Some(Observed {
        attrs,
        outputs: json!({ "name": id, "uid": live["metadata"]["uid"] }).as_object().cloned().unwrap_or_default(),
    })
}

impl CustomObject {
    fn object(&self, name: &str) -> ObjectRef {
        ObjectRef::new(self.api_version, self.object_kind, None, name)
    }

    async fn apply(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        let manifest = (self.manifest)(desired.attrs)?;
        let session = Session::open(cx, desired.attrs).await?;
        let stored = session.apply(&manifest).await?;
        let name = manifest["metadata"]["name"].as_str().unwrap_or_default().to_string();
        // An apply that changed the object starts a new generation Karpenter has yet to judge; one that did not
        // leaves Karpenter's judgement standing, and applying again will not change it.
        let health = health(&stored);
        if health != READY {
            let message = format!("Karpenter counts {} {name} {health}", self.object_kind);
            return Err(ProviderError::new("kubernetes:apply", "NotReady", message).with_hint(self.not_ready_hint));
        }
        Ok(Applied {
            id: name.clone(),
            outputs: json!({ "name": name, "uid": stored["metadata"]["uid"] }).as_object().cloned().unwrap_or_default(),
        })
    }
}

#[async_trait]
impl Provider for CustomObject {
    fn descriptor(&self) -> Descriptor {
        // A NodePool's delete waits while Karpenter drains and terminates its nodes.
        Descriptor::new(self.kind, WithoutState::GoesWith(kinds::EKS_CLUSTER), &[])
            .force_new(&["cluster"])
            .takes(Typical { create: 1, update: 1, delete: 30 })
    }

    async fn read(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<Option<Observed>> {
        let session = Session::open(cx, prior).await?;
        Ok(observed(id, prior, session.get(&self.object(id)).await?.as_ref()))
    }

    /// One LIST of the kind per cluster instead of a GET per object: a refresh's Kubernetes calls do not grow
    /// with the number of NodePools.
    async fn read_many(&self, cx: &Context, items: &[(String, Attrs)]) -> Result<Vec<Option<Observed>>> {
        let mut live: HashMap<String, HashMap<String, Value>> = HashMap::new();
        for (_, prior) in items {
            let cluster = cluster_of(cx, prior)?.name;
            if live.contains_key(&cluster) {
                continue;
            }
            let session = Session::open(cx, prior).await?;
            let objects = session.list(self.api_version, self.object_kind, None, None, None).await?;
            let by_name =
                objects.into_iter().filter_map(|o| Some((o["metadata"]["name"].as_str()?.to_string(), o))).collect();
            live.insert(cluster, by_name);
        }
        items
            .iter()
            .map(|(id, prior)| {
                let cluster = cluster_of(cx, prior)?.name;
                Ok(observed(id, prior, live.get(&cluster).and_then(|objects| objects.get(id))))
            })
            .collect()
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        self.apply(cx, desired).await
    }

    async fn update(&self, cx: &Context, _id: &str, _prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        self.apply(cx, desired).await
    }

    async fn delete(&self, cx: &Context, id: &str, prior: &Attrs) -> Result<()> {
        // In a destroy, finalizers still held when the wait runs out (the controller is gone or stuck) are
        // dropped so the cluster can go; the teardown sweep then terminates the nodes by their tags.
        let session = Session::open(cx, prior).await?;
        let address = Address::keyed(self.address_type, "main", id);
        let r = self.object(id);
        let budget = if cx.destroying {
            Budget { timeout: super::session::destroy_wait(), ..self.delete_budget }
        } else {
            self.delete_budget
        };
        match session.delete_and_wait(&r, self.foreground, &address, budget, self.delete_hint).await {
            Err(e) if cx.destroying && e.code.is_empty() => {
                tracing::warn!("{r}: Karpenter did not finish in time ({e}); dropping its finalizers");
                session.remove_finalizers(&r).await?;
                session.wait_gone(&r, &address, Budget::minutes(1), self.delete_hint).await
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn health_is_ready_until_karpenter_judges_this_generation_not_ready_and_then_names_the_false_conditions() {
        let object = |generation: i64, conditions: Value| json!({ "metadata": { "generation": generation }, "status": { "conditions": conditions } });
        assert_eq!(health(&json!({ "metadata": { "generation": 1 } })), READY, "not judged yet");
        let failing = json!([
            { "type": "Ready", "status": "False", "observedGeneration": 2, "reason": "UnhealthyDependents",
              "message": "SubnetsReady=False" },
            { "type": "SubnetsReady", "status": "False", "observedGeneration": 2, "reason": "SubnetsNotFound",
              "message": "SubnetSelector did not match any Subnets" },
            { "type": "AMIsReady", "status": "True", "observedGeneration": 2 },
        ]);
        assert_eq!(
            health(&object(2, failing.clone())),
            "not ready: SubnetsReady is False (SubnetsNotFound: SubnetSelector did not match any Subnets)"
        );
        assert_eq!(health(&object(3, failing)), READY, "a generation Karpenter has not seen yet is not judged");
        let alone =
            json!([{ "type": "Ready", "status": "False", "observedGeneration": 1, "reason": "NodeClassNotFound" }]);
        assert_eq!(health(&object(1, alone)), "not ready: Ready is False (NodeClassNotFound)");
        let unknown = json!([{ "type": "Ready", "status": "Unknown", "observedGeneration": 1 }]);
        assert_eq!(health(&object(1, unknown)), READY);
        let fine = json!([{ "type": "Ready", "status": "True", "observedGeneration": 1 }]);
        assert_eq!(health(&object(1, fine)), READY);
    }

    #[test]
    fn projection_keeps_what_was_applied_and_drops_server_defaults() {
        let applied =
            json!({ "spec": { "limits": { "cpu": "1000" }, "requirements": [{ "key": "a", "operator": "In" }] } });
        let live = json!({
            "metadata": { "uid": "u" },
            "spec": { "limits": { "cpu": "1000" }, "requirements": [{ "key": "a", "operator": "In", "minValues": 2 }],
                      "disruption": { "consolidateAfter": "0s" } },
            "status": {},
        });
        assert_eq!(project(&live, &applied), applied);
        let edited = json!({ "spec": { "limits": { "cpu": "5" }, "requirements": [] } });
        assert_eq!(project(&edited, &applied), edited, "a changed value and a changed list show");
        let pruned = json!({ "spec": { "requirements": [{ "key": "a", "operator": "In" }] } });
        assert!(project(&pruned, &applied)["spec"].get("limits").is_none(), "a field gone from the cluster shows");
    }
}

//! Releasing what in-cluster controllers made in AWS, while they still run: the first thing `kbp destroy` does,
//! before NodePools and the cluster go.
//!
//! The AWS Load Balancer Controller makes a load balancer for each Service of `type: LoadBalancer` and each
//! Ingress; the EBS CSI driver makes a volume for each claim, and deletes it with the claim when its
//! PersistentVolume's reclaim policy is `Delete`. Deleting those objects asks the controllers to delete what they
//! made: their finalizers hold a Service or Ingress until its load balancer is gone, and a `Delete` volume's
//! PersistentVolume goes only after its EBS volume. So waiting for the objects (and a claim's PersistentVolume) to
//! disappear is waiting for AWS to be clean, and the VPC then comes down without `DependencyViolation`.
//!
//! Nothing else is touched: ClusterIP and NodePort Services make nothing in AWS, a `Retain` volume is meant to
//! outlive the cluster, and an unbound claim has no volume. The wait is bounded, and finalizers are never dropped:
//! an object still there when the budget runs out (its controller is gone, or a running pod still mounts the claim)
//! is reported `stuck` for the caller to warn about, and the AWS sweep removes what it made.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::Value;

use crate::graph::Attrs;
use crate::providers::kubernetes::session::{holders, ObjectRef, Session};
use crate::providers::wait::{Budget, Poll, Wait};
use crate::providers::{Context, Result};

/// What [`release`] deleted, as `Kind namespace/name` (`Service default/web`, `PersistentVolume pv-1`), by
/// whether it went within the budget.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Released {
    /// Gone, and with them what their controllers made: for a claim, its PersistentVolume is listed too (gone once
    /// the EBS volume is deleted).
    pub deleted: Vec<String>,
    /// Still there when the budget ran out, held by a finalizer nobody removes (the controller is gone) or a pod
    /// that mounts the claim. Not an error: the AWS sweep removes what their controllers made.
    pub stuck: Vec<String>,
}

const INGRESS_API: &str = "networking.k8s.io/v1";

/// How often to look while objects go: a load balancer takes seconds to a minute to delete.
const LOOK: Budget = Budget {
    // The budget is the caller's, applied around the whole wait; running out is not an error here.
    timeout: Duration::MAX,
    first_interval: Duration::from_millis(250),
    max_interval: Duration::from_secs(5),
    expected: None,
};

/// Deletes, in every namespace of the cluster that `cluster`'s attributes name (any in-cluster state entry's),
/// the LoadBalancer Services, the Ingresses and the claims of `Delete` volumes, all at once; then waits up to
/// `budget` for them, and the claims' volumes, to be gone.
///
/// A cluster that does not answer is an error (code `Unreachable`, or operation `kubernetes:connect`), for the
/// caller to weigh: in a destroy, `cluster_gone_in_destroy` says its objects are gone with it.
pub async fn release(cx: &Context, cluster: &Attrs, budget: Duration) -> Result<Released> {
    let session = Session::open(cx, cluster).await?;
    let targets = Targets::of(&Seen::read(&session).await?)?;
    if targets.wait.is_empty() {
        return Ok(Released::default());
    }
    futures::future::try_join_all(targets.delete.iter().map(|h| session.delete(&h.object, false))).await?;

    let what = format!("{} objects to be deleted by their controllers", targets.wait.len());
    let wait = Wait::new("kubernetes:delete", &what, LOOK);
    let waited = tokio::time::timeout(
        budget,
        wait.until(|| async {
            let seen = Seen::read(&session).await?;
            let left = still_there(&targets.wait, &seen);
            Ok(if left.is_empty() { Poll::Done(()) } else { Poll::Pending(describe(&left)) })
        }),
    )
    .await;
    let left: Vec<(Held, String)> = match waited {
        Ok(done) => {
            done?;
            Vec::new()
        }
        Err(_out_of_time) => {
            let seen = Seen::read(&session).await?;
            still_there(&targets.wait, &seen).into_iter().map(|(h, o)| (h.clone(), holders(o))).collect()
        }
    };
    for (held, why) in &left {
        tracing::info!("{}: still there after {}s ({why})", held.object, budget.as_secs());
    }
    let stuck: BTreeSet<&str> = left.iter().map(|(h, _)| h.uid.as_str()).collect();
    let (gone, stuck): (Vec<&Held>, Vec<&Held>) = targets.wait.iter().partition(|h| !stuck.contains(h.uid.as_str()));
    let names = |held: Vec<&Held>| held.into_iter().map(|h| h.object.to_string()).collect();
    Ok(Released { deleted: names(gone), stuck: names(stuck) })
}

/// One object, with its uid: a namesake made meanwhile is another object.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Held {
    object: ObjectRef,
    uid: String,
}

impl Held {
    fn of(object: &Value) -> Result<Held> {
        let uid = object["metadata"]["uid"].as_str().unwrap_or_default().to_string();
        Ok(Held { object: ObjectRef::of(object)?, uid })
    }
}

/// What the cluster holds of the kinds [`release`] looks at, in every namespace.
#[derive(Debug, Default)]
struct Seen {
    services: Vec<Value>,
    ingresses: Vec<Value>,
    claims: Vec<Value>,
    volumes: Vec<Value>,
}

impl Seen {
    async fn read(session: &Session<'_>) -> Result<Seen> {
        let (services, ingresses, claims, volumes) = tokio::try_join!(
            session.list("v1", "Service", None, None, None),
            session.list(INGRESS_API, "Ingress", None, None, None),
            session.list("v1", "PersistentVolumeClaim", None, None, None),
            session.list("v1", "PersistentVolume", None, None, None),
        )?;
        Ok(Seen { services, ingresses, claims, volumes })
    }

    fn all(&self) -> impl Iterator<Item = &Value> {
        self.services.iter().chain(&self.ingresses).chain(&self.claims).chain(&self.volumes)
    }
}

/// What to delete, and what to wait for: the deleted objects and each claim's PersistentVolume, which goes only
/// once the EBS volume is deleted.
#[derive(Debug, Default)]
struct Targets {
    delete: Vec<Held>,
    wait: Vec<Held>,
}

impl Targets {
    fn of(seen: &Seen) -> Result<Targets> {
        let mut t = Targets::default();
        for service in seen.services.iter().filter(|s| s["spec"]["type"] == "LoadBalancer") {
            t.delete.push(Held::of(service)?);
        }
        for ingress in &seen.ingresses {
            t.delete.push(Held::of(ingress)?);
        }
        t.wait.clone_from(&t.delete);
        for claim in &seen.claims {
            if let Some(volume) = deleted_with(claim, &seen.volumes) {
                let claim = Held::of(claim)?;
                t.delete.push(claim.clone());
                t.wait.extend([claim, Held::of(volume)?]);
            }
        }
        Ok(t)
    }
}

/// The PersistentVolume bound to `claim`, if deleting the claim deletes it and its cloud volume: the claim names
/// the volume, the volume's `claimRef` names the claim back (else the claim is not bound), and its reclaim policy
/// is `Delete`.
fn deleted_with<'a>(claim: &Value, volumes: &'a [Value]) -> Option<&'a Value> {
    let name = claim["spec"]["volumeName"].as_str().filter(|n| !n.is_empty())?;
    let volume = volumes.iter().find(|v| v["metadata"]["name"] == name)?;
    let back = &volume["spec"]["claimRef"];
    let uid = back["uid"].as_str().unwrap_or_default();
    let bound = back["namespace"] == claim["metadata"]["namespace"]
        && back["name"] == claim["metadata"]["name"]
        && (uid.is_empty() || claim["metadata"]["uid"] == uid);
    (bound && volume["spec"]["persistentVolumeReclaimPolicy"] == "Delete").then_some(volume)
}

/// Which of `held` the cluster still has, with the object as seen.
fn still_there<'a>(held: &'a [Held], seen: &'a Seen) -> Vec<(&'a Held, &'a Value)> {
    held.iter().filter_map(|h| seen.all().find(|o| o["metadata"]["uid"] == h.uid.as_str()).map(|o| (h, o))).collect()
}

/// What a look saw, for the progress log: what is left and what holds it.
fn describe(left: &[(&Held, &Value)]) -> String {
    let shown: Vec<String> = left.iter().take(3).map(|(h, o)| format!("{} {}", h.object, holders(o))).collect();
    let more = left.len().saturating_sub(shown.len());
    let mut text = format!("{} left: {}", left.len(), shown.join("; "));
    if more > 0 {
        text.push_str(&format!("; and {more} more"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(api_version: &str, kind: &str, ns: Option<&str>, name: &str, uid: &str) -> Value {
        let mut o = json!({ "apiVersion": api_version, "kind": kind, "metadata": { "name": name, "uid": uid } });
        if let Some(ns) = ns {
            o["metadata"]["namespace"] = json!(ns);
        }
        o
    }

    fn service(name: &str, type_: Option<&str>) -> Value {
        let mut s = object("v1", "Service", Some("default"), name, &format!("svc-{name}"));
        if let Some(t) = type_ {
            s["spec"] = json!({ "type": t });
        }
        s
    }

    fn claim(name: &str, volume: Option<&str>) -> Value {
        let mut c = object("v1", "PersistentVolumeClaim", Some("apps"), name, &format!("pvc-{name}"));
        c["spec"] = json!({ "volumeName": volume });
        c
    }

    fn volume(name: &str, policy: &str, claim: Option<(&str, &str)>) -> Value {
        let mut v = object("v1", "PersistentVolume", None, name, &format!("pv-{name}"));
        v["spec"] = json!({ "persistentVolumeReclaimPolicy": policy });
        if let Some((ns, claim)) = claim {
            v["spec"]["claimRef"] = json!({ "namespace": ns, "name": claim, "uid": format!("pvc-{claim}") });
        }
        v
    }

    fn names(held: &[Held]) -> Vec<String> {
        held.iter().map(|h| h.object.to_string()).collect()
    }

    #[test]
    fn load_balancer_services_and_every_ingress_are_deleted() {
        let types = [
            ("web", Some("LoadBalancer")),
            ("internal", Some("ClusterIP")),
            ("ports", Some("NodePort")),
            ("plain", None),
        ];
        let seen = Seen {
            services: types.map(|(name, t)| service(name, t)).into(),
            ingresses: vec![object(INGRESS_API, "Ingress", Some("shop"), "front", "ing-1")],
            ..Seen::default()
        };
        let t = Targets::of(&seen).unwrap();
        assert_eq!(names(&t.delete), ["Service default/web", "Ingress shop/front"]);
        assert_eq!(t.wait, t.delete);
    }

    #[test]
    fn only_claims_bound_to_a_delete_volume_are_deleted_and_their_volume_is_waited_for() {
        let seen = Seen {
            claims: vec![
                claim("scratch", Some("pv-delete")),
                claim("keep", Some("pv-retain")),
                claim("pending", None),
                claim("lost", Some("pv-missing")),
                claim("other", Some("pv-someone-elses")),
            ],
            volumes: vec![
                volume("pv-delete", "Delete", Some(("apps", "scratch"))),
                volume("pv-retain", "Retain", Some(("apps", "keep"))),
                volume("pv-someone-elses", "Delete", Some(("apps", "another"))),
                volume("pv-free", "Delete", None),
            ],
            ..Seen::default()
        };
        let t = Targets::of(&seen).unwrap();
        assert_eq!(names(&t.delete), ["PersistentVolumeClaim apps/scratch"]);
        assert_eq!(names(&t.wait), ["PersistentVolumeClaim apps/scratch", "PersistentVolume pv-delete"]);
    }

    #[test]
    fn a_claim_ref_without_uid_still_binds_but_one_to_a_namesake_does_not() {
        let mut pre_bound = volume("pv-1", "Delete", Some(("apps", "data")));
        pre_bound["spec"]["claimRef"]["uid"] = Value::Null;
        assert!(deleted_with(&claim("data", Some("pv-1")), &[pre_bound]).is_some());
        let mut namesake = volume("pv-1", "Delete", Some(("apps", "data")));
        namesake["spec"]["claimRef"]["uid"] = json!("an-earlier-claim");
        assert!(deleted_with(&claim("data", Some("pv-1")), &[namesake]).is_none());
    }

    #[test]
    fn an_object_is_still_there_only_with_the_same_uid() {
        let held = vec![Held::of(&service("web", Some("LoadBalancer"))).unwrap()];
        let mut held_on = service("web", Some("LoadBalancer"));
        held_on["metadata"]["finalizers"] = json!(["service.k8s.aws/resources"]);
        let seen = Seen { services: vec![held_on], ..Seen::default() };
        let left = still_there(&held, &seen);
        assert_eq!(left.len(), 1);
        assert_eq!(describe(&left), "1 left: Service default/web waiting on finalizers service.k8s.aws/resources");

        let mut namesake = service("web", Some("LoadBalancer"));
        namesake["metadata"]["uid"] = json!("recreated");
        assert!(still_there(&held, &Seen { services: vec![namesake], ..Seen::default() }).is_empty());
    }

    #[test]
    fn an_object_without_a_name_is_an_error_not_a_panic() {
        let seen = Seen { ingresses: vec![json!({ "apiVersion": INGRESS_API, "kind": "Ingress" })], ..Seen::default() };
        assert!(Targets::of(&seen).is_err());
    }
}

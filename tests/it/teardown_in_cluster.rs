//! Releasing what in-cluster controllers made, against the cluster's real control plane: after `kbp apply` of
//! the minimal blueprint, `teardown::in_cluster::release` deletes the LoadBalancer Services, the Ingresses and the
//! claims of `Delete` volumes in every namespace, waits for them (and those volumes) to go, leaves everything else
//! alone (ClusterIP Services, a `Retain` claim, an unbound claim), and reports an object whose finalizer nobody
//! removes as stuck once its budget runs out, without dropping the finalizer. Everything is read back with a
//! Kubernetes client of the test's own.

use std::time::{Duration, Instant};

use crate::support::*;
use k8s_openapi::api::core::v1::{Namespace, PersistentVolume, PersistentVolumeClaim, Service};
use k8s_openapi::api::networking::v1::Ingress;
use kbp::providers::Context;
use kbp::teardown::in_cluster::{release, Released};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::Resource;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

/// The minimal blueprint's cluster.
const STACK: &str = "sbx";

/// The attributes of an in-cluster entry of the stack's state: what destroy hands to `release`.
fn in_cluster_attrs(ws: &Workspace) -> kbp::graph::Attrs {
    let state: Value =
        serde_json::from_slice(&std::fs::read(ws.path().join(format!(".kbp/{STACK}.state.json"))).unwrap()).unwrap();
    let resources = state["resources"].as_array().unwrap();
    let entry = resources
        .iter()
        .find(|r| r["kind"].as_str().is_some_and(|k| k.starts_with("k8s_")))
        .unwrap_or_else(|| panic!("an in-cluster entry in state: {resources:#?}"));
    entry["attributes"].as_object().unwrap().clone()
}

fn api<K>(client: &kube::Client, ns: Option<&str>) -> Api<K>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
{
    Api::namespaced(client.clone(), ns.unwrap_or("default"))
}

async fn create<K>(api: &Api<K>, object: Value)
where
    K: Resource + Clone + DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let object: K = serde_json::from_value(object).unwrap();
    api.create(&PostParams::default(), &object).await.unwrap();
}

fn service(name: &str, type_: &str, finalizers: &[&str]) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": { "name": name, "finalizers": finalizers },
        "spec": { "type": type_, "selector": { "app": name }, "ports": [{ "port": 80 }] },
    })
}

/// A volume of the EBS CSI driver with `policy`, made for claim `claim` in `ns`, and that claim.
fn volume_and_claim(volume: &str, policy: &str, ns: &str, claim: &str) -> (Value, Value) {
    let pv = json!({
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": { "name": volume },
        "spec": {
            "capacity": { "storage": "8Gi" }, "accessModes": ["ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": policy,
            "csi": { "driver": "ebs.csi.aws.com", "volumeHandle": format!("vol-{volume}") },
            "claimRef": { "namespace": ns, "name": claim },
        },
    });
    let pvc = json!({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": { "name": claim },
        "spec": { "accessModes": ["ReadWriteOnce"], "resources": { "requests": { "storage": "8Gi" } },
                  "volumeName": volume },
    });
    (pv, pvc)
}

/// Polls `check` for up to ten seconds: the controller manager acts within a second or two.
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = Instant::now();
    while !check().await {
        assert!(start.elapsed() < Duration::from_secs(10), "{what}: not so after 10 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn release_deletes_what_controllers_back_with_aws_resources_and_reports_what_is_stuck() {
    let em = Emulator::start();
    let ws = Workspace::with_blueprint("minimal");
    kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());
    let client = cluster_client(&em, STACK).await;

    let namespaces: Api<Namespace> = Api::all(client.clone());
    create(&namespaces, json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": "apps" } })).await;
    let (apps, default) = (Some("apps"), None);
    create(&api::<Service>(&client, apps), service("web", "LoadBalancer", &[])).await;
    create(&api::<Service>(&client, apps), service("internal", "ClusterIP", &[])).await;
    create(&api::<Service>(&client, default), service("held", "LoadBalancer", &["service.k8s.aws/resources"])).await;
    let ingress = json!({
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": { "name": "web" },
        "spec": { "ingressClassName": "alb", "rules": [{ "http": { "paths": [{ "path": "/", "pathType": "Prefix",
                  "backend": { "service": { "name": "web", "port": { "number": 80 } } } }] } }] },
    });
    create(&api::<Ingress>(&client, default), ingress).await;
    let volumes: Api<PersistentVolume> = Api::all(client.clone());
    for (volume, policy, claim) in [("pv-delete", "Delete", "scratch"), ("pv-retain", "Retain", "keep")] {
        let (pv, pvc) = volume_and_claim(volume, policy, "apps", claim);
        create(&volumes, pv).await;
        create(&api::<PersistentVolumeClaim>(&client, apps), pvc).await;
    }
    let claims = api::<PersistentVolumeClaim>(&client, apps);
    let (_, mut unbound) = volume_and_claim("", "", "apps", "unbound");
    unbound["spec"].as_object_mut().unwrap().remove("volumeName");
    create(&claims, unbound).await;
    let phase = |c: Option<PersistentVolumeClaim>| c.and_then(|c| c.status).and_then(|s| s.phase);
    for claim in ["scratch", "keep"] {
        eventually(&format!("claim {claim} Bound"), || async {
            phase(claims.get_opt(claim).await.unwrap()).as_deref() == Some("Bound")
        })
        .await;
    }

    let cx = Context::from_sdk(em.sdk_config().await, STACK, REGION);
    let attrs = in_cluster_attrs(&ws);
    let budget = Duration::from_secs(3);
    let start = Instant::now();
    let released = release(&cx, &attrs, budget).await.unwrap_or_else(|e| panic!("release: {e}"));
    let took = start.elapsed();

    assert_eq!(released.stuck, ["Service default/held"], "{released:?}");
    assert_eq!(
        sorted(released.deleted.clone()),
        ["Ingress default/web", "PersistentVolume pv-delete", "PersistentVolumeClaim apps/scratch", "Service apps/web",],
        "{released:?}"
    );
    assert!(took >= budget, "the stuck Service was waited on for the whole budget: {took:?}");
    assert!(took < budget + Duration::from_secs(5), "the wait is bounded by the budget: {took:?}");

    // Gone, as reported.
    assert!(api::<Service>(&client, apps).get_opt("web").await.unwrap().is_none());
    assert!(api::<Ingress>(&client, default).get_opt("web").await.unwrap().is_none());
    assert!(claims.get_opt("scratch").await.unwrap().is_none());
    assert!(volumes.get_opt("pv-delete").await.unwrap().is_none(), "the Delete volume went with its claim");
    // Untouched.
    let internal = api::<Service>(&client, apps).get_opt("internal").await.unwrap().expect("ClusterIP Service kept");
    assert!(internal.metadata.deletion_timestamp.is_none());
    let keep = claims.get_opt("keep").await.unwrap().expect("the Retain claim is kept");
    assert!(keep.metadata.deletion_timestamp.is_none());
    assert_eq!(phase(Some(keep)).as_deref(), Some("Bound"));
    assert!(volumes.get_opt("pv-retain").await.unwrap().is_some());
    let unbound = claims.get_opt("unbound").await.unwrap().expect("the unbound claim is kept");
    assert!(unbound.metadata.deletion_timestamp.is_none());
    let kubernetes = api::<Service>(&client, default).get_opt("kubernetes").await.unwrap();
    assert!(kubernetes.is_some_and(|s| s.metadata.deletion_timestamp.is_none()));
    // Stuck: being deleted, its finalizer left in place.
    let held = api::<Service>(&client, default).get_opt("held").await.unwrap().expect("the held Service stays");
    assert!(held.metadata.deletion_timestamp.is_some());
    assert_eq!(held.metadata.finalizers.as_deref(), Some(&["service.k8s.aws/resources".to_string()][..]));

    // A second run (a destroy run again) waits on what is already being deleted, and returns as soon as it goes.
    let services = api::<Service>(&client, default);
    let controller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let drop_finalizers = json!({ "metadata": { "finalizers": null } });
        services.patch("held", &PatchParams::default(), &Patch::Merge(&drop_finalizers)).await.unwrap();
    });
    let start = Instant::now();
    let again = release(&cx, &attrs, Duration::from_secs(30)).await.unwrap_or_else(|e| panic!("release again: {e}"));
    controller.await.unwrap();
    assert_eq!(again, Released { deleted: vec!["Service default/held".into()], stuck: vec![] });
    assert!(start.elapsed() < Duration::from_secs(10), "done once the finalizer went: {:?}", start.elapsed());
}

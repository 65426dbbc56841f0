//! `kbp simulate` checked against the real thing (issue 16): the seed 004 NodePools
//! (tests/fixtures/blueprints/seed-004.toml) and the mixed workload (tests/fixtures/workloads/seed-004-mixed.yaml)
//! go through Karpenter's own core, v1.14.1 with its KWOK provider (fake nodes, no cloud; built by
//! scripts/karpenter-kwok.sh), on a real control plane (scripts/kube.sh), and through kbp's simulation. Both must
//! put the same number of each group's pods in each NodePool, leave the GPU pod that tolerates no taint
//! unplaced, and launch the same number of nodes per NodePool, give or take one.
//!
//! Both are given the same instance types, with the same room: the catalog written for `kbp simulate --catalog`
//! is also written as KWOK's instance-types file, each type's `resources` being what kbp computes pods may use on
//! it (kubelet reservations, the add-ons' DaemonSets) plus the 100m CPU and 10Mi that KWOK reserves itself. The
//! NodePools are built from the parsed fixture, with KWOK's family and size labels in place of the AWS ones.
//!
//! Karpenter's decision is read from its NodeClaims, not from where kube-scheduler later binds the pods (by its
//! own scoring), nor from Karpenter's `Nominated` events (rate-limited to 10 at once and then 5 a second, so
//! most of a 30-pod batch's are dropped): each NodeClaim's `spec.resources.requests` is the sum of the pods
//! Karpenter planned on it (no DaemonSets run in this cluster), which is decoded back into pods of each group
//! among those the NodeClaim's labels and taints admit.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kbp::blueprint::model::{Blueprint, Requirement, Taint};
use kbp::simulate::catalog::{Catalog, CatalogType, Gpu, InstanceType};
use kbp::simulate::overhead::{self, Kubelet};
use kbp::simulate::requirements::matches;
use kbp::simulate::resources::Resources;
use kbp::simulate::taints::repelling;
use kbp::simulate::workload::{self, PodGroup};
use kbp::simulate::Labels;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams};
use serde_json::{json, Value};

use crate::support::control_plane::ControlPlane;
use crate::support::events::{events, of_type};
use crate::support::{describe_output, reference_crds_dir, repo};

const ZONES: [&str; 3] = ["us-west-2a", "us-west-2b", "us-west-2c"];
/// The one pod neither can place: it needs a GPU and tolerates not the GPU pool's taint.
const STRAY: &str = "Pod/stray-gpu";
const MIB: u64 = 1024 * 1024;

/// The seed pools' families in three sizes, and three GPU types. Figures as EC2 describes them; prices near
/// us-west-2's, made distinct so neither side breaks a tie the other way, Spot's distinct per zone.
fn catalog() -> Catalog {
    let sizes = [("large", 2, 3, 10), ("xlarge", 4, 4, 15), ("2xlarge", 8, 4, 15)];
    // family, MiB per vCPU, on-demand USD per vCPU-hour
    let families =
        [("m5", 4096, 0.048), ("m6i", 4096, 0.047), ("m7i", 4096, 0.0504), ("c5", 2048, 0.0425), ("c6i", 2048, 0.0415)]
            .into_iter()
            .chain([("r5", 8192, 0.063), ("r6i", 8192, 0.062)]);
    let mut types = Vec::new();
    for (f, (family, mib_per_cpu, per_cpu)) in families.enumerate() {
        for (size, vcpus, enis, ips) in sizes {
            let price = per_cpu * f64::from(vcpus);
            types.push(ty(
                &format!("{family}.{size}"),
                vcpus,
                mib_per_cpu * u64::from(vcpus),
                (enis, ips),
                None,
                price,
                f,
            ));
        }
    }
    for (i, (size, vcpus, gpus, enis, ips, price)) in
        [("xlarge", 4, 1, 4, 15, 1.006), ("2xlarge", 8, 1, 4, 15, 1.212), ("12xlarge", 48, 4, 8, 30, 5.672)]
            .into_iter()
            .enumerate()
    {
        let gpu = Gpu { count: gpus, name: "a10g".into(), manufacturer: "nvidia".into(), memory_mib: 24576 };
        types.push(ty(&format!("g5.{size}"), vcpus, 4096 * u64::from(vcpus), (enis, ips), Some(gpu), price, 7 + i));
    }
    Catalog { region: "us-west-2".into(), fetched_at: "2026-01-01T00:00:00Z".into(), types }
}

fn ty(
    name: &str,
    vcpus: u32,
    memory_mib: u64,
    (enis, ips): (u32, u32),
    gpu: Option<Gpu>,
    od: f64,
    n: usize,
) -> CatalogType {
    // Spot at about a third of on-demand, a little dearer in each later zone; `n` keeps types apart.
    let spot_prices = ZONES
        .iter()
        .enumerate()
        .map(|(z, zone)| (zone.to_string(), od * 0.35 + 0.0001 * (z * 20 + n) as f64))
        .collect();
    CatalogType {
        instance_type: InstanceType { name: name.into(), architecture: "x86_64".into(), vcpus, memory_mib, gpu },
        max_network_interfaces: enis,
        ipv4_per_interface: ips,
        zones: ZONES.iter().map(|z| z.to_string()).collect(),
        spot: true,
        on_demand_price: Some(od),
        spot_prices,
    }
}

/// The catalog as KWOK's instance-types file: each type's resources are kbp's room for pods on it (the same on
/// every pool: the test checks no node class changes the kubelet) plus KWOK's own reservation.
fn kwok_instance_types(bp: &Blueprint, catalog: &Catalog) -> Value {
    let daemons = overhead::addon_daemonsets(bp).iter().fold(Resources::default(), |r, d| r.plus(d.requests));
    let offering = |price: f64, capacity_type: &str, zone: &str| {
        json!({"Price": price, "Available": true, "Requirements": [
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": [capacity_type]},
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]},
        ]})
    };
    let types: Vec<Value> = catalog
        .types
        .iter()
        .map(|t| {
            let room = overhead::allocatable(t, &Kubelet::default()).minus(daemons);
            let mut resources = json!({
                "cpu": format!("{}m", room.cpu_milli + 100),
                "memory": format!("{}", room.memory + 10 * MIB),
                "pods": room.pods.to_string(),
            });
            if room.gpu > 0 {
                resources["nvidia.com/gpu"] = json!(room.gpu.to_string());
            }
            let mut offerings = Vec::new();
            for zone in &t.zones {
                offerings.push(offering(t.on_demand_price.expect("every test type is priced"), "on-demand", zone));
                if let Some(p) = t.spot_prices.get(zone) {
                    offerings.push(offering(*p, "spot", zone));
                }
            }
            json!({
                "name": t.instance_type.name,
                "architecture": "amd64",
                "operatingSystems": ["linux"],
                "resources": resources,
                "offerings": offerings,
            })
        })
        .collect();
    Value::Array(types)
}

/// The blueprint's NodePools for the KWOK provider: same weights, labels, taints, limits and requirements,
/// family and size by KWOK's label keys, one KWOKNodeClass. Consolidation off: the comparison is of the
/// provisioning decision, read before anything could be consolidated.
fn kwok_node_pools(bp: &Blueprint) -> Vec<Value> {
    bp.node_pools
        .iter()
        .map(|(name, p)| {
            let requirements: Vec<Value> = p
                .requirements
                .iter()
                .map(|r| {
                    let key = match r.key.as_str() {
                        "karpenter.k8s.aws/instance-family" => "karpenter.kwok.sh/instance-family",
                        "karpenter.k8s.aws/instance-size" => "karpenter.kwok.sh/instance-size",
                        k if k.starts_with("karpenter.k8s.aws/") => {
                            panic!("NodePool {name}: KWOK has no label like {k}; translate it here")
                        }
                        k => k,
                    };
                    json!({"key": key, "operator": r.operator, "values": r.values})
                })
                .collect();
            let taints: Vec<Value> = p
                .taints
                .iter()
                .map(|t| {
                    let mut o = json!({"key": t.key, "effect": t.effect});
                    if let Some(v) = &t.value {
                        o["value"] = json!(v);
                    }
                    o
                })
                .collect();
            let mut spec = json!({
                "template": {
                    "metadata": {"labels": p.labels},
                    "spec": {
                        "requirements": requirements,
                        "taints": taints,
                        "nodeClassRef": {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"},
                        "expireAfter": "Never",
                    },
                },
                "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "Never"},
                "limits": p.limits,
            });
            if let Some(w) = p.weight {
                spec["weight"] = json!(w);
            }
            json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name}, "spec": spec})
        })
        .collect()
}

/// Karpenter with the KWOK provider, stopped when dropped; a watchdog stops it too if this process dies.
struct Karpenter {
    child: Child,
    /// Exits within a second of Karpenter.
    watchdog: Child,
    log: PathBuf,
}

impl Karpenter {
    fn start(kubeconfig: &str, instance_types: &Path, log: PathBuf) -> Karpenter {
        let out = Command::new("bash").arg(repo().join("scripts/karpenter-kwok.sh")).arg("install").output().unwrap();
        assert!(
            out.status.success(),
            "scripts/karpenter-kwok.sh install failed (Go 1.26.6+ and the Go module proxy are needed once):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        let port = || std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port().to_string();
        let file = std::fs::File::create(&log).unwrap();
        let child = Command::new(dir.join("bin/karpenter-kwok"))
            .env("KUBECONFIG", kubeconfig)
            .env("DISABLE_LEADER_ELECTION", "true")
            .env("METRICS_PORT", port())
            .env("HEALTH_PROBE_PORT", port())
            .env("INSTANCE_TYPES_FILE_PATH", instance_types)
            // One batch for the whole workload, as kbp simulates it: the controllers create the pods within
            // a second or two, and the window stays open while they come.
            .env("BATCH_IDLE_DURATION", "5s")
            .env("BATCH_MAX_DURATION", "60s")
            .stdin(Stdio::null())
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .spawn()
            .expect("start karpenter-kwok");
        let watchdog = format!(
            "while kill -0 {test} 2>/dev/null && kill -0 {kp} 2>/dev/null; do sleep 1; done; kill {kp} 2>/dev/null",
            test = std::process::id(),
            kp = child.id()
        );
        let watchdog =
            Command::new("sh").arg("-c").arg(watchdog).stdin(Stdio::null()).spawn().expect("start the watchdog");
        Karpenter { child, watchdog, log }
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// The KWOKNodeClass CRD, kept beside the binary by the install.
    fn node_class_crd() -> PathBuf {
        let out = Command::new("bash").arg(repo().join("scripts/karpenter-kwok.sh")).arg("install").output().unwrap();
        PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("crds/karpenter.kwok.sh_kwoknodeclasses.yaml")
    }
}

impl Drop for Karpenter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = self.watchdog.wait();
    }
}

fn api(client: &kube::Client, api_version: &str, kind: &str, plural: &str) -> Api<DynamicObject> {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let resource = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural);
    Api::all_with(client.clone(), &resource)
}

/// Server-side applies `doc`. A CRD's group can answer 404 in discovery for a moment after the CRD
/// reports Established, so discovery is asked again for up to 30 s before giving up.
async fn apply(client: &kube::Client, doc: &Value) {
    let (group, version) = doc["apiVersion"].as_str().unwrap().split_once('/').unwrap_or(("", "v1"));
    let gvk = GroupVersionKind::gvk(group, version, doc["kind"].as_str().unwrap());
    let deadline = Instant::now() + Duration::from_secs(30);
    let (resource, caps) = loop {
        match kube::discovery::pinned_kind(client, &gvk).await {
            Ok(found) => break found,
            Err(kube::Error::Api(e)) if e.code == 404 && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(500)).await
            }
            Err(e) => panic!("{gvk:?}: {e}"),
        }
    };
    let api: Api<DynamicObject> = match caps.scope {
        kube::discovery::Scope::Namespaced => Api::namespaced_with(client.clone(), "default", &resource),
        kube::discovery::Scope::Cluster => Api::all_with(client.clone(), &resource),
    };
    let name = doc["metadata"]["name"].as_str().unwrap();
    let params = PatchParams { field_manager: Some("kbp-test".into()), force: true, ..Default::default() };
    api.patch(name, &params, &Patch::Apply(doc)).await.unwrap_or_else(|e| panic!("apply {} {name}: {e}", doc["kind"]));
}

fn condition_true(o: &DynamicObject, kind: &str) -> bool {
    o.data["status"]["conditions"]
        .as_array()
        .is_some_and(|cs| cs.iter().any(|c| c["type"] == kind && c["status"] == "True"))
}

/// Polls `check` each second until it answers, or panics with `what` and Karpenter's log after `secs`.
async fn wait_for<T, F: std::future::Future<Output = Option<T>>>(
    what: &str,
    secs: u64,
    karpenter: &Karpenter,
    mut check: impl FnMut() -> F,
) -> T {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(Instant::now() < deadline, "{what} within {secs} s; Karpenter's log ends:\n{}", karpenter.log_tail());
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// One NodeClaim as Karpenter planned it.
#[derive(Debug)]
struct Claim {
    name: String,
    pool: String,
    requests: Resources,
    labels: Labels,
    taints: Vec<Taint>,
}

fn claim(o: &DynamicObject) -> Claim {
    let mut labels: Labels = o.metadata.labels.clone().unwrap_or_default().into_iter().collect();
    for r in o.data["spec"]["requirements"].as_array().into_iter().flatten() {
        let values = r["values"].as_array().map(Vec::as_slice).unwrap_or_default();
        if r["operator"] == "In" && values.len() == 1 {
            labels.entry(r["key"].as_str().unwrap().into()).or_insert_with(|| values[0].as_str().unwrap().into());
        }
    }
    let requests = o.data["spec"]["resources"]["requests"].as_object().cloned().unwrap_or_default();
    let quantities: Vec<(String, String)> =
        requests.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())).collect();
    let taints = o.data["spec"]["taints"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| Taint {
            key: t["key"].as_str().unwrap().into(),
            value: t["value"].as_str().map(String::from),
            effect: t["effect"].as_str().unwrap_or_default().into(),
        })
        .collect();
    Claim {
        name: o.metadata.name.clone().unwrap(),
        pool: labels.get("karpenter.sh/nodepool").cloned().unwrap_or_default(),
        requests: Resources::from_quantities(quantities.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .unwrap_or_else(|e| panic!("the requests of {:?}: {e}", o.metadata.name)),
        labels,
        taints,
    }
}

/// The pods of each group a NodeClaim's requests add up to, among the groups its labels and taints admit (and
/// no more of a group than may share a node): the one answer, or a panic naming them all.
fn decode(claim: &Claim, groups: &[PodGroup]) -> BTreeMap<String, u32> {
    let admitted: Vec<&PodGroup> = groups
        .iter()
        .filter(|g| !g.daemon && repelling(&claim.taints, &g.tolerations).is_none())
        .filter(|g| g.terms.iter().any(|term| term.iter().all(|r: &Requirement| matches(r, &claim.labels))))
        .collect();
    let mut answers = Vec::new();
    let mut counts = vec![0u32; admitted.len()];
    search(&admitted, 0, &mut counts, Resources::default(), claim.requests, &mut answers);
    assert!(
        answers.len() == 1,
        "NodeClaim {} ({}) requests {:?}, which the groups {:?} make up in {} ways: {answers:?}",
        claim.name,
        claim.pool,
        claim.requests,
        admitted.iter().map(|g| &g.name).collect::<Vec<_>>(),
        answers.len()
    );
    admitted.iter().zip(&answers[0]).filter(|(_, n)| **n > 0).map(|(g, n)| (g.name.clone(), *n)).collect()
}

fn search(gs: &[&PodGroup], i: usize, counts: &mut Vec<u32>, sum: Resources, goal: Resources, out: &mut Vec<Vec<u32>>) {
    let over = sum.cpu_milli > goal.cpu_milli || sum.memory > goal.memory || sum.gpu > goal.gpu || sum.pods > goal.pods;
    if over {
        return;
    }
    if i == gs.len() {
        if sum == goal {
            out.push(counts.clone());
        }
        return;
    }
    let most = gs[i].per_node.unwrap_or(gs[i].replicas).min(gs[i].replicas);
    let mut s = sum;
    for n in 0..=most {
        counts[i] = n;
        search(gs, i + 1, counts, s, goal, out);
        s = s.plus(gs[i].requests);
    }
    counts[i] = 0;
}

#[tokio::test(flavor = "multi_thread")]
async fn karpenter_with_kwok_and_kbp_simulate_put_the_seed_workload_in_the_same_node_pools() {
    let fixture = |rel: &str| repo().join("tests/fixtures").join(rel);
    let blueprint_file = fixture("blueprints/seed-004.toml");
    let workload_file = fixture("workloads/seed-004-mixed.yaml");
    let bp = kbp::blueprint::load(&blueprint_file, &[]).expect("the seed 004 blueprint");
    for (name, class) in &bp.node_classes {
        // One KWOKNodeClass stands for all of them, so none may change what a node leaves pods.
        assert_eq!(Kubelet::of(class), Kubelet::default(), "node class {name} sets kubelet figures");
    }
    let workload_text = std::fs::read_to_string(&workload_file).unwrap();
    let groups = workload::parse_yaml("seed-004-mixed.yaml", &workload_text).expect("the workload").groups;
    let scratch = tempfile::tempdir().unwrap();
    let catalog = catalog();
    let catalog_file = scratch.path().join("catalog.json");
    std::fs::write(&catalog_file, serde_json::to_vec(&catalog).unwrap()).unwrap();
    let types_file = scratch.path().join("instance-types.json");
    std::fs::write(&types_file, serde_json::to_vec_pretty(&kwok_instance_types(&bp, &catalog)).unwrap()).unwrap();

    // kbp's answer.
    let out = Command::new(env!("CARGO_BIN_EXE_kbp"))
        .arg("simulate")
        .arg(&blueprint_file)
        .arg("--workload")
        .arg(&workload_file)
        .arg("--catalog")
        .arg(&catalog_file)
        .arg("--json")
        .env("NO_COLOR", "1")
        .env("KBP_CACHE_DIR", scratch.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let all = events(&out);
    let sims = of_type(&all, "simulation");
    assert_eq!(sims.len(), 1, "{}", describe_output(&out));
    let sim = &sims[0]["simulation"];
    let mut kbp_pods: BTreeMap<(String, String), u32> = BTreeMap::new();
    let mut kbp_pending = BTreeMap::new();
    for g in sim["groups"].as_array().unwrap() {
        let name = g["name"].as_str().unwrap().to_string();
        for (pool, n) in g["node_pools"].as_object().unwrap() {
            kbp_pods.insert((name.clone(), pool.clone()), n.as_u64().unwrap() as u32);
        }
        kbp_pending.insert(name, g["pending"].as_u64().unwrap());
    }
    let kbp_nodes: BTreeMap<String, u32> = sim["node_pools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap().to_string(), p["nodes"].as_u64().unwrap() as u32))
        .collect();

    // Karpenter's answer.
    let plane = ControlPlane::start();
    let client = plane.client().await;
    let crds = reference_crds_dir();
    let node_class_crd = Karpenter::node_class_crd();
    let mut crd_docs = Vec::new();
    for file in [crds.join("karpenter.sh_nodepools.yaml"), crds.join("karpenter.sh_nodeclaims.yaml"), node_class_crd] {
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        crd_docs.extend(kbp::kubernetes::manifests::documents(&text).unwrap());
    }
    let crd_api = api(&client, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions");
    for doc in &crd_docs {
        apply(&client, doc).await;
    }
    let karpenter_log = scratch.path().join("karpenter.log");
    let karpenter = Karpenter::start(plane.var("KUBECONFIG"), &types_file, karpenter_log);
    for doc in &crd_docs {
        let name = doc["metadata"]["name"].as_str().unwrap().to_string();
        let crd_api = crd_api.clone();
        wait_for(&format!("CRD {name} Established"), 60, &karpenter, || {
            let (api, name) = (crd_api.clone(), name.clone());
            async move { api.get(&name).await.ok().filter(|o| condition_true(o, "Established")).map(|_| ()) }
        })
        .await;
    }
    let node_class =
        json!({"apiVersion": "karpenter.kwok.sh/v1alpha1", "kind": "KWOKNodeClass", "metadata": {"name": "default"}});
    apply(&client, &node_class).await;
    let pools = kwok_node_pools(&bp);
    for p in &pools {
        apply(&client, p).await;
    }
    // The workload comes once Karpenter counts every pool ready, so the first batch sees them all.
    let pool_api = api(&client, "karpenter.sh/v1", "NodePool", "nodepools");
    wait_for("every NodePool Ready", 120, &karpenter, || {
        let api = pool_api.clone();
        let want = pools.len();
        async move {
            let list = api.list(&ListParams::default()).await.ok()?;
            (list.items.iter().filter(|o| condition_true(o, "Ready")).count() == want).then_some(())
        }
    })
    .await;
    for mut doc in kbp::kubernetes::manifests::documents(&workload_text).unwrap() {
        doc["metadata"]["namespace"] = json!("default");
        apply(&client, &doc).await;
    }
    let placeable: u64 = groups.iter().filter(|g| !g.daemon && g.name != STRAY).map(|g| u64::from(g.replicas)).sum();
    let claim_api = api(&client, "karpenter.sh/v1", "NodeClaim", "nodeclaims");
    let list_claims = || {
        let api = claim_api.clone();
        async move { api.list(&ListParams::default()).await.ok().map(|l| l.items.iter().map(claim).collect::<Vec<_>>()) }
    };
    wait_for(&format!("NodeClaims for all {placeable} placeable pods"), 180, &karpenter, || {
        let list = list_claims();
        async move { list.await.filter(|cs| cs.iter().map(|c| c.requests.pods).sum::<u64>() >= placeable).map(|_| ()) }
    })
    .await;
    // Beyond one batch window, so a NodeClaim Karpenter launched late (for the stray pod, say) is counted too.
    tokio::time::sleep(Duration::from_secs(8)).await;
    let claims = list_claims().await.expect("list the NodeClaims");

    let mut karpenter_pods: BTreeMap<(String, String), u32> = BTreeMap::new();
    let mut karpenter_nodes: BTreeMap<String, u32> = BTreeMap::new();
    for c in &claims {
        *karpenter_nodes.entry(c.pool.clone()).or_default() += 1;
        for (group, n) in decode(c, &groups) {
            *karpenter_pods.entry((group, c.pool.clone())).or_default() += n;
        }
    }
    let both = format!(
        "Karpenter (KWOK): pods per (group, pool) {karpenter_pods:?}, NodeClaims per pool {karpenter_nodes:?}\n\
         kbp simulate:     pods per (group, pool) {kbp_pods:?}, nodes per pool {kbp_nodes:?}, pending {kbp_pending:?}\n\
         NodeClaims: {claims:#?}"
    );
    assert_eq!(karpenter_pods, kbp_pods, "the NodePool of every pod\n{both}");
    assert!(!karpenter_pods.keys().any(|(g, _)| g == STRAY), "Karpenter placed {STRAY}\n{both}");
    assert_eq!(kbp_pending.get(STRAY), Some(&1), "kbp leaves {STRAY} pending\n{both}");
    assert_eq!(kbp_pending.values().sum::<u64>(), 1, "kbp places every other pod\n{both}");
    let pods_api: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(client.clone(), "default");
    let stray = pods_api.get("stray-gpu").await.expect("the stray pod");
    assert!(stray.spec.and_then(|s| s.node_name).is_none(), "{STRAY} was bound to a node\n{both}");
    for pool in bp.node_pools.keys() {
        let (k, s) = (karpenter_nodes.get(pool).copied().unwrap_or(0), kbp_nodes.get(pool).copied().unwrap_or(0));
        assert!(k.abs_diff(s) <= 1, "NodePool {pool}: Karpenter launched {k} nodes, kbp {s}\n{both}");
    }
    println!("{both}");
    drop(karpenter);
}

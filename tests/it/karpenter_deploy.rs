//! The in-cluster stage end to end, against a real Kubernetes control plane: `kbp apply` of karpenter-mng
//! against the emulator installs Karpenter's CRDs, the controller and the default EC2NodeClass and NodePool into
//! the kube-apiserver (v1.34, with its controller manager and scheduler) that serves the cluster's endpoint,
//! authenticating with kbp's EKS token through the emulator's TokenReview webhook, RBAC on. They are read back
//! over that API (with kbp's own token), the controller's pods run on the node group's Nodes, a second plan is
//! empty, a NodePool edit is one in-place update, an update of the controller removes the node-lease Role earlier
//! releases made, and destroy takes NodePools (waiting for their NodeClaims' finalizers), then the controller,
//! then the cluster down in that order.

use crate::support::*;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams};
use serde_json::{json, Value};

const STACK: &str = "ex-karpenter-mng";

pub(crate) fn dynamic(
    client: &kube::Client,
    api_version: &str,
    kind: &str,
    plural: &str,
    ns: Option<&str>,
) -> Api<DynamicObject> {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let resource = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural);
    match ns {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
        None => Api::all_with(client.clone(), &resource),
    }
}

pub(crate) async fn get(
    client: &kube::Client,
    api_version: &str,
    kind: &str,
    plural: &str,
    ns: Option<&str>,
    name: &str,
) -> Option<Value> {
    let api = dynamic(client, api_version, kind, plural, ns);
    api.get_opt(name).await.unwrap().map(|o| serde_json::to_value(o).unwrap())
}

/// A Node Karpenter launched for NodePool `pool`, and its NodeClaim (owned by the pool, as Karpenter makes it)
/// once the simulated controller holds it with its `karpenter.sh/termination` finalizer.
async fn launched_node(client: &kube::Client, pool: &Value, node: &str) {
    let nodes = dynamic(client, "v1", "Node", "nodes", None);
    let labels = json!({"karpenter.sh/nodepool": pool["metadata"]["name"], "kubernetes.io/hostname": node});
    let object = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node, "labels": labels}});
    nodes.create(&PostParams::default(), &serde_json::from_value(object).unwrap()).await.unwrap();
    let claims = dynamic(client, "karpenter.sh/v1", "NodeClaim", "nodeclaims", None);
    let claim = json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {
            "name": "default-x7k2p",
            "labels": {"karpenter.sh/nodepool": pool["metadata"]["name"]},
            "ownerReferences": [{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "name": pool["metadata"]["name"],
                                 "uid": pool["metadata"]["uid"], "blockOwnerDeletion": true}],
        },
        "spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}],
        },
    });
    claims.create(&PostParams::default(), &serde_json::from_value(claim).unwrap()).await.unwrap();
    let status = json!({"status": {"nodeName": node, "providerID": "aws:///us-west-2a/i-0123456789abcdef0"}});
    claims.patch_status("default-x7k2p", &PatchParams::default(), &Patch::Merge(&status)).await.unwrap();
    for _ in 0..100 {
        let claim = claims.get("default-x7k2p").await.unwrap();
        if claim.metadata.finalizers.unwrap_or_default().contains(&"karpenter.sh/termination".to_string()) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("Karpenter did not put its finalizer on the NodeClaim");
}

/// Watches objects (label, API, name) while `destroy` runs; the labels in the order the objects went.
fn watch_gone(
    objects: Vec<(&'static str, Api<DynamicObject>, &'static str)>,
) -> tokio::task::JoinHandle<Vec<&'static str>> {
    tokio::spawn(async move {
        let mut gone = Vec::new();
        while gone.len() < objects.len() {
            for (label, api, name) in &objects {
                match api.get_opt(name).await {
                    Ok(Some(_)) => {}
                    // Gone, or the cluster itself is gone: what is still here went with it.
                    Ok(None) | Err(_) if !gone.contains(label) => gone.push(*label),
                    _ => {}
                }
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        gone
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn karpenter_mng_deploys_karpenter_plans_clean_and_tears_down_in_order() {
    let em = Emulator::start_with("realistic", 0.01);
    let ws = Workspace::with_blueprint("karpenter-mng");

    let plan = events::plan(&kbp_ok(&em, &["plan", ws.blueprint_arg(), "--json"], ws.path()));
    let planned: Vec<&str> = plan["changes"].as_array().unwrap().iter().filter_map(|c| c["address"].as_str()).collect();
    for address in [
        "karpenter_crds.main",
        "karpenter_controller.main",
        "ec2_node_class.main[\"default\"]",
        "node_pool.main[\"default\"]",
    ] {
        assert!(planned.contains(&address), "{address} is planned like any resource: {planned:?}");
    }
    assert!(plan["deferred"].as_array().is_none_or(|d| d.is_empty()), "nothing is deferred any more: {plan}");

    let out = kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());
    let applied = stderr(&out);
    let created = stamps(&applied, "created");
    let creating = stamps(&applied, "creating");
    assert!(
        created["karpenter_crds.main"] <= creating["karpenter_controller.main"],
        "CRDs before the controller\n{applied}"
    );
    assert!(
        created["karpenter_controller.main"] <= creating["node_pool.main[\"default\"]"],
        "the controller is available before the NodePool is applied\n{applied}"
    );

    // Read back over the cluster's API.
    let client = cluster_client(&em, STACK).await;
    for crd in ["nodepools.karpenter.sh", "nodeclaims.karpenter.sh", "ec2nodeclasses.karpenter.k8s.aws"] {
        let o =
            get(&client, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions", None, crd)
                .await
                .unwrap_or_else(|| panic!("CRD {crd} installed"));
        let established = o["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "Established" && c["status"] == "True");
        assert!(established, "{crd} is Established");
        assert_eq!(o["metadata"]["annotations"]["kbp.dev/karpenter-version"], "1.14.1");
    }
    let d =
        get(&client, "apps/v1", "Deployment", "deployments", Some("karpenter"), "karpenter").await.expect("controller");
    assert_eq!(d["spec"]["replicas"], 2);
    assert_eq!(d["status"]["availableReplicas"], 2, "{}", d["status"]);
    assert_eq!(d["spec"]["template"]["spec"]["nodeSelector"]["karpenter.sh/controller"], "true");
    // Scheduled by kube-scheduler onto the node group's (tainted) Nodes, and nowhere else.
    let pods = dynamic(&client, "v1", "Pod", "pods", Some("karpenter")).list(&Default::default()).await.unwrap();
    let nodes = dynamic(&client, "v1", "Node", "nodes", None);
    assert_eq!(pods.items.len(), 2, "two controller pods");
    for pod in &pods.items {
        let pod = serde_json::to_value(pod).unwrap();
        let on = pod["spec"]["nodeName"].as_str().expect("the pod is bound");
        let node = serde_json::to_value(nodes.get(on).await.unwrap()).unwrap();
        assert_eq!(node["metadata"]["labels"]["eks.amazonaws.com/nodegroup"], "karpenter", "{on}");
        assert_eq!(pod["status"]["phase"], "Running");
    }
    let env = d["spec"]["template"]["spec"]["containers"][0]["env"].as_array().unwrap().clone();
    let setting = |name: &str| env.iter().find(|e| e["name"] == name).map(|e| e["value"].clone());
    assert_eq!(setting("CLUSTER_NAME"), Some(Value::from(STACK)));
    assert_eq!(setting("INTERRUPTION_QUEUE"), Some(Value::from(STACK)));
    // What the chart runs: the image pinned by the chart's digest, the CPU request passed down, RBAC no wider.
    let image = d["spec"]["template"]["spec"]["containers"][0]["image"].as_str().unwrap().to_string();
    assert!(image.starts_with("public.ecr.aws/karpenter/controller:1.14.1@sha256:"), "{image}");
    let cpu = env.iter().find(|e| e["name"] == "CPU_REQUESTS").expect("CPU_REQUESTS is set");
    assert_eq!(cpu["valueFrom"]["resourceFieldRef"]["resource"], "requests.cpu");
    let rbac = "rbac.authorization.k8s.io/v1";
    let role = get(&client, rbac, "Role", "roles", Some("karpenter"), "karpenter").await.expect("Role");
    let rules = role["rules"].to_string();
    assert!(!rules.contains("secrets") && !rules.contains("configmaps"), "{rules}");
    assert!(get(&client, rbac, "Role", "roles", Some("kube-node-lease"), "karpenter-lease").await.is_none());
    let managers: Vec<&str> =
        d["metadata"]["managedFields"].as_array().unwrap().iter().filter_map(|m| m["manager"].as_str()).collect();
    assert!(managers.contains(&"kbp"), "applied by kbp's field manager: {managers:?}");
    let pdb =
        get(&client, "policy/v1", "PodDisruptionBudget", "poddisruptionbudgets", Some("karpenter"), "karpenter").await;
    assert_eq!(pdb.expect("PDB")["spec"]["maxUnavailable"], 1);

    let class =
        get(&client, "karpenter.k8s.aws/v1", "EC2NodeClass", "ec2nodeclasses", None, "default").await.expect("class");
    assert_eq!(class["spec"]["role"], "KarpenterNodeRole-ex-karpenter-mng");
    assert_eq!(class["spec"]["metadataOptions"]["httpTokens"], "required");
    let cluster_sg = em.eks().await.describe_cluster().name(STACK).send().await.unwrap().cluster.unwrap();
    let sg = cluster_sg.resources_vpc_config().unwrap().cluster_security_group_id().unwrap().to_string();
    let terms = class["spec"]["securityGroupSelectorTerms"].as_array().unwrap();
    assert!(
        terms.iter().any(|t| t["id"] == sg.as_str()),
        "the class selects the cluster security group {sg}: {terms:?}"
    );
    let pool = get(&client, "karpenter.sh/v1", "NodePool", "nodepools", None, "default").await.expect("pool");
    assert_eq!(pool["spec"]["limits"]["cpu"], "1000");
    assert_eq!(pool["spec"]["template"]["spec"]["nodeClassRef"]["name"], "default");

    // Nothing to do after apply, server-side defaults included.
    let again = kbp(&em, &["plan", ws.blueprint_arg(), "--detailed-exitcode"], ws.path());
    assert_exit_code(&again, 0, "plan after apply");

    // `kbp kubeconfig` writes a context whose exec plugin is `kbp token`; kbp itself can use it instead of state.
    let kubeconfig = ws.path().join("kubeconfig");
    kbp_ok(&em, &["kubeconfig", "--file", kubeconfig.to_str().unwrap()], ws.path());
    let through = kbp(
        &em,
        &["plan", ws.blueprint_arg(), "--kubeconfig", kubeconfig.to_str().unwrap(), "--detailed-exitcode"],
        ws.path(),
    );
    assert_exit_code(&through, 0, "plan through the written kubeconfig");
    let wrong = kbp(
        &em,
        &["plan", ws.blueprint_arg(), "--kubeconfig", kubeconfig.to_str().unwrap(), "--context", "nope"],
        ws.path(),
    );
    assert_exit_code(&wrong, 1, "plan with a context the kubeconfig lacks");
    assert!(stderr(&wrong).contains("nope"), "the error names the context: {}", stderr(&wrong));

    // A NodePool's CPU limit: one in-place update, naming the field.
    let edited = kbp(
        &em,
        &["plan", ws.blueprint_arg(), "--set", "node_pools.default.limits.cpu=2000", "--json", "--detailed-exitcode"],
        ws.path(),
    );
    assert_exit_code(&edited, 2, "plan with a new CPU limit");
    let edit = events::plan(&edited);
    let changes = edit["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "exactly one change: {changes:#?}");
    assert_eq!(changes[0]["address"], "node_pool.main[\"default\"]");
    assert_eq!(changes[0]["action"], "update");
    assert!(edit.to_string().contains("manifest.spec.limits.cpu"), "the changed field is named: {}", changes[0]);

    // The node-lease Role an earlier kbp made goes with the next update of the controller; a namesake without
    // kbp's label stays.
    let lease_role = |managed_by: &str| {
        serde_json::from_value::<DynamicObject>(serde_json::json!({
            "apiVersion": rbac, "kind": "Role",
            "metadata": {"name": "karpenter-lease", "namespace": "kube-node-lease",
                         "labels": {"app.kubernetes.io/managed-by": managed_by}},
            "rules": [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "delete"]}],
        }))
        .unwrap()
    };
    let roles: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "kube-node-lease",
        &ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("rbac.authorization.k8s.io", "v1", "Role"), "roles"),
    );
    roles.create(&Default::default(), &lease_role("kbp")).await.unwrap();
    let update = ["apply", ws.blueprint_arg(), "--auto-approve", "--set", "karpenter.log_level=debug"];
    kbp_ok(&em, &update, ws.path());
    assert!(roles.get_opt("karpenter-lease").await.unwrap().is_none(), "the retired Role is deleted");
    roles.create(&Default::default(), &lease_role("someone-else")).await.unwrap();
    let update = ["apply", ws.blueprint_arg(), "--auto-approve"];
    kbp_ok(&em, &update, ws.path());
    assert!(roles.get_opt("karpenter-lease").await.unwrap().is_some(), "a Role kbp did not make stays");

    // A node Karpenter launched: its NodeClaim's finalizer holds the NodePool until the node is gone.
    let pool = get(&client, "karpenter.sh/v1", "NodePool", "nodepools", None, "default").await.unwrap();
    launched_node(&client, &pool, "ip-10-0-99-9.us-west-2.compute.internal").await;
    let watch = watch_gone(vec![
        ("node", nodes.clone(), "ip-10-0-99-9.us-west-2.compute.internal"),
        ("nodeclaim", dynamic(&client, "karpenter.sh/v1", "NodeClaim", "nodeclaims", None), "default-x7k2p"),
        ("nodepool", dynamic(&client, "karpenter.sh/v1", "NodePool", "nodepools", None), "default"),
        ("controller", dynamic(&client, "apps/v1", "Deployment", "deployments", Some("karpenter")), "karpenter"),
    ]);

    let out = kbp_ok(&em, &["destroy", ws.blueprint_arg(), "--auto-approve"], ws.path());
    assert_eq!(watch.await.unwrap(), ["node", "nodeclaim", "nodepool", "controller"], "{}", stderr(&out));
    let destroyed = stderr(&out);
    let done = stamps(&destroyed, "destroyed");
    let started = stamps(&destroyed, "destroying");
    let pool_done = &done["node_pool.main[\"default\"]"];
    assert!(pool_done <= &started["karpenter_controller.main"], "NodePools before the controller\n{destroyed}");
    assert!(
        done["ec2_node_class.main[\"default\"]"] <= started["karpenter_controller.main"],
        "classes before the controller"
    );
    assert!(done["karpenter_controller.main"] <= started["karpenter_crds.main"], "the controller before the CRDs");
    assert!(
        done["karpenter_controller.main"] <= started["eks_cluster.main"],
        "the controller before the cluster\n{destroyed}"
    );
    assert!(em.eks().await.describe_cluster().name(STACK).send().await.is_err(), "the cluster is gone");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_controller_that_cannot_start_fails_apply_with_the_reason() {
    let em = Emulator::start_with("instant", 1.0);
    let ws = Workspace::with_blueprint("karpenter-mng");
    let out = kbp(
        &em,
        &[
            "apply",
            ws.blueprint_arg(),
            "--auto-approve",
            "--set",
            "karpenter.image=registry.invalid/karpenter/controller",
            "--set",
            "karpenter.rollout_timeout=15s",
        ],
        ws.path(),
    );
    assert_exit_code(&out, 1, "apply with an image no node can pull");
    let err = stderr(&out);
    assert!(err.contains("karpenter_controller.main"), "{err}");
    assert!(
        err.contains("ImagePullBackOff") || err.contains("Failed to pull image"),
        "the report names the pull error:\n{err}"
    );
    // The failure is isolated: the NodePool waits for the controller and was not applied.
    assert!(err.contains("node_pool.main[\"default\"]: not created because"), "{err}");
}

/// A cluster policy (a ValidatingAdmissionPolicy, as platform teams install to cap NodePools) refuses what the
/// CRDs allow: `kbp validate` cannot know it, so apply must surface the server's own words and field.
#[tokio::test(flavor = "multi_thread")]
async fn a_nodepool_the_servers_admission_refuses_fails_apply_with_the_servers_message_and_field() {
    let em = Emulator::start_with("instant", 1.0);
    let ws = Workspace::with_blueprint("karpenter-mng");
    kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());

    let client = cluster_client(&em, STACK).await;
    let admission = "admissionregistration.k8s.io/v1";
    let policy = json!({
        "apiVersion": admission, "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "nodepool-cpu-cap"},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{
                "apiGroups": ["karpenter.sh"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                "resources": ["nodepools"],
            }]},
            "validations": [{
                "expression": "!has(object.spec.limits) || !('cpu' in object.spec.limits) || \
                               quantity(string(object.spec.limits['cpu'])).compareTo(quantity('1500')) <= 0",
                "message": "NodePools may not ask for more than 1500 CPUs",
                "fieldPath": "spec.limits.cpu",
                "reason": "Invalid",
            }],
        },
    });
    let binding = json!({
        "apiVersion": admission, "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "nodepool-cpu-cap"},
        "spec": {"policyName": "nodepool-cpu-cap", "validationActions": ["Deny"]},
    });
    let policies = dynamic(&client, admission, "ValidatingAdmissionPolicy", "validatingadmissionpolicies", None);
    policies.create(&PostParams::default(), &serde_json::from_value(policy).unwrap()).await.unwrap();
    let bindings =
        dynamic(&client, admission, "ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings", None);
    bindings.create(&PostParams::default(), &serde_json::from_value(binding).unwrap()).await.unwrap();
    // A new policy takes effect once the apiserver has compiled it: probe with a dry run until it bites.
    let pools = dynamic(&client, "karpenter.sh/v1", "NodePool", "nodepools", None);
    let too_big = json!({"spec": {"limits": {"cpu": "2000"}}});
    let dry = PatchParams { dry_run: true, ..Default::default() };
    let mut enforced = false;
    for _ in 0..100 {
        if pools.patch("default", &dry, &Patch::Merge(&too_big)).await.is_err() {
            enforced = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(enforced, "the policy never took effect");

    let set = ["--set", "node_pools.default.limits.cpu=2000"];
    let valid = kbp(&em, &[&["validate", ws.blueprint_arg()][..], &set].concat(), ws.path());
    assert_exit_code(&valid, 0, "validate: the CRDs allow 2000 CPUs");
    let out = kbp(&em, &[&["apply", ws.blueprint_arg(), "--auto-approve"][..], &set].concat(), ws.path());
    assert_exit_code(&out, 1, "apply refused by the cluster's policy");
    let err = stderr(&out);
    // The failure line and the lines under it (the server's causes, the hint).
    let start = err.find("node_pool.main[\"default\"]: updating FAILED").unwrap_or_else(|| panic!("reported:\n{err}"));
    let report: Vec<&str> =
        err[start..].lines().enumerate().take_while(|(i, l)| *i == 0 || l.starts_with(' ')).map(|(_, l)| l).collect();
    let report = report.join("\n");
    assert!(report.contains("NodePools may not ask for more than 1500 CPUs"), "the server's message: {report}");
    assert_eq!(report.matches("NodePools may not ask").count(), 1, "said once: {report}");
    assert!(!err.contains("Status {") && !err.contains("ErrorResponse {"), "no Debug dump:\n{err}");
    let pool = get(&client, "karpenter.sh/v1", "NodePool", "nodepools", None, "default").await.unwrap();
    assert_eq!(pool["spec"]["limits"]["cpu"], "1000", "the stored NodePool is unchanged");

    // What `kbp validate` refuses can still reach a server (an older kbp, a hand-edited render): forced here
    // through the render path and kbp's own apply, the CRD's CEL rule refuses it with its words and field path.
    let rendered = kbp(&em, &["render", ws.blueprint_arg(), "--skip-crds"], ws.path());
    assert_exit_code(&rendered, 0, "render");
    let mut object = serde_norway::Deserializer::from_str(&stdout(&rendered))
        .map(|d| <Value as serde::Deserialize>::deserialize(d).unwrap())
        .find(|d| d["kind"] == "NodePool" && d["metadata"]["name"] == "default")
        .expect("render prints the default NodePool");
    object["spec"]["disruption"]["budgets"] = json!([{"nodes": "10%", "schedule": "0 9 * * mon-fri"}]);
    let cx = kbp::providers::Context::from_sdk(em.sdk_config().await, STACK, REGION);
    let attrs = state_attrs(&ws, "node_pool.main[\"default\"]");
    let session = kbp::providers::kubernetes::session::Session::open(&cx, &attrs).await.unwrap();
    let refused = session.apply(&object).await.expect_err("the server refuses a schedule without a duration");
    let refused = refused.to_string();
    assert!(refused.contains("'schedule' must be set with 'duration'"), "the CRD rule's message: {refused}");
    assert!(refused.contains("spec.disruption.budgets: Invalid value"), "the field path: {refused}");
    assert_eq!(refused.matches("must be set with").count(), 1, "said once: {refused}");
}

/// The attributes state holds for `address` in the workspace's stack.
fn state_attrs(ws: &Workspace, address: &str) -> kbp::graph::Attrs {
    let state: Value =
        serde_json::from_slice(&std::fs::read(ws.path().join(format!(".kbp/{STACK}.state.json"))).unwrap()).unwrap();
    let resources = state["resources"].as_array().unwrap();
    let entry = resources.iter().find(|r| r["address"] == address).unwrap_or_else(|| panic!("{address} in state"));
    entry["attributes"].as_object().unwrap().clone()
}

//! A stack months after its first apply, against the emulator and the real control plane: a Kubernetes
//! upgrade that skips a minor version or goes down one is refused by plan with the steps to take, before
//! anything changes; a controller whose pods cannot run, or a NodePool or EC2NodeClass Karpenter counts not
//! ready, is a change in plan and in `kbp drift`, with the reason.

use crate::karpenter_deploy::dynamic;
use crate::provider_eks::default_addon_version;
use crate::support::*;
use kube::api::{Patch, PatchParams};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn plan_refuses_a_skipped_minor_version_and_a_downgrade_naming_the_steps() {
    let em = Emulator::start_with("instant", 1.0);
    let ws = Workspace::with_blueprint("minimal");
    let at = |version: &'static str| format!("cluster.version={version}");
    kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve", "--set", &at("1.33")], ws.path());
    let cluster = || async {
        let c = em.eks().await.describe_cluster().name("sbx").send().await.unwrap().cluster.unwrap();
        c.version().unwrap().to_string()
    };
    assert_eq!(cluster().await, "1.33");

    let skip = kbp(&em, &["plan", ws.blueprint_arg(), "--set", &at("1.35")], ws.path());
    assert_exit_code(&skip, 1, "plan skipping 1.34");
    let said = stderr(&skip);
    assert!(said.contains("1.33 → 1.35 skips 1.34"), "{said}");
    assert!(said.contains("cluster.version = \"1.34\", then cluster.version = \"1.35\""), "{said}");
    let down = kbp(&em, &["apply", ws.blueprint_arg(), "--auto-approve", "--set", &at("1.32")], ws.path());
    assert_exit_code(&down, 1, "apply going down to 1.32");
    assert!(stderr(&down).contains("never takes a cluster down a version"), "{}", stderr(&down));
    assert_eq!(cluster().await, "1.33", "nothing changed");
    // One step up: the control plane, then the add-ons, then the controller node group, in one apply.
    let eks = em.eks().await;
    let addons = ["coredns", "eks-pod-identity-agent", "kube-proxy", "vpc-cni"];
    let installed = |name: &'static str| {
        let eks = eks.clone();
        async move {
            let a = eks.describe_addon().cluster_name("sbx").addon_name(name).send().await.unwrap().addon.unwrap();
            a.addon_version().unwrap().to_string()
        }
    };
    let defaults_for = |kubernetes: &'static str| {
        let eks = eks.clone();
        async move {
            let mut out = Vec::new();
            for name in addons {
                out.push(default_addon_version(&eks, name, kubernetes).await);
            }
            out
        }
    };
    let before = defaults_for("1.33").await;
    for (name, default) in addons.iter().zip(&before) {
        assert_eq!(&installed(name).await, default, "{name} starts at 1.33's default");
    }
    let step = kbp(&em, &["plan", ws.blueprint_arg(), "--set", &at("1.34"), "--detailed-exitcode"], ws.path());
    assert_exit_code(&step, 2, "plan to 1.34");
    let planned = stdout(&step);
    assert!(planned.contains("eks_cluster.main") && planned.contains("eks_node_group.controller"), "{planned}");
    for name in addons {
        assert!(planned.contains(&format!("eks_addon.main[\"{name}\"]")), "{name} moves with the cluster: {planned}");
    }
    // The plan says where each add-on goes, and what EKS's upgrade insights say of 1.34.
    let noted = stderr(&step);
    let proxy = addons.iter().position(|a| *a == "kube-proxy").unwrap();
    let moves = format!(
        "add-on kube-proxy moves from {} to {}",
        before[proxy],
        default_addon_version(&eks, "kube-proxy", "1.34").await
    );
    assert!(noted.contains(&moves), "{noted}");
    assert!(noted.contains("EKS upgrade insight") && noted.contains("Kubernetes 1.34"), "{noted}");
    assert!(noted.contains("Kubelet version skew"), "the insights by name: {noted}");
    // The shipped pool takes bottlerocket@latest: Karpenter rolls its nodes, within its budget.
    assert!(noted.contains("NodePool `default` (EC2NodeClass `default`, an @latest AMI alias)"), "{noted}");
    assert!(noted.contains("10% of the nodes at a time"), "{noted}");
    let up = ["apply", ws.blueprint_arg(), "--auto-approve", "--json", "--set", &at("1.34")];
    let out = kbp_ok(&em, &up, ws.path());
    let lines = events::events(&out);
    let at_line = |kind: &str, address: &str| {
        lines
            .iter()
            .position(|e| e["type"] == kind && e["address"] == address)
            .unwrap_or_else(|| panic!("{kind} {address}"))
    };
    for name in addons {
        let addon = format!("eks_addon.main[\"{name}\"]");
        assert!(
            at_line("finished", "eks_cluster.main") < at_line("started", &addon),
            "the control plane before {name}"
        );
        assert!(
            at_line("finished", &addon) < at_line("started", "eks_node_group.controller"),
            "{name} before the nodes"
        );
    }
    assert_eq!(cluster().await, "1.34");
    let group = || async {
        let g = eks.describe_nodegroup().cluster_name("sbx").nodegroup_name("karpenter").send().await.unwrap();
        g.nodegroup.unwrap().version().unwrap().to_string()
    };
    assert_eq!(group().await, "1.34", "the node group follows the control plane");
    let after = defaults_for("1.34").await;
    assert_ne!(before, after, "the catalogue moves at least one add-on between 1.33 and 1.34");
    for (name, default) in addons.iter().zip(&after) {
        assert_eq!(&installed(name).await, default, "{name} at 1.34's default");
    }
    let again = kbp(&em, &["plan", ws.blueprint_arg(), "--set", &at("1.34"), "--detailed-exitcode"], ws.path());
    assert_exit_code(&again, 0, "plan after the upgrade");
    assert!(!stderr(&again).contains("behind the control plane"), "no skew: {}", stderr(&again));

    // The nodes held back by a pin while the control plane moves on: no change to make, and the skew said.
    let (v135, held) = (at("1.35"), ["--set", "node_group.version=1.34"]);
    let up = [&["apply", ws.blueprint_arg(), "--auto-approve", "--set", &v135][..], &held[..]].concat();
    kbp_ok(&em, &up, ws.path());
    assert_eq!((cluster().await, group().await), ("1.35".to_string(), "1.34".to_string()));
    let plan = [&["plan", ws.blueprint_arg(), "--detailed-exitcode", "--set", &v135][..], &held[..]].concat();
    let plan = kbp(&em, &plan, ws.path());
    assert_exit_code(&plan, 0, "a held-back node group is no change");
    let skew = "eks_node_group.controller runs Kubernetes 1.34, 1 minor version behind the control plane (1.35)";
    assert!(stderr(&plan).contains(skew), "{}", stderr(&plan));
    let drift = [&["drift", ws.blueprint_arg(), "--set", &v135][..], &held[..]].concat();
    let drift = kbp(&em, &drift, ws.path());
    assert_exit_code(&drift, 0, "no drift");
    assert!(stderr(&drift).contains(skew), "{}", stderr(&drift));
}

/// The text of the first plan (of those made every 300 ms, for half a minute) that has changes and says
/// `needle`, else of the last one: the controller's status takes a moment to follow the cluster.
async fn plan_once_it_says(em: &Emulator, ws: &Workspace, needle: &str) -> String {
    let mut said = String::new();
    for _ in 0..100 {
        let plan = kbp(em, &["plan", ws.blueprint_arg(), "--detailed-exitcode"], ws.path());
        said = stdout(&plan);
        if plan.status.code() == Some(2) && said.contains(needle) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
    said
}

#[tokio::test(flavor = "multi_thread")]
async fn a_controller_without_available_replicas_is_a_change_in_plan_and_drift_with_the_reason() {
    let em = Emulator::start_with("instant", 1.0);
    let ws = Workspace::with_blueprint("karpenter-mng");
    kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());
    let clean = kbp(&em, &["plan", ws.blueprint_arg(), "--detailed-exitcode"], ws.path());
    assert_exit_code(&clean, 0, "plan after apply");

    // Someone pins the controller's pods to nodes that do not exist: the new pods stay Pending.
    let client = cluster_client(&em, "ex-karpenter-mng").await;
    let deployments = dynamic(&client, "apps/v1", "Deployment", "deployments", Some("karpenter"));
    let patch = json!({"spec": {"template": {"spec": {"nodeSelector": {"pool": "gone"}}}}});
    deployments.patch("karpenter", &PatchParams::default(), &Patch::Merge(&patch)).await.unwrap();
    let said = plan_once_it_says(&em, &ws, "Pending").await;
    assert!(said.contains("karpenter_controller.main") && said.contains("health"), "{said}");
    assert!(said.contains("replicas available") && said.contains("Pending"), "{said}");
    assert!(said.contains("node affinity/selector"), "the scheduler's reason: {said}");
    let drift = kbp(&em, &["drift", ws.blueprint_arg()], ws.path());
    let drifted = format!("{}{}", stdout(&drift), stderr(&drift));
    assert!(drifted.contains("karpenter_controller.main") && drifted.contains("replicas available"), "{drifted}");
    // Apply re-applies the chart's pod spec (the selector is an atomic map: applying it replaces the pin).
    kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());
    let repaired = kbp(&em, &["plan", ws.blueprint_arg(), "--detailed-exitcode"], ws.path());
    assert_exit_code(&repaired, 0, "plan after apply repaired the controller");

    // What apply cannot repair: a quota that admits no pod, and the controller's pods gone.
    let quotas = dynamic(&client, "v1", "ResourceQuota", "resourcequotas", Some("karpenter"));
    let quota = json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "no-pods"}, "spec": {"hard": {"pods": "0"}}});
    quotas.create(&Default::default(), &serde_json::from_value(quota).unwrap()).await.unwrap();
    // Admission enforces the quota once the quota controller has counted it (its status.hard is set); pods
    // deleted before that would come back at once.
    for _ in 0..100 {
        if quotas.get("no-pods").await.is_ok_and(|q| !q.data["status"]["hard"].is_null()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let pods = dynamic(&client, "v1", "Pod", "pods", Some("karpenter"));
    pods.delete_collection(&Default::default(), &Default::default()).await.unwrap();
    let said = plan_once_it_says(&em, &ws, "0/2 replicas available").await;
    assert!(said.contains("0/2 replicas available"), "{said}");
    let apply = ["apply", ws.blueprint_arg(), "--auto-approve", "--set", "karpenter.rollout_timeout=5s"];
    let out = kbp(&em, &apply, ws.path());
    assert_exit_code(&out, 1, "apply with no pod admitted");
    let err = stderr(&out);
    assert!(err.contains("karpenter_controller.main") && err.contains("0/2 replicas available"), "{err}");
}

/// Karpenter's judgement of its objects, as a status writer sets it: an EC2NodeClass whose subnets it cannot find
/// and a NodePool whose class is not ready are changes in plan and in `kbp drift`, with the condition that is
/// False; apply cannot make them ready and fails saying so; a blueprint change starts a generation Karpenter
/// has yet to judge, which apply does not hold against it; once Karpenter counts them ready, plan is empty.
#[tokio::test(flavor = "multi_thread")]
async fn a_node_pool_karpenter_calls_not_ready_is_a_change_in_plan_and_drift_with_the_reason() {
    let em = Emulator::start_with("instant", 1.0);
    let ws = Workspace::with_blueprint("karpenter-mng");
    kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());
    let client = cluster_client(&em, "ex-karpenter-mng").await;
    let classes = dynamic(&client, "karpenter.k8s.aws/v1", "EC2NodeClass", "ec2nodeclasses", None);
    let pools = dynamic(&client, "karpenter.sh/v1", "NodePool", "nodepools", None);
    // Karpenter's conditions: type, status, reason, message, for the object's current generation.
    let judge = |api: kube::Api<kube::api::DynamicObject>,
                 conditions: Vec<(&'static str, &'static str, &'static str, &'static str)>| async move {
        let generation = api.get("default").await.unwrap().metadata.generation.unwrap();
        let conditions: Vec<_> = conditions
            .into_iter()
            .map(|(kind, status, reason, message)| {
                json!({"type": kind, "status": status, "reason": reason,
                "message": message, "observedGeneration": generation, "lastTransitionTime": "2026-12-06T00:00:00Z"})
            })
            .collect();
        let status = json!({"status": {"conditions": conditions}});
        api.patch_status("default", &PatchParams::default(), &Patch::Merge(&status)).await.unwrap();
    };
    judge(
        classes.clone(),
        vec![
            ("SubnetsReady", "False", "SubnetsNotFound", "SubnetSelector did not match any Subnets"),
            ("Ready", "False", "UnhealthyDependents", "SubnetsReady=False"),
        ],
    )
    .await;
    judge(
        pools.clone(),
        vec![
            ("NodeClassReady", "False", "NodeClassNotReady", "EC2NodeClass not ready"),
            ("Ready", "False", "UnhealthyDependents", "NodeClassReady=False"),
        ],
    )
    .await;

    let plan = kbp(&em, &["plan", ws.blueprint_arg(), "--detailed-exitcode"], ws.path());
    assert_exit_code(&plan, 2, "plan of objects Karpenter counts not ready");
    let said = stdout(&plan);
    assert!(
        said.contains("ec2_node_class.main[\"default\"]") && said.contains("node_pool.main[\"default\"]"),
        "{said}"
    );
    assert!(
        said.contains("SubnetsReady is False (SubnetsNotFound: SubnetSelector did not match any Subnets)"),
        "{said}"
    );
    assert!(said.contains("NodeClassReady is False (NodeClassNotReady: EC2NodeClass not ready)"), "{said}");
    let drift = kbp(&em, &["drift", ws.blueprint_arg()], ws.path());
    let drifted = format!("{}{}", stdout(&drift), stderr(&drift));
    assert!(drifted.contains("ec2_node_class.main[\"default\"]") && drifted.contains("SubnetsNotFound"), "{drifted}");
    assert!(drifted.contains("node_pool.main[\"default\"]") && drifted.contains("NodeClassNotReady"), "{drifted}");

    // Applying the same objects again leaves Karpenter's judgement standing: apply fails naming it.
    let out = kbp(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());
    assert_exit_code(&out, 1, "apply of a class Karpenter counts not ready");
    let err = stderr(&out);
    assert!(err.contains("Karpenter counts EC2NodeClass default not ready: SubnetsReady is False"), "{err}");
    assert!(err.contains("kubectl describe ec2nodeclass"), "the hint: {err}");

    // A changed pool is a generation Karpenter has not judged: apply does not hold the old judgement against it.
    ws.write_blueprint(&ws.read_blueprint().replace("cpu = 1000", "cpu = 800"));
    judge(classes.clone(), vec![("Ready", "True", "Ready", "")]).await;
    kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());
    let pool = pools.get("default").await.unwrap();
    assert_eq!(pool.data["spec"]["limits"]["cpu"].to_string().trim_matches('"'), "800", "{:?}", pool.data["spec"]);
    let conditions = pool.data["status"]["conditions"].as_array().unwrap();
    let ready = conditions.iter().find(|c| c["type"] == "Ready").unwrap();
    assert_eq!(ready["status"], "False", "Karpenter's old judgement is still there: {conditions:?}");

    // Karpenter judges the new generation ready: nothing left to do.
    judge(pools.clone(), vec![("NodeClassReady", "True", "NodeClassReady", ""), ("Ready", "True", "Ready", "")]).await;
    let clean = kbp(&em, &["plan", ws.blueprint_arg(), "--detailed-exitcode"], ws.path());
    assert_exit_code(&clean, 0, "plan once Karpenter counts both ready");
}

/// A replacement of the controller node group (its instance types changed) is create-before-destroy: the plan
/// marks it `+/-`; a watcher polling EKS and the kube-apiserver sees at every moment at least one ACTIVE node
/// group and at least one available controller replica; the successor has a name made from the blueprint's, and
/// the controller's pods end up on its nodes.
#[tokio::test(flavor = "multi_thread")]
async fn replacing_the_controller_node_group_keeps_a_group_and_a_controller_replica_up_throughout() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    // EKS's durations, scaled: a node group takes seconds to make and delete, a pod a fifth of a second to
    // become Ready; without the hand-over the controller would have no replica for as long as the pod garbage
    // collector takes to notice the old nodes are gone.
    let em = Emulator::start_with("realistic", 0.02);
    let ws = Workspace::with_blueprint("karpenter-mng");
    kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());
    let stack = "ex-karpenter-mng";
    let larger = "node_group.instance_types=[\"m5.xlarge\"]";
    let plan = kbp(&em, &["plan", ws.blueprint_arg(), "--set", larger, "--detailed-exitcode"], ws.path());
    assert_exit_code(&plan, 2, "plan of new instance types");
    let planned = stdout(&plan);
    assert!(planned.contains("+/- eks_node_group.controller"), "create-before-destroy is marked: {planned}");

    let (eks, client) = (em.eks().await, cluster_client(&em, stack).await);
    let pods = dynamic(&client, "v1", "Pod", "pods", Some("karpenter"));
    let nodes = dynamic(&client, "v1", "Node", "nodes", None);
    let selector = kube::api::ListParams::default().labels("app.kubernetes.io/name=karpenter");
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (eks, stop, pods, nodes, selector) =
            (eks.clone(), stop.clone(), pods.clone(), nodes.clone(), selector.clone());
        tokio::spawn(async move {
            // (looks, fewest ACTIVE groups seen, fewest available replicas seen, most groups seen)
            let (mut looks, mut fewest_groups, mut fewest_available, mut most_groups) = (0, usize::MAX, i64::MAX, 0);
            while !stop.load(Ordering::SeqCst) {
                let names = eks.list_nodegroups().cluster_name(stack).send().await.unwrap().nodegroups().to_vec();
                let mut active = 0;
                for n in &names {
                    let g = eks.describe_nodegroup().cluster_name(stack).nodegroup_name(n).send().await;
                    let status = g.ok().and_then(|g| g.nodegroup).and_then(|g| g.status().cloned());
                    active += usize::from(status == Some(aws_sdk_eks::types::NodegroupStatus::Active));
                }
                // A replica is up when its pod is Ready on a node that still exists: a deleted node's pods stay
                // "Ready" (and the Deployment counts them available) until the pod garbage collector removes them.
                let nodes: Vec<String> = nodes
                    .list(&Default::default())
                    .await
                    .unwrap()
                    .items
                    .into_iter()
                    .filter_map(|n| n.metadata.name)
                    .collect();
                let available = pods
                    .list(&selector)
                    .await
                    .unwrap()
                    .items
                    .iter()
                    .filter(|p| {
                        let ready = p.data["status"]["conditions"]
                            .as_array()
                            .is_some_and(|c| c.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"));
                        let on = p.data["spec"]["nodeName"].as_str().unwrap_or_default();
                        ready && nodes.iter().any(|n| n == on)
                    })
                    .count() as i64;
                looks += 1;
                fewest_groups = fewest_groups.min(active);
                most_groups = most_groups.max(names.len());
                fewest_available = fewest_available.min(available);
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            (looks, fewest_groups, fewest_available, most_groups)
        })
    };
    let out = kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve", "--json", "--set", larger], ws.path());
    stop.store(true, Ordering::SeqCst);
    let (looks, fewest_groups, fewest_available, most_groups) = watcher.await.unwrap();
    assert!(looks >= 10, "the watcher looked often enough to see a gap: {looks} looks");
    assert!(fewest_groups >= 1, "at every look an ACTIVE node group ({looks} looks)");
    assert!(fewest_available >= 1, "at every look an available controller replica ({looks} looks)");
    assert_eq!(most_groups, 2, "the successor stood beside the old group");

    // The successor was created, then the old group (deposed) deleted after it.
    let lines = events::events(&out);
    let at_line = |kind: &str, address: &str| {
        lines
            .iter()
            .position(|e| e["type"] == kind && e["address"] == address)
            .unwrap_or_else(|| panic!("{kind} {address}"))
    };
    assert!(at_line("finished", "eks_node_group.controller") < at_line("started", "eks_node_group.controller-deposed"));
    let names = eks.list_nodegroups().cluster_name(stack).send().await.unwrap().nodegroups().to_vec();
    assert_eq!(names.len(), 1, "{names:?}");
    let successor = &names[0];
    assert!(successor.starts_with("karpenter-") && successor.len() == "karpenter-".len() + 8, "{successor}");
    let g = eks.describe_nodegroup().cluster_name(stack).nodegroup_name(successor).send().await.unwrap();
    assert_eq!(g.nodegroup.unwrap().instance_types(), ["m5.xlarge"]);
    let group_of: std::collections::BTreeMap<String, String> = nodes
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|n| {
            let group = n.metadata.labels.as_ref().and_then(|l| l.get("eks.amazonaws.com/nodegroup").cloned());
            (n.metadata.name.unwrap(), group.unwrap_or_default())
        })
        .collect();
    for p in pods.list(&selector).await.unwrap().items {
        let node = p.data["spec"]["nodeName"].as_str().unwrap_or_default().to_string();
        let status = &p.data["status"];
        assert_eq!(
            group_of.get(&node),
            Some(successor),
            "{:?} on {node} ({status}); nodes: {group_of:?}",
            p.metadata.name
        );
    }
    let again = kbp(&em, &["plan", ws.blueprint_arg(), "--set", larger, "--detailed-exitcode"], ws.path());
    assert_exit_code(&again, 0, "plan after the replacement");
}

/// `cluster.name` changed in the blueprint file beside the old name's state: plan and apply refuse, naming the
/// old stack and the ways out, and create nothing; `--new-stack` plans the second stack on purpose, and a name
/// given with `--set` (a fleet of stacks from one file) is not a rename.
#[tokio::test(flavor = "multi_thread")]
async fn a_cluster_renamed_in_its_blueprint_beside_the_old_state_is_refused_naming_the_choices() {
    let em = Emulator::start_with("instant", 1.0);
    let ws = Workspace::with_blueprint("minimal");
    kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());
    let text = ws.read_blueprint();
    assert!(text.contains("name = \"sbx\""), "{text}");
    ws.write_blueprint(&text.replace("name = \"sbx\"", "name = \"sbx-renamed\""));
    for command in [&["plan", ws.blueprint_arg()][..], &["apply", ws.blueprint_arg(), "--auto-approve"][..]] {
        let out = kbp(&em, command, ws.path());
        assert_exit_code(&out, 1, command[0]);
        let said = stderr(&out);
        assert!(said.contains("cluster.name is now `sbx-renamed`") && said.contains("holds stack `sbx`"), "{said}");
        assert!(said.contains("EKS cannot rename a cluster") && said.contains("--new-stack"), "{said}");
        assert!(said.contains("kbp destroy") && said.contains("--set cluster.name=sbx"), "{said}");
    }
    let clusters = em.eks().await.list_clusters().send().await.unwrap();
    assert_eq!(clusters.clusters(), ["sbx"], "nothing was made for the new name");
    let on_purpose = kbp(&em, &["plan", ws.blueprint_arg(), "--new-stack", "--detailed-exitcode"], ws.path());
    assert_exit_code(&on_purpose, 2, "plan of a second stack with --new-stack");
    let fleet =
        kbp(&em, &["plan", ws.blueprint_arg(), "--set", "cluster.name=sbx-2", "--detailed-exitcode"], ws.path());
    assert_exit_code(&fleet, 2, "a name given with --set is another stack of the fleet, not a rename");
}

/// A `[[moved]]` block renames a state entry with no change in AWS: without it, the renamed address plans a
/// destroy and a create; with it, the plan says the address has moved and changes nothing, apply makes no AWS
/// call for it, and the next plan is empty. A `to` the blueprint does not compile to is refused at its place.
#[tokio::test(flavor = "multi_thread")]
async fn a_moved_block_renames_an_address_in_state_with_no_aws_change() {
    let em = Emulator::start_with("instant", 1.0);
    let ws = Workspace::with_blueprint("minimal");
    kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());
    let eks = em.eks().await;
    let entry_arn = || async {
        let entries = eks.list_access_entries().cluster_name("sbx").send().await.unwrap();
        entries.access_entries().to_vec()
    };
    let before = entry_arn().await;
    // State as an older blueprint left it: the admin entry under another address.
    kbp_ok(&em, &["state", "mv", "eks_access_entry.admin", "eks_access_entry.administrator"], ws.path());
    let without = kbp(&em, &["plan", ws.blueprint_arg(), "--detailed-exitcode"], ws.path());
    assert_exit_code(&without, 2, "plan without the block");
    let planned = stdout(&without);
    assert!(
        planned.contains("+ eks_access_entry.admin") && planned.contains("- eks_access_entry.administrator"),
        "{planned}"
    );

    let moved = "\n[[moved]]\nfrom = \"eks_access_entry.administrator\"\nto = \"eks_access_entry.admin\"\n";
    ws.write_blueprint(&format!("{}{moved}", ws.read_blueprint()));
    let with = kbp(&em, &["plan", ws.blueprint_arg(), "--detailed-exitcode"], ws.path());
    assert_exit_code(&with, 2, "a move is a change to state");
    let planned = stdout(&with);
    assert!(planned.contains("eks_access_entry.administrator has moved to eks_access_entry.admin"), "{planned}");
    assert!(planned.contains("No changes"), "nothing in AWS: {planned}");
    let out = kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve", "--json"], ws.path());
    let started: Vec<_> = events::events(&out).into_iter().filter(|e| e["type"] == "started").collect();
    assert!(started.is_empty(), "no AWS operation: {started:?}");
    assert_eq!(entry_arn().await, before, "the access entries are the same");
    let again = kbp(&em, &["plan", ws.blueprint_arg(), "--detailed-exitcode"], ws.path());
    assert_exit_code(&again, 0, "plan after the move");

    let wrong = ws.read_blueprint().replace("to = \"eks_access_entry.admin\"", "to = \"eks_access_entry.admn\"");
    ws.write_blueprint(&wrong);
    let refused = kbp(&em, &["validate", ws.blueprint_arg()], ws.path());
    assert_exit_code(&refused, 1, "validate of a move to nowhere");
    let said = stderr(&refused);
    assert!(said.contains("`eks_access_entry.admn` is not an address of this blueprint"), "{said}");
    assert!(said.contains("did you mean `eks_access_entry.admin`"), "{said}");
}

/// Renaming a NodePool deletes it and creates another: the plan warns that Karpenter will drain and terminate
/// the old pool's NodeClaims, naming them.
#[tokio::test(flavor = "multi_thread")]
async fn renaming_a_node_pool_warns_which_node_claims_karpenter_will_drain() {
    let em = Emulator::start_with("instant", 1.0);
    let ws = Workspace::with_blueprint("karpenter-mng");
    kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());
    let client = cluster_client(&em, "ex-karpenter-mng").await;
    let claims = dynamic(&client, "karpenter.sh/v1", "NodeClaim", "nodeclaims", None);
    for name in ["default-abcde", "default-fghij"] {
        let claim = json!({
            "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": {"name": name, "labels": {"karpenter.sh/nodepool": "default"}},
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}],
            },
        });
        claims.create(&Default::default(), &serde_json::from_value(claim).unwrap()).await.unwrap();
    }
    ws.write_blueprint(&ws.read_blueprint().replace("[node_pools.default", "[node_pools.general"));
    let plan = kbp(&em, &["plan", ws.blueprint_arg(), "--detailed-exitcode"], ws.path());
    assert_exit_code(&plan, 2, "plan of the renamed pool");
    let said = stderr(&plan);
    assert!(said.contains("Karpenter drains and terminates the 2 NodeClaims of NodePool `default`"), "{said}");
    assert!(said.contains("default-abcde, default-fghij"), "{said}");
    assert!(said.contains("renamed to node_pool.main[\"general\"]?"), "{said}");
}

/// The IAM role `name`, trusted by the account, as a team's role would be; its ARN.
async fn team_role(em: &Emulator, name: &str) -> String {
    let trust = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::123456789012:root"},"Action":"sts:AssumeRole"}]}"#;
    let made = em.iam().await.create_role().role_name(name).assume_role_policy_document(trust).send().await.unwrap();
    made.role.unwrap().arn().to_string()
}

/// `[[cluster.access_entries]]` round-trip: the entry, its user name, groups and access policies (cluster-wide and
/// in namespaces) are made, read back equal (a second plan is empty) and changed in place; an entry made outside
/// kbp is drift of its own kind until the blueprint declares and imports it. What EKS refuses is refused by
/// validate at the field.
#[tokio::test(flavor = "multi_thread")]
async fn access_entries_round_trip_and_one_made_outside_kbp_is_unmanaged_drift() {
    let em = Emulator::start_with("instant", 1.0);
    let ws = Workspace::with_blueprint("minimal");
    let (admins, auditors) = (team_role(&em, "platform-admins").await, team_role(&em, "auditors").await);
    let base = ws.read_blueprint();
    let entry = |groups: &str, policies: &str| {
        format!(
            "\n[[cluster.access_entries]]\nprincipal_arn = \"{admins}\"\nusername = \"platform-admin\"\nkubernetes_groups = [{groups}]\n{policies}"
        )
    };
    let view = "[[cluster.access_entries.policies]]\npolicy = \"AmazonEKSViewPolicy\"\n";
    let edit_in = |ns: &str| {
        format!("[[cluster.access_entries.policies]]\npolicy = \"AmazonEKSEditPolicy\"\nnamespaces = [{ns}]\n")
    };
    ws.write_blueprint(&format!("{base}{}", entry("\"platform\"", &format!("{view}{}", edit_in("\"team-a\"")))));
    kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());

    let eks = em.eks().await;
    let read = || async {
        let e = eks.describe_access_entry().cluster_name("sbx").principal_arn(&admins).send().await.unwrap();
        let e = e.access_entry.unwrap();
        let listed =
            eks.list_associated_access_policies().cluster_name("sbx").principal_arn(&admins).send().await.unwrap();
        let mut policies: Vec<(String, Vec<String>)> = listed
            .associated_access_policies()
            .iter()
            .map(|p| {
                let name = p.policy_arn().unwrap().rsplit('/').next().unwrap().to_string();
                let mut ns = p.access_scope().map(|s| s.namespaces().to_vec()).unwrap_or_default();
                ns.sort();
                (name, ns)
            })
            .collect();
        policies.sort();
        (e.username().map(str::to_string), e.kubernetes_groups().to_vec(), policies)
    };
    let (username, groups, policies) = read().await;
    assert_eq!((username.as_deref(), groups), (Some("platform-admin"), vec!["platform".to_string()]));
    assert_eq!(
        policies,
        [("AmazonEKSEditPolicy".to_string(), vec!["team-a".to_string()]), ("AmazonEKSViewPolicy".to_string(), vec![])]
    );
    let again = kbp(&em, &["plan", ws.blueprint_arg(), "--detailed-exitcode"], ws.path());
    assert_exit_code(&again, 0, "plan after the entries were made");

    // Changed in place: another group, the edit policy in two namespaces, the view policy gone.
    ws.write_blueprint(&format!("{base}{}", entry("\"platform\", \"oncall\"", &edit_in("\"team-a\", \"team-b\""))));
    let plan = kbp(&em, &["plan", ws.blueprint_arg(), "--detailed-exitcode"], ws.path());
    assert_exit_code(&plan, 2, "plan of the changed entry");
    assert!(stdout(&plan).contains(&format!("~ eks_access_entry.granted[\"{admins}\"]")), "{}", stdout(&plan));
    kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());
    let (_, mut groups, policies) = read().await;
    groups.sort();
    assert_eq!(groups, ["oncall", "platform"]);
    assert_eq!(policies, [("AmazonEKSEditPolicy".to_string(), vec!["team-a".to_string(), "team-b".to_string()])]);
    let declared = ws.read_blueprint();

    // An entry someone made by hand: drift of its own, not repaired, not accepted.
    eks.create_access_entry().cluster_name("sbx").principal_arn(&auditors).send().await.unwrap();
    let drift = kbp(&em, &["drift", ws.blueprint_arg()], ws.path());
    assert_exit_code(&drift, 2, "drift with an unmanaged entry");
    let said = stdout(&drift);
    assert!(
        said.contains(&format!("eks_access_entry.unmanaged[\"{auditors}\"]")) && said.contains("made outside kbp"),
        "{said}"
    );
    // Declared and imported, it is the stack's: no drift, no change.
    let import = format!(
        "\n[[cluster.access_entries]]\nprincipal_arn = \"{auditors}\"\n\n[[import]]\nto = 'eks_access_entry.granted[\"{auditors}\"]'\nid = \"sbx:{auditors}\"\n"
    );
    ws.write_blueprint(&format!("{declared}{import}"));
    kbp_ok(&em, &["apply", ws.blueprint_arg(), "--auto-approve"], ws.path());
    let drift = kbp(&em, &["drift", ws.blueprint_arg()], ws.path());
    assert_exit_code(&drift, 0, "drift once the entry is declared and imported");
    let plan = kbp(&em, &["plan", ws.blueprint_arg(), "--detailed-exitcode"], ws.path());
    assert_exit_code(&plan, 0, "plan once the entry is the stack's");

    // What EKS refuses, refused offline at the field.
    let wrong = format!(
        "{base}\n[[cluster.access_entries]]\nprincipal_arn = \"{admins}\"\nkubernetes_groups = [\"system:masters\"]\n\n[[cluster.access_entries]]\nprincipal_arn = \"{admins}\"\ntype = \"EC2_LINUX\"\n[[cluster.access_entries.policies]]\npolicy = \"AmazonEKSViewPolicy\"\n"
    );
    ws.write_blueprint(&wrong);
    let refused = kbp(&em, &["validate", ws.blueprint_arg()], ws.path());
    assert_exit_code(&refused, 1, "validate of entries EKS refuses");
    let said = stderr(&refused);
    assert!(said.contains("`system:masters` starts with `system:`, which EKS reserves"), "{said}");
    assert!(said.contains("a second access entry for"), "{said}");
    assert!(said.contains("an access entry of type EC2_LINUX takes no access policies"), "{said}");
}

"""The stand-in's simulated controllers for workloads: nodes from node groups, deployments, scheduling, image
pulls, events, garbage collection."""

from kube import condition, is_true, path

DEPLOYMENT = path("apps/v1", "deployments", "web", "default")


def deployment(replicas=2, image="public.ecr.aws/nginx/nginx:1.27", name="web", **pod_spec):
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [{"name": "main", "image": image}], **pod_spec}}},
    }


def pods(kube, app="web"):
    return kube.get(path("v1", "pods", namespace="default"), labelSelector=f"app={app}")["items"]


def events(kube, name, reason=None):
    items = kube.get(path("v1", "events", namespace="default"), fieldSelector=f"involvedObject.name={name}")["items"]
    return [e for e in items if reason is None or e["reason"] == reason]


def test_node_groups_register_nodes(kube, node_group, eks, cluster):
    node_group("ng", 2, labels={"role": "system"}, taints=[{"key": "dedicated", "value": "infra", "effect": "NO_SCHEDULE"}])
    nodes = kube.wait_for(lambda: len(items := kube.get("/api/v1/nodes")["items"]) == 2 and items, what="2 nodes")
    zones = sorted(n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in nodes)
    assert zones == ["us-west-2a", "us-west-2b"]
    for node in nodes:
        name, labels = node["metadata"]["name"], node["metadata"]["labels"]
        assert name.startswith("ip-10-0-") and name.endswith(".us-west-2.compute.internal")
        assert labels["eks.amazonaws.com/nodegroup"] == "ng" and labels["role"] == "system"
        assert (labels["kubernetes.io/os"], labels["kubernetes.io/arch"]) == ("linux", "amd64")
        assert labels["node.kubernetes.io/instance-type"] == "t3.medium"
        assert node["spec"]["taints"] == [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]
        assert is_true(node, "Ready")
    eks.update_nodegroup_config(clusterName=cluster, nodegroupName="ng", scalingConfig={"minSize": 1, "desiredSize": 1})
    kube.wait_for(lambda: len(kube.get("/api/v1/nodes")["items"]) == 1, what="scaled to 1 node")


def test_deployment_becomes_available_on_schedulable_nodes(kube, node_group, k8s_delays):
    node_group("ng", 2)
    k8s_delays(deployment_ready=0.4)
    kube.wait_for(lambda: len(kube.get("/api/v1/nodes")["items"]) == 2, what="nodes")
    kube.apply(DEPLOYMENT, deployment(replicas=2))
    running = kube.wait_for(lambda: len(p := pods(kube)) == 2 and all(x["spec"].get("nodeName") for x in p) and p,
                            what="pods scheduled")
    assert not is_true(kube.get(DEPLOYMENT), "Available")
    d = kube.wait_for(lambda: is_true(d := kube.get(DEPLOYMENT), "Available") and d, what="Available")
    assert d["status"]["readyReplicas"] == d["status"]["availableReplicas"] == d["status"]["updatedReplicas"] == 2
    assert d["status"]["observedGeneration"] == 1
    available, progressing = d["status"]["conditions"]
    assert (available["type"], available["reason"]) == ("Available", "MinimumReplicasAvailable")
    kube.wait_for(lambda: condition(kube.get(DEPLOYMENT), "Progressing")["reason"] == "NewReplicaSetAvailable",
                  what="progress done")

    (rs,) = kube.get(path("apps/v1", "replicasets", namespace="default"))["items"]
    template_hash = rs["metadata"]["labels"]["pod-template-hash"]
    assert rs["metadata"]["name"] == f"web-{template_hash}" and len(template_hash) == 10
    assert rs["metadata"]["ownerReferences"][0]["uid"] == d["metadata"]["uid"]
    for pod in pods(kube):
        name = pod["metadata"]["name"]
        assert name.startswith(f"web-{template_hash}-") and len(name.rsplit("-", 1)[1]) == 5
        assert pod["metadata"]["labels"] == {"app": "web", "pod-template-hash": template_hash}
        assert pod["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet"
        assert pod["status"]["phase"] == "Running" and is_true(pod, "Ready")
        assert pod["spec"]["nodeName"].startswith("ip-10-0-")
    assert len({p["spec"]["nodeName"] for p in running}) == 2  # spread over both nodes
    assert events(kube, "web", "ScalingReplicaSet")[0]["message"] == f"Scaled up replica set web-{template_hash} from 0 to 2"


def test_unschedulable_pods_stay_pending_with_the_schedulers_reason(kube, node_group):
    node_group("ng", 2)
    kube.wait_for(lambda: len(kube.get("/api/v1/nodes")["items"]) == 2, what="nodes")
    kube.apply(DEPLOYMENT, deployment(replicas=1, nodeSelector={"role": "gpu"}))
    (pod,) = kube.wait_for(lambda: (p := pods(kube)) and condition(p[0], "PodScheduled") and p, what="scheduling attempt")
    scheduled = condition(pod, "PodScheduled")
    message = ("0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes "
               "are available: 2 Preemption is not helpful for scheduling.")
    assert (scheduled["status"], scheduled["reason"], scheduled["message"]) == ("False", "Unschedulable", message)
    assert pod["status"]["phase"] == "Pending"
    (event,) = kube.wait_for(lambda: events(kube, pod["metadata"]["name"], "FailedScheduling"), what="event")
    assert (event["type"], event["message"], event["source"]["component"]) == ("Warning", message, "default-scheduler")
    assert event["involvedObject"]["kind"] == "Pod" and event["involvedObject"]["uid"] == pod["metadata"]["uid"]
    assert event["count"] == 1 and event["firstTimestamp"]
    d = kube.get(DEPLOYMENT)
    assert condition(d, "Available")["status"] == "False"
    assert condition(d, "Available")["reason"] == "MinimumReplicasUnavailable"


def test_taints_need_tolerations(kube, node_group):
    node_group("ng", 2, taints=[{"key": "dedicated", "value": "infra", "effect": "NO_SCHEDULE"}])
    kube.wait_for(lambda: len(kube.get("/api/v1/nodes")["items"]) == 2, what="nodes")
    kube.apply(DEPLOYMENT, deployment(replicas=1))
    (pod,) = kube.wait_for(lambda: (p := pods(kube)) and condition(p[0], "PodScheduled") and p, what="scheduling attempt")
    assert "2 node(s) had untolerated taint {dedicated: infra}" in condition(pod, "PodScheduled")["message"]
    kube.apply(DEPLOYMENT, deployment(replicas=1, tolerations=[{"key": "dedicated", "operator": "Exists"}]))
    kube.wait_for(lambda: is_true(kube.get(DEPLOYMENT), "Available"), what="Available once tolerated")


def test_required_pod_anti_affinity_spreads_or_blocks(kube, node_group):
    node_group("ng", 1)
    kube.wait_for(lambda: len(kube.get("/api/v1/nodes")["items"]) == 1, what="node")
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "web"}}}]}}
    kube.apply(DEPLOYMENT, deployment(replicas=2, affinity=anti))
    pending = kube.wait_for(lambda: [p for p in pods(kube) if (c := condition(p, "PodScheduled")) and c["status"] == "False"],
                            what="one pod blocked")
    assert condition(pending[0], "PodScheduled")["message"] == (
        "0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules. preemption: 0/1 nodes are "
        "available: 1 No preemption victims found for incoming pod.")
    assert sum(1 for p in pods(kube) if p["spec"].get("nodeName")) == 1


def test_images_from_other_registries_fail_to_pull(kube, node_group):
    node_group("ng", 1)
    d = deployment(replicas=1, image="nginx:1.27")
    d["spec"]["progressDeadlineSeconds"] = 1  # x the profile's time scale (1 here)
    kube.apply(DEPLOYMENT, d)
    pod = kube.wait_for(lambda: (p := pods(kube)) and p[0]["status"].get("containerStatuses") and p[0], what="pod started")
    (status,) = pod["status"]["containerStatuses"]
    assert status["state"]["waiting"] == {"reason": "ImagePullBackOff", "message": 'Back-off pulling image "nginx:1.27"'}
    assert status["ready"] is False and not is_true(pod, "Ready")
    failed = [e["message"] for e in events(kube, pod["metadata"]["name"], "Failed")]
    assert ('Failed to pull image "nginx:1.27": rpc error: code = NotFound desc = failed to pull and unpack image '
            '"docker.io/library/nginx:1.27": failed to resolve reference "docker.io/library/nginx:1.27": '
            'docker.io/library/nginx:1.27: not found') in failed
    assert "Error: ImagePullBackOff" in failed
    assert condition(kube.get(DEPLOYMENT), "Available")["status"] == "False"
    stalled = kube.wait_for(lambda: (c := condition(kube.get(DEPLOYMENT), "Progressing"))["status"] == "False" and c,
                            what="progress deadline")
    assert stalled["reason"] == "ProgressDeadlineExceeded" and stalled["message"].endswith("has timed out progressing.")


def test_ecr_images_pull(kube, node_group):
    node_group("ng", 1)
    image = "123456789012.dkr.ecr.us-west-2.amazonaws.com/app:1"
    kube.apply(DEPLOYMENT, deployment(replicas=1, image=image))
    kube.wait_for(lambda: is_true(kube.get(DEPLOYMENT), "Available"), what="Available")
    (pod,) = pods(kube)
    assert [e["reason"] for e in events(kube, pod["metadata"]["name"]) if e["source"]["component"] == "kubelet"] == [
        "Pulling", "Pulled", "Created", "Started"]


def test_deleting_a_deployment_collects_its_replicasets_and_pods(kube, node_group):
    node_group("ng", 1)
    kube.apply(DEPLOYMENT, deployment(replicas=2))
    kube.wait_for(lambda: len(pods(kube)) == 2, what="pods")
    assert kube.delete(DEPLOYMENT).status_code == 200
    kube.wait_for(lambda: not pods(kube) and not kube.get(path("apps/v1", "replicasets", namespace="default"))["items"],
                  what="replicasets and pods gone")


def test_foreground_deletion_of_a_deployment_waits_for_its_pods(kube, node_group):
    node_group("ng", 1)
    kube.apply(DEPLOYMENT, deployment(replicas=1))
    (pod,) = kube.wait_for(lambda: pods(kube), what="pod")
    pod_url = path("v1", "pods", pod["metadata"]["name"], "default")
    kube.request("PATCH", pod_url, {"metadata": {"finalizers": ["example.com/hold"]}}, "application/merge-patch+json")
    r = kube.delete(DEPLOYMENT, propagationPolicy="Foreground")
    assert r.json()["metadata"]["finalizers"] == ["foregroundDeletion"]
    kube.wait_for(lambda: kube.get(pod_url)["metadata"].get("deletionTimestamp"), what="pod deleting")
    assert kube.get(DEPLOYMENT)["metadata"]["deletionTimestamp"]
    kube.request("PATCH", pod_url, {"metadata": {"finalizers": None}}, "application/merge-patch+json")
    kube.wait_gone(DEPLOYMENT)


def test_template_change_rolls_to_a_new_replicaset(kube, node_group):
    node_group("ng", 1)
    kube.apply(DEPLOYMENT, deployment(replicas=1))
    kube.wait_for(lambda: is_true(kube.get(DEPLOYMENT), "Available"), what="Available")
    kube.apply(DEPLOYMENT, deployment(replicas=1, image="public.ecr.aws/nginx/nginx:1.28"))
    def rolled():
        d = kube.get(DEPLOYMENT)
        return (d["status"].get("observedGeneration") == 2 and d["status"].get("updatedReplicas") == 1
                and d["status"].get("replicas") == 1 and is_true(d, "Available"))
    kube.wait_for(rolled, what="rolled out")
    sets = {rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]: rs["spec"]["replicas"]
            for rs in kube.get(path("apps/v1", "replicasets", namespace="default"))["items"]}
    assert sets == {"1": 0, "2": 1}

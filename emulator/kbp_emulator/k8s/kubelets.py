"""What the node groups' instances would do to a real control plane: kubelets, and EKS's own bootstrap objects.

- Every instance a node group should have now (nodes.py decides) registers its Node with
  the labels, taints and capacity EKS gives it, and reports Ready every `HEARTBEAT` seconds, so the node
  lifecycle controller never takes it for dead. Scaling down or deleting the node group deletes its Nodes (the
  pod garbage collector then removes their pods).
- A pod the scheduler bound to one of those Nodes starts the profile's `k8s.deployment_ready` seconds later:
  Running, its containers ready — unless an image comes
  from a registry no node can pull from (anything but `public.ecr.aws`, ECR and `registry.k8s.io`): then it stays Pending in `ImagePullBackOff`, with the kubelet's `Failed`
  event. A pod being deleted is removed at once, as the kubelet confirms a deletion once its containers stop.

Nothing runs: no image is pulled, no probe executed, no container ever fails.
"""

from __future__ import annotations

import datetime
import re
import time
from typing import Any

from .. import lifecycle
from . import nodes
from .client import Conflict, NotFound
from .plane_view import PlaneView

HEARTBEAT = 10.0
#: The prefix of the taints Kubernetes' own controllers manage on Nodes.
_CONTROL_PLANE_TAINTS = "node.kubernetes.io/"
_ECR = re.compile(r"^[^./]+\.dkr\.ecr(-fips)?\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$")


def registry_of(image: str) -> str:
    first, _, rest = image.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return first
    return "docker.io"


def pullable(image: str) -> bool:
    registry = registry_of(image)
    return registry in ("public.ecr.aws", "registry.k8s.io") or bool(_ECR.match(registry))


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def reconcile(plane: PlaneView) -> None:
    ours = _nodes(plane)
    _pods(plane, ours)


def _nodes(plane: PlaneView) -> set[str]:
    """Registers, refreshes and retires the node groups' Nodes; the names of those that stand."""
    wanted = nodes.desired_nodes(plane)
    heartbeats: dict[str, float] = plane.__dict__.setdefault("heartbeats", {})
    # The label keys the node group gave each Node last, so that a label it drops is removed, not others'.
    given: dict[str, set[str]] = plane.__dict__.setdefault("node_labels_given", {})
    for node in plane.api.items("/api/v1/nodes", labelSelector=nodes.NODEGROUP_LABEL):
        name = node["metadata"]["name"]
        if name not in wanted:
            try:
                plane.api.call("DELETE", f"/api/v1/nodes/{name}")
            except NotFound:
                pass
            heartbeats.pop(name, None)
        else:
            _relabel(plane, node, wanted[name], given)
    for name, node in wanted.items():
        if time.monotonic() - heartbeats.get(name, 0.0) < HEARTBEAT:
            continue
        status = node.pop("status")
        stamp = now()
        for condition in status["conditions"]:
            condition["lastHeartbeatTime"] = condition["lastTransitionTime"] = stamp
        try:
            plane.api.call("POST", "/api/v1/nodes", node)
            given[name] = set(node["metadata"]["labels"])
        except Conflict:
            pass
        # Strategic merge: conditions merge by type, so only the heartbeat moves on a Node already Ready.
        plane.api.strategic_patch(f"/api/v1/nodes/{name}/status", {"status": status})
        heartbeats[name] = time.monotonic()
    return set(wanted)


def _relabel(plane: PlaneView, node: dict[str, Any], want: dict[str, Any], given: dict[str, set[str]]) -> None:
    """A node group's new labels and taints on its standing Nodes (EKS would roll new nodes that have them)."""
    name = node["metadata"]["name"]
    labels = node["metadata"].get("labels") or {}
    wanted_labels = want["metadata"]["labels"]
    patch_labels: dict[str, Any] = {k: v for k, v in wanted_labels.items() if labels.get(k) != v}
    patch_labels.update({k: None for k in given.get(name, set()) - set(wanted_labels) if k in labels})
    # Taints the control plane puts on a node (`node.kubernetes.io/unschedulable` for a cordon, `…/not-ready`)
    # are not the node group's: they stay, as a real kubelet leaves them.
    theirs = [t for t in node["spec"].get("taints") or [] if t.get("key", "").startswith(_CONTROL_PLANE_TAINTS)]
    taints = (want["spec"].get("taints") or []) + theirs
    if not patch_labels and (node["spec"].get("taints") or []) == taints:
        return
    # Node.spec.taints has no merge key: a strategic merge patch replaces the list.
    plane.api.strategic_patch(f"/api/v1/nodes/{name}", {"metadata": {"labels": patch_labels}, "spec": {"taints": taints}})
    given[name] = set(wanted_labels)


def _pods(plane: PlaneView, ours: set[str]) -> None:
    for pod in plane.api.items("/api/v1/pods"):
        node = (pod.get("spec") or {}).get("nodeName")
        if node not in ours:
            continue
        meta = pod["metadata"]
        path = f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}"
        if meta.get("deletionTimestamp"):
            plane.busy = True
            try:
                plane.api.call("DELETE", path, {"gracePeriodSeconds": 0, "preconditions": {"uid": meta["uid"]}})
            except (NotFound, Conflict):
                pass
            continue
        started: set[str] = plane.__dict__.setdefault("started_pods", set())
        ready_at: dict[str, float] = plane.__dict__.setdefault("ready_at", {})
        due = ready_at.setdefault(meta["uid"], lifecycle.deadline("k8s.deployment_ready"))
        if (pod.get("status") or {}).get("phase") == "Pending" and meta["uid"] not in started:
            plane.busy = True
        if (pod.get("status") or {}).get("phase") == "Pending" and meta["uid"] not in started and time.monotonic() >= due:
            images = [c.get("image", "") for c in pod["spec"].get("containers") or []]
            stuck = [image for image in images if not pullable(image)]
            try:
                plane.api.call("PUT", path + "/status", _pull_failed(pod, stuck) if stuck else _running(pod))
                if stuck:
                    _event(plane, pod, f'Failed to pull image "{stuck[0]}": failed to resolve reference '
                                       f'"{stuck[0]}": no such host')
            except (NotFound, Conflict):
                continue  # changed meanwhile: the next tick sees it again
            started.add(meta["uid"])


def _running(pod: dict[str, Any]) -> dict[str, Any]:
    stamp = now()
    containers = pod["spec"].get("containers") or []
    # ip-10-0-3-7.<region>.compute.internal is 10.0.3.7 (nodes.py names them so).
    host_ip = pod["spec"]["nodeName"].split(".", 1)[0].removeprefix("ip-").replace("-", ".")
    status = dict(pod.get("status") or {})
    status.update({
        "phase": "Running",
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}],
        # The VPC CNI gives pods addresses of the node's subnet; one next to the node's is enough here.
        "podIP": host_ip if pod["spec"].get("hostNetwork") else _neighbour(host_ip),
        "startTime": stamp,
        "conditions": [
            {"type": t, "status": "True", "lastTransitionTime": stamp}
            for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")
        ],
        "containerStatuses": [
            {"name": c["name"], "image": c.get("image", ""), "imageID": "", "ready": True, "started": True,
             "restartCount": 0, "state": {"running": {"startedAt": stamp}},
             "containerID": f"containerd://{i:064x}"}
            for i, c in enumerate(containers)
        ],
    })
    return {**pod, "status": status}


def _pull_failed(pod: dict[str, Any], stuck: list[str]) -> dict[str, Any]:
    stamp = now()
    status = dict(pod.get("status") or {})
    status.update({
        "phase": "Pending",
        "conditions": [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": stamp},
            {"type": "Initialized", "status": "True", "lastTransitionTime": stamp},
            {"type": "Ready", "status": "False", "reason": "ContainersNotReady", "lastTransitionTime": stamp},
            {"type": "ContainersReady", "status": "False", "reason": "ContainersNotReady", "lastTransitionTime": stamp},
        ],
        "containerStatuses": [
            {"name": c["name"], "image": c.get("image", ""), "imageID": "", "ready": False, "started": False,
             "restartCount": 0,
             "state": {"waiting": {"reason": "ImagePullBackOff", "message": f'Back-off pulling image "{c.get("image")}"'}
                       } if c.get("image") in stuck else {"waiting": {"reason": "ContainerCreating"}}}
            for c in pod["spec"].get("containers") or []
        ],
    })
    return {**pod, "status": status}


def _event(plane: PlaneView, pod: dict[str, Any], message: str) -> None:
    meta = pod["metadata"]
    stamp = now()
    plane.api.call("POST", f"/api/v1/namespaces/{meta['namespace']}/events", {
        "metadata": {"generateName": f"{meta['name']}."},
        "involvedObject": {"kind": "Pod", "apiVersion": "v1", "namespace": meta["namespace"], "name": meta["name"],
                           "uid": meta["uid"]},
        "reason": "Failed", "message": message, "type": "Warning", "count": 1,
        "firstTimestamp": stamp, "lastTimestamp": stamp,
        "source": {"component": "kubelet", "host": pod["spec"]["nodeName"]},
    })


def _neighbour(ip: str) -> str:
    *head, last = ip.split(".")
    return ".".join([*head, str((int(last) + 100) % 250 + 4)])

"""Deployments, ReplicaSets and pods: kube-controller-manager's deployment and replicaset controllers and the
kubelets, simulated.

- Deployment controller: one ReplicaSet per pod template (`<deployment>-<pod-template-hash>`, owned by the
  Deployment), scaled to `spec.replicas`; older ReplicaSets are scaled to 0 at once (no surge/unavailability
  stepping). Status: replicas, updated/ready/available counts, `Available` (True once at least
  `replicas - maxUnavailable` pods are Ready: MinimumReplicasAvailable, else MinimumReplicasUnavailable) and
  `Progressing` (NewReplicaSetAvailable when done, ReplicaSetUpdated meanwhile, ProgressDeadlineExceeded False after
  `progressDeadlineSeconds` x the profile's time scale without progress).
- ReplicaSet controller: `spec.replicas` pods `<rs>-<5 chars>` with the template's labels (incl.
  `pod-template-hash`) and spec, owned by the ReplicaSet.
- Kubelet: a bound pod pulls its images; images from `public.ecr.aws`, `*.dkr.ecr.*.amazonaws.com` and
  `registry.k8s.io` pull, any other registry fails (`ImagePullBackOff`, `Failed` events). Containers start and
  are Ready `k8s.deployment_ready` seconds after the pod was bound. No probes, restarts, resource accounting.
"""

from __future__ import annotations

import copy
import math
import re
import secrets
import time
from typing import TYPE_CHECKING, Any

from .. import lifecycle
from . import events
from .meta import (
    condition_true,
    controller_uid,
    deleting,
    dig,
    labels_of,
    name_of,
    namespace_of,
    owner_reference,
    random_suffix,
    set_condition,
    stable_hash,
    timestamp,
    uid_of,
)
from .resources import DEPLOYMENTS, NODES, PODS, REPLICASETS

if TYPE_CHECKING:
    from .controlplane import ControlPlane

CONTROLLER = "kube-controller-manager"
HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
_ECR = re.compile(r"^[^./]+\.dkr\.ecr(-fips)?\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$")


def registry_of(image: str) -> str:
    first, _, rest = image.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return first
    return "docker.io"


def pullable(image: str) -> bool:
    registry = registry_of(image)
    return registry in ("public.ecr.aws", "registry.k8s.io") or bool(_ECR.match(registry))


def _full_reference(image: str) -> str:
    registry = registry_of(image)
    ref = image
    if registry == "docker.io" and not image.startswith("docker.io/"):
        ref = "docker.io/" + (image if "/" in image else "library/" + image)
    last = ref.rsplit("/", 1)[-1]
    if ":" not in last and "@" not in last:
        ref += ":latest"
    return ref


def controllers(cp: "ControlPlane") -> bool:
    """The deployment and replicaset controllers: ReplicaSets and pods to match the specs."""
    changed = _deployments(cp)
    changed |= _replicasets(cp)
    return changed


def kubelets(cp: "ControlPlane") -> bool:
    """The kubelets running bound pods, then the Deployment status that follows from them."""
    changed = _kubelet(cp)
    changed |= _deployment_status(cp)
    return changed


# --- deployment controller --------------------------------------------------------------------------------------


def _owned(cp: "ControlPlane", key: tuple[str, str], owner: dict[str, Any]) -> list[dict[str, Any]]:
    uid = uid_of(owner)
    return [s.obj for s in cp.store.list(key, namespace_of(owner)) if controller_uid(s.obj) == uid]


def _template_hash(deployment: dict[str, Any]) -> str:
    return stable_hash(dig(deployment, "spec", "template", default={}))


def _scale_event(cp: "ControlPlane", deployment: dict[str, Any], rs_name: str, old: int, new: int) -> None:
    direction = "up" if new > old else "down"
    events.record(cp, deployment, "Normal", "ScalingReplicaSet",
                  f"Scaled {direction} replica set {rs_name} from {old} to {new}", "deployment-controller")


def _deployments(cp: "ControlPlane") -> bool:
    changed = False
    for stored in cp.store.list(DEPLOYMENTS.key):
        d = stored.obj
        if deleting(d):
            continue
        replicas = int(dig(d, "spec", "replicas", default=1))
        h = _template_hash(d)
        owned = _owned(cp, REPLICASETS.key, d)
        current = next((rs for rs in owned if labels_of(rs).get(HASH_LABEL) == h), None)
        if current is None:
            changed |= _new_replicaset(cp, d, h, replicas, owned)
        elif int(dig(current, "spec", "replicas", default=0)) != replicas:
            before = int(dig(current, "spec", "replicas", default=0))
            new = copy.deepcopy(current)
            new["spec"]["replicas"] = replicas
            new["metadata"].setdefault("annotations", {})["deployment.kubernetes.io/desired-replicas"] = str(replicas)
            if cp.update(REPLICASETS, current, new, manager=CONTROLLER):
                _scale_event(cp, d, name_of(current), before, replicas)
                changed = True
        for rs in owned:
            if rs is current or labels_of(rs).get(HASH_LABEL) == h or deleting(rs):
                continue
            before = int(dig(rs, "spec", "replicas", default=0))
            if before:
                new = copy.deepcopy(rs)
                new["spec"]["replicas"] = 0
                if cp.update(REPLICASETS, rs, new, manager=CONTROLLER):
                    _scale_event(cp, d, name_of(rs), before, 0)
                    changed = True
    return changed


def _new_replicaset(cp: "ControlPlane", d: dict[str, Any], h: str, replicas: int, owned: list[dict[str, Any]]) -> bool:
    template = copy.deepcopy(dig(d, "spec", "template", default={}))
    template.setdefault("metadata", {})
    template["metadata"]["labels"] = {**(template["metadata"].get("labels") or {}), HASH_LABEL: h}
    selector = copy.deepcopy(dig(d, "spec", "selector", default={}))
    selector["matchLabels"] = {**(selector.get("matchLabels") or {}), HASH_LABEL: h}
    revision = 1 + max([int((rs["metadata"].get("annotations") or {}).get(REVISION, "0") or 0) for rs in owned] or [0])
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": f"{name_of(d)}-{h}",
            "namespace": namespace_of(d),
            "labels": template["metadata"]["labels"],
            "annotations": {
                "deployment.kubernetes.io/desired-replicas": str(replicas),
                "deployment.kubernetes.io/max-replicas": str(replicas + _max_surge(d, replicas)),
                REVISION: str(revision),
            },
            "ownerReferences": [owner_reference("apps/v1", "Deployment", d)],
        },
        "spec": {"replicas": replicas, "selector": selector, "template": template},
    }
    created = cp.create(REPLICASETS, rs, manager=CONTROLLER)
    if created is None:
        return False
    _scale_event(cp, d, name_of(rs), 0, replicas)
    return True


def _resolve(value: Any, total: int, round_up: bool) -> int:
    if isinstance(value, str) and value.endswith("%"):
        try:
            pct = float(value[:-1])
        except ValueError:
            return 0
        raw = total * pct / 100
        return int(math.ceil(raw) if round_up else math.floor(raw))
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _max_surge(d: dict[str, Any], replicas: int) -> int:
    return _resolve(dig(d, "spec", "strategy", "rollingUpdate", "maxSurge", default="25%"), replicas, True)


def max_unavailable(d: dict[str, Any], replicas: int) -> int:
    if dig(d, "spec", "strategy", "type", default="RollingUpdate") != "RollingUpdate" or replicas == 0:
        return 0
    unavailable = _resolve(dig(d, "spec", "strategy", "rollingUpdate", "maxUnavailable", default="25%"), replicas, False)
    if unavailable == 0 and _max_surge(d, replicas) == 0:
        unavailable = 1
    return min(unavailable, replicas)


# --- replicaset controller --------------------------------------------------------------------------------------


def _pod_ready(pod: dict[str, Any]) -> bool:
    return condition_true(pod, "Ready")


def _replicasets(cp: "ControlPlane") -> bool:
    changed = False
    for stored in cp.store.list(REPLICASETS.key):
        rs = stored.obj
        if deleting(rs):
            continue
        pods = [p for p in _owned(cp, PODS.key, rs) if not deleting(p)]
        want = int(dig(rs, "spec", "replicas", default=1))
        for _ in range(want - len(pods)):
            pod = _new_pod(rs)
            if cp.create(PODS, pod, manager=CONTROLLER) is not None:
                events.record(cp, rs, "Normal", "SuccessfulCreate", f"Created pod: {name_of(pod)}", "replicaset-controller")
                changed = True
        if len(pods) > want:
            victims = sorted(pods, key=lambda p: (bool(dig(p, "spec", "nodeName")), _pod_ready(p),
                                                  -_created_order(p)))[: len(pods) - want]
            for pod in victims:
                if cp.delete_object(PODS.key, pod, "Background"):
                    events.record(cp, rs, "Normal", "SuccessfulDelete", f"Deleted pod: {name_of(pod)}", "replicaset-controller")
                    changed = True
        pods = [p for p in _owned(cp, PODS.key, rs) if not deleting(p)]
        ready = sum(1 for p in pods if _pod_ready(p))
        status = _omit_zero({
            "replicas": len(pods),
            "fullyLabeledReplicas": len(pods),
            "readyReplicas": ready,
            "availableReplicas": ready,
            "observedGeneration": rs["metadata"].get("generation", 1),
        }, keep=("replicas",))
        current = cp.store.get(REPLICASETS.key, namespace_of(rs), name_of(rs))
        if current is not None:
            changed |= cp.write_status(REPLICASETS, current.obj, status, manager=CONTROLLER)
    return changed


def _created_order(pod: dict[str, Any]) -> int:
    return int(pod["metadata"].get("resourceVersion") or 0)


def _omit_zero(status: dict[str, Any], keep: tuple[str, ...] = ()) -> dict[str, Any]:
    return {k: v for k, v in status.items() if v or k in keep}


def _new_pod(rs: dict[str, Any]) -> dict[str, Any]:
    template = dig(rs, "spec", "template", default={})
    meta = template.get("metadata") or {}
    pod_meta: dict[str, Any] = {
        "name": f"{name_of(rs)}-{random_suffix()}",
        "generateName": f"{name_of(rs)}-",
        "namespace": namespace_of(rs),
        "labels": copy.deepcopy(meta.get("labels") or {}),
        "ownerReferences": [owner_reference("apps/v1", "ReplicaSet", rs)],
    }
    if meta.get("annotations"):
        pod_meta["annotations"] = copy.deepcopy(meta["annotations"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": copy.deepcopy(template.get("spec") or {})}


# --- kubelet ----------------------------------------------------------------------------------------------------


def _pull_message(image: str) -> str:
    ref = _full_reference(image)
    return (f'Failed to pull image "{image}": rpc error: code = NotFound desc = failed to pull and unpack image '
            f'"{ref}": failed to resolve reference "{ref}": {ref}: not found')


def _node_ip(node: dict[str, Any] | None) -> str:
    for address in dig(node or {}, "status", "addresses", default=[]) or []:
        if address.get("type") == "InternalIP":
            return address.get("address", "")
    return ""


def _kubelet(cp: "ControlPlane") -> bool:
    changed = False
    for stored in cp.store.list(PODS.key):
        pod = stored.obj
        node_name = dig(pod, "spec", "nodeName")
        if not node_name or deleting(pod):
            continue
        node = cp.store.get(NODES.key, "", node_name)
        if node is None:
            continue
        changed |= _run_pod(cp, pod, node.obj)
    return changed


def _run_pod(cp: "ControlPlane", pod: dict[str, Any], node: dict[str, Any]) -> bool:
    uid = uid_of(pod)
    state = cp.pods.get(uid)
    if state is None:
        host_ip = _node_ip(node)
        prefix = host_ip.rsplit(".", 1)[0] if host_ip else "10.0.0"
        state = cp.pods[uid] = {
            "started": timestamp(),
            "ready_at": lifecycle.deadline("k8s.deployment_ready"),
            "pod_ip": f"{prefix}.{secrets.randbelow(250) + 4}",
            "host_ip": host_ip,
            "container_ids": {},
        }
    now = time.monotonic()
    started = now >= state["ready_at"]
    if not started:
        cp.wake_at(state["ready_at"])
    node_name = name_of(node)
    changed = False
    statuses, init_statuses, not_ready = [], [], []
    init_ok = True
    for kind, containers in (("initContainers", dig(pod, "spec", "initContainers", default=[]) or []),
                             ("containers", dig(pod, "spec", "containers", default=[]) or [])):
        for c in containers:
            name, image = c.get("name", ""), c.get("image", "")
            field = f"spec.{kind}{{{name}}}"
            status: dict[str, Any] = {"name": name, "image": image, "imageID": "", "ready": False,
                                      "restartCount": 0, "started": False}
            changed |= events.record(cp, pod, "Normal", "Pulling", f'Pulling image "{image}"', "kubelet",
                                     host=node_name, field_path=field)
            if not pullable(image):
                status["state"] = {"waiting": {"reason": "ImagePullBackOff", "message": f'Back-off pulling image "{image}"'}}
                changed |= events.record(cp, pod, "Warning", "Failed", _pull_message(image), "kubelet", host=node_name,
                                         field_path=field, repeat=True)
                changed |= events.record(cp, pod, "Warning", "Failed", "Error: ErrImagePull", "kubelet",
                                         host=node_name, field_path=field, repeat=True)
                changed |= events.record(cp, pod, "Normal", "BackOff", f'Back-off pulling image "{image}"', "kubelet",
                                         host=node_name, field_path=field, repeat=True)
                changed |= events.record(cp, pod, "Warning", "Failed", "Error: ImagePullBackOff", "kubelet",
                                         host=node_name, field_path=field, repeat=True)
                not_ready.append(name)
                if kind == "initContainers":
                    init_ok = False
            elif not started or (kind == "containers" and not init_ok):
                status["state"] = {"waiting": {"reason": "PodInitializing" if kind == "containers" and not init_ok
                                               else "ContainerCreating"}}
                not_ready.append(name)
            else:
                cid = state["container_ids"].setdefault(name, "containerd://" + secrets.token_hex(32))
                status["containerID"] = cid
                status["imageID"] = image.split("@")[0] + "@sha256:" + stable_hash(image, 32)
                changed |= events.record(cp, pod, "Normal", "Pulled", f'Successfully pulled image "{image}" in 1.2s '
                                         f'(1.2s including waiting). Image size: 52428800 bytes.', "kubelet",
                                         host=node_name, field_path=field)
                changed |= events.record(cp, pod, "Normal", "Created", f"Created container: {name}", "kubelet",
                                         host=node_name, field_path=field)
                changed |= events.record(cp, pod, "Normal", "Started", f"Started container {name}", "kubelet",
                                         host=node_name, field_path=field)
                if kind == "initContainers":
                    status["state"] = {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": state["started"],
                                                      "finishedAt": state["started"], "containerID": cid}}
                    status["ready"] = True
                else:
                    status["state"] = {"running": {"startedAt": state["started"]}}
                    status["ready"] = status["started"] = True
            (init_statuses if kind == "initContainers" else statuses).append(status)

    ready = not not_ready
    running = started and init_ok and any("running" in s["state"] for s in statuses)
    current = copy.deepcopy(pod.get("status") or {})
    conditions = current.get("conditions") or []
    now_ts = timestamp()
    unready = f"containers with unready status: [{' '.join(n for n in not_ready)}]"
    for type_, ok, reason in (
        ("PodReadyToStartContainers", True, None),
        ("Initialized", init_ok, "ContainersNotInitialized"),
        ("Ready", ready, "ContainersNotReady"),
        ("ContainersReady", ready, "ContainersNotReady"),
    ):
        cond: dict[str, Any] = {"type": type_, "status": "True" if ok else "False",
                                "lastTransitionTime": now_ts}
        if not ok:
            cond["reason"] = reason
            cond["message"] = (f"containers with incomplete status: [{' '.join(s['name'] for s in init_statuses if not s['ready'])}]"
                               if type_ == "Initialized" else unready)
        conditions = set_condition(conditions, cond)
    order = ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]
    conditions.sort(key=lambda c: order.index(c["type"]) if c["type"] in order else len(order))
    status = {
        **current,
        "phase": "Running" if running else "Pending",
        "conditions": conditions,
        "hostIP": state["host_ip"],
        "hostIPs": [{"ip": state["host_ip"]}],
        "podIP": state["pod_ip"],
        "podIPs": [{"ip": state["pod_ip"]}],
        "startTime": state["started"],
        "containerStatuses": statuses,
    }
    if init_statuses:
        status["initContainerStatuses"] = init_statuses
    if status != current:
        changed |= cp.write_status(PODS, pod, status, manager="kubelet")
    return changed


# --- deployment status ------------------------------------------------------------------------------------------


def _deployment_status(cp: "ControlPlane") -> bool:
    changed = False
    for stored in cp.store.list(DEPLOYMENTS.key):
        d = stored.obj
        if deleting(d):
            continue
        want = int(dig(d, "spec", "replicas", default=1))
        h = _template_hash(d)
        owned = _owned(cp, REPLICASETS.key, d)
        current_rs = next((rs for rs in owned if labels_of(rs).get(HASH_LABEL) == h), None)
        pods, updated = [], []
        for rs in owned:
            rs_pods = [p for p in _owned(cp, PODS.key, rs) if not deleting(p)]
            pods += rs_pods
            if rs is current_rs:
                updated = rs_pods
        ready = sum(1 for p in pods if _pod_ready(p))
        available = ready
        rs_name = name_of(current_rs) if current_rs else f"{name_of(d)}-{h}"
        snapshot = (rs_name, len(pods), len(updated), ready)
        uid = uid_of(d)
        started, seen = cp.deadlines.get(("progress", uid), (time.monotonic(), None))
        if seen != snapshot:
            started = time.monotonic()
            cp.deadlines[("progress", uid)] = (started, snapshot)
        now = timestamp()
        status = copy.deepcopy(d.get("status") or {})
        conditions = status.get("conditions") or []
        if available >= want - max_unavailable(d, want):
            avail = {"type": "Available", "status": "True", "lastUpdateTime": now, "lastTransitionTime": now,
                     "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability."}
        else:
            avail = {"type": "Available", "status": "False", "lastUpdateTime": now, "lastTransitionTime": now,
                     "reason": "MinimumReplicasUnavailable", "message": "Deployment does not have minimum availability."}
        complete = len(updated) == want and len(pods) == want and available == want
        deadline = float(dig(d, "spec", "progressDeadlineSeconds", default=600)) * lifecycle.current().time_scale
        if complete:
            progress = {"type": "Progressing", "status": "True", "lastUpdateTime": now, "lastTransitionTime": now,
                        "reason": "NewReplicaSetAvailable", "message": f'ReplicaSet "{rs_name}" has successfully progressed.'}
        elif time.monotonic() - started > deadline:
            progress = {"type": "Progressing", "status": "False", "lastUpdateTime": now, "lastTransitionTime": now,
                        "reason": "ProgressDeadlineExceeded", "message": f'ReplicaSet "{rs_name}" has timed out progressing.'}
        else:
            progress = {"type": "Progressing", "status": "True", "lastUpdateTime": now, "lastTransitionTime": now,
                        "reason": "ReplicaSetUpdated", "message": f'ReplicaSet "{rs_name}" is progressing.'}
            cp.wake_at(started + deadline + 0.01)
        conditions = set_condition(set_condition(conditions, avail, update_time=True), progress, update_time=True)
        conditions.sort(key=lambda c: {"Available": 0, "Progressing": 1}.get(c["type"], 2))
        status = _omit_zero({
            "observedGeneration": d["metadata"].get("generation", 1),
            "replicas": len(pods),
            "updatedReplicas": len(updated),
            "readyReplicas": ready,
            "availableReplicas": available,
            "unavailableReplicas": max(want - available, 0),
        })
        status["conditions"] = conditions
        changed |= cp.write_status(DEPLOYMENTS, d, status, manager=CONTROLLER)
    return changed

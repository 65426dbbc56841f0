"""The scheduler: binds pending pods to nodes, or says why it cannot, as kube-scheduler's filters do.

Filters, in kube-scheduler's order, each giving its reason for a node it rejects: NodeUnschedulable,
TaintToleration (NoSchedule/NoExecute taints), NodeAffinity (nodeSelector and required node affinity),
PodTopologySpread (DoNotSchedule constraints), InterPodAffinity (required pod affinity and anti-affinity, both
ways). Not modelled: resource requests (NodeResourcesFit), host ports, volumes, preemption itself, priorities,
scoring beyond "fewest pods". An unschedulable pod gets `PodScheduled=False/Unschedulable` and a
`FailedScheduling` event worded as kube-scheduler's ("0/2 nodes are available: 2 node(s) didn't match Pod's node
affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.").
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from . import events
from .meta import deleting, dig, labels_of, name_of, namespace_of, set_condition, timestamp, uid_of
from .resources import NAMESPACES, NODES, PODS
from .selectors import label_selector_matches, node_selector_term_matches, tolerates

if TYPE_CHECKING:
    from .controlplane import ControlPlane

SCHEDULER = "default-scheduler"
AFFINITY = "node(s) didn't match Pod's node affinity/selector"
AFFINITY_RULES = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY_RULES = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
SPREAD = "node(s) didn't match pod topology spread constraints"
#: Filter failures preemption could resolve (Unschedulable, not UnschedulableAndUnresolvable).
RESOLVABLE = {ANTI_AFFINITY_RULES, EXISTING_ANTI_AFFINITY, SPREAD}


def _node_affinity_ok(pod: dict[str, Any], node: dict[str, Any]) -> bool:
    labels = labels_of(node)
    for key, value in (dig(pod, "spec", "nodeSelector", default={}) or {}).items():
        if labels.get(key) != value:
            return False
    terms = dig(pod, "spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                "nodeSelectorTerms")
    if terms is not None and not any(node_selector_term_matches(t, node) for t in terms):
        return False
    return True


def _untolerated(pod: dict[str, Any], node: dict[str, Any]) -> dict[str, Any] | None:
    tolerations = dig(pod, "spec", "tolerations", default=[]) or []
    for taint in dig(node, "spec", "taints", default=[]) or []:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(tolerations, taint):
            return taint
    return None


def _selector_with_keys(selector: dict[str, Any] | None, keys: list[str], pod: dict[str, Any]) -> dict[str, Any] | None:
    if selector is None or not keys:
        return selector
    extra = {k: labels_of(pod)[k] for k in keys if k in labels_of(pod)}
    return {**selector, "matchLabels": {**(selector.get("matchLabels") or {}), **extra}}


class _View:
    """What the filters look at: nodes, and where every live pod runs."""

    def __init__(self, cp: "ControlPlane") -> None:
        self.nodes = [s.obj for s in cp.store.list(NODES.key)]
        self.by_name = {name_of(n): n for n in self.nodes}
        self.pods = [s.obj for s in cp.store.list(PODS.key) if not deleting(s.obj)]
        self.placed: dict[str, str] = {uid_of(p): dig(p, "spec", "nodeName") for p in self.pods if dig(p, "spec", "nodeName")}
        self.namespace_labels = {name_of(s.obj): labels_of(s.obj) for s in cp.store.list(NAMESPACES.key)}

    def placed_pods(self) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        out = []
        for pod in self.pods:
            node = self.by_name.get(self.placed.get(uid_of(pod), ""))
            if node is not None:
                out.append((pod, node))
        return out

    def in_namespaces(self, term: dict[str, Any], owner: dict[str, Any], other: dict[str, Any]) -> bool:
        names = term.get("namespaces") or []
        selector = term.get("namespaceSelector")
        if not names and selector is None:
            return namespace_of(other) == namespace_of(owner)
        if namespace_of(other) in names:
            return True
        return selector is not None and label_selector_matches(selector, self.namespace_labels.get(namespace_of(other), {}))


def _terms(pod: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return dig(pod, "spec", "affinity", kind, "requiredDuringSchedulingIgnoredDuringExecution", default=[]) or []


def _term_matches(view: _View, term: dict[str, Any], owner: dict[str, Any], other: dict[str, Any]) -> bool:
    selector = _selector_with_keys(term.get("labelSelector"), term.get("matchLabelKeys") or [], owner)
    return view.in_namespaces(term, owner, other) and label_selector_matches(selector, labels_of(other))


def _same_domain(a: dict[str, Any], b: dict[str, Any], key: str) -> bool:
    return key in labels_of(a) and labels_of(a).get(key) == labels_of(b).get(key)


def _spread_reason(view: _View, pod: dict[str, Any], node: dict[str, Any]) -> str | None:
    for c in dig(pod, "spec", "topologySpreadConstraints", default=[]) or []:
        if c.get("whenUnsatisfiable", "DoNotSchedule") != "DoNotSchedule":
            continue
        key = c.get("topologyKey")
        if key not in labels_of(node):
            return "node(s) didn't match pod topology spread constraints (missing required label)"
        selector = _selector_with_keys(c.get("labelSelector"), c.get("matchLabelKeys") or [], pod)
        eligible = [n for n in view.nodes if key in labels_of(n) and _node_affinity_ok(pod, n)]
        counts = {labels_of(n)[key]: 0 for n in eligible}
        for other, where in view.placed_pods():
            if namespace_of(other) != namespace_of(pod) or key not in labels_of(where):
                continue
            if where in eligible and label_selector_matches(selector, labels_of(other)):
                counts[labels_of(where)[key]] = counts.get(labels_of(where)[key], 0) + 1
        own = 1 if label_selector_matches(selector, labels_of(pod)) else 0
        lowest = min(counts.values()) if counts else 0
        if counts.get(labels_of(node)[key], 0) + own - lowest > int(c.get("maxSkew", 1)):
            return SPREAD
    return None


def _inter_pod_reason(view: _View, pod: dict[str, Any], node: dict[str, Any]) -> str | None:
    """InterPodAffinity's checks in its order: the pod's affinity, its anti-affinity, then existing pods'
    anti-affinity against it."""
    placed = view.placed_pods()
    for term in _terms(pod, "podAffinity"):
        matching = [(o, w) for o, w in placed if _term_matches(view, term, pod, o)]
        if not matching:
            if not _term_matches(view, term, pod, pod):
                return AFFINITY_RULES
        elif not any(_same_domain(w, node, term.get("topologyKey", "")) for _, w in matching):
            return AFFINITY_RULES
    for term in _terms(pod, "podAntiAffinity"):
        for other, where in placed:
            if _term_matches(view, term, pod, other) and _same_domain(where, node, term.get("topologyKey", "")):
                return ANTI_AFFINITY_RULES
    for other, where in placed:
        for term in _terms(other, "podAntiAffinity"):
            if _term_matches(view, term, other, pod) and _same_domain(where, node, term.get("topologyKey", "")):
                return EXISTING_ANTI_AFFINITY
    return None


def reason(view: _View, pod: dict[str, Any], node: dict[str, Any]) -> str | None:
    """Why `pod` cannot go on `node`, in the words of the first kube-scheduler filter that rejects it."""
    if dig(node, "spec", "unschedulable"):
        return "node(s) were unschedulable"
    taint = _untolerated(pod, node)
    if taint is not None:
        return f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value') or ''}}}"
    if not _node_affinity_ok(pod, node):
        return AFFINITY
    return _spread_reason(view, pod, node) or _inter_pod_reason(view, pod, node)


def failure_message(view: _View, reasons: dict[str, int]) -> str:
    total = len(view.nodes)
    if not total:
        return "no nodes available to schedule pods"
    listed = ", ".join(sorted(f"{n} {r}" for r, n in reasons.items()))
    victims = sum(n for r, n in reasons.items() if r in RESOLVABLE)
    preemption = sorted(
        ([f"{victims} No preemption victims found for incoming pod"] if victims else [])
        + ([f"{total - victims} Preemption is not helpful for scheduling"] if total - victims else [])
    )
    return (f"0/{total} nodes are available: {listed}. preemption: 0/{total} nodes are available: "
            f"{', '.join(preemption)}.")


def reconcile(cp: "ControlPlane") -> bool:
    changed = False
    view = _View(cp)
    for pod in list(view.pods):
        if dig(pod, "spec", "nodeName") or (dig(pod, "spec", "schedulerName") or SCHEDULER) != SCHEDULER:
            continue
        reasons: dict[str, int] = {}
        feasible = []
        for node in view.nodes:
            why = reason(view, pod, node)
            if why is None:
                feasible.append(node)
            else:
                reasons[why] = reasons.get(why, 0) + 1
        if feasible:
            load = {name_of(n): 0 for n in view.nodes}
            for node_name in view.placed.values():
                load[node_name] = load.get(node_name, 0) + 1
            chosen = min(feasible, key=lambda n: (load.get(name_of(n), 0), name_of(n)))
            changed |= _bind(cp, pod, chosen)
            view.placed[uid_of(pod)] = name_of(chosen)
        else:
            changed |= _unschedulable(cp, pod, failure_message(view, reasons))
    return changed


def _bind(cp: "ControlPlane", pod: dict[str, Any], node: dict[str, Any]) -> bool:
    new = copy.deepcopy(pod)
    new["spec"]["nodeName"] = name_of(node)
    if not cp.update(PODS, pod, new, manager="kube-scheduler"):
        return False
    stored = cp.store.get(PODS.key, namespace_of(pod), name_of(pod))
    if stored is None:
        return True
    status = copy.deepcopy(stored.obj.get("status") or {})
    status["conditions"] = set_condition(status.get("conditions") or [], {
        "type": "PodScheduled", "status": "True", "lastTransitionTime": timestamp()})
    cp.write_status(PODS, stored.obj, status, manager="kube-scheduler")
    events.record(cp, stored.obj, "Normal", "Scheduled",
                  f"Successfully assigned {namespace_of(pod)}/{name_of(pod)} to {name_of(node)}", SCHEDULER)
    return True


def _unschedulable(cp: "ControlPlane", pod: dict[str, Any], message: str) -> bool:
    status = copy.deepcopy(pod.get("status") or {})
    status["phase"] = "Pending"
    status["conditions"] = set_condition(status.get("conditions") or [], {
        "type": "PodScheduled", "status": "False", "lastTransitionTime": timestamp(),
        "reason": "Unschedulable", "message": message})
    changed = cp.write_status(PODS, pod, status, manager="kube-scheduler")
    changed |= events.record(cp, pod, "Warning", "FailedScheduling", message, SCHEDULER, repeat=True)
    return changed

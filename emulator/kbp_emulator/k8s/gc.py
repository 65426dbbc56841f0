"""Garbage collection, finalizers and namespace deletion: kube-controller-manager's garbage collector and
namespace controller.

- Background: an object whose owners (`metadata.ownerReferences[].uid`) are all gone is deleted; references to
  gone owners are dropped from an object that still has a live one.
- Foreground: an owner marked with the `foregroundDeletion` finalizer has its dependents deleted; the finalizer
  is removed (and the owner goes) once no dependent that has `blockOwnerDeletion: true` remains, as in kube.
- A Namespace being deleted has everything in it deleted (objects with finalizers wait for them); it goes once it
  is empty. Its status conditions say what remains, like the real namespace controller's.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from . import api
from .meta import deleting, dig, finalizers_of, name_of, namespace_of, set_condition, timestamp, uid_of
from .resources import NAMESPACES
from .store import Key, Stored

if TYPE_CHECKING:
    from .controlplane import ControlPlane


def _dependents(cp: "ControlPlane") -> dict[str, list[tuple[Key, Stored]]]:
    index: dict[str, list[tuple[Key, Stored]]] = {}
    for key, stored in cp.store.all():
        for ref in stored.obj["metadata"].get("ownerReferences") or []:
            if ref.get("uid"):
                index.setdefault(ref["uid"], []).append((key, stored))
    return index


def reconcile(cp: "ControlPlane") -> bool:
    changed = _foreground(cp)
    changed |= _orphans(cp)
    changed |= _namespaces(cp)
    return changed


def _foreground(cp: "ControlPlane") -> bool:
    changed = False
    index = _dependents(cp)
    for key, stored in list(cp.store.all()):
        obj = stored.obj
        if not deleting(obj) or api.FOREGROUND not in finalizers_of(obj):
            continue
        uid = uid_of(obj)
        for dep_key, dep in index.get(uid, []):
            if cp.store.get(dep_key, namespace_of(dep.obj), name_of(dep.obj)) is not dep or deleting(dep.obj):
                continue
            policy = "Foreground" if index.get(uid_of(dep.obj)) else "Background"
            changed |= cp.delete_object(dep_key, dep.obj, policy)
        blocking = [
            dep for dep_key, dep in index.get(uid, [])
            if cp.store.get(dep_key, namespace_of(dep.obj), name_of(dep.obj)) is not None
            and any(r.get("uid") == uid and r.get("blockOwnerDeletion") for r in dep.obj["metadata"].get("ownerReferences") or [])
        ]
        if not blocking:
            changed |= cp.remove_finalizer(key, name_of(obj), namespace_of(obj), api.FOREGROUND,
                                           manager="kube-controller-manager")
    return changed


def _orphans(cp: "ControlPlane") -> bool:
    changed = False
    for key, stored in list(cp.store.all()):
        refs = stored.obj["metadata"].get("ownerReferences") or []
        if not refs or cp.store.get(key, namespace_of(stored.obj), name_of(stored.obj)) is not stored:
            continue
        live = [r for r in refs if r.get("uid") and cp.store.by_uid(r["uid"]) is not None]
        if not live:
            if not deleting(stored.obj):
                changed |= cp.delete_object(key, stored.obj, "Background")
        elif len(live) != len(refs):
            new = copy.deepcopy(stored.obj)
            new["metadata"]["ownerReferences"] = live
            rt = cp.catalog().by_key(*key)
            if rt is not None:
                api._store_raw(cp, rt, stored, new)
                changed = True
    return changed


def _remaining(cp: "ControlPlane", namespace: str) -> list[tuple[Key, Stored]]:
    return [(k, s) for k, s in cp.store.all() if k != NAMESPACES.key and namespace_of(s.obj) == namespace]


def _namespaces(cp: "ControlPlane") -> bool:
    changed = False
    for ns in cp.store.list(NAMESPACES.key):
        if not deleting(ns.obj):
            continue
        name = name_of(ns.obj)
        for key, stored in _remaining(cp, name):
            if not deleting(stored.obj):
                changed |= cp.delete_object(key, stored.obj, "Background")
        left = _remaining(cp, name)
        changed |= _namespace_status(cp, ns, left)
        if left:
            continue
        current = cp.store.get(NAMESPACES.key, "", name)
        if current is None:
            continue
        if dig(current.obj, "spec", "finalizers"):
            new = copy.deepcopy(current.obj)
            new["spec"]["finalizers"] = []
            api._store_raw(cp, NAMESPACES, current, new)
            current = cp.store.get(NAMESPACES.key, "", name)
            changed = True
        if current is not None and not finalizers_of(current.obj):
            cp.store.remove(NAMESPACES.key, "", name)
            cp.wake()
            changed = True
    return changed


def _namespace_status(cp: "ControlPlane", ns: Stored, left: list[tuple[Key, Stored]]) -> bool:
    counts: dict[str, int] = {}
    finalizers: dict[str, int] = {}
    for (group, plural), stored in left:
        resource = f"{plural}.{group}"
        counts[resource] = counts.get(resource, 0) + 1
        for f in finalizers_of(stored.obj):
            finalizers[f] = finalizers.get(f, 0) + 1
    now = timestamp()
    status: dict[str, Any] = copy.deepcopy(ns.obj.get("status") or {})
    conditions = status.get("conditions") or []
    if counts:
        listed = ", ".join(f"{r} has {n} resource instances" for r, n in sorted(counts.items()))
        remaining = {"type": "NamespaceContentRemaining", "status": "True", "lastTransitionTime": now,
                     "reason": "SomeResourcesRemain", "message": f"Some resources are remaining: {listed}"}
    else:
        remaining = {"type": "NamespaceContentRemaining", "status": "False", "lastTransitionTime": now,
                     "reason": "ContentRemoved", "message": "All content successfully removed"}
    if finalizers:
        listed = ", ".join(f"{f} in {n} resource instances" for f, n in sorted(finalizers.items()))
        pending = {"type": "NamespaceFinalizersRemaining", "status": "True", "lastTransitionTime": now,
                   "reason": "SomeFinalizersRemain",
                   "message": f"Some content in the namespace has finalizers remaining: {listed}"}
    else:
        pending = {"type": "NamespaceFinalizersRemaining", "status": "False", "lastTransitionTime": now,
                   "reason": "ContentHasNoFinalizers", "message": "All content-preserving finalizers finished"}
    conditions = set_condition(set_condition(conditions, remaining), pending)
    if conditions == status.get("conditions"):
        return False
    status["conditions"] = conditions
    return cp.write_status(NAMESPACES, ns.obj, status, manager="kube-controller-manager")

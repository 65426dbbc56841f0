"""core/v1 Events, recorded by the simulated controllers as kube's event recorder does: one Event per
(object, reason, message), whose `count` and `lastTimestamp` grow when it happens again."""

from __future__ import annotations

import copy
import time
from typing import TYPE_CHECKING, Any

from .meta import namespace_of, now, timestamp
from .resources import EVENTS, NAMESPACES

if TYPE_CHECKING:
    from .controlplane import ControlPlane

#: A repeated event is counted again at most this often (seconds), as the scheduler's and kubelet's back-off.
REPEAT_EVERY = 10.0


def record(
    cp: "ControlPlane",
    involved: dict[str, Any],
    type_: str,
    reason: str,
    message: str,
    component: str,
    host: str | None = None,
    field_path: str | None = None,
    repeat: bool = False,
) -> bool:
    """Records an event about `involved` (a stored object). With `repeat`, an event seen before is counted again
    (at most every REPEAT_EVERY seconds); without, it is recorded once. True if something was written."""
    meta = involved.get("metadata") or {}
    namespace = namespace_of(involved) or "default"
    if cp.store.get(NAMESPACES.key, "", namespace) is None:
        return False
    key = (meta.get("uid"), reason, message, field_path)
    seen = cp.event_index.get(key)
    existing = cp.store.get(EVENTS.key, namespace, seen[0]) if seen else None
    if existing is not None:
        if not repeat or time.monotonic() - seen[1] < REPEAT_EVERY:
            return False
        new = copy.deepcopy(existing.obj)
        new["count"] = int(new.get("count", 1)) + 1
        new["lastTimestamp"] = timestamp()
        cp.event_index[key] = (seen[0], time.monotonic())
        return cp.update(EVENTS, existing.obj, new, manager=component)
    at = now()
    name = f"{meta.get('name')}.{int(at.timestamp() * 1e9):x}"
    while cp.store.get(EVENTS.key, namespace, name) is not None:
        name = f"{name[:-1]}{(int(name[-1], 16) + 1) % 16:x}"
    involved_ref = {
        "kind": involved.get("kind"),
        "namespace": namespace_of(involved) or None,
        "name": meta.get("name"),
        "uid": meta.get("uid"),
        "apiVersion": involved.get("apiVersion"),
        "resourceVersion": meta.get("resourceVersion"),
        "fieldPath": field_path,
    }
    source = {"component": component, **({"host": host} if host else {})}
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": namespace},
        "involvedObject": {k: v for k, v in involved_ref.items() if v is not None},
        "reason": reason,
        "message": message,
        "source": source,
        "firstTimestamp": timestamp(at),
        "lastTimestamp": timestamp(at),
        "count": 1,
        "type": type_,
        "reportingComponent": component,
        "reportingInstance": host or "",
    }
    created = cp.create(EVENTS, event, manager=component)
    if created is not None:
        cp.event_index[key] = (name, time.monotonic())
    return created is not None

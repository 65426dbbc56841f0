"""Small helpers every part of the stand-in uses: timestamps, generated names, object metadata access."""

from __future__ import annotations

import datetime
import hashlib
import json
import secrets
import uuid
from typing import Any

#: The alphabet kube's `rand.String` and `SafeEncodeString` use (no vowels, no look-alikes).
KUBE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def timestamp(at: datetime.datetime | None = None) -> str:
    """metav1.Time: RFC 3339 with second precision."""
    return (at or now()).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_uid() -> str:
    return str(uuid.uuid4())


def random_suffix(length: int = 5) -> str:
    return "".join(secrets.choice(KUBE_ALPHABET) for _ in range(length))


def stable_hash(value: Any, length: int = 10) -> str:
    """A short hash of a JSON value in kube's alphabet, like a pod-template-hash."""
    digest = hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).digest()
    return "".join(KUBE_ALPHABET[b % len(KUBE_ALPHABET)] for b in digest[:length])


def metadata(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = obj["metadata"] = {}
    return meta


def name_of(obj: dict[str, Any]) -> str:
    return (obj.get("metadata") or {}).get("name") or ""


def namespace_of(obj: dict[str, Any]) -> str:
    return (obj.get("metadata") or {}).get("namespace") or ""


def uid_of(obj: dict[str, Any]) -> str:
    return (obj.get("metadata") or {}).get("uid") or ""


def labels_of(obj: dict[str, Any]) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


def finalizers_of(obj: dict[str, Any]) -> list[str]:
    return list((obj.get("metadata") or {}).get("finalizers") or [])


def deleting(obj: dict[str, Any]) -> bool:
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


def controller_uid(obj: dict[str, Any]) -> str | None:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref.get("uid")
    return None


def dig(obj: Any, *path: str | int, default: Any = None) -> Any:
    """obj[path[0]][path[1]]..., or `default` where something is missing."""
    for key in path:
        if isinstance(obj, dict) and isinstance(key, str) and key in obj:
            obj = obj[key]
        elif isinstance(obj, list) and isinstance(key, int) and -len(obj) <= key < len(obj):
            obj = obj[key]
        else:
            return default
    return obj


def owner_reference(api_version: str, kind: str, obj: dict[str, Any], controller: bool = True) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": name_of(obj),
        "uid": uid_of(obj),
        "controller": controller,
        "blockOwnerDeletion": True,
    }


def set_condition(conditions: list[dict[str, Any]], new: dict[str, Any], *, update_time: bool = False) -> list[dict[str, Any]]:
    """`conditions` with `new` in place of its type: lastTransitionTime kept unless status changed.

    With update_time, a `lastUpdateTime` is kept too unless reason or message changed (Deployment conditions).
    Returns a new list; the caller compares it with the old one to see whether anything changed.
    """
    out, found = [], False
    for cond in conditions:
        if cond.get("type") != new["type"]:
            out.append(cond)
            continue
        found = True
        merged = dict(new)
        same_status = cond.get("status") == new["status"]
        if same_status and cond.get("lastTransitionTime"):
            merged["lastTransitionTime"] = cond["lastTransitionTime"]
        if update_time:
            unchanged = same_status and cond.get("reason") == new.get("reason") and cond.get("message") == new.get("message")
            if unchanged and cond.get("lastUpdateTime"):
                merged["lastUpdateTime"] = cond["lastUpdateTime"]
        out.append(merged)
    if not found:
        out.append(dict(new))
    return out


def condition(obj: dict[str, Any], type_: str) -> dict[str, Any] | None:
    for cond in dig(obj, "status", "conditions", default=[]) or []:
        if cond.get("type") == type_:
            return cond
    return None


def condition_true(obj: dict[str, Any], type_: str) -> bool:
    cond = condition(obj, type_)
    return bool(cond and cond.get("status") == "True")

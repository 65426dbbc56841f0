"""CustomResourceDefinitions: their validation, the naming/establishing controller, and their deletion.

A new CRD gets the `customresourcecleanup.apiextensions.k8s.io` finalizer and `status.storedVersions`; after
the `k8s.crd_established` delay the controller accepts its names and marks it NamesAccepted and Established, as
kube-apiserver's apiextensions controllers do. Only then are its resources in discovery and served. Deleting a
CRD marks it Terminating, deletes all its custom objects (waiting for their finalizers, like the real server),
then removes the finalizer, and the CRD goes.
"""

from __future__ import annotations

import copy
import time
from typing import TYPE_CHECKING, Any

from .. import lifecycle
from . import resources
from .builtins import DNS1123_LABEL, DNS1123_SUBDOMAIN, _full
from .errors import FieldError, invalid, not_supported, required
from .meta import deleting, dig, finalizers_of, name_of, set_condition, timestamp, uid_of

if TYPE_CHECKING:
    from .controlplane import ControlPlane

CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"


def storage_version(crd: dict[str, Any]) -> str | None:
    for v in dig(crd, "spec", "versions", default=[]) or []:
        if v.get("storage"):
            return v.get("name")
    return None


def schema_for(crd: dict[str, Any] | None, version: str) -> dict[str, Any] | None:
    for v in dig(crd or {}, "spec", "versions", default=[]) or []:
        if v.get("name") == version:
            return dig(v, "schema", "openAPIV3Schema")
    return None


def validate(crd: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return [required("spec")]
    errors: list[FieldError] = []
    group = spec.get("group")
    names = spec.get("names") if isinstance(spec.get("names"), dict) else {}
    if not group:
        errors.append(required("spec.group"))
    elif "." not in group:
        errors.append(invalid("spec.group", group, "should be a domain with at least one dot"))
    elif not _full(DNS1123_SUBDOMAIN, group):
        errors.append(invalid("spec.group", group, "a lowercase RFC 1123 subdomain must consist of lower case "
                              "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"))
    plural, kind = names.get("plural"), names.get("kind")
    if not plural:
        errors.append(required("spec.names.plural"))
    elif not _full(DNS1123_LABEL, plural):
        errors.append(invalid("spec.names.plural", plural, "a lowercase RFC 1123 label must consist of lower case "
                              "alphanumeric characters or '-', and must start and end with an alphanumeric character"))
    if not kind:
        errors.append(required("spec.names.kind"))
    elif names.get("listKind") == kind:
        errors.append(invalid("spec.names.listKind", kind, "kind and listKind may not be the same"))
    if plural and group and name_of(crd) != f"{plural}.{group}":
        errors.append(invalid("metadata.name", name_of(crd), 'must be spec.names.plural+"."+spec.group'))
    scope = spec.get("scope")
    if not scope:
        errors.append(required("spec.scope"))
    elif scope not in ("Cluster", "Namespaced"):
        errors.append(not_supported("spec.scope", scope, ["Cluster", "Namespaced"]))
    versions = spec.get("versions") if isinstance(spec.get("versions"), list) else []
    seen = set()
    for i, v in enumerate(versions):
        where = f"spec.versions[{i}]"
        name = v.get("name") if isinstance(v, dict) else None
        if not name:
            errors.append(required(f"{where}.name"))
        elif name in seen:
            errors.append(FieldError("FieldValueDuplicate", f"{where}.name", name))
        else:
            seen.add(name)
        schema = dig(v, "schema", "openAPIV3Schema")
        if not isinstance(schema, dict):
            errors.append(required(f"{where}.schema.openAPIV3Schema", "schemas are required"))
        elif schema.get("type") != "object":
            if not schema.get("type"):
                errors.append(required(f"{where}.schema.openAPIV3Schema.type", "must not be empty at the root"))
            else:
                errors.append(not_supported(f"{where}.schema.openAPIV3Schema.type", schema["type"], ["object"]))
    storage = [v for v in versions if isinstance(v, dict) and v.get("storage")]
    if len(storage) != 1:
        errors.append(invalid("spec.versions", [v.get("name") for v in versions if isinstance(v, dict)],
                              "must have exactly one version marked as storage version"))
    if not any(isinstance(v, dict) and v.get("served") for v in versions) and versions:
        errors.append(invalid("spec.versions", [v.get("name") for v in versions if isinstance(v, dict)],
                              "must have at least one version marked as served"))
    if old is not None:
        old_spec = old.get("spec") or {}
        for key in ("group", "scope"):
            if old_spec.get(key) and spec.get(key) != old_spec.get(key):
                errors.append(invalid(f"spec.{key}", spec.get(key), "field is immutable"))
        stored = dig(crd, "status", "storedVersions", default=[]) or []
        for i, v in enumerate(stored):
            if v not in seen:
                errors.append(invalid(f"status.storedVersions[{i}]", v, "must appear in spec.versions"))
    return errors


def prepare(crd: dict[str, Any], old: dict[str, Any] | None) -> None:
    """What the CRD strategy sets on create and update: the cleanup finalizer, the initial status, and the
    storage version added to status.storedVersions."""
    storage = storage_version(crd)
    if old is None:
        meta = crd["metadata"]
        if CLEANUP_FINALIZER not in (meta.get("finalizers") or []):
            meta["finalizers"] = (meta.get("finalizers") or []) + [CLEANUP_FINALIZER]
        crd["status"] = {"acceptedNames": {"kind": "", "plural": ""}, "storedVersions": [storage] if storage else []}
    else:
        status = crd.setdefault("status", {})
        stored = list(status.get("storedVersions") or [])
        if storage and storage not in stored:
            stored.append(storage)
        status["storedVersions"] = stored


def _accepted(spec: dict[str, Any]) -> dict[str, Any]:
    names = copy.deepcopy(spec.get("names") or {})
    if names.get("kind"):
        names.setdefault("singular", names["kind"].lower())
        names.setdefault("listKind", names["kind"] + "List")
    return names


def reconcile(cp: "ControlPlane") -> bool:
    """Establishes CRDs whose delay has passed, keeps accepted names in step, and finishes deletions."""
    changed = False
    for stored in cp.store.list(resources.CRDS.key):
        crd = stored.obj
        uid = uid_of(crd)
        if deleting(crd):
            changed |= _terminate(cp, crd)
            continue
        status = crd.get("status") or {}
        accepted = _accepted(crd.get("spec") or {})
        if not resources.established(crd):
            due = cp.deadlines.setdefault(("crd", uid), lifecycle.deadline("k8s.crd_established"))
            if time.monotonic() < due:
                cp.wake_at(due)
                continue
            now = timestamp()
            conditions = set_condition(status.get("conditions") or [], {
                "type": "NamesAccepted", "status": "True", "lastTransitionTime": now,
                "reason": "NoConflicts", "message": "no conflicts found"})
            conditions = set_condition(conditions, {
                "type": "Established", "status": "True", "lastTransitionTime": now,
                "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"})
            changed |= cp.write_status(resources.CRDS, crd, {**status, "acceptedNames": accepted, "conditions": conditions},
                                       manager="kube-apiserver")
        elif status.get("acceptedNames") != accepted:
            changed |= cp.write_status(resources.CRDS, crd, {**status, "acceptedNames": accepted}, manager="kube-apiserver")
    return changed


def _terminate(cp: "ControlPlane", crd: dict[str, Any]) -> bool:
    if CLEANUP_FINALIZER not in finalizers_of(crd):
        return False
    changed = False
    status = crd.get("status") or {}
    conditions = set_condition(status.get("conditions") or [], {
        "type": "Terminating", "status": "True", "lastTransitionTime": timestamp(),
        "reason": "InstanceDeletionInProgress", "message": "CustomResource deletion is in progress"})
    if conditions != status.get("conditions"):
        changed |= cp.write_status(resources.CRDS, crd, {**status, "conditions": conditions}, manager="kube-apiserver")
    group, plural = dig(crd, "spec", "group"), dig(crd, "status", "acceptedNames", "plural") or dig(crd, "spec", "names", "plural")
    remaining = cp.store.list((group, plural))
    for stored in remaining:
        if not deleting(stored.obj):
            changed |= cp.delete_object((group, plural), stored.obj, "Background")
    if not cp.store.list((group, plural)):
        changed |= cp.remove_finalizer(resources.CRDS.key, name_of(crd), "", CLEANUP_FINALIZER, manager="kube-apiserver")
    return changed

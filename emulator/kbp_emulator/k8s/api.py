"""The verbs: get, list, create, replace (PUT), patch (apply, merge, JSON, strategic), delete, deletecollection.

Every write goes through `write()`, the stand-in's registry pipeline: server-set metadata (uid,
creationTimestamp, generation, resourceVersion), status kept apart from the main resource, defaulting (built-in
strategies, CRD schema defaults and pruning), validation, field managers, then the store. A write that changes
nothing is not stored (the resourceVersion does not move), as in kube-apiserver. An update that leaves an object
being deleted without finalizers removes it.

Callers hold the control plane's lock.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import jsonpatch
import yaml

from . import apply as ssa
from . import builtins, crds, errors, schema
from .errors import FieldError
from .meta import deleting, finalizers_of, name_of, new_uid, random_suffix, timestamp
from .resources import NAMESPACES, ResourceType
from .selectors import fields_match, matches, parse_field_selector, parse_label_selector
from .store import Stored

if TYPE_CHECKING:
    from .controlplane import ControlPlane

APPLY = "application/apply-patch+yaml"
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
PATCH_TYPES = [JSON_PATCH, MERGE, STRATEGIC, APPLY]
FOREGROUND = "foregroundDeletion"
#: The NamespaceLifecycle admission plugin refuses to delete these.
PROTECTED_NAMESPACES = ("default", "kube-system", "kube-public")


@dataclass
class Options:
    """Query parameters of a write."""

    manager: str = ""
    dry_run: bool = False
    force: bool = False


# --- reading ----------------------------------------------------------------------------------------------------


def render(rt: ResourceType, version: str, stored: Stored) -> dict[str, Any]:
    obj = copy.deepcopy(stored.obj)
    out: dict[str, Any] = {"apiVersion": rt.api_version(version), "kind": rt.kind}
    meta = obj.pop("metadata", {})
    if stored.managed:
        meta["managedFields"] = ssa.render_managed(stored.managed)
    out["metadata"] = meta
    for key, value in obj.items():
        if key not in ("apiVersion", "kind"):
            out[key] = value
    return out


def _get(cp: "ControlPlane", rt: ResourceType, ns: str, name: str) -> Stored:
    stored = cp.store.get(rt.key, ns, name)
    if stored is None:
        raise errors.not_found(rt.plural, rt.group, name)
    return stored


def get(cp: "ControlPlane", rt: ResourceType, version: str, ns: str, name: str) -> dict[str, Any]:
    return render(rt, version, _get(cp, rt, ns, name))


def list_objects(
    cp: "ControlPlane", rt: ResourceType, version: str, ns: str | None, label_selector: str, field_selector: str
) -> dict[str, Any]:
    labels = parse_label_selector(label_selector)
    fields = parse_field_selector(field_selector, rt.plural)
    items = [
        render(rt, version, s)
        for s in cp.store.list(rt.key, ns if rt.namespaced else None)
        if matches(labels, (s.obj.get("metadata") or {}).get("labels") or {}) and fields_match(fields, s.obj)
    ]
    return {
        "kind": rt.list_kind,
        "apiVersion": rt.api_version(version),
        "metadata": {"resourceVersion": str(cp.store.revision)},
        "items": items,
    }


# --- the write pipeline -----------------------------------------------------------------------------------------


def _parts(rt: ResourceType, version: str, sub: str, obj: dict[str, Any], old: dict[str, Any] | None) -> set[str]:
    """Top-level fields a write may change (and own): status only on /status; everything but status on the main
    resource of a kind with a status subresource."""
    if sub == "status":
        return {"status"}
    keys = set(obj) | set(old or {}) | {"metadata"}
    keys -= {"apiVersion", "kind"}
    if rt.has_status(version):
        keys.discard("status")
    return keys


def _content(obj: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in ("resourceVersion", "managedFields")}
    return {**obj, "metadata": meta}


def _check_namespace(cp: "ControlPlane", rt: ResourceType, ns: str, name: str) -> None:
    if not rt.namespaced:
        return
    holder = cp.store.get(NAMESPACES.key, "", ns)
    if holder is None:
        raise errors.not_found("namespaces", "", ns)
    if deleting(holder.obj):
        raise errors.ApiError(
            403,
            "Forbidden",
            f'{rt.resource} "{name}" is forbidden: unable to create new content in namespace {ns} because it is '
            "being terminated",
            {"name": name, **({"group": rt.group} if rt.group else {}), "kind": rt.plural,
             "causes": [{"reason": "NamespaceTerminating", "message": f"namespace {ns} is being terminated",
                         "field": "metadata.namespace"}]},
        )


def write(
    cp: "ControlPlane",
    rt: ResourceType,
    version: str,
    old: Stored | None,
    new_obj: dict[str, Any],
    sub: str,
    options: Options,
    operation: str = "Update",
    applied: tuple[set[Any], dict[Any, set[Any]]] | None = None,
) -> Stored:
    """Stores `new_obj` as the next state of `old` (None: a create). Returns what is stored (or would be, on a dry
    run); on a no-op, `old` itself."""
    old_obj = old.obj if old else None
    new = copy.deepcopy(new_obj)
    new["apiVersion"], new["kind"] = rt.api_version(rt.versions[0]), rt.kind
    meta = new.setdefault("metadata", {})
    if not isinstance(meta, dict):
        raise errors.bad_request("metadata must be an object")
    if old_obj is None:
        meta["uid"] = new_uid()
        meta["creationTimestamp"] = timestamp()
        for key in ("deletionTimestamp", "deletionGracePeriodSeconds", "generation"):
            meta.pop(key, None)
        if rt.generation:
            meta["generation"] = 1
    else:
        old_meta = old_obj["metadata"]
        for key in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation", "name"):
            if key in old_meta:
                meta[key] = old_meta[key]
            else:
                meta.pop(key, None)
    for key in ("managedFields", "selfLink", "resourceVersion"):
        meta.pop(key, None)
    if not rt.namespaced:
        meta.pop("namespace", None)

    has_status = rt.has_status(version)
    if sub == "status":
        base = copy.deepcopy(old_obj)
        base["metadata"] = {**old_obj["metadata"]}
        base["metadata"].pop("resourceVersion", None)
        if "status" in new:
            base["status"] = new["status"]
        else:
            base.pop("status", None)
        new, meta = base, base["metadata"]
    elif has_status:
        if old_obj is not None and "status" in old_obj:
            new["status"] = copy.deepcopy(old_obj["status"])
        else:
            new.pop("status", None)

    if not rt.crd:
        _drop_nulls(new)  # a null in a typed object is the zero value: absent
    problems: list[FieldError] = []
    if old_obj is None:
        problems += builtins.validate_name(rt, meta.get("name", ""))
    if rt.crd:
        crd = cp.store.get(("apiextensions.k8s.io", "customresourcedefinitions"), "", rt.crd)
        problems += schema.process(new, crds.schema_for(crd.obj if crd else None, version), tuple(sorted(_parts(rt, version, sub, new, old_obj))))
    else:
        builtins.default(rt, new, old_obj)
        if rt.key == ("apiextensions.k8s.io", "customresourcedefinitions"):
            if sub != "status":
                crds.prepare(new, old_obj)
            problems += crds.validate(new, old_obj)
        problems += builtins.validate(rt, new, old_obj)
    problems += builtins.validate_metadata(new)
    if old_obj is not None and deleting(old_obj):
        added = [f for f in finalizers_of(new) if f not in finalizers_of(old_obj)]
        if added:
            problems.append(errors.forbidden(
                "metadata.finalizers",
                "no new finalizers can be added if the object is being deleted, found new finalizers " + json.dumps(added),
            ))
    if problems:
        raise errors.invalid_object(rt.kind, rt.group, meta.get("name", ""), problems)

    if rt.generation and old_obj is not None:
        def spec_view(o: dict[str, Any]) -> dict[str, Any]:
            return {k: v for k, v in o.items() if k not in ("metadata", "status", "apiVersion", "kind")}

        if spec_view(new) != spec_view(old_obj):
            meta["generation"] = int(old_obj["metadata"].get("generation", 1)) + 1

    parts = _parts(rt, version, sub, new, old_obj)
    ident = (options.manager or "unknown", operation, "status" if sub == "status" else "")
    touched = old_obj is None or _content(new) != _content(old_obj)
    if applied is not None:
        fields, taken = applied
        managed = ssa.record(old.managed if old else [], new, ident, rt.api_version(version), timestamp(), fields,
                             replace=True, take_from_others=taken, touched=touched)
    else:
        fields = ssa.changed_paths(old_obj, new, parts)
        managed = ssa.record(old.managed if old else [], new, ident, rt.api_version(version), timestamp(), fields,
                             replace=False, take_from_others=fields, touched=touched)
    if old is not None and not touched and managed == old.managed:
        return old
    if options.dry_run:
        if old_obj is not None:
            meta["resourceVersion"] = old_obj["metadata"].get("resourceVersion")
        return Stored(new, managed)
    stored = Stored(new, managed)
    if old is not None and deleting(new) and not finalizers_of(new) and rt.key != NAMESPACES.key:
        cp.store.remove(rt.key, meta.get("namespace", ""), meta["name"])
        meta["resourceVersion"] = str(cp.store.revision)
        cp.wake()
        return stored
    cp.store.put(rt.key, stored)
    cp.wake()
    return stored


def _drop_nulls(value: Any) -> None:
    if isinstance(value, dict):
        for key in [k for k, v in value.items() if v is None]:
            del value[key]
        for item in value.values():
            _drop_nulls(item)
    elif isinstance(value, list):
        for item in value:
            _drop_nulls(item)


# --- create, replace, patch -------------------------------------------------------------------------------------


def _check_identity(rt: ResourceType, version: str, body: dict[str, Any], ns: str, name: str | None) -> None:
    api_version, kind = body.get("apiVersion"), body.get("kind")
    if api_version and api_version != rt.api_version(version):
        raise errors.bad_request(
            f"the API version in the data ({api_version}) does not match the expected API version ({rt.api_version(version)})"
        )
    if kind and kind != rt.kind:
        raise errors.bad_request(f"the kind in the data ({kind}) does not match the expected kind ({rt.kind})")
    meta = body.get("metadata") or {}
    if name is not None and meta.get("name") and meta["name"] != name:
        raise errors.bad_request(f"the name of the object ({meta['name']}) does not match the name on the URL ({name})")
    if rt.namespaced and meta.get("namespace") and meta["namespace"] != ns:
        raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the request")


def create(
    cp: "ControlPlane",
    rt: ResourceType,
    version: str,
    ns: str,
    body: Any,
    options: Options,
    operation: str = "Update",
    applied: tuple[set[Any], dict[Any, set[Any]]] | None = None,
) -> Stored:
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request must be a JSON object")
    _check_identity(rt, version, body, ns, None)
    body = copy.deepcopy(body)
    meta = body.setdefault("metadata", {})
    if not meta.get("name") and meta.get("generateName"):
        meta["name"] = meta["generateName"] + random_suffix()
    name = meta.get("name") or ""
    if rt.namespaced:
        meta["namespace"] = ns
    if not name:
        raise errors.invalid_object(rt.kind, rt.group, "", [errors.required("metadata.name", "name or generateName is required")])
    _check_namespace(cp, rt, ns, name)
    if rt.crd and rt.crd in cp.catalog().terminating_crds:
        raise errors.method_not_allowed("create not allowed while custom resource definition is terminating")
    if cp.store.get(rt.key, ns if rt.namespaced else "", name) is not None:
        raise errors.already_exists(rt.plural, rt.group, name)
    return write(cp, rt, version, None, body, "", options, operation, applied)


def replace(
    cp: "ControlPlane", rt: ResourceType, version: str, ns: str, name: str, sub: str, body: Any, options: Options
) -> Stored:
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request must be a JSON object")
    _check_identity(rt, version, body, ns, name)
    old = _get(cp, rt, ns, name)
    rv = (body.get("metadata") or {}).get("resourceVersion")
    if rv and rv != old.obj["metadata"]["resourceVersion"]:
        raise errors.stale(rt.plural, rt.group, name)
    if not rv and (rt.crd or rt.key == ("apiextensions.k8s.io", "customresourcedefinitions")):
        raise errors.invalid_object(rt.kind, rt.group, name, [
            errors.invalid("metadata.resourceVersion", errors.Raw("0x0"), "must be specified for an update")])
    return write(cp, rt, version, old, body, sub, options)


def _decode(raw: bytes, yaml_ok: bool) -> Any:
    try:
        return yaml.safe_load(raw) if yaml_ok else json.loads(raw or b"null")
    except (ValueError, yaml.YAMLError) as e:
        raise errors.bad_request(f"error decoding patch: {e}") from None


def patch(
    cp: "ControlPlane",
    rt: ResourceType,
    version: str,
    ns: str,
    name: str,
    sub: str,
    content_type: str,
    raw: bytes,
    options: Options,
) -> tuple[int, Stored]:
    """Returns (HTTP code, stored): 201 when an apply created the object."""
    if content_type == APPLY:
        return _apply(cp, rt, version, ns, name, sub, _decode(raw, True), options)
    if content_type not in (MERGE, STRATEGIC, JSON_PATCH):
        raise errors.unsupported_media_type(content_type, PATCH_TYPES)
    old = _get(cp, rt, ns, name)
    current = render(rt, version, old)
    current["metadata"].pop("managedFields", None)
    body = _decode(raw, False)
    if content_type == JSON_PATCH:
        if not isinstance(body, list):
            raise errors.bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
        try:
            new = jsonpatch.apply_patch(current, body)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as e:
            raise errors.ApiError(422, "Invalid", f"the server rejected our request due to an error in our request: {e}") from None
    else:
        if not isinstance(body, dict):
            raise errors.bad_request("json: cannot unmarshal array into Go value of type map[string]interface {}")
        new = ssa.merge_patch(current, body)
    if not isinstance(new, dict) or not isinstance(new.get("metadata"), dict):
        raise errors.bad_request("the patch must leave an object with metadata")
    rv = new["metadata"].get("resourceVersion")
    if rv and rv != old.obj["metadata"]["resourceVersion"]:
        raise errors.stale(rt.plural, rt.group, name)
    if new["metadata"].get("name") != name:
        raise errors.bad_request(f"the name of the object ({new['metadata'].get('name')}) does not match the name on the URL ({name})")
    return 200, write(cp, rt, version, old, new, sub, options)


_APPLY_IGNORED = ("uid", "generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
                  "managedFields", "selfLink")


def _apply(
    cp: "ControlPlane", rt: ResourceType, version: str, ns: str, name: str, sub: str, config: Any, options: Options
) -> tuple[int, Stored]:
    if not options.manager:
        raise errors.invalid_object("PatchOptions", "meta.k8s.io", "", [errors.required("fieldManager", "is required for apply patch")])
    if not isinstance(config, dict):
        raise errors.bad_request("error decoding YAML: the apply configuration must be an object")
    if not config.get("apiVersion") or not config.get("kind"):
        raise errors.bad_request("invalid object type: apiVersion and kind must be set in an apply configuration")
    _check_identity(rt, version, config, ns, name)
    config = copy.deepcopy(config)
    meta = config.setdefault("metadata", {})
    if not isinstance(meta, dict):
        raise errors.bad_request("metadata must be an object")
    meta["name"] = name
    if rt.namespaced:
        meta["namespace"] = ns
    rv = meta.pop("resourceVersion", None)
    for key in _APPLY_IGNORED:
        meta.pop(key, None)
    old = cp.store.get(rt.key, ns if rt.namespaced else "", name)
    if rv and (old is None or rv != old.obj["metadata"]["resourceVersion"]):
        raise errors.stale(rt.plural, rt.group, name)
    if old is None:
        if sub:
            raise errors.not_found(rt.plural, rt.group, name)
        parts = _parts(rt, version, "", config, None)
        fields = ssa.paths(ssa.owned_view(config, parts))
        body = {k: v for k, v in config.items() if k in parts or k in ("apiVersion", "kind", "metadata")}
        stored = create(cp, rt, version, ns, body, options, operation="Apply", applied=(fields, {}))
        return 201, stored
    current = copy.deepcopy(old.obj)
    parts = _parts(rt, version, sub, config, current)
    new, fields, taken = ssa.server_side_apply(
        current, old.managed, config, options.manager, "status" if sub == "status" else "", parts, options.force,
        rt.api_version(version), (rt.plural, rt.group, name),
    )
    return 200, write(cp, rt, version, old, new, sub, options, operation="Apply", applied=(fields, taken))


# --- delete -----------------------------------------------------------------------------------------------------


def _policy(options: dict[str, Any]) -> str:
    policy = options.get("propagationPolicy")
    if policy:
        if policy not in ("Orphan", "Background", "Foreground"):
            raise errors.invalid_object("DeleteOptions", "meta.k8s.io", "", [
                errors.not_supported("propagationPolicy", policy, ["Foreground", "Background", "Orphan", "nil"])])
        return policy
    if options.get("orphanDependents") is True:
        return "Orphan"
    return "Background"


def delete(
    cp: "ControlPlane", rt: ResourceType, version: str, ns: str, name: str, options: dict[str, Any], dry_run: bool
) -> dict[str, Any]:
    """DELETE: the object goes at once unless it has finalizers (or Foreground adds one); then it only gets a
    deletionTimestamp and the answer is the object."""
    old = _get(cp, rt, ns, name)
    pre = options.get("preconditions") or {}
    meta = old.obj["metadata"]
    if pre.get("uid") and pre["uid"] != meta.get("uid"):
        raise errors.conflict(rt.plural, rt.group, name,
                              f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: {meta.get('uid')}")
    if pre.get("resourceVersion") and pre["resourceVersion"] != meta.get("resourceVersion"):
        raise errors.conflict(rt.plural, rt.group, name,
                              f"Precondition failed: ResourceVersion in precondition: {pre['resourceVersion']}, "
                              f"ResourceVersion in object meta: {meta.get('resourceVersion')}")
    if rt.key == NAMESPACES.key and name in PROTECTED_NAMESPACES:
        raise errors.ApiError(403, "Forbidden", f'namespaces "{name}" is forbidden: this namespace may not be deleted',
                              {"name": name, "kind": "namespaces"})
    policy = _policy(options)
    stored = begin_deletion(cp, rt, old, policy, dry_run)
    if stored is None:
        return render(rt, version, old) if rt.return_deleted else errors.success(rt.plural, rt.group, name, meta.get("uid", ""))
    return render(rt, version, stored)


def begin_deletion(cp: "ControlPlane", rt: ResourceType, old: Stored, policy: str, dry_run: bool = False) -> Stored | None:
    """Deletes `old`, or marks it for deletion. Returns the object still stored, or None if it is gone."""
    obj = old.obj
    finalizers = finalizers_of(obj)
    if deleting(obj):
        if policy == "Foreground" and FOREGROUND not in finalizers and not dry_run:
            new = copy.deepcopy(obj)
            new["metadata"]["finalizers"] = finalizers + [FOREGROUND]
            return _store_raw(cp, rt, old, new)
        return old
    if policy == "Foreground" and FOREGROUND not in finalizers:
        finalizers.append(FOREGROUND)
    if policy == "Orphan" and not dry_run:
        orphan_dependents(cp, obj)
    if rt.key == NAMESPACES.key or finalizers:
        new = copy.deepcopy(obj)
        new["metadata"]["deletionTimestamp"] = timestamp()
        new["metadata"]["deletionGracePeriodSeconds"] = 0
        if finalizers:
            new["metadata"]["finalizers"] = finalizers
        if rt.key == NAMESPACES.key:
            new.setdefault("status", {})["phase"] = "Terminating"
        if dry_run:
            return Stored(new, old.managed)
        return _store_raw(cp, rt, old, new)
    if not dry_run:
        cp.store.remove(rt.key, obj["metadata"].get("namespace", ""), name_of(obj))
        cp.wake()
    return None


def _store_raw(cp: "ControlPlane", rt: ResourceType, old: Stored, new: dict[str, Any]) -> Stored:
    stored = Stored(new, old.managed)
    cp.store.put(rt.key, stored)
    cp.wake()
    return stored


def orphan_dependents(cp: "ControlPlane", owner: dict[str, Any]) -> None:
    uid = owner["metadata"].get("uid")
    for key, stored in cp.store.all():
        refs = stored.obj["metadata"].get("ownerReferences") or []
        kept = [r for r in refs if r.get("uid") != uid]
        if len(kept) != len(refs):
            new = copy.deepcopy(stored.obj)
            if kept:
                new["metadata"]["ownerReferences"] = kept
            else:
                new["metadata"].pop("ownerReferences", None)
            rt = cp.catalog().by_key(*key)
            if rt is not None:
                _store_raw(cp, rt, stored, new)


def delete_collection(
    cp: "ControlPlane", rt: ResourceType, version: str, ns: str | None, label_selector: str, field_selector: str,
    options: dict[str, Any], dry_run: bool,
) -> dict[str, Any]:
    listed = list_objects(cp, rt, version, ns, label_selector, field_selector)
    policy = _policy(options)
    items = []
    for item in listed["items"]:
        meta = item["metadata"]
        old = cp.store.get(rt.key, meta.get("namespace", ""), meta["name"])
        if old is None:
            continue
        stored = begin_deletion(cp, rt, old, policy, dry_run)
        items.append(render(rt, version, stored or old))
    return {**listed, "items": items}

"""Server-side apply, merge patches and field ownership (`metadata.managedFields`).

The model, simpler than structured-merge-diff but with the same outcomes for the usual cases:

- A field is a *path* of map keys down to a leaf (a scalar, a list, or an empty map). Lists are atomic: a
  manager owns a list whole and an apply replaces it whole. The one exception is `metadata.finalizers`, a set:
  each finalizer is its own path, so a controller's finalizer survives another manager's apply.
- Each manager entry (manager, operation Apply/Update, subresource) owns a set of paths.
- An apply sets the fields of its configuration, removes the fields this manager owned before but no longer
  applies (unless another manager owns them too), and keeps everything else. Setting a field another manager owns
  to a different value is a conflict (409) unless `force=true`, which takes the field over.
- An update (PUT, merge/JSON patch, a controller's write) takes ownership of the fields whose values it changed.

`fieldsV1` is rendered from the paths (`{"f:spec": {"f:replicas": {}}}`, `v:"x"` for finalizers); it lacks the
`.`, `k:` and `i:` entries the real server writes.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from .errors import conflict
from .store import Manager, Path

#: Never owned: identity and server-set fields.
IGNORED_META = (
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
    "generateName",
)
SET_LISTS = {("metadata", "finalizers")}


def owned_view(obj: dict[str, Any], parts: set[str] | None = None) -> dict[str, Any]:
    """`obj` without the fields nobody owns (apiVersion, kind, identity metadata), limited to top-level `parts`."""
    out: dict[str, Any] = {}
    for key, value in obj.items():
        if key in ("apiVersion", "kind"):
            continue
        if parts is not None and key not in parts:
            continue
        if key == "metadata" and isinstance(value, dict):
            meta = {k: v for k, v in value.items() if k not in IGNORED_META}
            if meta:
                out["metadata"] = meta
            continue
        out[key] = value
    return out


def paths(value: Any, prefix: Path = ()) -> set[Path]:
    """The leaf paths of a JSON object (lists atomic, finalizers a set)."""
    out: set[Path] = set()
    if not isinstance(value, dict):
        return out
    for key, item in value.items():
        path = prefix + (key,)
        if path in SET_LISTS and isinstance(item, list):
            out.update(path + (("v", v),) for v in item if isinstance(v, str))
        elif isinstance(item, dict) and item:
            out |= paths(item, path)
        else:
            out.add(path)
    return out


_MISSING = object()


def get_path(obj: Any, path: Path) -> Any:
    for seg in path:
        if isinstance(seg, tuple):  # a set item
            return seg[1] if isinstance(obj, list) and seg[1] in obj else _MISSING
        if not isinstance(obj, dict) or seg not in obj:
            return _MISSING
        obj = obj[seg]
    return obj


def exists(obj: Any, path: Path) -> bool:
    return get_path(obj, path) is not _MISSING


def remove_path(obj: dict[str, Any], path: Path, keep: dict[str, Any]) -> None:
    """Deletes `path` from `obj`, then parents left empty unless the configuration `keep` has them."""
    parents: list[tuple[dict[str, Any], Any]] = []
    node: Any = obj
    for seg in path[:-1]:
        if not isinstance(node, dict) or seg not in node:
            return
        parents.append((node, seg))
        node = node[seg]
    last = path[-1]
    if isinstance(last, tuple):
        if isinstance(node, list) and last[1] in node:
            node.remove(last[1])
            if node or not parents:
                return
            holder, key = parents.pop()
            del holder[key]
            node = holder
        else:
            return
    elif isinstance(node, dict) and last in node:
        del node[last]
    else:
        return
    while parents:
        holder, key = parents.pop()
        if holder[key] == {} and not exists(keep, tuple(p for _, p in parents) + (key,)):
            del holder[key]
        else:
            break


class PathIndex:
    """A set of paths that answers "which of you overlap this path" (equal, ancestor or descendant) without
    comparing every pair: big objects such as CRDs have thousands of paths."""

    def __init__(self, paths: set[Path]):
        self.paths = set(paths)
        self.below: dict[Path, list[Path]] = {}
        for path in self.paths:
            for i in range(1, len(path) + 1):
                self.below.setdefault(path[:i], []).append(path)

    def overlapping(self, path: Path) -> list[Path]:
        found = [path[:i] for i in range(1, len(path)) if path[:i] in self.paths]
        return found + self.below.get(path, [])

    def overlaps(self, path: Path) -> bool:
        return path in self.below or any(path[:i] in self.paths for i in range(1, len(path)))


def merge_config(current: dict[str, Any], config: dict[str, Any], prefix: Path = ()) -> None:
    """Deep-merges an apply configuration into `current`: maps recursively, lists replaced, finalizers unioned,
    an explicit null removes the field."""
    for key, value in config.items():
        path = prefix + (key,)
        if value is None:
            current.pop(key, None)
        elif isinstance(value, dict) and isinstance(current.get(key), dict):
            merge_config(current[key], value, path)
        elif path in SET_LISTS and isinstance(value, list) and isinstance(current.get(key), list):
            current[key] = current[key] + [v for v in value if v not in current[key]]
        else:
            current[key] = copy.deepcopy(value)


def format_path(path: Path) -> str:
    out = ""
    for seg in path:
        out += f'[="{seg[1]}"]' if isinstance(seg, tuple) else f".{seg}"
    return out


def server_side_apply(
    current: dict[str, Any],
    managed: list[Manager],
    config: dict[str, Any],
    manager: str,
    subresource: str,
    parts: set[str],
    force: bool,
    api_version: str,
    resource: tuple[str, str, str],
) -> tuple[dict[str, Any], set[Path], dict[tuple[str, str, str], set[Path]]]:
    """Applies `config` (already stripped to what the manager may set) on a copy of `current`.

    Returns (new object, the applying manager's paths, paths to take away from other managers).
    Raises a 409 Conflict for fields others own with another value, unless `force`.
    """
    plural, group, name = resource
    owned = owned_view(config, parts)
    new_paths = paths(owned)
    mine = next((m for m in managed if m.ident == (manager, "Apply", subresource)), None)
    previous = mine.fields if mine else set()
    others = [m for m in managed if m is not mine]

    conflicts: list[tuple[Path, Manager]] = []
    taken: dict[tuple[str, str, str], set[Path]] = {}
    indexes = [(other, PathIndex(other.fields)) for other in others]
    for path in sorted(new_paths, key=str):
        if get_path(current, path) == get_path(owned, path):
            continue  # same value: shared ownership
        for other, index in indexes:
            for theirs in index.overlapping(path):
                if force:
                    taken.setdefault(other.ident, set()).add(theirs)
                else:
                    conflicts.append((theirs, other))
    if conflicts:
        seen: dict[tuple[str, str], list[str]] = {}
        for path, other in conflicts:
            seen.setdefault((other.manager, other.api_version), [])
            if format_path(path) not in seen[(other.manager, other.api_version)]:
                seen[(other.manager, other.api_version)].append(format_path(path))
        count = sum(len(v) for v in seen.values())
        lines, causes = [], []
        for (who, version), fields in seen.items():
            for f in fields:
                causes.append({"reason": "FieldManagerConflict", "message": f'conflict with "{who}" using {version}', "field": f})
            if count == 1:
                lines.append(f'conflict with "{who}" using {version}: {fields[0]}')
            else:
                lines.append(f'conflicts with "{who}" using {version}:\n' + "\n".join(f"- {f}" for f in fields))
        noun = "conflict" if count == 1 else "conflicts"
        raise conflict(plural, group, name, f"Apply failed with {count} {noun}: " + "\n".join(lines), causes)

    result = copy.deepcopy(current)
    still_owned = PathIndex({p for m in others for p in m.fields if m.ident not in taken or p not in taken[m.ident]})
    for path in sorted(previous - new_paths, key=lambda p: -len(p)):
        if still_owned.overlaps(path):
            continue
        if path and path[0] not in parts:
            continue
        remove_path(result, path, owned)
    merge_config(result, {k: v for k, v in config.items() if k in parts or k == "metadata"}, ())
    return result, new_paths, taken


def changed_paths(old: dict[str, Any] | None, new: dict[str, Any], parts: set[str] | None) -> set[Path]:
    """Paths whose value an update set (new or different), limited to top-level `parts`."""
    view_new = owned_view(new, parts)
    view_old = owned_view(old or {}, parts)
    return {p for p in paths(view_new) if get_path(view_old, p) != get_path(view_new, p)}


def record(
    managed: list[Manager],
    obj: dict[str, Any],
    ident: tuple[str, str, str],
    api_version: str,
    time: str,
    fields: set[Path],
    *,
    replace: bool,
    take_from_others: set[Path] | dict[tuple[str, str, str], set[Path]],
    touched: bool,
) -> list[Manager]:
    """The managers after a write: `ident` gets `fields` (replacing its set for an apply, adding for an update),
    others lose what was taken, and every set is trimmed to fields that still exist. Empty entries go. The entry's
    time moves only when its fields or (`touched`) the object changed, so a no-op write stays a no-op."""
    out: list[Manager] = []
    entry: Manager | None = None
    take_index: PathIndex | None = None
    for m in managed:
        m = copy.deepcopy(m)
        if m.ident == ident:
            entry = m
        elif isinstance(take_from_others, dict):
            m.fields -= take_from_others.get(m.ident, set())
        elif take_from_others:
            index = take_index if take_index is not None else PathIndex(take_from_others)
            take_index = index
            m.fields = {p for p in m.fields if not index.overlaps(p)}
        out.append(m)
    if entry is None:
        entry = Manager(manager=ident[0], operation=ident[1], api_version=api_version, time=time, subresource=ident[2])
        out.append(entry)
    before = set(entry.fields)
    entry.fields = set(fields) if replace else entry.fields | fields
    if entry.fields != before or (touched and fields):
        entry.time, entry.api_version = time, api_version
    view = owned_view(obj)
    for m in out:
        m.fields = {p for p in m.fields if exists(view, p)}
    return [m for m in out if m.fields]


def fields_v1(fields: set[Path]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    for path in sorted(fields, key=str):
        node = root
        for seg in path:
            key = f"v:{json.dumps(seg[1])}" if isinstance(seg, tuple) else f"f:{seg}"
            node = node.setdefault(key, {})
    return root


def render_managed(managed: list[Manager]) -> list[dict[str, Any]]:
    out = []
    for m in managed:
        entry: dict[str, Any] = {
            "manager": m.manager,
            "operation": m.operation,
            "apiVersion": m.api_version,
            "time": m.time,
            "fieldsType": "FieldsV1",
            "fieldsV1": fields_v1(m.fields),
        }
        if m.subresource:
            entry["subresource"] = m.subresource
        out.append(entry)
    return out


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result

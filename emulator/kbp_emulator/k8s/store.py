"""One cluster's objects, in memory: what etcd holds behind a real kube-apiserver.

Objects are plain JSON dicts keyed by (group, plural) then (namespace, name); namespace is "" for cluster-scoped
ones. Every write bumps one counter that is the `resourceVersion` of the object written (and of lists), as etcd's
revision is. Each object carries its field managers next to it (`Stored.managed`); `metadata.managedFields` is
rendered from them when the object is read.

The store has no locking of its own: everything that touches it holds the control plane's lock.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Iterator

from .meta import name_of, namespace_of, uid_of

Key = tuple[str, str]  # (group, plural)
Path = tuple[Any, ...]


@dataclass
class Manager:
    """One metadata.managedFields entry: who set which fields, how and when."""

    manager: str
    operation: str  # Apply or Update
    api_version: str
    time: str
    subresource: str = ""
    fields: set[Path] = field(default_factory=set)

    @property
    def ident(self) -> tuple[str, str, str]:
        return (self.manager, self.operation, self.subresource)


@dataclass
class Stored:
    obj: dict[str, Any]
    managed: list[Manager] = field(default_factory=list)

    def copy(self) -> "Stored":
        return Stored(copy.deepcopy(self.obj), [copy.deepcopy(m) for m in self.managed])


class Store:
    def __init__(self) -> None:
        self.revision = 0
        self._objects: dict[Key, dict[tuple[str, str], Stored]] = {}
        self._by_uid: dict[str, tuple[Key, tuple[str, str]]] = {}

    def next_revision(self) -> str:
        self.revision += 1
        return str(self.revision)

    def get(self, key: Key, namespace: str, name: str) -> Stored | None:
        return self._objects.get(key, {}).get((namespace, name))

    def list(self, key: Key, namespace: str | None = None) -> list[Stored]:
        """Objects of one type, in etcd key order (namespace, then name); namespace None means all."""
        bucket = self._objects.get(key, {})
        items = [s for (ns, _), s in bucket.items() if namespace is None or ns == namespace]
        return sorted(items, key=lambda s: (namespace_of(s.obj), name_of(s.obj)))

    def put(self, key: Key, stored: Stored) -> None:
        """Stores `stored` (new or replacing the object of the same name) under a fresh resourceVersion."""
        stored.obj["metadata"]["resourceVersion"] = self.next_revision()
        ident = (namespace_of(stored.obj), name_of(stored.obj))
        self._objects.setdefault(key, {})[ident] = stored
        self._by_uid[uid_of(stored.obj)] = (key, ident)

    def remove(self, key: Key, namespace: str, name: str) -> Stored | None:
        stored = self._objects.get(key, {}).pop((namespace, name), None)
        if stored is not None:
            self._by_uid.pop(uid_of(stored.obj), None)
            self.next_revision()
        return stored

    def by_uid(self, uid: str) -> tuple[Key, Stored] | None:
        where = self._by_uid.get(uid)
        if where is None:
            return None
        key, ident = where
        stored = self._objects.get(key, {}).get(ident)
        return (key, stored) if stored is not None else None

    def keys(self) -> list[Key]:
        return [k for k, bucket in self._objects.items() if bucket]

    def all(self) -> Iterator[tuple[Key, Stored]]:
        """Every object (a snapshot: callers may write while iterating)."""
        for key, bucket in list(self._objects.items()):
            for stored in list(bucket.values()):
                yield key, stored

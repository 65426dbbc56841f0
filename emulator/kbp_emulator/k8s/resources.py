"""The resource types the stand-in serves: the built-in ones kbp touches, and those of Established CRDs.

A `ResourceType` is one (group, plural) with its served versions, preferred first. Objects are stored once per
(group, plural, namespace, name), whatever version wrote them; reading them in another served version only
changes `apiVersion` (a CRD's `None` conversion strategy, which is all the stand-in models).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .meta import condition_true, deleting, dig

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update")
STATUS_VERBS = ("get", "patch", "update")


@dataclass(frozen=True)
class ResourceType:
    group: str
    versions: tuple[str, ...]  # served, preferred first
    plural: str
    singular: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    status_versions: frozenset[str] = frozenset()  # versions with a /status subresource
    verbs: tuple[str, ...] = ALL_VERBS
    crd: str | None = None  # the defining CRD's name, for custom resources
    generation: bool = False  # metadata.generation is kept (bumped when anything but metadata/status changes)
    return_deleted: bool = False  # an immediate DELETE answers the object instead of a Status
    list_kind: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return (self.group, self.plural)

    @property
    def resource(self) -> str:
        """plural.group, as error messages name it."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def api_version(self, version: str | None = None) -> str:
        version = version or self.versions[0]
        return f"{self.group}/{version}" if self.group else version

    def has_status(self, version: str | None = None) -> bool:
        return (version or self.versions[0]) in self.status_versions


def _builtin(
    group: str,
    plural: str,
    kind: str,
    namespaced: bool,
    short: tuple[str, ...] = (),
    status: bool = False,
    categories: tuple[str, ...] = (),
    verbs: tuple[str, ...] = ALL_VERBS,
    generation: bool = False,
    return_deleted: bool = False,
) -> ResourceType:
    return ResourceType(
        group=group,
        versions=("v1",),
        plural=plural,
        singular=kind.lower(),
        kind=kind,
        namespaced=namespaced,
        short_names=short,
        categories=categories,
        status_versions=frozenset({"v1"}) if status else frozenset(),
        verbs=verbs,
        generation=generation,
        return_deleted=return_deleted,
        list_kind=kind + "List",
    )


BUILTINS: tuple[ResourceType, ...] = (
    _builtin("", "namespaces", "Namespace", False, ("ns",), status=True,
             verbs=("create", "delete", "get", "list", "patch", "update"), return_deleted=True),
    _builtin("", "serviceaccounts", "ServiceAccount", True, ("sa",)),
    _builtin("", "services", "Service", True, ("svc",), status=True, categories=("all",), return_deleted=True),
    _builtin("", "configmaps", "ConfigMap", True, ("cm",)),
    _builtin("", "secrets", "Secret", True),
    _builtin("", "pods", "Pod", True, ("po",), status=True, categories=("all",), return_deleted=True),
    _builtin("", "events", "Event", True, ("ev",)),
    _builtin("", "nodes", "Node", False, ("no",), status=True),
    _builtin("", "persistentvolumeclaims", "PersistentVolumeClaim", True, ("pvc",), status=True),
    _builtin("", "persistentvolumes", "PersistentVolume", False, ("pv",), status=True),
    _builtin("apps", "deployments", "Deployment", True, ("deploy",), status=True, categories=("all",), generation=True),
    _builtin("apps", "replicasets", "ReplicaSet", True, ("rs",), status=True, categories=("all",), generation=True),
    _builtin("networking.k8s.io", "ingresses", "Ingress", True, ("ing",), status=True, generation=True),
    _builtin("policy", "poddisruptionbudgets", "PodDisruptionBudget", True, ("pdb",), status=True, generation=True),
    _builtin("rbac.authorization.k8s.io", "clusterroles", "ClusterRole", False),
    _builtin("rbac.authorization.k8s.io", "clusterrolebindings", "ClusterRoleBinding", False),
    _builtin("rbac.authorization.k8s.io", "roles", "Role", True),
    _builtin("rbac.authorization.k8s.io", "rolebindings", "RoleBinding", True),
    _builtin("apiextensions.k8s.io", "customresourcedefinitions", "CustomResourceDefinition", False, ("crd", "crds"),
             status=True, categories=("api-extensions",), generation=True),
    _builtin("coordination.k8s.io", "leases", "Lease", True),
    _builtin("admissionregistration.k8s.io", "validatingwebhookconfigurations", "ValidatingWebhookConfiguration",
             False, categories=("api-extensions",), generation=True),
    _builtin("admissionregistration.k8s.io", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration",
             False, categories=("api-extensions",), generation=True),
)
#: Built-in groups in the order kube-apiserver lists them in /apis.
BUILTIN_GROUPS = (
    "apps",
    "networking.k8s.io",
    "rbac.authorization.k8s.io",
    "policy",
    "apiextensions.k8s.io",
    "coordination.k8s.io",
    "admissionregistration.k8s.io",
)
_BY_KEY = {t.key: t for t in BUILTINS}

NAMESPACES = _BY_KEY[("", "namespaces")]
SERVICEACCOUNTS = _BY_KEY[("", "serviceaccounts")]
PODS = _BY_KEY[("", "pods")]
EVENTS = _BY_KEY[("", "events")]
NODES = _BY_KEY[("", "nodes")]
PVCS = _BY_KEY[("", "persistentvolumeclaims")]
PVS = _BY_KEY[("", "persistentvolumes")]
DEPLOYMENTS = _BY_KEY[("apps", "deployments")]
REPLICASETS = _BY_KEY[("apps", "replicasets")]
CRDS = _BY_KEY[("apiextensions.k8s.io", "customresourcedefinitions")]


def builtin(group: str, plural: str) -> ResourceType | None:
    return _BY_KEY.get((group, plural))


_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key putting versions in kube's order: GA before beta before alpha, higher numbers first, then others."""
    m = _VERSION.match(version)
    if not m:
        return (3, 0, 0, version)
    major, stage, minor = int(m[1]), m[2], int(m[3] or 0)
    return ({None: 0, "beta": 1, "alpha": 2}[stage], -major, -minor, "")


def established(crd: dict[str, Any]) -> bool:
    return condition_true(crd, "Established")


def crd_type(crd: dict[str, Any]) -> ResourceType | None:
    """The resource type an Established CRD serves, or None if it serves nothing yet."""
    if not established(crd):
        return None
    spec = crd.get("spec") or {}
    names = (crd.get("status") or {}).get("acceptedNames") or spec.get("names") or {}
    versions = [v for v in spec.get("versions") or [] if v.get("served")]
    if not versions or not names.get("plural") or not names.get("kind"):
        return None
    ordered = sorted((v["name"] for v in versions), key=version_priority)
    return ResourceType(
        group=spec.get("group", ""),
        versions=tuple(ordered),
        plural=names["plural"],
        singular=names.get("singular") or names["kind"].lower(),
        kind=names["kind"],
        namespaced=spec.get("scope") == "Namespaced",
        short_names=tuple(names.get("shortNames") or ()),
        categories=tuple(names.get("categories") or ()),
        status_versions=frozenset(v["name"] for v in versions if dig(v, "subresources", "status") is not None),
        crd=(crd.get("metadata") or {}).get("name"),
        generation=True,
        list_kind=names.get("listKind") or names["kind"] + "List",
    )


@dataclass
class Catalog:
    """A snapshot of every type served right now: built-ins first, then one per Established CRD."""

    types: list[ResourceType] = field(default_factory=list)
    terminating_crds: set[str] = field(default_factory=set)

    @classmethod
    def build(cls, crds: list[dict[str, Any]]) -> "Catalog":
        catalog = cls(list(BUILTINS))
        taken = {t.key for t in BUILTINS}
        for crd in sorted(crds, key=lambda c: c["metadata"]["name"]):
            t = crd_type(crd)
            if t is None or t.key in taken:
                continue
            taken.add(t.key)
            catalog.types.append(t)
            if deleting(crd):
                catalog.terminating_crds.add(t.crd or "")
        return catalog

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        for t in self.types:
            if t.group == group and t.plural == plural and version in t.versions:
                return t
        return None

    def by_key(self, group: str, plural: str) -> ResourceType | None:
        for t in self.types:
            if t.key == (group, plural):
                return t
        return None

    def by_kind(self, api_version: str, kind: str) -> ResourceType | None:
        group, _, version = api_version.rpartition("/")
        for t in self.types:
            if t.group == group and t.kind == kind and version in t.versions:
                return t
        return None

    def groups(self) -> list[tuple[str, list[str]]]:
        """Every API group (not the core one) with its versions, preferred first, in /apis order."""
        versions: dict[str, list[str]] = {}
        for t in self.types:
            if t.group:
                seen = versions.setdefault(t.group, [])
                for v in t.versions:
                    if v not in seen:
                        seen.append(v)
        ordered = [g for g in BUILTIN_GROUPS if g in versions]
        ordered += sorted(g for g in versions if g not in BUILTIN_GROUPS)
        return [(g, sorted(versions[g], key=version_priority)) for g in ordered]

    def in_group_version(self, group: str, version: str) -> list[ResourceType]:
        return [t for t in self.types if t.group == group and version in t.versions]

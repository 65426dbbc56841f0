"""Discovery documents as kube-apiserver serves them: /version, /api, /apis, /apis/{group},
/api/v1 and /apis/{group}/{version} (APIResourceList), and the aggregated form (apidiscovery.k8s.io/v2 and
v2beta1 APIGroupDiscoveryList) when the Accept header asks for it, as kube-rs's `Discovery::run_aggregated`
does. Custom resources appear once their CRD is Established. `watch` is not among the verbs: the stand-in
does not serve watches.
"""

from __future__ import annotations

from typing import Any

from .resources import STATUS_VERBS, Catalog, ResourceType

AGGREGATED = "apidiscovery.k8s.io"


def version_info(kubernetes_version: str) -> dict[str, Any]:
    """/version for a patch version such as 1.31.13."""
    major, minor = kubernetes_version.split(".")[:2]
    return {
        "major": major,
        "minor": minor,
        "emulationMajor": major,
        "emulationMinor": minor,
        "minCompatibilityMajor": major,
        "minCompatibilityMinor": str(max(int(minor) - 1, 0)),
        "gitVersion": f"v{kubernetes_version}-eks-4096722",
        "gitCommit": "4096722b8ee2da1a8d6a7cb0b8bdc5ae5a0b3c1e",
        "gitTreeState": "clean",
        "buildDate": "2025-11-20T00:00:00Z",
        "goVersion": "go1.24.9",
        "compiler": "gc",
        "platform": "linux/amd64",
    }


def api_versions(server_address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def _group(name: str, versions: list[str]) -> dict[str, Any]:
    listed = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": listed, "preferredVersion": listed[0]}


def group_list(catalog: Catalog) -> dict[str, Any]:
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [_group(g, vs) for g, vs in catalog.groups()]}


def group(catalog: Catalog, name: str) -> dict[str, Any] | None:
    for g, versions in catalog.groups():
        if g == name:
            return {"kind": "APIGroup", "apiVersion": "v1", **_group(g, versions)}
    return None


def resource_list(catalog: Catalog, group_name: str, version: str) -> dict[str, Any] | None:
    types = catalog.in_group_version(group_name, version)
    if not types:
        return None
    resources: list[dict[str, Any]] = []
    for t in types:
        entry: dict[str, Any] = {
            "name": t.plural,
            "singularName": t.singular,
            "namespaced": t.namespaced,
            "kind": t.kind,
            "verbs": list(t.verbs),
        }
        if t.short_names:
            entry["shortNames"] = list(t.short_names)
        if t.categories:
            entry["categories"] = list(t.categories)
        resources.append(entry)
        if t.has_status(version):
            resources.append({"name": f"{t.plural}/status", "singularName": "", "namespaced": t.namespaced,
                              "kind": t.kind, "verbs": list(STATUS_VERBS)})
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group_name}/{version}" if group_name else version,
        "resources": resources,
    }


def wants_aggregated(accept: str) -> str | None:
    """The aggregated discovery version the Accept header asks for first, if any (v2 or v2beta1)."""
    for item in (accept or "").split(","):
        params = dict(p.strip().split("=", 1) for p in item.split(";")[1:] if "=" in p)
        if params.get("g") == AGGREGATED and params.get("as") == "APIGroupDiscoveryList" and params.get("v") in ("v2", "v2beta1"):
            return params["v"]
    return None


def _aggregated_resource(t: ResourceType, version: str) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "resource": t.plural,
        "responseKind": {"group": t.group, "version": version, "kind": t.kind},
        "scope": "Namespaced" if t.namespaced else "Cluster",
        "singularResource": t.singular,
        "verbs": list(t.verbs),
    }
    if t.short_names:
        entry["shortNames"] = list(t.short_names)
    if t.categories:
        entry["categories"] = list(t.categories)
    if t.has_status(version):
        entry["subresources"] = [{"subresource": "status",
                                  "responseKind": {"group": t.group, "version": version, "kind": t.kind},
                                  "verbs": list(STATUS_VERBS)}]
    return entry


def aggregated(catalog: Catalog, core: bool, discovery_version: str) -> dict[str, Any]:
    groups = [("", ["v1"])] if core else catalog.groups()
    items = []
    for name, versions in groups:
        items.append({
            "metadata": {"name": name, "creationTimestamp": None},
            "versions": [
                {"version": v, "resources": [_aggregated_resource(t, v) for t in catalog.in_group_version(name, v)],
                 "freshness": "Current"}
                for v in versions
            ],
        })
    return {"kind": "APIGroupDiscoveryList", "apiVersion": f"{AGGREGATED}/{discovery_version}", "metadata": {},
            "items": items}


def content_type(discovery_version: str) -> str:
    return f"application/json;g={AGGREGATED};v={discovery_version};as=APIGroupDiscoveryList"

"""The add-ons the emulator offers and which of their versions run on which Kubernetes version
(DescribeAddonVersions), modelled on what AWS lists for the four add-ons a Karpenter-ready cluster installs.

The version numbers are plausible, not a copy of AWS's current list: tests should ask DescribeAddonVersions
instead of hard-coding them. As in AWS, exactly one version per Kubernetes version is the default, here the
newest compatible one.
"""

from __future__ import annotations

from typing import Any

KUBERNETES_VERSIONS = ("1.29", "1.30", "1.31", "1.32", "1.33", "1.34", "1.35")
#: What CreateCluster uses without a version (AWS picks a recent one with standard support).
DEFAULT_KUBERNETES_VERSION = "1.34"


def _span(first: str, last: str) -> tuple[str, ...]:
    return KUBERNETES_VERSIONS[KUBERNETES_VERSIONS.index(first) : KUBERNETES_VERSIONS.index(last) + 1]


_ALL = _span("1.29", "1.35")

#: add-on → (type, requires IAM permissions, [(version, Kubernetes versions)], newest version first)
CATALOG: dict[str, tuple[str, bool, list[tuple[str, tuple[str, ...]]]]] = {
    "vpc-cni": (
        "networking",
        True,
        [
            ("v1.20.4-eksbuild.2", _ALL),
            ("v1.19.6-eksbuild.7", _span("1.29", "1.34")),
            ("v1.18.6-eksbuild.1", _span("1.29", "1.32")),
        ],
    ),
    "kube-proxy": (
        "networking",
        False,
        [
            ("v1.35.0-eksbuild.2", ("1.35",)),
            ("v1.34.1-eksbuild.2", ("1.34",)),
            ("v1.34.0-eksbuild.2", ("1.34",)),
            ("v1.33.5-eksbuild.2", ("1.33",)),
            ("v1.33.0-eksbuild.2", ("1.33",)),
            ("v1.32.9-eksbuild.2", ("1.32",)),
            ("v1.32.0-eksbuild.2", ("1.32",)),
            ("v1.31.13-eksbuild.3", ("1.31",)),
            ("v1.31.2-eksbuild.3", ("1.31",)),
            ("v1.30.14-eksbuild.6", ("1.30",)),
            ("v1.30.6-eksbuild.3", ("1.30",)),
            ("v1.29.15-eksbuild.8", ("1.29",)),
            ("v1.29.10-eksbuild.3", ("1.29",)),
        ],
    ),
    "coredns": (
        "networking",
        False,
        [
            ("v1.12.4-eksbuild.1", _span("1.33", "1.35")),
            ("v1.12.1-eksbuild.2", _span("1.32", "1.34")),
            ("v1.11.4-eksbuild.24", _span("1.29", "1.32")),
            ("v1.11.1-eksbuild.13", _span("1.29", "1.31")),
        ],
    ),
    "eks-pod-identity-agent": (
        "security",
        False,
        [
            ("v1.3.9-eksbuild.3", _ALL),
            ("v1.3.8-eksbuild.2", _span("1.29", "1.34")),
            ("v1.3.4-eksbuild.1", _span("1.29", "1.32")),
        ],
    ),
}


def versions(addon: str, kubernetes_version: str) -> list[str]:
    """The add-on's versions that run on `kubernetes_version`, newest first."""
    _, _, table = CATALOG.get(addon, ("", False, []))
    return [v for v, k8s in table if kubernetes_version in k8s]


def default_version(addon: str, kubernetes_version: str) -> str | None:
    found = versions(addon, kubernetes_version)
    return found[0] if found else None


def describe(kubernetes_version: str | None, addon_name: str | None, types: list[str]) -> list[dict[str, Any]]:
    """DescribeAddonVersions' `addons`: AddonInfo for each matching add-on with a matching version."""
    infos = []
    for name, (addon_type, needs_iam, table) in CATALOG.items():
        if (addon_name and name != addon_name) or (types and addon_type not in types):
            continue
        addon_versions = []
        for version, k8s in table:
            wanted = [v for v in k8s if kubernetes_version in (None, v)]
            if not wanted:
                continue
            compatibilities = [
                {"clusterVersion": v, "platformVersions": ["*"], "defaultVersion": default_version(name, v) == version}
                for v in wanted
            ]
            addon_versions.append(
                {
                    "addonVersion": version,
                    "architecture": ["amd64", "arm64"],
                    "computeTypes": ["ec2"],
                    "compatibilities": compatibilities,
                    "requiresConfiguration": False,
                    "requiresIamPermissions": needs_iam,
                }
            )
        if addon_versions:
            infos.append(
                {
                    "addonName": name,
                    "type": addon_type,
                    "addonVersions": addon_versions,
                    "publisher": "eks",
                    "owner": "aws",
                    "defaultNamespace": "kube-system",
                }
            )
    return infos

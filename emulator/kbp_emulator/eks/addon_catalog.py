"""The add-ons the emulator offers and which of their versions run on which Kubernetes version
(DescribeAddonVersions), modelled on what AWS lists for the four add-ons a Karpenter-ready cluster installs.

The version numbers are plausible, not a copy of AWS's list, for the same day as `cluster_versions`' catalogue
(2026-12-03): tests should ask DescribeAddonVersions instead of hard-coding them. As in AWS, exactly one version per
Kubernetes version is the default, here the newest compatible one.
"""

from __future__ import annotations

from typing import Any

#: Every Kubernetes version EKS still answers for, oldest first: the ones it offers for new clusters
#: (`cluster_versions.OFFERED`) and the ones past their extended support (1.29–1.31), whose clusters, node groups and
#: add-ons may still be around.
KUBERNETES_VERSIONS = ("1.29", "1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37")
#: What CreateCluster uses without a version. AWS picks a recent version in standard support rather than the
#: newest: here the newest but one, 1.36 (1.37 is two months old on the catalogue's day, 2026-12-03), which is in
#: standard support until 2027-08-02.
DEFAULT_KUBERNETES_VERSION = "1.36"


def _span(first: str, last: str) -> tuple[str, ...]:
    return KUBERNETES_VERSIONS[KUBERNETES_VERSIONS.index(first) : KUBERNETES_VERSIONS.index(last) + 1]


#: add-on → (type, requires IAM permissions, [(version, Kubernetes versions)], newest version first). Versions for
#: 1.29–1.31 are kept although EKS no longer offers those for new clusters.
CATALOG: dict[str, tuple[str, bool, list[tuple[str, tuple[str, ...]]]]] = {
    "vpc-cni": (
        "networking",
        True,
        [
            ("v1.21.2-eksbuild.1", _span("1.32", "1.37")),
            ("v1.21.0-eksbuild.4", _span("1.32", "1.37")),
            ("v1.20.4-eksbuild.2", _span("1.29", "1.35")),
            ("v1.19.6-eksbuild.7", _span("1.29", "1.34")),
            ("v1.18.6-eksbuild.1", _span("1.29", "1.32")),
        ],
    ),
    "kube-proxy": (
        "networking",
        False,
        [
            ("v1.37.2-eksbuild.1", ("1.37",)),
            ("v1.37.0-eksbuild.3", ("1.37",)),
            ("v1.36.6-eksbuild.2", ("1.36",)),
            ("v1.36.0-eksbuild.4", ("1.36",)),
            ("v1.35.10-eksbuild.2", ("1.35",)),
            ("v1.35.0-eksbuild.2", ("1.35",)),
            ("v1.34.13-eksbuild.3", ("1.34",)),
            ("v1.34.1-eksbuild.2", ("1.34",)),
            ("v1.34.0-eksbuild.2", ("1.34",)),
            ("v1.33.13-eksbuild.3", ("1.33",)),
            ("v1.33.5-eksbuild.2", ("1.33",)),
            ("v1.33.0-eksbuild.2", ("1.33",)),
            ("v1.32.13-eksbuild.4", ("1.32",)),
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
            ("v1.13.2-eksbuild.1", _span("1.35", "1.37")),
            ("v1.13.1-eksbuild.3", _span("1.34", "1.37")),
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
            ("v1.3.11-eksbuild.1", _span("1.33", "1.37")),
            ("v1.3.10-eksbuild.2", _span("1.32", "1.37")),
            ("v1.3.9-eksbuild.3", _span("1.29", "1.35")),
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

"""DescribeClusterVersions, which moto 5.2.5 does not serve: the Kubernetes versions EKS offers for new clusters,
with their support dates, and which one CreateCluster picks by default.

The catalogue is fixed, as AWS's list stood on 2026-03-24, the day after 1.29's extended support ended: 1.29 is
no longer offered (listed only with `includeAll`, as UNSUPPORTED; CreateCluster refuses it), 1.30–1.32 are in
extended support and 1.33–1.35 in standard support. Dates follow EKS's calendar (14 months of standard support,
12 more of extended) and are plausible rather than a copy of AWS's; statuses do not move with the clock, so a
test behaves the same on any day.

It also says how far a node may lag behind its control plane (`max_node_skew`) and which version comes next
(`next_version`), for node groups, UpdateClusterVersion and the upgrade insights.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from moto.core.responses import ActionResult

from . import addon_catalog
from .base import EKSHandlers, invalid_parameter

STANDARD, EXTENDED, UNSUPPORTED = "STANDARD_SUPPORT", "EXTENDED_SUPPORT", "UNSUPPORTED"
#: The deprecated `status` field and filter spell the same statuses in lower case with dashes.
_LEGACY = {STANDARD: "standard-support", EXTENDED: "extended-support", UNSUPPORTED: "unsupported"}

#: (version, release, end of standard support, end of extended support, patch version, status)
CATALOG: list[tuple[str, str, str, str, str, str]] = [
    ("1.35", "2026-01-27", "2027-03-27", "2028-03-27", "1.35.0", STANDARD),
    ("1.34", "2025-10-02", "2026-12-02", "2027-12-02", "1.34.2", STANDARD),
    ("1.33", "2025-05-29", "2026-07-29", "2027-07-29", "1.33.5", STANDARD),
    ("1.32", "2025-01-23", "2026-03-23", "2027-03-23", "1.32.9", EXTENDED),
    ("1.31", "2024-09-26", "2025-11-26", "2026-11-26", "1.31.13", EXTENDED),
    ("1.30", "2024-05-23", "2025-07-23", "2026-07-23", "1.30.14", EXTENDED),
    ("1.29", "2024-01-23", "2025-03-23", "2026-03-23", "1.29.15", UNSUPPORTED),
]

#: What CreateCluster accepts: every version not past its extended support.
OFFERED = tuple(v for v, *_, status in CATALOG if status != UNSUPPORTED)

#: How many minor versions a node's kubelet may be older than the control plane: 3 from Kubernetes 1.28 on, 2
#: before, for managed node groups, self-managed nodes and Fargate alike
#: (https://aws.amazon.com/blogs/containers/amazon-eks-now-supports-kubernetes-version-1-28/,
#: https://kubernetes.io/releases/version-skew-policy/#kubelet). A kubelet is never newer than the control plane.
NODE_SKEW, NODE_SKEW_BEFORE_1_28 = 3, 2


def minor(version: str) -> int:
    """The minor number of a Kubernetes version such as 1.32."""
    return int(version.split(".")[1])


def max_node_skew(control_plane: str) -> int:
    """How many minor versions nodes may lag behind a control plane at `control_plane`."""
    return NODE_SKEW if minor(control_plane) >= 28 else NODE_SKEW_BEFORE_1_28


def node_skew(control_plane: str, node: str) -> int:
    """How many minor versions `node` is behind `control_plane` (negative when it is newer)."""
    return minor(control_plane) - minor(node)


def next_version(version: str) -> str | None:
    """The minor version UpdateClusterVersion would take a cluster at `version` to, or None at the newest."""
    versions = addon_catalog.KUBERNETES_VERSIONS
    if version not in versions or version == versions[-1]:
        return None
    return versions[versions.index(version) + 1]


def _timestamp(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=timezone.utc)


def describe(
    versions: list[str], include_all: bool, default_only: bool, status: str | None
) -> list[dict[str, Any]]:
    """DescribeClusterVersions' `clusterVersions`, newest first."""
    infos = []
    for version, released, standard_end, extended_end, patch, version_status in CATALOG:
        if version_status == UNSUPPORTED and not (include_all or status == UNSUPPORTED):
            continue
        default = version == addon_catalog.DEFAULT_KUBERNETES_VERSION
        if (versions and version not in versions) or (default_only and not default):
            continue
        if status and status != version_status:
            continue
        infos.append(
            {
                "clusterVersion": version,
                "clusterType": "eks",
                "defaultPlatformVersion": "eks.1",
                "defaultVersion": default,
                "releaseDate": _timestamp(released),
                "endOfStandardSupportDate": _timestamp(standard_end),
                "endOfExtendedSupportDate": _timestamp(extended_end),
                "status": _LEGACY[version_status],
                "versionStatus": version_status,
                "kubernetesPatchVersion": patch,
            }
        )
    return infos


class ClusterVersionHandlers(EKSHandlers):
    def describe_cluster_versions(self) -> ActionResult:
        status = self.query_one("versionStatus")
        legacy = self.query_one("status")
        if legacy:
            status = next((s for s, name in _LEGACY.items() if name == legacy), None)
            if status is None:
                raise invalid_parameter(f"Invalid status: {legacy}")
        elif status and status not in _LEGACY:
            raise invalid_parameter(f"Invalid versionStatus: {status}")
        cluster_type = self.query_one("clusterType", "eks")
        flag = lambda name: (self.query_one(name, "false") or "").lower() == "true"  # noqa: E731
        infos = []
        if cluster_type == "eks":
            infos = describe(self.query("clusterVersions"), flag("includeAll"), flag("defaultOnly"), status)
        infos, token = self.page(infos)
        return ActionResult({"clusterVersions": infos, "nextToken": token})

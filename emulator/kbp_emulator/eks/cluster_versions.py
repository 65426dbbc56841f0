"""DescribeClusterVersions, which moto 5.2.5 does not serve: the Kubernetes versions EKS offers for new clusters,
with their support dates, and which one CreateCluster picks by default.

The catalogue is fixed, as AWS's list stands on 2026-12-03, the day after 1.34's standard support ended: 1.29–1.31
are past their extended support (listed only with `includeAll`, as UNSUPPORTED; CreateCluster refuses them), 1.32–1.34
are in extended support and 1.35–1.37 in standard support. Statuses do not move with the clock, so a test behaves
the same on any day.

Where the dates come from (looked up for this catalogue; nothing here is fetched at run time):
- 1.29–1.35: Amazon EKS's release calendar (https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html
  #kubernetes-release-calendar), as also recorded by https://endoflife.date/amazon-eks.
- 1.36: released on EKS on 2026-06-02, standard support to 2027-08-02, extended to 2028-08-02, as recorded by
  https://endoflife.date/amazon-eks (citing https://aws.amazon.com/about-aws/whats-new/2026/06/
  amazon-eks-distro-kubernetes-version-1-36/).
- 1.37: a projection, plausible following the calendar's rule, not a fact: upstream released 1.37.0 on 2026-08-26
  (https://kubernetes.io/releases/1.37/) and EKS shipped each recent version 5–6 weeks after upstream (1.34: 36 days,
  1.35 and 1.36: 41 days), so EKS 1.37 on 2026-10-06 and its support ends by the rule.
The rule (same AWS page): 14 months of standard support from the EKS release, then 12 more of extended support.
Patch versions are plausible rather than a copy of AWS's: upstream patches each supported minor version monthly
(https://kubernetes.io/releases/); a version upstream still patched gets the patch of 2026-10-13 (1.35.10, 1.36.6,
1.37.2; EKS takes upstream patches a few weeks later), 1.32–1.34 about their last upstream patch, and 1.29–1.31 keep
the patch this catalogue gave them before.

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
    ("1.37", "2026-10-06", "2027-12-06", "2028-12-06", "1.37.2", STANDARD),  # projected (see above)
    ("1.36", "2026-06-02", "2027-08-02", "2028-08-02", "1.36.6", STANDARD),
    ("1.35", "2026-01-27", "2027-03-27", "2028-03-27", "1.35.10", STANDARD),
    ("1.34", "2025-10-02", "2026-12-02", "2027-12-02", "1.34.13", EXTENDED),
    ("1.33", "2025-05-29", "2026-07-29", "2027-07-29", "1.33.13", EXTENDED),
    ("1.32", "2025-01-23", "2026-03-23", "2027-03-23", "1.32.13", EXTENDED),
    ("1.31", "2024-09-26", "2025-11-26", "2026-11-26", "1.31.13", UNSUPPORTED),
    ("1.30", "2024-05-23", "2025-07-23", "2026-07-23", "1.30.14", UNSUPPORTED),
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

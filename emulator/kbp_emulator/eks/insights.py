"""EKS cluster insights (ListInsights, DescribeInsight), which moto 5.2.5 does not serve: the upgrade-readiness
checks EKS runs against a cluster, computed here from the emulator's own state whenever they are asked for.

Two checks of category UPGRADE_READINESS, each for the next Kubernetes minor version (the one UpdateClusterVersion
would go to; a cluster at the newest version is checked against its own version):

- "Kubelet version skew": the managed node groups' Kubernetes versions against the control plane's. PASSING when
  every node group is at the cluster's version; WARNING when some are behind but the upgrade would keep them within
  the skew the kubelet allows (3 minor versions from Kubernetes 1.28); ERROR when the upgrade would leave one too
  far behind (UpdateClusterVersion refuses that upgrade). Its `resources` are the node groups that are behind, by ARN.
  Nodes outside managed node groups (self-managed, Karpenter's) are not looked at.
- "Amazon EKS add-on version compatibility": each installed add-on's version against the versions DescribeAddonVersions
  lists for the next Kubernetes version (`addon_catalog`). PASSING when all are listed; ERROR when one is not but the
  add-on has a version that runs on both the current and the next Kubernetes version (so it can, and must, be updated
  first); WARNING when it has none (it is updated after the control plane, as kube-proxy is). Its
  `categorySpecificSummary.addonCompatibilityDetails` names every installed add-on with its versions for the next
  Kubernetes version; its `resources` are the add-ons that are not compatible, by ARN.

An insight's ID is derived from the cluster's ARN and the check, so it is the same on every call for as long as
the cluster exists. `lastRefreshTime` is the time of the call (EKS refreshes daily or on request; here every call
is a fresh look); `lastTransitionTime` is when a call first saw the current status. Descriptions, reasons and
recommendations are the emulator's wording; the check names, categories, statuses and fields are EKS's.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from moto.core.responses import ActionResult

from . import addon_catalog, cluster_versions
from .base import EKSHandlers, invalid_parameter, not_found, now, paginate
from .cluster_extras import extras

UPGRADE_READINESS = "UPGRADE_READINESS"
CATEGORIES = ("UPGRADE_READINESS", "MISCONFIGURATION", "ROLLBACK_READINESS")
PASSING, WARNING, ERROR, UNKNOWN = "PASSING", "WARNING", "ERROR", "UNKNOWN"
STATUSES = (PASSING, WARNING, ERROR, UNKNOWN)
_SEVERITY = {PASSING: 0, UNKNOWN: 1, WARNING: 2, ERROR: 3}


@dataclass
class Finding:
    """What one check found: the insight's status and what DescribeInsight shows about it."""

    status: str
    reason: str
    recommendation: str
    resources: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)


def _worst(statuses: list[str]) -> str:
    return max(statuses, key=_SEVERITY.__getitem__, default=PASSING)


def _names(items: list[str]) -> str:
    return ", ".join(items)


# --- the checks ------------------------------------------------------------------------------------------------


def _kubelet_skew(cluster: Any, target: str) -> Finding:
    allowed = cluster_versions.max_node_skew(target)
    behind, resources = [], []
    for nodegroup in sorted(cluster.nodegroups.values(), key=lambda n: n.nodegroup_name):
        if nodegroup.status == "DELETING" or cluster_versions.node_skew(cluster.version, nodegroup.version) <= 0:
            continue
        after = cluster_versions.node_skew(target, nodegroup.version)
        status = ERROR if after > allowed else WARNING
        text = f"{nodegroup.nodegroup_name} ({nodegroup.version})"
        behind.append((status, text))
        reason = (
            f"Kubernetes version {nodegroup.version} would be {after} minor versions behind a {target} control plane; "
            f"at most {allowed} are supported."
            if status == ERROR
            else f"Kubernetes version {nodegroup.version} is behind the control plane ({cluster.version})."
        )
        resources.append({"insightStatus": {"status": status, "reason": reason}, "arn": nodegroup.arn})
    upgrade = f"upgrading the control plane to {target}" if target != cluster.version else "the next upgrade"
    recommendation = (
        f"Update nodes that are behind the control plane to its Kubernetes version {cluster.version} "
        f"(UpdateNodegroupVersion for managed node groups) before {upgrade}."
    )
    if not behind:
        reason = f"All managed node groups run the control plane's Kubernetes version {cluster.version}."
        return Finding(PASSING, reason, recommendation)
    status = _worst([s for s, _ in behind])
    if status == ERROR:
        too_far = [t for s, t in behind if s == ERROR]
        reason = (
            f"Upgrading the control plane to {target} would leave node groups more than {allowed} minor versions "
            f"behind it: {_names(too_far)}."
        )
    else:
        reason = (
            f"Node groups behind the control plane ({cluster.version}): {_names([t for _, t in behind])}. They are "
            f"within the supported skew of {allowed} minor versions of Kubernetes {target}."
        )
    return Finding(status, reason, recommendation, resources)


def _addon_compatibility(cluster: Any, target: str) -> Finding:
    details, resources, problems = [], [], []
    for addon in sorted(extras(cluster).addons.values(), key=lambda a: a.addon_name):
        if addon.status == "DELETING":
            continue
        compatible = addon_catalog.versions(addon.addon_name, target)
        details.append({"name": addon.addon_name, "compatibleVersions": compatible})
        if addon.addon_version in compatible:
            continue
        bridge = set(addon_catalog.versions(addon.addon_name, cluster.version)) & set(compatible)
        status = ERROR if bridge else WARNING
        reason = (
            f"Version {addon.addon_version} is not compatible with Kubernetes {target}; update it to a version that "
            f"runs on both {cluster.version} and {target} first."
            if bridge
            else f"Version {addon.addon_version} is not compatible with Kubernetes {target}; update it after the "
            f"control plane."
        )
        problems.append((status, f"{addon.addon_name} ({addon.addon_version})"))
        resources.append({"insightStatus": {"status": status, "reason": reason}, "arn": addon.addon_arn})
    recommendation = (
        f"Update the add-ons to a version that DescribeAddonVersions lists for Kubernetes {target} (UpdateAddon) "
        f"before upgrading the cluster, or right after it where no version runs on both."
    )
    summary = {"addonCompatibilityDetails": details}
    if not problems:
        return Finding(PASSING, f"All installed add-ons are compatible with Kubernetes {target}.", recommendation,
                       summary=summary)
    status = _worst([s for s, _ in problems])
    reason = f"Add-on versions not compatible with Kubernetes {target}: {_names([t for _, t in problems])}."
    return Finding(status, reason, recommendation, resources, summary)


@dataclass(frozen=True)
class Check:
    kind: str
    name: str
    description: str
    evaluate: Any  # (cluster, target Kubernetes version) → Finding
    additional_info: dict[str, str]


CHECKS = (
    Check(
        "kubelet-version-skew",
        "Kubelet version skew",
        "Checks the Kubernetes version of the nodes of the cluster's managed node groups against the control plane's, "
        "for nodes that an upgrade of the control plane would leave further behind than the kubelet version skew "
        "policy allows.",
        _kubelet_skew,
        {
            "Updating a managed node group":
                "https://docs.aws.amazon.com/eks/latest/userguide/update-managed-node-group.html",
            "Kubernetes version skew policy": "https://kubernetes.io/releases/version-skew-policy/#kubelet",
        },
    ),
    Check(
        "addon-version-compatibility",
        "Amazon EKS add-on version compatibility",
        "Checks whether the installed Amazon EKS add-ons run versions that are compatible with the next Kubernetes "
        "version.",
        _addon_compatibility,
        {
            "Updating an Amazon EKS add-on": "https://docs.aws.amazon.com/eks/latest/userguide/updating-an-add-on.html",
        },
    ),
)


def insight_id(cluster: Any, check: Check) -> str:
    """The insight's ID: a UUID derived from the cluster's ARN and the check, stable for the cluster's lifetime."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{cluster.arn}/insights/{check.kind}"))


def evaluate(cluster: Any) -> list[dict[str, Any]]:
    """Every insight of the cluster, as DescribeInsight's `insight`, in the order of CHECKS."""
    target = cluster_versions.next_version(cluster.version) or cluster.version
    seen = extras(cluster).insight_statuses
    refreshed = now()
    insights = []
    for check in CHECKS:
        finding = check.evaluate(cluster, target)
        if seen.get(check.kind, (None,))[0] != finding.status:
            seen[check.kind] = (finding.status, refreshed)
        insight = {
            "id": insight_id(cluster, check),
            "name": check.name,
            "category": UPGRADE_READINESS,
            "kubernetesVersion": target,
            "lastRefreshTime": refreshed,
            "lastTransitionTime": seen[check.kind][1],
            "description": check.description,
            "insightStatus": {"status": finding.status, "reason": finding.reason},
            "recommendation": finding.recommendation,
            "additionalInfo": dict(check.additional_info),
            "resources": finding.resources,
            "categorySpecificSummary": finding.summary,
        }
        insights.append(insight)
    return insights


SUMMARY_FIELDS = ("id", "name", "category", "kubernetesVersion", "lastRefreshTime", "lastTransitionTime",
                  "description", "insightStatus")  # fmt: skip


def _strings(value: Any, member: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise invalid_parameter(f"filter.{member} must be a list of strings")
    return value


class InsightHandlers(EKSHandlers):
    def list_insights(self) -> ActionResult:
        cluster = self.cluster()
        body = self.body_json()
        wanted = body.get("filter") or {}
        if not isinstance(wanted, dict):
            raise invalid_parameter("filter must be an object")
        categories = _strings(wanted.get("categories"), "categories")
        versions = _strings(wanted.get("kubernetesVersions"), "kubernetesVersions")
        statuses = _strings(wanted.get("statuses"), "statuses")
        # The model's enums, for when AWS's input contract is switched off (it refuses them first otherwise).
        for member, values, allowed in (("categories", categories, CATEGORIES), ("statuses", statuses, STATUSES)):
            for value in values:
                if value not in allowed:
                    raise invalid_parameter(f"Invalid value {value} in filter.{member}", clusterName=cluster.name)
        found = [
            {k: insight[k] for k in SUMMARY_FIELDS}
            for insight in evaluate(cluster)
            if (not categories or insight["category"] in categories)
            and (not versions or insight["kubernetesVersion"] in versions)
            and (not statuses or insight["insightStatus"]["status"] in statuses)
        ]
        page, token = paginate(found, body.get("maxResults", 100), body.get("nextToken"))
        return ActionResult({"insights": page, "nextToken": token})

    def describe_insight(self) -> ActionResult:
        cluster = self.cluster()
        wanted = self.path_param("id")
        for insight in evaluate(cluster):
            if insight["id"] == wanted:
                return ActionResult({"insight": insight})
        raise not_found(f"No insight found for id: {wanted}", clusterName=cluster.name)

"""EKS add-ons (CreateAddon, DescribeAddon, ListAddons, UpdateAddon, DeleteAddon, DescribeAddonVersions), which
moto 5.2.5 does not serve at all.

An add-on is CREATING, then ACTIVE; UPDATING, then ACTIVE; DELETING, then gone, each after its profile delay.
Pod identity associations requested with an add-on are created in the cluster, owned by the add-on, and
removed with it unless DeleteAddon says preserve.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from moto.core.responses import ActionResult
from moto.eks.models import CLUSTER_NOT_READY_MSG

from .. import client_tokens, lifecycle
from . import addon_catalog, pod_identity, updates
from .base import ACTIVE, EKSHandlers, in_use, invalid_parameter, invalid_request, new_uuid, not_found, now
from .cluster_extras import extras

ADDON_NAMESPACE = "kube-system"


@dataclass
class Addon:
    addon_name: str
    cluster_name: str
    addon_version: str
    addon_arn: str
    status: str = "CREATING"
    service_account_role_arn: str | None = None
    configuration_values: str | None = None
    pod_identity_associations: list[str] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)
    health: dict[str, Any] = field(default_factory=lambda: {"issues": []})
    created_at: Any = field(default_factory=now)
    modified_at: Any = field(default_factory=now)
    publisher: str = "eks"
    owner: str = "aws"
    preserve: bool = False


def _supported_version(cluster: Any, name: str, requested: str | None) -> str:
    """The version to install: the requested one if it runs on the cluster's Kubernetes, else the default."""
    if not addon_catalog.versions(name, cluster.version):
        raise invalid_parameter(
            f"Addon {name} specified is not supported in {cluster.version} kubernetes version",
            clusterName=cluster.name,
            addonName=name,
        )
    if requested is None:
        return addon_catalog.default_version(name, cluster.version)
    if requested not in addon_catalog.versions(name, cluster.version):
        raise invalid_parameter("Addon version specified is not supported", clusterName=cluster.name, addonName=name)
    return requested


def _addon_exists(handler: Any, addon: Addon) -> bool:
    return extras(handler.cluster()).addons.get(addon.addon_name) is addon


class AddonHandlers(EKSHandlers):
    def _addon(self, cluster: Any) -> Addon:
        name = self.path_param("addonName")
        try:
            return extras(cluster).addons[name]
        except KeyError:
            raise not_found(
                f"No addon: {name} found in cluster: {cluster.name}", clusterName=cluster.name, addonName=name
            ) from None

    def _associate(self, cluster: Any, addon: Addon, requested: list[dict[str, str]]) -> list[str]:
        """Creates the add-on's pod identity associations and returns their ARNs."""
        arns = []
        for item in requested or []:
            association = pod_identity.create(
                self.eks_backend, cluster, ADDON_NAMESPACE, item.get("serviceAccount"), item.get("roleArn"), {}
            )
            association.owner_arn = addon.addon_arn
            arns.append(association.association_arn)
        return arns

    @client_tokens.eks("addon", _addon_exists)
    def create_addon(self) -> ActionResult:
        cluster = self.cluster()
        body = self.body_json()
        name = body.get("addonName")
        if not name:
            raise invalid_parameter("addonName is required", clusterName=cluster.name)
        if name in extras(cluster).addons:
            raise in_use("Addon already exists.", clusterName=cluster.name, addonName=name)
        if cluster.status != ACTIVE:
            raise invalid_request(CLUSTER_NOT_READY_MSG.format(clusterName=cluster.name), clusterName=cluster.name)
        version = _supported_version(cluster, name, body.get("addonVersion"))
        b = self.eks_backend
        addon = Addon(
            addon_name=name,
            cluster_name=cluster.name,
            addon_version=version,
            addon_arn=f"arn:{b.partition}:eks:{b.region_name}:{b.account_id}:addon/{cluster.name}/{name}/{new_uuid()}",
            service_account_role_arn=body.get("serviceAccountRoleArn"),
            configuration_values=body.get("configurationValues"),
            tags=body.get("tags") or {},
        )
        addon.pod_identity_associations = self._associate(cluster, addon, body.get("podIdentityAssociations"))
        extras(cluster).addons[name] = addon
        lifecycle.begin(addon, "status", "CREATING", ACTIVE, lifecycle.deadline("eks.create_addon"))
        return ActionResult({"addon": addon})

    def describe_addon(self) -> ActionResult:
        return ActionResult({"addon": self._addon(self.cluster())})

    def list_addons(self) -> ActionResult:
        names, token = self.page(sorted(extras(self.cluster()).addons))
        return ActionResult({"addons": names, "nextToken": token})

    def update_addon(self) -> ActionResult:
        cluster = self.cluster()
        addon = self._addon(cluster)
        body = self.body_json()
        if addon.status not in (ACTIVE, "DEGRADED", "UPDATE_FAILED"):
            raise in_use(
                f"Addon {addon.addon_name} cannot be updated as it is currently in {addon.status} state",
                clusterName=cluster.name,
                addonName=addon.addon_name,
            )
        if "addonVersion" in body:
            addon.addon_version = _supported_version(cluster, addon.addon_name, body["addonVersion"])
        if "serviceAccountRoleArn" in body:
            addon.service_account_role_arn = body["serviceAccountRoleArn"] or None
        if "configurationValues" in body:
            addon.configuration_values = body["configurationValues"]
        if "podIdentityAssociations" in body:
            for arn in addon.pod_identity_associations:
                extras(cluster).pod_identity_associations.pop(arn.rsplit("/", 1)[-1], None)
            addon.pod_identity_associations = self._associate(cluster, addon, body["podIdentityAssociations"])
        addon.modified_at = now()
        update = updates.Update(
            type="AddonUpdate",
            addon_name=addon.addon_name,
            params=updates.params(
                AddonVersion=body.get("addonVersion"),
                ServiceAccountRoleArn=body.get("serviceAccountRoleArn"),
                ResolveConflicts=body.get("resolveConflicts"),
                ConfigurationValues=body.get("configurationValues"),
                PodIdentityAssociations=body.get("podIdentityAssociations"),
            ),
        )
        return ActionResult({"update": updates.start(cluster, addon, "eks.update_addon", update)})

    def delete_addon(self) -> ActionResult:
        cluster = self.cluster()
        addon = self._addon(cluster)
        if addon.status != "DELETING":
            addon.preserve = self.query_one("preserve", "false").lower() == "true"
            lifecycle.begin(addon, "status", "DELETING", lifecycle.GONE, lifecycle.deadline("eks.delete_addon"))
        return ActionResult({"addon": addon})

    def describe_addon_versions(self) -> ActionResult:
        infos = addon_catalog.describe(self.query_one("kubernetesVersion"), self.query_one("addonName"), self.query("types"))
        infos, token = self.page(infos)
        return ActionResult({"addons": infos, "nextToken": token})

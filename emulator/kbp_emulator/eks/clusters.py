"""EKS clusters: what moto's CreateCluster, DeleteCluster and UpdateClusterConfig leave out, and
UpdateClusterVersion and AssociateEncryptionConfig, which moto 5.2.5 does not serve.

CreateCluster here checks the subnets as AWS does (they exist, in one VPC, in at least two zones), creates the
cluster security group in that VPC, and reports what AWS reports: a per-cluster OIDC issuer, a real base64 PEM CA
certificate, vpcId and clusterSecurityGroupId, accessConfig, upgradePolicy. Its `endpoint` is
`https://127.0.0.1:<port>`, where the cluster's own Kubernetes control plane (package `k8s`) answers with a
certificate that CA signed. With an API authentication mode it also makes the creator's cluster-admin access
entry, unless told not to.

UpdateClusterVersion goes one minor version up at a time and refuses a version that would leave a node group
further behind the control plane than the kubelet skew allows (3 minor versions from Kubernetes 1.28).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from botocore import xform_name
from moto.core.responses import ActionResult
from moto.ec2.exceptions import InvalidSubnetIdError
from moto.ec2.models import ec2_backends
from moto.eks.models import CLUSTER_IN_USE_MSG
from moto.sts.models import sts_backends

from .. import client_tokens, k8s, lifecycle
from ..k8s.auth import iam_principal
from . import access_entries, addon_catalog, cluster_versions, updates
from .base import ACTIVE, EKSHandlers, in_use, invalid_parameter, random_id
from .cluster_extras import extras

LOG_TYPES = ("api", "audit", "authenticator", "controllerManager", "scheduler")
CLUSTER_SG_DESCRIPTION = (
    "EKS created security group applied to ENI that is attached to EKS Control Plane master nodes, as well as "
    "any managed workloads."
)
#: UpdateClusterConfig members and the update type AWS records for each; any other member is a ConfigUpdate.
UPDATE_TYPES = {
    "logging": "LoggingUpdate",
    "accessConfig": "AccessConfigUpdate",
    "upgradePolicy": "UpgradePolicyUpdate",
    "deletionProtection": "DeletionProtectionUpdate",
    "zonalShiftConfig": "ZonalShiftConfigUpdate",
    "remoteNetworkConfig": "RemoteNetworkConfigUpdate",
}
AUTH_MODE_ORDER = ("CONFIG_MAP", "API_AND_CONFIG_MAP", "API")


def vpc_of_subnets(backend: Any, cluster_name: str, subnet_ids: list[str], min_zones: int) -> str | None:
    """The VPC the subnets are in, after AWS's checks: every subnet exists, all in one VPC, enough zones."""
    ec2 = ec2_backends[backend.account_id][backend.region_name]
    zones, vpcs = set(), set()
    for subnet_id in subnet_ids or []:
        try:
            subnet = ec2.get_subnet(subnet_id)
        except InvalidSubnetIdError:
            raise invalid_parameter(
                f"The subnet ID '{subnet_id}' does not exist (Service: AmazonEC2; Status Code: 400; Error Code: "
                f"InvalidSubnetID.NotFound; Request ID: {uuid.uuid4()}; Proxy: null)",
                clusterName=cluster_name,
            ) from None
        zones.add(subnet.availability_zone)
        vpcs.add(subnet.vpc_id)
    if len(zones) < min_zones:
        raise invalid_parameter("Subnets specified must be in at least two different AZs", clusterName=cluster_name)
    if len(vpcs) > 1:
        raise invalid_parameter("Subnets specified must all be in the same VPC", clusterName=cluster_name)
    return next(iter(vpcs), None)


def _bool(value: bool) -> str:
    return str(bool(value)).lower()


def _merged_logging(current: dict[str, Any], requested: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
    """AWS merges a logging update into the current types; returns (changed, merged)."""
    before = {t for e in current.get("clusterLogging", []) if e.get("enabled") for t in e.get("types", [])}
    after = set(before)
    for entry in requested.get("clusterLogging", []):
        for log_type in entry.get("types", []):
            (after.add if entry.get("enabled") else after.discard)(log_type)
    entries = [
        {"types": [t for t in LOG_TYPES if (t in after) == enabled], "enabled": enabled} for enabled in (True, False)
    ]
    return before != after, {"clusterLogging": [e for e in entries if e["types"]]}


def _check_node_skew(cluster: Any, version: str) -> None:
    """A control plane at `version` must not leave any node group more minor versions behind than the kubelet
    skew allows (3 from Kubernetes 1.28): such a node group is updated first."""
    allowed = cluster_versions.max_node_skew(version)
    for nodegroup in cluster.nodegroups.values():
        if nodegroup.status == "DELETING":
            continue
        if cluster_versions.node_skew(version, nodegroup.version) > allowed:
            raise invalid_parameter(
                f"Nodegroup {nodegroup.nodegroup_name} has Kubernetes version {nodegroup.version}, which would be more "
                f"than {allowed} minor versions behind cluster version {version}. Update the nodegroup to a newer "
                f"Kubernetes version before updating the cluster.",
                clusterName=cluster.name,
                nodegroupName=nodegroup.nodegroup_name,
            )


def _cluster_exists(handler: Any, cluster: Any) -> bool:
    return handler.eks_backend.clusters.get(cluster.name) is cluster


class ClusterHandlers(EKSHandlers):
    @client_tokens.eks("cluster", _cluster_exists)
    def create_cluster(self) -> ActionResult:
        body = self.body_json()
        name = body.get("name")
        backend = self.eks_backend
        if name in backend.clusters:
            return super().create_cluster()  # moto's ResourceInUseException, as AWS answers
        version = body.get("version") or addon_catalog.DEFAULT_KUBERNETES_VERSION
        if version not in cluster_versions.OFFERED:
            raise invalid_parameter(f"unsupported Kubernetes version {version}", clusterName=name)
        requested = body.get("resourcesVpcConfig") or {}
        vpc_id = vpc_of_subnets(backend, name, requested.get("subnetIds"), min_zones=2)
        # ACTIVE the profile's delay after the request, as in AWS: starting the control plane (seconds) is part of
        # the cluster's creation, not added to it.
        deadline = lifecycle.deadline("eks.create_cluster")
        result = super().create_cluster()
        cluster = backend.clusters[name]
        cluster.version = version
        self._complete(cluster, body, vpc_id)
        # But never ACTIVE before a client could see CREATING: a control plane that started slower than the
        # delay (a loaded machine, a short time scale) still shows CREATING for a moment after the call returns.
        shown = min(lifecycle.deadline("eks.create_cluster"), time.monotonic() + 1.0)
        lifecycle.begin(cluster, "status", "CREATING", ACTIVE, max(deadline, shown))
        return result

    def _complete(self, cluster: Any, body: dict[str, Any], vpc_id: str) -> None:
        region = self.eks_backend.region_name
        ident = uuid.uuid4().hex.upper()
        cluster.identity = {"oidc": {"issuer": f"https://oidc.eks.{region}.amazonaws.com/id/{ident}"}}
        # The endpoint is the cluster's own Kubernetes control plane, whose serving certificate the CA signed.
        authority = k8s.new_authority()
        cluster.certificate_authority = {"data": authority.data}
        cluster.endpoint = k8s.start(self.eks_backend, cluster, authority).url
        cluster.health = {"issues": []}
        cluster.kubernetes_network_config = {"ipFamily": "ipv4", **cluster.kubernetes_network_config}

        ec2 = ec2_backends[self.eks_backend.account_id][region]
        group = ec2.create_security_group(
            name=f"eks-cluster-sg-{cluster.name}-{random_id(10, '0123456789')}",
            description=CLUSTER_SG_DESCRIPTION,
            vpc_id=vpc_id,
            tags={"Name": f"eks-cluster-sg-{cluster.name}", f"kubernetes.io/cluster/{cluster.name}": "owned",
                  "aws:eks:cluster-name": cluster.name},
        )
        extras(cluster).security_group_id = group.id
        requested = body.get("resourcesVpcConfig") or {}
        cluster.resources_vpc_config = {
            "subnetIds": requested.get("subnetIds", []),
            "securityGroupIds": requested.get("securityGroupIds", []),
            "clusterSecurityGroupId": group.id,
            "vpcId": vpc_id,
            "endpointPublicAccess": requested.get("endpointPublicAccess", True),
            "endpointPrivateAccess": requested.get("endpointPrivateAccess", False),
            "publicAccessCidrs": requested.get("publicAccessCidrs", ["0.0.0.0/0"]),
        }

        access = body.get("accessConfig") or {}
        cluster.access_config = {
            "authenticationMode": access.get("authenticationMode", "CONFIG_MAP"),
            "bootstrapClusterCreatorAdminPermissions": access.get("bootstrapClusterCreatorAdminPermissions", True),
        }
        cluster.upgrade_policy = {"supportType": (body.get("upgradePolicy") or {}).get("supportType", "EXTENDED")}
        if cluster.access_config["authenticationMode"] != "CONFIG_MAP" and cluster.access_config[
            "bootstrapClusterCreatorAdminPermissions"
        ]:
            self._bootstrap_creator(cluster)

    def _bootstrap_creator(self, cluster: Any) -> None:
        sts = sts_backends[self.current_account][self.partition]
        _, caller_arn, _ = sts.get_caller_identity(self.get_access_key(), self.region)
        entry = access_entries.create(self.eks_backend, cluster, iam_principal(caller_arn), check_principal=False)
        access_entries.associate_policy(
            cluster, entry, access_entries.POLICY_PREFIX + "AmazonEKSClusterAdminPolicy", {"type": "cluster"}
        )

    def delete_cluster(self) -> ActionResult:
        cluster = self.cluster()
        if cluster.status != "DELETING":
            if updates.in_progress(cluster):
                raise in_use(
                    f"Cannot delete because cluster {cluster.name} currently has an update in progress",
                    clusterName=cluster.name,
                )
            if cluster.nodegroups:
                raise in_use(CLUSTER_IN_USE_MSG, clusterName=cluster.name, nodegroupName=",".join(cluster.nodegroups))
            lifecycle.begin(cluster, "status", "DELETING", lifecycle.GONE, lifecycle.deadline("eks.delete_cluster"))
        return ActionResult({"cluster": cluster})

    def update_cluster_version(self) -> ActionResult:
        cluster = self.cluster()
        version = self.body_json().get("version")
        updates.require_no_update(cluster, "VersionUpdate")
        versions = addon_catalog.KUBERNETES_VERSIONS
        if version not in versions or versions.index(version) != versions.index(cluster.version) + 1:
            raise invalid_parameter(
                f"Unsupported Kubernetes minor version update from {cluster.version} to {version}",
                clusterName=cluster.name,
            )
        _check_node_skew(cluster, version)
        cluster.version = version
        cluster.platformVersion = "eks.1"
        update = updates.Update(type="VersionUpdate", params=updates.params(Version=version, PlatformVersion="eks.1"))
        return ActionResult({"update": updates.start(cluster, cluster, "eks.update_cluster", update)})

    def update_cluster_config(self) -> ActionResult:
        cluster = self.cluster()
        body = {k: v for k, v in self.body_json().items() if k != "clientRequestToken"}
        if len(body) != 1:
            raise invalid_parameter(
                "Only one type of update can be allowed." if body else "No update was requested.",
                clusterName=cluster.name,
            )
        (member, value), = body.items()
        if member == "resourcesVpcConfig":
            update_type = "VpcConfigUpdate" if {"subnetIds", "securityGroupIds"} & set(value) else "EndpointAccessUpdate"
        else:
            update_type = UPDATE_TYPES.get(member, "ConfigUpdate")
        updates.require_no_update(cluster, update_type)
        apply = {
            "resourcesVpcConfig": self._update_vpc_config,
            "logging": self._update_logging,
            "accessConfig": self._update_access_config,
        }.get(member, self._update_other)
        update = updates.Update(type=update_type, params=apply(cluster, member, value))
        return ActionResult({"update": updates.start(cluster, cluster, "eks.update_cluster", update)})

    def associate_encryption_config(self) -> ActionResult:
        cluster = self.cluster()
        config = self.body_json().get("encryptionConfig") or []
        updates.require_no_update(cluster, "AssociateEncryptionConfig")
        if cluster.encryption_config:
            raise invalid_parameter("Cluster already has secrets encryption enabled", clusterName=cluster.name)
        if not config or not all((c.get("provider") or {}).get("keyArn") for c in config):
            raise invalid_parameter("encryptionConfig needs a provider keyArn", clusterName=cluster.name)
        cluster.encryption_config = config
        update = updates.Update(type="AssociateEncryptionConfig", params=updates.params(EncryptionConfig=config))
        return ActionResult({"update": updates.start(cluster, cluster, "eks.update_cluster", update)})

    def _update_vpc_config(self, cluster: Any, _member: str, requested: dict[str, Any]) -> list[dict[str, str]]:
        current = cluster.resources_vpc_config
        if "subnetIds" in requested:
            vpc_of_subnets(self.eks_backend, cluster.name, requested["subnetIds"], min_zones=2)
        merged = {**current, **{k: v for k, v in requested.items() if k in current}}
        if merged == current:
            raise invalid_parameter(
                f"Cluster is already at the desired configuration with endpointPrivateAccess: "
                f"{_bool(current['endpointPrivateAccess'])} , endpointPublicAccess: "
                f"{_bool(current['endpointPublicAccess'])}, and Public Endpoint Restrictions: "
                f"[{', '.join(current['publicAccessCidrs'])}]",
                clusterName=cluster.name,
            )
        cluster.resources_vpc_config = merged
        return updates.params(
            EndpointPublicAccess=requested.get("endpointPublicAccess"),
            EndpointPrivateAccess=requested.get("endpointPrivateAccess"),
            PublicAccessCidrs=requested.get("publicAccessCidrs"),
            Subnets=requested.get("subnetIds"),
            SecurityGroups=requested.get("securityGroupIds"),
        )

    def _update_logging(self, cluster: Any, _member: str, requested: dict[str, Any]) -> list[dict[str, str]]:
        changed, merged = _merged_logging(cluster.logging, requested)
        if not changed:
            raise invalid_parameter("No changes needed for the logging config provided", clusterName=cluster.name)
        cluster.logging = merged
        return updates.params(ClusterLogging=requested)

    def _update_access_config(self, cluster: Any, _member: str, requested: dict[str, Any]) -> list[dict[str, str]]:
        old = cluster.access_config["authenticationMode"]
        new = requested.get("authenticationMode", old)
        # AWS only moves towards API (CONFIG_MAP → API_AND_CONFIG_MAP → API), never back.
        if new not in AUTH_MODE_ORDER or AUTH_MODE_ORDER.index(new) <= AUTH_MODE_ORDER.index(old):
            raise invalid_parameter(f"Unsupported authentication mode update from {old} to {new}", clusterName=cluster.name)
        cluster.access_config = {**cluster.access_config, "authenticationMode": new}
        return updates.params(AuthenticationMode=new)

    def _update_other(self, cluster: Any, member: str, value: Any) -> list[dict[str, str]]:
        setattr(cluster, xform_name(member), value)
        return updates.params(**{member[0].upper() + member[1:]: value})

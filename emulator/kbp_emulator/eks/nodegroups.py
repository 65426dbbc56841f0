"""EKS managed node groups: life cycles and AWS's defaults on top of moto's CreateNodegroup, DeleteNodegroup and
UpdateNodegroupConfig, plus UpdateNodegroupVersion, which moto 5.2.5 does not serve.

moto gives a new node group Kubernetes 1.19 and an SSH key nobody asked for, and shares one scaling config
between node groups; here a node group gets its cluster's version, a matching release version, AL2023, no
remote access unless requested, and its own scaling config. With an API authentication mode, EKS makes an
EC2_LINUX access entry for the node role, as AWS does. A node group's Kubernetes version is never newer than its
cluster's nor more than 3 minor versions older (EKS's kubelet skew from Kubernetes 1.28).
"""

from __future__ import annotations

from typing import Any

from moto.core.responses import ActionResult
from moto.eks.models import Nodegroup

from .. import client_tokens, lifecycle
from . import access_entries, addon_catalog, cluster_versions, updates
from .base import ACTIVE, EKSHandlers, in_use, invalid_parameter
from .cluster_extras import extras
from .clusters import vpc_of_subnets

RELEASE_DATE = "20251120"
NOT_ACTIVE = "Nodegroup cannot be updated as it is currently not in Active State"


def release_version(kubernetes_version: str) -> str:
    """An AMI release version for `kubernetes_version`, e.g. 1.31.13-20251120."""
    newest = addon_catalog.default_version("kube-proxy", kubernetes_version) or f"v{kubernetes_version}.0-"
    return f"{newest[1:].split('-')[0]}-{RELEASE_DATE}"


def _check_version(cluster: Any, version: str) -> None:
    """A node group's Kubernetes version is one EKS knows, never newer than its cluster's, and at most
    `cluster_versions.max_node_skew` (3) minor versions older."""
    versions = addon_catalog.KUBERNETES_VERSIONS
    if version not in versions or versions.index(version) > versions.index(cluster.version):
        raise invalid_parameter(
            f"Requested Nodegroup Kubernetes version {version} is not supported by cluster version {cluster.version}",
            clusterName=cluster.name,
        )
    allowed = cluster_versions.max_node_skew(cluster.version)
    if cluster_versions.node_skew(cluster.version, version) > allowed:
        raise invalid_parameter(
            f"Requested Nodegroup Kubernetes version {version} is not supported by cluster version {cluster.version}: "
            f"a node group can be at most {allowed} minor versions older than its cluster",
            clusterName=cluster.name,
        )


def _check_scaling(cluster: Any, name: str, scaling: dict[str, int]) -> None:
    low, want, high = scaling.get("minSize", 0), scaling.get("desiredSize", 0), scaling.get("maxSize", 1)
    if low > want:
        raise invalid_parameter(f"Minimum capacity {low} can't be greater than desired size {want}",
                                clusterName=cluster.name, nodegroupName=name)
    if want > high:
        raise invalid_parameter(f"Desired capacity {want} can't be greater than max size {high}",
                                clusterName=cluster.name, nodegroupName=name)
    if high < 1:
        raise invalid_parameter(f"Maximum capacity {high} can't be less than 1", clusterName=cluster.name, nodegroupName=name)


def _complete(nodegroup: Nodegroup, cluster: Any, body: dict[str, Any]) -> None:
    nodegroup.version = body.get("version") or cluster.version
    nodegroup.release_version = body.get("releaseVersion") or release_version(nodegroup.version)
    nodegroup.ami_type = body.get("amiType") or "AL2023_x86_64_STANDARD"
    nodegroup.remote_access = body.get("remoteAccess")
    nodegroup.resources = {"autoScalingGroups": [{"name": f"eks-{nodegroup.nodegroup_name}-{nodegroup.uuid}"}]}
    if nodegroup.remote_access:
        nodegroup.resources["remoteAccessSecurityGroup"] = f"sg-{nodegroup.uuid.replace('-', '')[:17]}"
    nodegroup.disk_size = None if body.get("launchTemplate") else body.get("diskSize") or 20
    nodegroup.scaling_config = dict(nodegroup.scaling_config)
    nodegroup.health = {"issues": []}
    nodegroup.update_config = body.get("updateConfig") or {"maxUnavailable": 1}


def _nodegroup_exists(handler: Any, nodegroup: Nodegroup) -> bool:
    return handler.cluster().nodegroups.get(nodegroup.nodegroup_name) is nodegroup


class NodegroupHandlers(EKSHandlers):
    def _nodegroup(self, cluster: Any) -> Nodegroup:
        return self.eks_backend.describe_nodegroup(cluster.name, self.path_param("nodegroupName"))

    @client_tokens.eks("nodegroup", _nodegroup_exists)
    def create_nodegroup(self) -> ActionResult:
        cluster = self.cluster()
        body = self.body_json()
        name = body.get("nodegroupName")
        # Name clashes and a cluster that is not ACTIVE are moto's to report (it words them as AWS does).
        if name not in cluster.nodegroups and cluster.status == ACTIVE:
            if not body.get("subnets"):
                raise invalid_parameter("Subnets are required", clusterName=cluster.name, nodegroupName=name)
            vpc = vpc_of_subnets(self.eks_backend, cluster.name, body["subnets"], min_zones=1)
            if vpc != cluster.resources_vpc_config.get("vpcId", vpc):
                raise invalid_parameter("Subnets specified must be in the cluster's VPC", clusterName=cluster.name)
            _check_version(cluster, body.get("version") or cluster.version)
            _check_scaling(cluster, name, body.get("scalingConfig") or {"minSize": 2, "maxSize": 2, "desiredSize": 2})
        result = super().create_nodegroup()
        nodegroup = cluster.nodegroups[name]
        _complete(nodegroup, cluster, body)
        self._node_access_entry(cluster, nodegroup)
        lifecycle.begin(nodegroup, "status", "CREATING", ACTIVE, lifecycle.deadline("eks.create_nodegroup"))
        return result

    def _node_access_entry(self, cluster: Any, nodegroup: Nodegroup) -> None:
        mode = getattr(cluster, "access_config", {}).get("authenticationMode", "CONFIG_MAP")
        if mode == "CONFIG_MAP" or nodegroup.node_role in extras(cluster).access_entries:
            return
        entry_type = "EC2_WINDOWS" if nodegroup.ami_type.startswith("WINDOWS") else "EC2_LINUX"
        access_entries.create(self.eks_backend, cluster, nodegroup.node_role, entry_type, check_principal=False)

    def delete_nodegroup(self) -> ActionResult:
        cluster = self.cluster()
        nodegroup = self._nodegroup(cluster)
        if nodegroup.status != "DELETING":
            until = lifecycle.deadline("eks.delete_nodegroup")
            lifecycle.begin(nodegroup, "status", "DELETING", lifecycle.GONE, until)
        return ActionResult({"nodegroup": nodegroup})

    def update_nodegroup_config(self) -> ActionResult:
        cluster = self.cluster()
        nodegroup = self._nodegroup(cluster)
        body = self.body_json()
        name = nodegroup.nodegroup_name
        if nodegroup.status != ACTIVE:
            raise in_use(NOT_ACTIVE, clusterName=cluster.name, nodegroupName=name)
        scaling = body.get("scalingConfig")
        if scaling:
            _check_scaling(cluster, name, {**nodegroup.scaling_config, **scaling})
        labels, taints, repair = body.get("labels") or {}, body.get("taints") or {}, body.get("nodeRepairConfig")
        self.eks_backend.update_nodegroup_config(
            cluster_name=cluster.name,
            nodegroup_name=name,
            labels=labels,
            taints=taints,
            scaling_config=scaling,
            update_config=body.get("updateConfig"),
            node_repair_config=repair,
        )
        update_config = body.get("updateConfig") or {}
        update = updates.Update(
            type="ConfigUpdate",
            nodegroup_name=name,
            params=updates.params(
                LabelsToAdd=labels.get("addOrUpdateLabels"),
                LabelsToRemove=labels.get("removeLabels"),
                TaintsToAdd=taints.get("addOrUpdateTaints"),
                TaintsToRemove=taints.get("removeTaints"),
                MinSize=(scaling or {}).get("minSize"),
                MaxSize=(scaling or {}).get("maxSize"),
                DesiredSize=(scaling or {}).get("desiredSize"),
                MaxUnavailable=update_config.get("maxUnavailable"),
                MaxUnavailablePercentage=update_config.get("maxUnavailablePercentage"),
                NodeRepairEnabled=(repair or {}).get("enabled"),
            ),
        )
        return ActionResult({"update": updates.start(cluster, nodegroup, "eks.update_nodegroup", update)})

    def update_nodegroup_version(self) -> ActionResult:
        cluster = self.cluster()
        nodegroup = self._nodegroup(cluster)
        body = self.body_json()
        if nodegroup.status != ACTIVE:
            raise in_use(NOT_ACTIVE, clusterName=cluster.name, nodegroupName=nodegroup.nodegroup_name)
        version = body.get("version") or cluster.version
        _check_version(cluster, version)
        release = body.get("releaseVersion") or release_version(version)
        nodegroup.version, nodegroup.release_version = version, release
        template = body.get("launchTemplate")
        if template:
            nodegroup.launch_template = {**(nodegroup.launch_template or {}), **template}
        update = updates.Update(
            type="VersionUpdate",
            nodegroup_name=nodegroup.nodegroup_name,
            params=updates.params(
                Version=version,
                ReleaseVersion=release,
                LaunchTemplateName=(template or {}).get("name"),
                LaunchTemplateVersion=(template or {}).get("version"),
            ),
        )
        return ActionResult({"update": updates.start(cluster, nodegroup, "eks.update_nodegroup", update)})

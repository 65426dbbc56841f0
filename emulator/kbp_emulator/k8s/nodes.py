"""The Nodes of the cluster's EKS managed node groups, as kubelets on their instances would register them.

Every ACTIVE (or UPDATING) node group of the cluster in the emulator's EKS backend has `desiredSize` Ready nodes
named `ip-10-0-x-y.<region>.compute.internal` (an address in one of its subnets, zones round-robin), with the
labels EKS and the kubelet put on them plus the node group's `labels`, and the node group's `taints`. kubelets.py
registers them and retires those no node group wants any more; Nodes made through the API are left alone.
"""

from __future__ import annotations

import ipaddress
import secrets
from typing import Any

from .. import lifecycle
from .plane_view import PlaneView

NODEGROUP_LABEL = "eks.amazonaws.com/nodegroup"
TAINT_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute", "PREFER_NO_SCHEDULE": "PreferNoSchedule"}
#: Capacity of a few instance types, (cpu, memory Ki, max pods); others get t3.medium's.
CAPACITY = {
    "t3.medium": ("2", 3943000, 17),
    "t3.large": ("2", 7992000, 35),
    "t3.xlarge": ("4", 16092000, 58),
    "m5.large": ("2", 7902000, 29),
    "m5.xlarge": ("4", 15896000, 58),
    "c5.large": ("2", 3795000, 29),
}


def _subnets(cp: PlaneView, ids: list[str]) -> list[tuple[str, str, str, str]]:
    """(subnet id, zone, CIDR, zone ID) of each subnet the EC2 backend knows."""
    out = []
    ec2 = cp.ec2()
    for subnet_id in ids or []:
        try:
            subnet = ec2.get_subnet(subnet_id)
            zone_id = getattr(subnet, "availability_zone_id", None) or _zone_id(cp.region, subnet.availability_zone)
        except Exception:
            continue
        out.append((subnet_id, subnet.availability_zone, str(subnet.cidr_block), zone_id))
    return out


def _address(cp: PlaneView, cidr: str) -> str:
    net = ipaddress.ip_network(cidr, strict=False)
    taken = set(cp.node_addresses.values())
    for _ in range(100):
        # AWS reserves the first four addresses and the last one of a subnet.
        ip = str(net.network_address + 4 + secrets.randbelow(max(net.num_addresses - 5, 1)))
        if ip not in taken:
            return ip
    return str(net.network_address + 4)


def desired_nodes(cp: PlaneView) -> dict[str, dict[str, Any]]:
    """Node name → Node object for every instance the node groups should have now."""
    wanted: dict[str, dict[str, Any]] = {}
    for ng in list(getattr(cp.cluster, "nodegroups", {}).values()):
        if lifecycle.effective(ng, "status") not in ("ACTIVE", "UPDATING"):
            continue
        size = int((ng.scaling_config or {}).get("desiredSize", 0) or 0)
        subnets = _subnets(cp, ng.subnets)
        if not subnets:
            continue
        for i in range(size):
            ident = (ng.uuid, i)
            if ident not in cp.node_addresses:
                cp.node_addresses[ident] = _address(cp, subnets[i % len(subnets)][2])
                cp.node_instances[ident] = "i-0" + secrets.token_hex(8)[:16]
            _, zone, _, zone_id = subnets[i % len(subnets)]
            ip = cp.node_addresses[ident]
            name = f"ip-{ip.replace('.', '-')}.{cp.region}.compute.internal"
            wanted[name] = _node(cp, ng, name, ip, zone, zone_id, cp.node_instances[ident])
    return wanted


def _zone_id(region: str, zone: str) -> str:
    """us-west-2a → usw2-az1 (AWS's zone IDs differ per account; these are stable and plausible)."""
    parts = region.split("-")
    if not zone.startswith(region) or len(parts) < 3:
        return zone
    letter = zone[len(region):][:1] or "a"
    return f"{parts[0]}{''.join(p[0] for p in parts[1:-1])}{parts[-1]}-az{ord(letter) - ord('a') + 1}"


def _node(cp: PlaneView, ng: Any, name: str, ip: str, zone: str, zone_id: str, instance: str) -> dict[str, Any]:
    instance_type = (ng.instance_types or ["t3.medium"])[0]
    arch = "arm64" if "ARM" in (ng.ami_type or "") else "amd64"
    cpu, memory, pods = CAPACITY.get(instance_type, CAPACITY["t3.medium"])
    labels = {
        "beta.kubernetes.io/arch": arch,
        "beta.kubernetes.io/instance-type": instance_type,
        "beta.kubernetes.io/os": "linux",
        "eks.amazonaws.com/capacityType": ng.capacity_type or "ON_DEMAND",
        NODEGROUP_LABEL: ng.nodegroup_name,
        "eks.amazonaws.com/nodegroup-image": "ami-0" + ng.uuid.replace("-", "")[:16],
        "eks.amazonaws.com/sourceLaunchTemplateVersion": "1",
        "failure-domain.beta.kubernetes.io/region": cp.region,
        "failure-domain.beta.kubernetes.io/zone": zone,
        "k8s.io/cloud-provider-aws": "a" * 32,
        "kubernetes.io/arch": arch,
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": instance_type,
        "topology.k8s.aws/zone-id": zone_id,
        "topology.kubernetes.io/region": cp.region,
        "topology.kubernetes.io/zone": zone,
        **(ng.labels or {}),
    }
    taints = [
        {"key": t.get("key"), **({"value": t["value"]} if t.get("value") else {}),
         "effect": TAINT_EFFECTS.get(t.get("effect"), t.get("effect"))}
        for t in (ng.taints or [])
    ]
    spec: dict[str, Any] = {"providerID": f"aws:///{zone}/{instance}"}
    if taints:
        spec["taints"] = taints
    allocatable_cpu = f"{int(cpu) * 1000 - 70}m"
    # The kubelet's version is the node group's (its AMI release), not the control plane's.
    version = (getattr(ng, "release_version", "") or "").split("-")[0] or f"{ng.version or cp.kubernetes_version}.0"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": labels,
            "annotations": {"alpha.kubernetes.io/provided-node-ip": ip, "node.alpha.kubernetes.io/ttl": "0",
                            "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
        },
        "spec": spec,
        "status": {
            "addresses": [
                {"type": "InternalIP", "address": ip},
                {"type": "InternalDNS", "address": name},
                {"type": "Hostname", "address": name},
            ],
            "allocatable": {"cpu": allocatable_cpu, "ephemeral-storage": "18242267924", "hugepages-1Gi": "0",
                            "hugepages-2Mi": "0", "memory": f"{memory - 400000}Ki", "pods": str(pods)},
            "capacity": {"cpu": cpu, "ephemeral-storage": "20959212Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                         "memory": f"{memory}Ki", "pods": str(pods)},
            "conditions": [
                {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory",
                 "message": "kubelet has sufficient memory available"},
                {"type": "DiskPressure", "status": "False", "reason": "KubeletHasNoDiskPressure",
                 "message": "kubelet has no disk pressure"},
                {"type": "PIDPressure", "status": "False", "reason": "KubeletHasSufficientPID",
                 "message": "kubelet has sufficient PID available"},
                {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status"},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "architecture": arch,
                "bootID": "",
                "containerRuntimeVersion": "containerd://1.7.27",
                "kernelVersion": "6.1.141-155.222.amzn2023.x86_64",
                "kubeProxyVersion": f"v{version}-eks-4096722",
                "kubeletVersion": f"v{version}-eks-4096722",
                "machineID": "ec2" + instance[2:],
                "operatingSystem": "linux",
                "osImage": "Amazon Linux 2023.7.20250623",
                "systemUUID": "ec2" + instance[2:],
            },
        },
    }

"""What the extension keeps of each EKS cluster beside moto's own state, and what a cluster takes with it when it
is gone.

moto's `Cluster` object is the one place a cluster's state lives; what moto has no field for (add-ons, access
entries, pod identity associations, updates, the cluster security group) hangs off it as `cluster.kbp`, so it
is shared with moto's handlers and disappears with the cluster. The insights' last statuses are kept there too,
for their `lastTransitionTime`.

A cluster that finished deleting (`base.settle`) releases what CreateCluster made for it outside moto's cluster
state: its Kubernetes control plane (package `k8s`) and its cluster security group.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from moto.ec2.models import ec2_backends
from moto.eks.models import Cluster

from .. import k8s


@dataclass
class ClusterExtras:
    addons: dict[str, Any] = field(default_factory=dict)  # add-on name → Addon
    access_entries: dict[str, Any] = field(default_factory=dict)  # principal ARN → AccessEntry
    pod_identity_associations: dict[str, Any] = field(default_factory=dict)  # association ID → association
    updates: dict[str, Any] = field(default_factory=dict)  # update ID → Update, oldest first
    security_group_id: str | None = None
    insight_statuses: dict[str, tuple[str, Any]] = field(default_factory=dict)  # insight kind → (status, since)


def extras(cluster: Cluster) -> ClusterExtras:
    if not hasattr(cluster, "kbp"):
        cluster.kbp = ClusterExtras()
    return cluster.kbp


def release(backend: Any, cluster: Any) -> None:
    """What a cluster takes with it when it is gone: its Kubernetes control plane and its security group."""
    k8s.stop(cluster)
    group_id = extras(cluster).security_group_id
    if group_id:
        try:
            ec2_backends[backend.account_id][backend.region_name].delete_security_group(group_id=group_id)
        except Exception:  # already deleted, or still referenced: AWS would retry; the emulator leaves it
            pass

"""EKS updates: the record AWS keeps of each change to a cluster, node group or add-on (DescribeUpdate,
ListUpdates), whose status goes InProgress → Successful together with its resource's UPDATING → ACTIVE.

The change itself is applied when the update starts, so a describe shows the new values at once; only the
statuses follow the life cycle.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from moto.core.responses import ActionResult

from .. import lifecycle
from .base import ACTIVE, EKSHandlers, in_use, new_uuid, not_found, now
from .cluster_extras import extras


@dataclass
class Update:
    type: str
    params: list[dict[str, str]]
    nodegroup_name: str | None = None
    addon_name: str | None = None
    id: str = field(default_factory=new_uuid)
    status: str = "InProgress"
    created_at: Any = field(default_factory=now)
    errors: list[Any] = field(default_factory=list)


def params(**values: Any) -> list[dict[str, str]]:
    """UpdateParam list from keyword arguments, skipping unset ones: params(Version="1.32")."""
    return [{"type": k, "value": v if isinstance(v, str) else _text(v)} for k, v in values.items() if v is not None]


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def in_progress(cluster: Any, nodegroup_name: str | None = None, addon_name: str | None = None) -> Update | None:
    """The update of that cluster (or node group, or add-on) that has not finished yet."""
    for update in extras(cluster).updates.values():
        if update.status == "InProgress" and (update.nodegroup_name, update.addon_name) == (nodegroup_name, addon_name):
            return update
    return None


def require_no_update(cluster: Any, update_type: str) -> None:
    """AWS refuses a second cluster change while one is running, naming the running update."""
    running = in_progress(cluster)
    if running:
        raise in_use(
            f"Cannot {update_type} because cluster {cluster.name} currently has update {running.id} in progress",
            clusterName=cluster.name,
        )
    if cluster.status != ACTIVE:
        raise in_use(f"Cluster {cluster.name} is currently {cluster.status}; wait until it is ACTIVE", clusterName=cluster.name)


def start(cluster: Any, resource: Any, operation: str, update: Update) -> Update:
    """Records `update` and puts `resource` (the cluster, a node group or an add-on) into UPDATING."""
    until = lifecycle.deadline(operation)
    lifecycle.begin(resource, "status", "UPDATING", ACTIVE, until)
    lifecycle.begin(update, "status", "InProgress", "Successful", until)
    extras(cluster).updates[update.id] = update
    return update


class UpdateHandlers(EKSHandlers):
    def describe_update(self) -> ActionResult:
        cluster = self.cluster()
        update_id = self.path_param("updateId")
        update = extras(cluster).updates.get(update_id)
        target = (self.query_one("nodegroupName"), self.query_one("addonName"))
        if update is None or (update.nodegroup_name, update.addon_name) != target:
            raise not_found(f"No update found for ID: {update_id}", clusterName=cluster.name)
        return ActionResult({"update": update})

    def list_updates(self) -> ActionResult:
        cluster = self.cluster()
        target = (self.query_one("nodegroupName"), self.query_one("addonName"))
        ids = [u.id for u in extras(cluster).updates.values() if (u.nodegroup_name, u.addon_name) == target]
        ids, token = self.page(ids)
        return ActionResult({"updateIds": ids, "nextToken": token})

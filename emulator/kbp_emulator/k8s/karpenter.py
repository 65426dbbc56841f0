"""Karpenter's controller on a real control plane, reduced to what a teardown depends on: its finalizers.

"Up" means a Deployment whose pod template runs `public.ecr.aws/karpenter/controller*` has an available
replica (its pods run on the node group's Nodes, see kubelets.py). While it is up:

- a NodeClaim gets the `karpenter.sh/termination` finalizer; one being deleted first has its Node
  (`status.nodeName`) deleted — the instance is terminated — and loses the finalizer the profile's
  `k8s.node_termination` seconds later, once that Node is gone;
- an EC2NodeClass gets the `karpenter.k8s.aws/termination` finalizer, and loses it when it is being deleted and
  no NodeClaim refers to it (`spec.nodeClassRef.name`).

While it is not up nothing happens, so a deletion waiting on these finalizers hangs, as in a cluster whose
Karpenter was removed first. NodePools need nothing: the API server's garbage collector deletes their
NodeClaims (owner references). Provisioning, disruption and status conditions are not simulated.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from .. import lifecycle
from .client import Conflict, NotFound
from .plane_view import PlaneView

IMAGE_PREFIX = "public.ecr.aws/karpenter/controller"
NODECLAIMS = "/apis/karpenter.sh/v1/nodeclaims"
NODECLASSES = "/apis/karpenter.k8s.aws/v1/ec2nodeclasses"
NODECLAIM_FINALIZER = "karpenter.sh/termination"
NODECLASS_FINALIZER = "karpenter.k8s.aws/termination"


@dataclass
class Memory:
    #: NodeClaim uid → when its instance is terminated (and its finalizer goes).
    terminated: dict[str, float] = field(default_factory=dict)


class KarpenterPlane(PlaneView, Protocol):
    """A plane that keeps Karpenter's memory (`ControlPlane.karpenter`)."""

    karpenter: Memory


def up(plane: PlaneView) -> bool:
    for deployment in plane.api.items("/apis/apps/v1/deployments"):
        containers = deployment["spec"]["template"]["spec"].get("containers") or []
        if any(c.get("image", "").startswith(IMAGE_PREFIX) for c in containers):
            if (deployment.get("status") or {}).get("availableReplicas", 0) > 0:
                return True
    return False


def reconcile(plane: KarpenterPlane) -> None:
    if not up(plane):
        return
    claims = plane.api.items(NODECLAIMS)
    nodeclasses = plane.api.items(NODECLASSES)
    if any(o["metadata"].get("deletionTimestamp") for o in claims + nodeclasses):
        plane.busy = True
    for claim in claims:
        _nodeclaim(plane, claim)
    referred = {(c.get("spec") or {}).get("nodeClassRef", {}).get("name") for c in claims}
    for nodeclass in nodeclasses:
        meta = nodeclass["metadata"]
        if not meta.get("deletionTimestamp"):
            _finalize(plane, f"{NODECLASSES}/{meta['name']}", meta, NODECLASS_FINALIZER, add=True)
        elif meta["name"] not in referred:
            _finalize(plane, f"{NODECLASSES}/{meta['name']}", meta, NODECLASS_FINALIZER, add=False)


def _nodeclaim(plane: KarpenterPlane, claim: dict[str, Any]) -> None:
    meta = claim["metadata"]
    path = f"{NODECLAIMS}/{meta['name']}"
    if not meta.get("deletionTimestamp"):
        _finalize(plane, path, meta, NODECLAIM_FINALIZER, add=True)
        return
    node = (claim.get("status") or {}).get("nodeName")
    if node:
        try:
            plane.api.call("GET", f"/api/v1/nodes/{node}")
            plane.api.call("DELETE", f"/api/v1/nodes/{node}")
            return  # the Node goes first; the finalizer on a later tick
        except NotFound:
            pass
    terminated = plane.karpenter.terminated.setdefault(meta["uid"], lifecycle.deadline("k8s.node_termination"))
    if time.monotonic() >= terminated:
        _finalize(plane, path, meta, NODECLAIM_FINALIZER, add=False)


def _finalize(plane: PlaneView, path: str, meta: dict[str, Any], finalizer: str, add: bool) -> None:
    finalizers = list(meta.get("finalizers") or [])
    if (finalizer in finalizers) == add:
        return
    finalizers = [*finalizers, finalizer] if add else [f for f in finalizers if f != finalizer]
    try:
        # resourceVersion makes it a compare-and-swap: another writer meanwhile means a retry next tick.
        plane.api.merge_patch(path, {"metadata": {"finalizers": finalizers, "resourceVersion": meta["resourceVersion"]}})
    except (NotFound, Conflict):
        pass

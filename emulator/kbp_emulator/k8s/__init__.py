"""Each EKS cluster's Kubernetes API: a real control plane of its own.

CreateCluster starts etcd, kube-apiserver, kube-controller-manager and kube-scheduler with `scripts/kube.sh`
(built from the Kubernetes project's own modules, see kube/README.md), the apiserver's serving certificate
signed by the CA DescribeCluster reports (`tls.py`). Bearer tokens are authenticated by this emulator's
TokenReview webhook (`webhook.py`, with `auth.py`'s checks) as EKS's aws-iam-authenticator does, and
authorized by RBAC. What no control plane does by itself is simulated, as little as possible:

- `kubelets.py` (with `nodes.py`): the node groups' instances register Nodes and keep them Ready; pods bound to
  them run.
- `karpenter.py`: Karpenter's finalizers on NodeClaims and EC2NodeClasses, while its controller is Available.
- `ebs_csi.py`: the EBS CSI driver deleting the disks of released `Delete` volumes.

`start` is called by CreateCluster, `stop` when the cluster is gone; `install` makes moto's reset stop them too,
and each plane also stops when the emulator exits. The EKS side, which imports this package, hands `install` the
clusters' access entries the token webhook admits callers by. See README.md in this directory.

`KBP_EMULATOR_KUBE=none` leaves clusters without an API server (their endpoint refuses connections): for tests
of the AWS side only, such as the extension's own pytest suite, which should not start a control plane per
cluster.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable, Mapping
from typing import Any

from . import webhook
from .plane import ControlPlane
from .tls import Authority, new_authority

__all__ = ["Authority", "ControlPlane", "install", "new_authority", "start", "stop"]


class Unserved:
    """A cluster without an API server (KBP_EMULATOR_KUBE=none): an endpoint of its own where nothing listens."""

    def __init__(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.url = f"https://127.0.0.1:{s.getsockname()[1]}"

    def stop(self) -> None:
        pass


def start(backend: Any, cluster: Any, authority: Authority) -> ControlPlane | Unserved:
    """Starts the control plane of a new cluster; its `url` is the cluster's endpoint."""
    unserved = os.environ.get("KBP_EMULATOR_KUBE", "real") == "none"
    plane = Unserved() if unserved else ControlPlane(backend, cluster, authority)
    cluster._kbp_kube = plane
    return plane


def stop(cluster: Any) -> None:
    plane = getattr(cluster, "_kbp_kube", None)
    if plane is not None:
        plane.stop()


_installed = False


def install(access_entries: Callable[[Any], Mapping[str, Any]]) -> None:
    """Makes moto's backend reset (POST /moto-api/reset) stop the control planes of the clusters it forgets, and
    has the token webhook find a cluster's access entries with `access_entries(cluster)` (principal ARN → entry).

    With KBP_EMULATOR_K8S_DEBUG set, what the simulated kubelets, Karpenter and the token webhook do and what
    goes wrong for them is logged to stderr (the emulator's log).
    """
    global _installed
    webhook.use_access_entries(access_entries)
    if _installed:
        return
    if os.environ.get("KBP_EMULATOR_K8S_DEBUG"):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
        logger = logging.getLogger("kbp_emulator.k8s")
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
    from moto.eks.models import EKSBackend

    original = EKSBackend.reset

    def reset(self: Any) -> None:
        for cluster in list(getattr(self, "clusters", {}).values()):
            stop(cluster)
        original(self)

    EKSBackend.reset = reset
    _installed = True

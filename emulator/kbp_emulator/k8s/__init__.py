"""A Kubernetes API stand-in at each EKS cluster's endpoint.

No real kube-apiserver can run where kbp's tests run, so each cluster the emulator creates gets a small one in
process: HTTPS on 127.0.0.1 with a certificate from the cluster's own CA (the one DescribeCluster reports),
EKS bearer tokens, discovery, get/list/create/replace/patch (server-side apply, merge, JSON patch)/delete, CRDs
with schema pruning/defaulting/validation, finalizers and garbage collection, and simulated controllers
(deployments, replicasets, scheduler, kubelets, node registration from node groups, Karpenter). See README.md
in this directory for what is and is not modelled.

`start` is called by CreateCluster, `stop` when the cluster is gone; `install` makes moto's reset stop them too.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from . import real
from .controlplane import ControlPlane
from .tls import Authority, new_authority

__all__ = ["Authority", "ControlPlane", "install", "new_authority", "start", "stop"]


def start(backend: Any, cluster: Any, authority: Authority) -> ControlPlane | real.RealPlane:
    """Starts the control plane of a new cluster; its `url` is the cluster's endpoint.

    The stand-in, or with KBP_EMULATOR_KUBE=real a real kube-apiserver and its controllers (see real/).
    """
    plane = real.RealPlane(backend, cluster, authority) if real.enabled() else ControlPlane(backend, cluster, authority)
    cluster._kbp_kube = plane
    return plane


def stop(cluster: Any) -> None:
    plane = getattr(cluster, "_kbp_kube", None)
    if plane is not None:
        plane.stop()


_installed = False


def install() -> None:
    """Makes moto's backend reset (POST /moto-api/reset) stop the control planes of the clusters it forgets.

    With KBP_EMULATOR_K8S_DEBUG set, every request and controller hiccup is logged to stderr (the emulator's log).
    """
    global _installed
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

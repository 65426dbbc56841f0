"""An EKS cluster served by a real Kubernetes control plane instead of the in-process stand-in.

Unless `KBP_EMULATOR_KUBE=stand-in` is in the emulator's environment, CreateCluster starts etcd, kube-apiserver,
kube-controller-manager and kube-scheduler with `scripts/kube.sh` (built from the Kubernetes project's own
modules, see kube/README.md), its serving certificate signed by the CA DescribeCluster reports. Bearer tokens are
authenticated by this emulator's TokenReview webhook (`webhook.py`) as EKS's aws-iam-authenticator does, and
authorized by RBAC. What no control plane does by itself is simulated here, as little as possible:

- `kubelets.py`: the node groups' instances register Nodes and keep them Ready; pods bound to them run.
- `karpenter.py`: Karpenter's finalizers on NodeClaims and EC2NodeClasses, while its controller is Available.
- `ebs_csi.py`: the EBS CSI driver deleting the disks of released `Delete` volumes.

The plane stops when the cluster is gone (DeleteCluster done, moto's reset) and when the emulator exits.
"""

from __future__ import annotations

import os

from .plane import RealPlane

__all__ = ["RealPlane", "enabled"]


def enabled() -> bool:
    return os.environ.get("KBP_EMULATOR_KUBE", "real") == "real"

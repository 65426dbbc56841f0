"""What the simulations and the token webhook use of a running control plane: a Protocol `plane.ControlPlane`
satisfies.

plane.py drives the simulated kubelets (with nodes.py), Karpenter and the EBS CSI driver on every tick, and
registers each plane with the token webhook; those modules are handed the plane and type it with `PlaneView`, so
that they depend on what they use of it, not on the module that drives them.
"""

from __future__ import annotations

from typing import Any, Protocol

from .client import Client


class PlaneView(Protocol):
    backend: Any  # the cluster's EKS backend (moto's)
    cluster: Any  # moto's Cluster
    name: str
    region: str
    account: str
    #: The emulator's own calls to the plane's API server, with the admin token.
    api: Client
    #: Set by a step that has something on its way: the next tick comes sooner.
    busy: bool
    #: What node registration (nodes.py) remembers per instance: its address and instance id.
    node_addresses: dict[Any, str]
    node_instances: dict[Any, str]
    #: The plane's name at the token webhook, set when it registers.
    webhook_key: str

    @property
    def kubernetes_version(self) -> str: ...

    def ec2(self) -> Any:
        """The EC2 backend (moto's) of the cluster's account and region."""
        ...

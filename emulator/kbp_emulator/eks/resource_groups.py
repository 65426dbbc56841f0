"""EKS clusters, node groups and add-ons in the Resource Groups Tagging API (GetResources), as in AWS.

moto 5.2.5's tagging API asks every backend whose class mixes in `TaggableResourcesMixin` for its resources
(`moto.core.resource_tagging.iter_taggable_backends`); its `EKSBackend` does not, so GetResources never listed an
EKS resource, and a client finding its clusters by tag (`kbp gc`) saw none. AWS lists them as `eks:cluster`,
`eks:nodegroup` and `eks:addon`, with their ARNs and tags.

`install` puts a subclass that mixes it in in place of moto's class in `eks_backends`: a `BackendDict` builds
every account's backends from its `backend` attribute when that account is first used (and again after
`/moto-api/reset`), so the swap must come before any EKS backend exists, as the EKS patch does (it runs when the
first EKS request arrives). The other EKS resources (access entries, Pod Identity associations, Fargate profiles)
are left out: kbp does not look for them by tag.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

from moto.core.resource_tagging import TaggableResourcesMixin, TaggedResource
from moto.eks import models, urls

from .. import lifecycle
from .base import settle
from .tags import taggable_resources

#: The resource types GetResources reports, by the first part of the ARN's resource (`cluster/NAME`).
RESOURCE_TYPES = ("cluster", "nodegroup", "addon")


class TaggableEKSBackend(models.EKSBackend, TaggableResourcesMixin):
    SERVICE_NAMESPACE = "eks"

    @property
    def _url_module(self) -> ModuleType:
        # moto's server finds a service's routes from its backend class's module (`moto.eks.models` →
        # `moto.eks.urls`); this class lives elsewhere.
        return urls

    def iter_tagged_resources(self) -> Iterator[TaggedResource]:
        # Settled first, as every EKS request is (base.EKSHandlers.call_action): a cluster whose deletion has
        # finished is gone here too. Collected under the lock, yielded after it (moto pages a generator).
        with lifecycle.lock:
            settle(self)
            found = []
            for arn, resource in taggable_resources(self):
                kind = arn.split(":", 5)[5].split("/", 1)[0]
                if kind in RESOURCE_TYPES:
                    found.append(TaggedResource(arn=arn, tags=dict(resource.tags or {}), resource_type=f"eks:{kind}"))
        yield from found


def install() -> None:
    backends = models.eks_backends
    if backends.backend is TaggableEKSBackend:
        return
    # Backends already made keep moto's class and would be missing from GetResources.
    assert not backends, "the EKS tagging patch must be installed before any EKS backend exists"
    backends.backend = TaggableEKSBackend

"""EKS tagging (TagResource, UntagResource, ListTagsForResource) for every taggable resource. moto 5.2.5 only
tags clusters; AWS also tags node groups, add-ons, access entries, pod identity associations and Fargate
profiles by ARN.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from moto.core.responses import ActionResult, EmptyResult

from .base import EKSHandlers, NotFoundException
from .cluster_extras import extras


def taggable_resources(backend: Any) -> Any:
    """Every taggable resource in `backend`, with its ARN."""
    for cluster in backend.clusters.values():
        yield cluster.arn, cluster
        for nodegroup in cluster.nodegroups.values():
            yield nodegroup.arn, nodegroup
        for profile in cluster.fargate_profiles.values():
            yield profile.fargate_profile_arn, profile
        x = extras(cluster)
        for addon in x.addons.values():
            yield addon.addon_arn, addon
        for entry in x.access_entries.values():
            yield entry.access_entry_arn, entry
        for association in x.pod_identity_associations.values():
            yield association.association_arn, association


class TagHandlers(EKSHandlers):
    def _tagged(self) -> Any:
        # The ARN is the rest of the path after /tags/, percent-encoded by the SDKs.
        arn = unquote(self.path.split("/tags/", 1)[1])
        for candidate, resource in taggable_resources(self.eks_backend):
            if candidate == arn:
                if resource.tags is None:
                    resource.tags = {}
                return resource
        raise NotFoundException(message=f"Resource was not found: {arn}")

    def tag_resource(self) -> ActionResult:
        self._tagged().tags.update(self.body_json().get("tags") or {})
        return EmptyResult()

    def untag_resource(self) -> ActionResult:
        resource = self._tagged()
        for key in self.query("tagKeys"):
            resource.tags.pop(key, None)
        return EmptyResult()

    def list_tags_for_resource(self) -> ActionResult:
        return ActionResult({"tags": dict(self._tagged().tags)})

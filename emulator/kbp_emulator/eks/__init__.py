"""The EKS extension: one response class that serves moto's EKS operations plus the missing ones, on moto's own
cluster state, with life cycles.

moto's server builds its EKS routes from `moto.eks.urls.url_paths` the first time an EKS request arrives;
`install` points every existing route at the extended class and adds routes for the operations moto 5.2.5
does not serve (it answers those with a 404 HTML page). Which operation a request is, and its path labels, is
decided by moto's router from the botocore model, so the routes here only need to let the requests in.
"""

from __future__ import annotations

from moto.eks import urls

from .. import k8s

from . import resource_groups
from .access_entries import AccessEntryHandlers
from .addons import AddonHandlers
from .base import EKSHandlers
from .cluster_versions import ClusterVersionHandlers
from .cluster_extras import extras
from .clusters import ClusterHandlers
from .insights import InsightHandlers
from .nodegroups import NodegroupHandlers
from .pod_identity import PodIdentityHandlers
from .tags import TagHandlers
from .updates import UpdateHandlers


class ExtendedEKSResponse(
    ClusterHandlers,
    ClusterVersionHandlers,
    NodegroupHandlers,
    AddonHandlers,
    AccessEntryHandlers,
    PodIdentityHandlers,
    UpdateHandlers,
    InsightHandlers,
    TagHandlers,
    EKSHandlers,
):
    """moto's EKSResponse with the extension's handlers; responses are serialized from the botocore model."""


CLUSTER = "{0}/clusters/(?P<name>[^/]+)"
#: Paths moto 5.2.5 has no route for. Principal and policy ARNs contain '/' once decoded, hence `.+`.
NEW_ROUTES = [
    CLUSTER + "/addons$",
    CLUSTER + "/addons/(?P<addonName>[^/]+)$",
    CLUSTER + "/addons/(?P<addonName>[^/]+)/update$",
    "{0}/addons/supported-versions$",
    "{0}/cluster-versions$",
    CLUSTER + "/access-entries$",
    CLUSTER + "/access-entries/(?P<principalArn>.+)$",
    "{0}/access-policies$",
    CLUSTER + "/pod-identity-associations$",
    CLUSTER + "/pod-identity-associations/(?P<associationId>[^/]+)$",
    CLUSTER + "/updates$",
    CLUSTER + "/updates/(?P<updateId>[^/]+)$",
    CLUSTER + "/node-groups/(?P<nodegroupName>[^/]+)/update-version$",
    CLUSTER + "/encryption-config/associate$",
    CLUSTER + "/insights$",
    CLUSTER + "/insights/(?P<id>[^/]+)$",
]


def install() -> None:
    k8s.install(lambda cluster: extras(cluster).access_entries)
    resource_groups.install()
    dispatch = ExtendedEKSResponse.dispatch
    for path in list(urls.url_paths):
        urls.url_paths[path] = dispatch
    for path in NEW_ROUTES:
        urls.url_paths[path] = dispatch

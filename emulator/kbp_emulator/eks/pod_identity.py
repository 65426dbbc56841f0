"""EKS Pod Identity associations (Create/Describe/Update/Delete/ListPodIdentityAssociations), which moto 5.2.5
does not serve. As in AWS they have no status: usable when the call returns. One association per namespace and
service account.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from moto.core.responses import ActionResult

from .. import client_tokens
from .base import EKSHandlers, in_use, invalid_parameter, not_found, now, random_id
from .cluster_extras import extras

ROLE_ARN = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:role/.+$")


@dataclass
class PodIdentityAssociation:
    cluster_name: str
    namespace: str
    service_account: str
    role_arn: str
    association_id: str
    association_arn: str
    tags: dict[str, str] = field(default_factory=dict)
    owner_arn: str | None = None
    disable_session_tags: bool = False
    target_role_arn: str | None = None
    created_at: Any = field(default_factory=now)
    modified_at: Any = field(default_factory=now)


def _check_role(cluster: Any, field_name: str, arn: str | None) -> None:
    if arn is not None and not ROLE_ARN.match(arn):
        raise invalid_parameter(f"{field_name} {arn!r} is not a valid IAM role ARN", clusterName=cluster.name)


def create(backend: Any, cluster: Any, namespace: str | None, service_account: str | None, role_arn: str | None,
           tags: dict[str, str], target_role_arn: str | None = None, disable_session_tags: bool = False
           ) -> PodIdentityAssociation:
    """Adds an association to `cluster`; shared with add-ons, which create theirs through CreateAddon."""
    for name, value in (("namespace", namespace), ("serviceAccount", service_account), ("roleArn", role_arn)):
        if not value:
            raise invalid_parameter(f"{name} is required", clusterName=cluster.name)
    _check_role(cluster, "roleArn", role_arn)
    _check_role(cluster, "targetRoleArn", target_role_arn)
    existing = extras(cluster).pod_identity_associations
    for other in existing.values():
        if (other.namespace, other.service_account) == (namespace, service_account):
            raise in_use(f"Association already exists: {other.association_id}", clusterName=cluster.name)
    association_id = "a-" + random_id(17)
    association = PodIdentityAssociation(
        cluster_name=cluster.name,
        namespace=namespace,
        service_account=service_account,
        role_arn=role_arn,
        association_id=association_id,
        association_arn=(
            f"arn:{backend.partition}:eks:{backend.region_name}:{backend.account_id}"
            f":podidentityassociation/{cluster.name}/{association_id}"
        ),
        tags=tags or {},
        target_role_arn=target_role_arn,
        disable_session_tags=bool(disable_session_tags),
    )
    existing[association_id] = association
    return association


def _association_exists(handler: Any, association: PodIdentityAssociation) -> bool:
    return extras(handler.cluster()).pod_identity_associations.get(association.association_id) is association


class PodIdentityHandlers(EKSHandlers):
    def _association(self, cluster: Any) -> PodIdentityAssociation:
        association_id = self.path_param("associationId")
        try:
            return extras(cluster).pod_identity_associations[association_id]
        except KeyError:
            raise not_found(
                f"No Pod Identity Association found with id {association_id}", clusterName=cluster.name
            ) from None

    @client_tokens.eks("association", _association_exists)
    def create_pod_identity_association(self) -> ActionResult:
        cluster = self.cluster()
        body = self.body_json()
        association = create(
            self.eks_backend,
            cluster,
            body.get("namespace"),
            body.get("serviceAccount"),
            body.get("roleArn"),
            body.get("tags") or {},
            target_role_arn=body.get("targetRoleArn"),
            disable_session_tags=body.get("disableSessionTags", False),
        )
        return ActionResult({"association": association})

    def describe_pod_identity_association(self) -> ActionResult:
        return ActionResult({"association": self._association(self.cluster())})

    def update_pod_identity_association(self) -> ActionResult:
        cluster = self.cluster()
        association = self._association(cluster)
        body = self.body_json()
        _check_role(cluster, "roleArn", body.get("roleArn"))
        _check_role(cluster, "targetRoleArn", body.get("targetRoleArn") or None)
        if body.get("roleArn"):
            association.role_arn = body["roleArn"]
        if "targetRoleArn" in body:
            association.target_role_arn = body["targetRoleArn"] or None
        if "disableSessionTags" in body:
            association.disable_session_tags = bool(body["disableSessionTags"])
        association.modified_at = now()
        return ActionResult({"association": association})

    def delete_pod_identity_association(self) -> ActionResult:
        cluster = self.cluster()
        association = self._association(cluster)
        del extras(cluster).pod_identity_associations[association.association_id]
        return ActionResult({"association": association})

    def list_pod_identity_associations(self) -> ActionResult:
        cluster = self.cluster()
        namespace, service_account = self.query_one("namespace"), self.query_one("serviceAccount")
        found = [
            a
            for a in extras(cluster).pod_identity_associations.values()
            if namespace in (None, a.namespace) and service_account in (None, a.service_account)
        ]
        found, token = self.page(found)
        return ActionResult({"associations": found, "nextToken": token})

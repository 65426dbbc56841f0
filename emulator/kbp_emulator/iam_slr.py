"""Service-linked role names and duplicates as AWS has them, and ListInstanceProfileTags.

moto derives a service-linked role's name from the service principal (`spot.amazonaws.com` →
`AWSServiceRoleForspot`); AWS names each one by hand (`AWSServiceRoleForEC2Spot`). And a second
CreateServiceLinkedRole answers EntityAlreadyExists in moto but InvalidInput in AWS.

moto 5.2.5 keeps instance profiles' tags (TagInstanceProfile, CreateInstanceProfile's Tags) but does not serve
ListInstanceProfileTags; it is added with AWS's shape (Tags, IsTruncated, Marker; NoSuchEntity for an unknown
profile).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from moto.core.responses import ActionResult
from moto.iam import models, responses
from moto.iam.exceptions import EntityAlreadyExists, InvalidInput

#: moto names a role AWSServiceRoleFor<value> for the service principal's first label. Only the services whose
#: AWS name differs from moto's rule need an entry.
AWS_NAMES = {
    "spot": "EC2Spot",
    "spotfleet": "EC2SpotFleet",
    "eks": "AmazonEKS",
    "eks-nodegroup": "AmazonEKSNodegroup",
    "eks-fargate-pods": "AmazonEKSForFargate",
    "elasticloadbalancing": "ElasticLoadBalancing",
}


def install() -> None:
    install_instance_profile_tags()
    models.SERVICE_NAME_CONVERSION.update(AWS_NAMES)
    create = models.IAMBackend.create_service_linked_role

    @functools.wraps(create)
    def create_service_linked_role(self: Any, service_name: str, description: str, suffix: str) -> Any:
        try:
            return create(self, service_name, description, suffix)
        except EntityAlreadyExists as e:
            name = re.search(r"Role with name (\S+) already exists", e.message)
            taken = name.group(1) if name else "AWSServiceRoleFor" + service_name
            raise InvalidInput(
                f"Service role name {taken} has been taken in this account, please try a different suffix."
            ) from None

    models.IAMBackend.create_service_linked_role = create_service_linked_role


def _list_instance_profile_tags(self: Any) -> ActionResult:
    profile = self.backend.get_instance_profile(profile_name=self._get_param("InstanceProfileName"))
    return ActionResult({"Tags": list(profile.tags), "IsTruncated": False})


def install_instance_profile_tags() -> None:
    if not hasattr(responses.IamResponse, "list_instance_profile_tags"):
        responses.IamResponse.list_instance_profile_tags = _list_instance_profile_tags

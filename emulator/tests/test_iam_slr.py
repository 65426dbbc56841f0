"""Service-linked roles carry AWS's names, and a second create is AWS's InvalidInput."""

import pytest
from botocore.exceptions import ClientError
from conftest import error_of


@pytest.mark.parametrize(
    "service, name",
    [
        ("spot.amazonaws.com", "AWSServiceRoleForEC2Spot"),
        ("eks.amazonaws.com", "AWSServiceRoleForAmazonEKS"),
        ("eks-nodegroup.amazonaws.com", "AWSServiceRoleForAmazonEKSNodegroup"),
        ("autoscaling.amazonaws.com", "AWSServiceRoleForAutoScaling"),
    ],
)
def test_names(iam, service, name):
    role = iam.create_service_linked_role(AWSServiceName=service)["Role"]
    assert role["RoleName"] == name
    assert role["Path"] == f"/aws-service-role/{service}/"


def test_second_create_is_invalid_input(iam):
    iam.create_service_linked_role(AWSServiceName="spot.amazonaws.com")
    with pytest.raises(ClientError) as e:
        iam.create_service_linked_role(AWSServiceName="spot.amazonaws.com")
    assert error_of(e) == (
        400,
        "InvalidInput",
        "Service role name AWSServiceRoleForEC2Spot has been taken in this account, please try a different suffix.",
    )

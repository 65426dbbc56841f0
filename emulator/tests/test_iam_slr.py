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


def test_instance_profile_tags_are_listed(iam):
    iam.create_instance_profile(InstanceProfileName="p1", Tags=[{"Key": "kbp:stack", "Value": "s"}])
    iam.tag_instance_profile(InstanceProfileName="p1", Tags=[{"Key": "team", "Value": "x"}])
    tags = iam.list_instance_profile_tags(InstanceProfileName="p1")["Tags"]
    assert sorted((t["Key"], t["Value"]) for t in tags) == [("kbp:stack", "s"), ("team", "x")]
    with pytest.raises(ClientError) as e:
        iam.list_instance_profile_tags(InstanceProfileName="nope")
    assert error_of(e)[1] == "NoSuchEntity"

"""Access entries and access policy associations: CRUD through URL-encoded principal ARNs, and AWS's rules."""

import pytest
from botocore.exceptions import ClientError
from conftest import NODE_ROLE, TRUST_POLICY, error_of

ADMIN = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
VIEW = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy"
TRUST = TRUST_POLICY


@pytest.fixture
def role(iam):
    """An IAM role with a path, so its ARN has several '/' to encode."""
    return iam.create_role(RoleName="deployer", Path="/team/ci/", AssumeRolePolicyDocument=TRUST)["Role"]["Arn"]


def test_access_entry_crud(eks, cluster, role):
    created = eks.create_access_entry(clusterName=cluster, principalArn=role, kubernetesGroups=["viewers"],
                                      tags={"team": "kbp"})["accessEntry"]
    assert created["principalArn"] == role
    assert created["type"] == "STANDARD"
    assert created["username"] == "arn:aws:sts::123456789012:assumed-role/deployer/{{SessionName}}"
    assert created["accessEntryArn"].startswith("arn:aws:eks:us-west-2:123456789012:access-entry/c1/role/123456789012/deployer/")
    assert eks.describe_access_entry(clusterName=cluster, principalArn=role)["accessEntry"] == created

    updated = eks.update_access_entry(clusterName=cluster, principalArn=role, kubernetesGroups=["editors"], username="ci")
    assert (updated["accessEntry"]["kubernetesGroups"], updated["accessEntry"]["username"]) == (["editors"], "ci")
    assert role in eks.list_access_entries(clusterName=cluster)["accessEntries"]

    eks.delete_access_entry(clusterName=cluster, principalArn=role)
    with pytest.raises(ClientError) as e:
        eks.describe_access_entry(clusterName=cluster, principalArn=role)
    assert error_of(e) == (
        404,
        "ResourceNotFoundException",
        "The specified principalArn could not be found. You can view your available access entries with "
        "'list-access-entries'.",
    )


def test_access_policies(eks, cluster, role):
    eks.create_access_entry(clusterName=cluster, principalArn=role)
    associated = eks.associate_access_policy(
        clusterName=cluster, principalArn=role, policyArn=VIEW, accessScope={"type": "namespace", "namespaces": ["apps"]}
    )
    assert (associated["clusterName"], associated["principalArn"]) == (cluster, role)
    assert associated["associatedAccessPolicy"]["accessScope"] == {"type": "namespace", "namespaces": ["apps"]}
    eks.associate_access_policy(clusterName=cluster, principalArn=role, policyArn=ADMIN, accessScope={"type": "cluster"})
    listed = eks.list_associated_access_policies(clusterName=cluster, principalArn=role)["associatedAccessPolicies"]
    assert sorted(p["policyArn"] for p in listed) == [ADMIN, VIEW]
    assert eks.list_access_entries(clusterName=cluster, associatedPolicyArn=VIEW)["accessEntries"] == [role]

    eks.disassociate_access_policy(clusterName=cluster, principalArn=role, policyArn=VIEW)
    listed = eks.list_associated_access_policies(clusterName=cluster, principalArn=role)["associatedAccessPolicies"]
    assert [p["policyArn"] for p in listed] == [ADMIN]
    with pytest.raises(ClientError) as e:
        eks.associate_access_policy(clusterName=cluster, principalArn=role, policyArn=VIEW, accessScope={"type": "namespace"})
    assert error_of(e)[:2] == (400, "InvalidParameterException")
    assert [p["name"] for p in eks.list_access_policies()["accessPolicies"]].count("AmazonEKSViewPolicy") == 1


def test_creator_gets_a_cluster_admin_entry(eks, cluster, make_cluster):
    creator = "arn:aws:iam::123456789012:user/moto"  # who moto says the test credentials are
    assert eks.list_access_entries(clusterName=cluster)["accessEntries"] == [creator]
    [policy] = eks.list_associated_access_policies(clusterName=cluster, principalArn=creator)["associatedAccessPolicies"]
    assert (policy["policyArn"], policy["accessScope"]["type"]) == (ADMIN, "cluster")
    without = make_cluster("lean", accessConfig={"authenticationMode": "API", "bootstrapClusterCreatorAdminPermissions": False})
    assert eks.list_access_entries(clusterName=without)["accessEntries"] == []


def test_node_group_role_gets_an_ec2_linux_entry(eks, cluster, network):
    eks.create_nodegroup(clusterName=cluster, nodegroupName="ng", nodeRole=NODE_ROLE, subnets=network.subnets)
    entry = eks.describe_access_entry(clusterName=cluster, principalArn=NODE_ROLE)["accessEntry"]
    assert (entry["type"], entry["username"], entry["kubernetesGroups"]) == (
        "EC2_LINUX", "system:node:{{EC2PrivateDNSName}}", ["system:nodes"])
    with pytest.raises(ClientError) as e:
        eks.associate_access_policy(clusterName=cluster, principalArn=NODE_ROLE, policyArn=VIEW, accessScope={"type": "cluster"})
    assert error_of(e) == (
        400, "InvalidParameterException", 'This operation can only be performed on Access Entries with a type of "STANDARD".')


def test_access_entry_errors(eks, cluster, role, make_cluster):
    eks.create_access_entry(clusterName=cluster, principalArn=role)
    with pytest.raises(ClientError) as e:
        eks.create_access_entry(clusterName=cluster, principalArn=role)
    assert error_of(e) == (409, "ResourceInUseException", "The specified access entry resource is already in use on this cluster.")
    with pytest.raises(ClientError) as e:
        eks.create_access_entry(clusterName=cluster, principalArn="arn:aws:iam::123456789012:role/never-created")
    assert error_of(e) == (400, "InvalidParameterException", "The specified principalArn is invalid: invalid principal.")
    with pytest.raises(ClientError) as e:
        eks.update_access_entry(clusterName=cluster, principalArn=role, kubernetesGroups=["system:masters"])
    assert error_of(e) == (
        400, "InvalidParameterException", "The kubernetes group name system:masters is invalid, it cannot start with system:")

    config_map = make_cluster("cm", accessConfig={"authenticationMode": "CONFIG_MAP"})
    with pytest.raises(ClientError) as e:
        eks.create_access_entry(clusterName=config_map, principalArn=role)
    assert error_of(e) == (
        400,
        "InvalidRequestException",
        "The cluster's authentication mode must be set to one of [API, API_AND_CONFIG_MAP] to perform this operation.",
    )


def test_the_caller_can_grant_itself_access(eks, make_cluster, sts):
    """The caller of GetCallerIdentity always exists in AWS, even where moto has no IAM user behind it."""
    lean = make_cluster("self-admin", accessConfig={"authenticationMode": "API", "bootstrapClusterCreatorAdminPermissions": False})
    caller = sts.get_caller_identity()["Arn"]
    eks.create_access_entry(clusterName=lean, principalArn=caller)
    assert eks.list_access_entries(clusterName=lean)["accessEntries"] == [caller]

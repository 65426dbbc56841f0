"""Node groups: AWS's defaults where moto invents its own, and the checks AWS makes."""

import pytest
from botocore.exceptions import ClientError
from conftest import NODE_ROLE, error_of


def test_defaults_follow_the_cluster(eks, cluster, network):
    ng = eks.create_nodegroup(clusterName=cluster, nodegroupName="ng", nodeRole=NODE_ROLE, subnets=network.subnets,
                              scalingConfig={"minSize": 1, "maxSize": 3, "desiredSize": 2})["nodegroup"]
    assert ng["version"] == "1.33"
    assert ng["releaseVersion"].startswith("1.33.")
    assert ng["amiType"] == "AL2023_x86_64_STANDARD"
    assert "remoteAccess" not in ng
    assert ng["diskSize"] == 20
    assert ng["updateConfig"] == {"maxUnavailable": 1}
    assert ng["resources"]["autoScalingGroups"][0]["name"].startswith("eks-ng-")


def test_scaling_configs_are_not_shared(eks, cluster, network):
    for name in ("a", "b"):
        eks.create_nodegroup(clusterName=cluster, nodegroupName=name, nodeRole=NODE_ROLE, subnets=network.subnets)
    eks.update_nodegroup_config(clusterName=cluster, nodegroupName="a", scalingConfig={"maxSize": 5})
    b = eks.describe_nodegroup(clusterName=cluster, nodegroupName="b")["nodegroup"]
    assert b["scalingConfig"]["maxSize"] == 2


def test_update_params_use_aws_names(eks, cluster, network):
    eks.create_nodegroup(clusterName=cluster, nodegroupName="ng", nodeRole=NODE_ROLE, subnets=network.subnets)
    update = eks.update_nodegroup_config(
        clusterName=cluster, nodegroupName="ng", scalingConfig={"minSize": 1, "maxSize": 4, "desiredSize": 2},
        labels={"addOrUpdateLabels": {"tier": "system"}},
    )["update"]
    params = {p["type"]: p["value"] for p in update["params"]}
    assert params == {"MinSize": "1", "MaxSize": "4", "DesiredSize": "2", "LabelsToAdd": '{"tier": "system"}'}
    ng = eks.describe_nodegroup(clusterName=cluster, nodegroupName="ng")["nodegroup"]
    assert ng["labels"] == {"tier": "system"}
    assert ng["scalingConfig"] == {"minSize": 1, "maxSize": 4, "desiredSize": 2}


def test_update_nodegroup_version_follows_the_cluster(eks, cluster, network):
    eks.create_nodegroup(clusterName=cluster, nodegroupName="ng", nodeRole=NODE_ROLE, subnets=network.subnets)
    eks.update_cluster_version(name=cluster, version="1.34")
    eks.describe_cluster(name=cluster)  # settles the cluster update
    update = eks.update_nodegroup_version(clusterName=cluster, nodegroupName="ng")["update"]
    assert update["type"] == "VersionUpdate"
    ng = eks.describe_nodegroup(clusterName=cluster, nodegroupName="ng")["nodegroup"]
    assert (ng["version"], ng["status"]) == ("1.34", "ACTIVE")
    with pytest.raises(ClientError) as e:
        eks.update_nodegroup_version(clusterName=cluster, nodegroupName="ng", version="1.35")
    assert error_of(e)[:2] == (400, "InvalidParameterException")


def test_version_skew_is_at_most_three_minors(eks, make_cluster, network):
    cluster = make_cluster(version="1.33")

    def create(name, version):
        return eks.create_nodegroup(clusterName=cluster, nodegroupName=name, nodeRole=NODE_ROLE,
                                    subnets=network.subnets, version=version)["nodegroup"]

    assert create("oldest", "1.30")["version"] == "1.30"
    with pytest.raises(ClientError) as e:
        create("too-old", "1.29")
    assert error_of(e) == (
        400,
        "InvalidParameterException",
        "Requested Nodegroup Kubernetes version 1.29 is not supported by cluster version 1.33: a node group can be at "
        "most 3 minor versions older than its cluster",
    )
    with pytest.raises(ClientError) as e:
        create("too-new", "1.34")
    assert error_of(e)[2] == "Requested Nodegroup Kubernetes version 1.34 is not supported by cluster version 1.33"
    assert eks.list_nodegroups(clusterName=cluster)["nodegroups"] == ["oldest"]
    with pytest.raises(ClientError) as e:
        eks.update_nodegroup_version(clusterName=cluster, nodegroupName="oldest", version="1.29")
    assert error_of(e)[:2] == (400, "InvalidParameterException")
    assert "at most 3 minor versions older" in error_of(e)[2]
    ng = eks.describe_nodegroup(clusterName=cluster, nodegroupName="oldest")["nodegroup"]
    assert (ng["version"], ng["status"]) == ("1.30", "ACTIVE")
    assert eks.update_nodegroup_version(clusterName=cluster, nodegroupName="oldest", version="1.31")["update"]


@pytest.mark.parametrize(
    "scaling, message",
    [
        ({"minSize": 3, "maxSize": 5, "desiredSize": 2}, "Minimum capacity 3 can't be greater than desired size 2"),
        ({"minSize": 1, "maxSize": 2, "desiredSize": 4}, "Desired capacity 4 can't be greater than max size 2"),
    ],
)
def test_scaling_is_checked(eks, cluster, network, scaling, message):
    with pytest.raises(ClientError) as e:
        eks.create_nodegroup(clusterName=cluster, nodegroupName="ng", nodeRole=NODE_ROLE, subnets=network.subnets,
                             scalingConfig=scaling)
    assert error_of(e) == (400, "InvalidParameterException", message)


def test_subnets_must_exist(eks, cluster):
    with pytest.raises(ClientError) as e:
        eks.create_nodegroup(clusterName=cluster, nodegroupName="ng", nodeRole=NODE_ROLE, subnets=["subnet-12345678"])
    assert error_of(e)[:2] == (400, "InvalidParameterException")
    assert "subnet-12345678" in error_of(e)[2]


def test_missing_nodegroup(eks, cluster):
    with pytest.raises(ClientError) as e:
        eks.describe_nodegroup(clusterName=cluster, nodegroupName="nope")
    assert error_of(e) == (404, "ResourceNotFoundException", "No node group found for name: nope.")

"""Clusters: what CreateCluster fills in and checks, UpdateClusterConfig/UpdateClusterVersion, and the AWS errors."""

import base64
import re

import pytest
from botocore.exceptions import ClientError
from conftest import CLUSTER_ROLE, NODE_ROLE, error_of
from cryptography import x509


def test_describe_reports_what_aws_reports(eks, ec2, cluster, network):
    c = eks.describe_cluster(name=cluster)["cluster"]
    # The endpoint is the cluster's Kubernetes API on loopback (none listens under KBP_EMULATOR_KUBE=none).
    assert re.fullmatch(r"https://127\.0\.0\.1:\d+", c["endpoint"])
    ident = c["identity"]["oidc"]["issuer"].rsplit("/", 1)[1]
    assert len(ident) == 32 and ident == ident.upper()
    assert c["identity"]["oidc"]["issuer"] == f"https://oidc.eks.us-west-2.amazonaws.com/id/{ident}"
    pem = base64.b64decode(c["certificateAuthority"]["data"])
    assert x509.load_pem_x509_certificate(pem).subject.rfc4514_string() == "CN=kubernetes"
    vpc = c["resourcesVpcConfig"]
    assert vpc["vpcId"] == network.vpc
    assert vpc["subnetIds"] == network.subnets
    assert (vpc["endpointPublicAccess"], vpc["endpointPrivateAccess"], vpc["publicAccessCidrs"]) == (
        True, False, ["0.0.0.0/0"])
    assert c["accessConfig"] == {"authenticationMode": "API_AND_CONFIG_MAP", "bootstrapClusterCreatorAdminPermissions": True}
    assert c["kubernetesNetworkConfig"]["ipFamily"] == "ipv4"
    assert c["upgradePolicy"] == {"supportType": "EXTENDED"}

    group = ec2.describe_security_groups(GroupIds=[vpc["clusterSecurityGroupId"]])["SecurityGroups"][0]
    assert group["VpcId"] == network.vpc
    tags = {t["Key"]: t["Value"] for t in group["Tags"]}
    assert tags["kubernetes.io/cluster/c1"] == "owned"
    assert tags["aws:eks:cluster-name"] == "c1"


def test_each_cluster_has_its_own_endpoint_and_issuer(eks, make_cluster):
    a = eks.describe_cluster(name=make_cluster("a"))["cluster"]
    b = eks.describe_cluster(name=make_cluster("b"))["cluster"]
    assert a["endpoint"] != b["endpoint"]
    assert a["identity"]["oidc"]["issuer"] != b["identity"]["oidc"]["issuer"]


def test_defaults_without_access_config_or_version(eks, network):
    eks.create_cluster(name="plain", roleArn=CLUSTER_ROLE, resourcesVpcConfig={"subnetIds": network.subnets})
    c = eks.describe_cluster(name="plain")["cluster"]
    assert c["version"] == "1.36"  # the newest version but one, as DescribeClusterVersions' defaultVersion says
    assert c["accessConfig"]["authenticationMode"] == "CONFIG_MAP"


def test_cluster_security_group_goes_with_the_cluster(eks, ec2, cluster):
    group_id = eks.describe_cluster(name=cluster)["cluster"]["resourcesVpcConfig"]["clusterSecurityGroupId"]
    eks.delete_cluster(name=cluster)
    eks.list_clusters()  # settles the deletion
    with pytest.raises(ClientError) as e:
        ec2.describe_security_groups(GroupIds=[group_id])
    assert error_of(e)[1] == "InvalidGroup.NotFound"


@pytest.mark.parametrize(
    "subnets, message",
    [
        (["subnet-12345678"], "The subnet ID 'subnet-12345678' does not exist"),
        (None, "Subnets specified must be in at least two different AZs"),
    ],
)
def test_subnets_are_checked(eks, network, subnets, message):
    with pytest.raises(ClientError) as e:
        eks.create_cluster(name="x", roleArn=CLUSTER_ROLE, resourcesVpcConfig={"subnetIds": subnets or network.subnets[:1]})
    assert error_of(e)[:2] == (400, "InvalidParameterException")
    assert error_of(e)[2].startswith(message)
    assert eks.list_clusters()["clusters"] == []


def test_unsupported_version(eks, network):
    with pytest.raises(ClientError) as e:
        eks.create_cluster(name="x", version="1.19", roleArn=CLUSTER_ROLE, resourcesVpcConfig={"subnetIds": network.subnets})
    assert error_of(e) == (400, "InvalidParameterException", "unsupported Kubernetes version 1.19")


def test_duplicate_name(eks, cluster, network):
    with pytest.raises(ClientError) as e:
        eks.create_cluster(name=cluster, roleArn=CLUSTER_ROLE, resourcesVpcConfig={"subnetIds": network.subnets})
    assert error_of(e) == (409, "ResourceInUseException", "Cluster already exists with name: c1")


@pytest.mark.parametrize(
    "call",
    [
        lambda eks: eks.describe_cluster(name="nope"),
        lambda eks: eks.delete_cluster(name="nope"),
        lambda eks: eks.list_nodegroups(clusterName="nope"),
        lambda eks: eks.list_addons(clusterName="nope"),
        lambda eks: eks.list_access_entries(clusterName="nope"),
        lambda eks: eks.list_pod_identity_associations(clusterName="nope"),
        lambda eks: eks.update_cluster_version(name="nope", version="1.32"),
        lambda eks: eks.list_insights(clusterName="nope"),
        lambda eks: eks.describe_insight(clusterName="nope", id="6f1c3a4e-0000-4000-8000-000000000000"),
    ],
)
def test_missing_cluster_is_resource_not_found(eks, call):
    with pytest.raises(ClientError) as e:
        call(eks)
    assert error_of(e) == (404, "ResourceNotFoundException", "No cluster found for name: nope.")


def test_update_cluster_version_steps_one_minor(eks, cluster):
    with pytest.raises(ClientError) as e:
        eks.update_cluster_version(name=cluster, version="1.35")
    assert error_of(e) == (400, "InvalidParameterException", "Unsupported Kubernetes minor version update from 1.33 to 1.35")
    update = eks.update_cluster_version(name=cluster, version="1.34")["update"]
    assert (update["type"], update["status"]) == ("VersionUpdate", "InProgress")
    assert {"type": "Version", "value": "1.34"} in update["params"]
    assert eks.describe_cluster(name=cluster)["cluster"]["version"] == "1.34"
    described = eks.describe_update(name=cluster, updateId=update["id"])["update"]
    assert described["status"] == "Successful"
    assert eks.list_updates(name=cluster)["updateIds"] == [update["id"]]


def test_update_cluster_version_keeps_node_groups_within_three_minors(eks, make_cluster, network):
    cluster = make_cluster(version="1.32")
    for name, version in (("current", "1.32"), ("old", "1.29")):
        eks.create_nodegroup(clusterName=cluster, nodegroupName=name, nodeRole=NODE_ROLE, subnets=network.subnets,
                             version=version)
    with pytest.raises(ClientError) as e:
        eks.update_cluster_version(name=cluster, version="1.33")
    assert error_of(e) == (
        400,
        "InvalidParameterException",
        "Nodegroup old has Kubernetes version 1.29, which would be more than 3 minor versions behind cluster version "
        "1.33. Update the nodegroup to a newer Kubernetes version before updating the cluster.",
    )
    assert e.value.response["nodegroupName"] == "old"
    c = eks.describe_cluster(name=cluster)["cluster"]
    assert (c["version"], c["status"]) == ("1.32", "ACTIVE")
    assert eks.list_updates(name=cluster)["updateIds"] == []
    # The one-minor-at-a-time rule is still checked first.
    with pytest.raises(ClientError) as e:
        eks.update_cluster_version(name=cluster, version="1.34")
    assert error_of(e)[2] == "Unsupported Kubernetes minor version update from 1.32 to 1.34"

    eks.update_nodegroup_version(clusterName=cluster, nodegroupName="old", version="1.30")
    eks.describe_nodegroup(clusterName=cluster, nodegroupName="old")  # settles the node group update
    assert eks.update_cluster_version(name=cluster, version="1.33")["update"]["status"] == "InProgress"
    assert eks.describe_cluster(name=cluster)["cluster"]["version"] == "1.33"


def test_update_cluster_config_logging_merges_types(eks, cluster):
    update = eks.update_cluster_config(name=cluster, logging={"clusterLogging": [{"types": ["audit", "api"], "enabled": True}]})
    assert update["update"]["type"] == "LoggingUpdate"
    logging = eks.describe_cluster(name=cluster)["cluster"]["logging"]["clusterLogging"]
    assert logging == [
        {"types": ["api", "audit"], "enabled": True},
        {"types": ["authenticator", "controllerManager", "scheduler"], "enabled": False},
    ]
    with pytest.raises(ClientError) as e:
        eks.update_cluster_config(name=cluster, logging={"clusterLogging": [{"types": ["api"], "enabled": True}]})
    assert error_of(e) == (400, "InvalidParameterException", "No changes needed for the logging config provided")


def test_update_cluster_config_endpoint_access(eks, cluster):
    update = eks.update_cluster_config(name=cluster, resourcesVpcConfig={"endpointPrivateAccess": True})["update"]
    assert update["type"] == "EndpointAccessUpdate"
    assert {"type": "EndpointPrivateAccess", "value": "true"} in update["params"]
    assert eks.describe_cluster(name=cluster)["cluster"]["resourcesVpcConfig"]["endpointPrivateAccess"] is True
    with pytest.raises(ClientError) as e:
        eks.update_cluster_config(name=cluster, resourcesVpcConfig={"endpointPrivateAccess": True})
    assert error_of(e) == (
        400,
        "InvalidParameterException",
        "Cluster is already at the desired configuration with endpointPrivateAccess: true , "
        "endpointPublicAccess: true, and Public Endpoint Restrictions: [0.0.0.0/0]",
    )


def test_update_cluster_config_one_kind_at_a_time(eks, cluster):
    with pytest.raises(ClientError) as e:
        eks.update_cluster_config(
            name=cluster,
            resourcesVpcConfig={"endpointPrivateAccess": True},
            logging={"clusterLogging": [{"types": ["api"], "enabled": True}]},
        )
    assert error_of(e)[:2] == (400, "InvalidParameterException")


def test_authentication_mode_only_moves_towards_api(eks, make_cluster):
    name = make_cluster("cm", accessConfig={"authenticationMode": "CONFIG_MAP"})
    eks.update_cluster_config(name=name, accessConfig={"authenticationMode": "API_AND_CONFIG_MAP"})
    c = eks.describe_cluster(name=name)["cluster"]
    assert c["accessConfig"]["authenticationMode"] == "API_AND_CONFIG_MAP"
    with pytest.raises(ClientError) as e:
        eks.update_cluster_config(name=name, accessConfig={"authenticationMode": "CONFIG_MAP"})
    assert error_of(e) == (
        400, "InvalidParameterException", "Unsupported authentication mode update from API_AND_CONFIG_MAP to CONFIG_MAP")


def test_tags_on_every_eks_resource(eks, cluster, network):
    from conftest import NODE_ROLE

    ng = eks.create_nodegroup(clusterName=cluster, nodegroupName="ng", nodeRole=NODE_ROLE, subnets=network.subnets)
    addon = eks.create_addon(clusterName=cluster, addonName="coredns")
    for arn in (eks.describe_cluster(name=cluster)["cluster"]["arn"], ng["nodegroup"]["nodegroupArn"], addon["addon"]["addonArn"]):
        eks.tag_resource(resourceArn=arn, tags={"team": "kbp", "gone": "soon"})
        eks.untag_resource(resourceArn=arn, tagKeys=["gone"])
        assert eks.list_tags_for_resource(resourceArn=arn)["tags"] == {"team": "kbp"}
    with pytest.raises(ClientError) as e:
        eks.list_tags_for_resource(resourceArn="arn:aws:eks:us-west-2:123456789012:cluster/nope")
    assert error_of(e)[:2] == (404, "NotFoundException")


def test_associate_encryption_config(eks, cluster):
    config = [{"resources": ["secrets"], "provider": {"keyArn": "arn:aws:kms:us-west-2:123456789012:key/k1"}}]
    update = eks.associate_encryption_config(clusterName=cluster, encryptionConfig=config)["update"]
    assert update["type"] == "AssociateEncryptionConfig"
    assert eks.describe_cluster(name=cluster)["cluster"]["encryptionConfig"] == config
    with pytest.raises(ClientError) as e:
        eks.associate_encryption_config(clusterName=cluster, encryptionConfig=config)
    assert error_of(e)[:2] == (400, "InvalidParameterException")

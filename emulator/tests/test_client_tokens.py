"""Client tokens: a create repeated with the same token makes nothing new and answers with the first one's
resource, as it is now; EC2 refuses a reused token with other parameters, EKS treats that as a new request."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from botocore.exceptions import ClientError
from conftest import ACCOUNT, CLUSTER_ROLE, NODE_ROLE, TRUST_POLICY, error_of

ROLE = f"arn:aws:iam::{ACCOUNT}:role/app"


def _nat_gateways(ec2, subnet):
    found = ec2.describe_nat_gateways(Filters=[{"Name": "subnet-id", "Values": [subnet]}])["NatGateways"]
    return sorted(n["NatGatewayId"] for n in found if n["State"] != "deleted")


def _route_tables(ec2, vpc):
    found = ec2.describe_route_tables(Filters=[{"Name": "vpc-id", "Values": [vpc]}])["RouteTables"]
    return sorted(t["RouteTableId"] for t in found if not any(a.get("Main") for a in t.get("Associations", [])))


def _mismatch(e) -> None:
    status, code, _ = error_of(e)
    assert (status, code) == (400, "IdempotentParameterMismatch")


# --- EC2 --------------------------------------------------------------------------------------------------------


def test_nat_gateway_same_token_is_one_gateway_in_its_current_state(ec2, network):
    subnet = network.subnets[0]
    allocation = ec2.allocate_address(Domain="vpc")["AllocationId"]
    first = ec2.create_nat_gateway(SubnetId=subnet, AllocationId=allocation, ClientToken="nat-1")["NatGateway"]
    again = ec2.create_nat_gateway(SubnetId=subnet, AllocationId=allocation, ClientToken="nat-1")["NatGateway"]
    assert again["NatGatewayId"] == first["NatGatewayId"]
    assert (first["State"], again["State"]) == ("pending", "available")  # instant profile: settled by now
    assert _nat_gateways(ec2, subnet) == [first["NatGatewayId"]]
    assert len(ec2.describe_network_interfaces()["NetworkInterfaces"]) == 1


def test_nat_gateway_other_token_makes_another(ec2, network):
    subnet = network.subnets[0]
    ids = {
        ec2.create_nat_gateway(
            SubnetId=subnet, AllocationId=ec2.allocate_address(Domain="vpc")["AllocationId"], **token
        )["NatGateway"]["NatGatewayId"]
        for token in ({"ClientToken": "a"}, {"ClientToken": "b"}, {})
    }
    assert len(ids) == 3
    assert _nat_gateways(ec2, subnet) == sorted(ids)


def test_nat_gateway_same_token_other_parameters_is_a_mismatch(ec2, network):
    allocation = ec2.allocate_address(Domain="vpc")["AllocationId"]
    ec2.create_nat_gateway(SubnetId=network.subnets[0], AllocationId=allocation, ClientToken="nat-1")
    with pytest.raises(ClientError) as e:
        ec2.create_nat_gateway(SubnetId=network.subnets[1], AllocationId=allocation, ClientToken="nat-1")
    _mismatch(e)
    assert _nat_gateways(ec2, network.subnets[1]) == []


def test_nat_gateway_token_of_a_deleted_gateway_makes_a_new_one(ec2, network):
    subnet = network.subnets[0]
    allocation = ec2.allocate_address(Domain="vpc")["AllocationId"]
    first = ec2.create_nat_gateway(SubnetId=subnet, AllocationId=allocation, ClientToken="nat-1")["NatGateway"]
    ec2.delete_nat_gateway(NatGatewayId=first["NatGatewayId"])
    assert _nat_gateways(ec2, subnet) == []  # deleted (instant profile)
    again = ec2.create_nat_gateway(SubnetId=subnet, AllocationId=allocation, ClientToken="nat-1")["NatGateway"]
    assert again["NatGatewayId"] != first["NatGatewayId"]
    assert again["State"] == "pending"


def test_route_table_same_token_is_one_table(ec2, network):
    tags = [{"ResourceType": "route-table", "Tags": [{"Key": "Name", "Value": "private"}]}]
    first = ec2.create_route_table(VpcId=network.vpc, TagSpecifications=tags, ClientToken="rt-1")["RouteTable"]
    again = ec2.create_route_table(VpcId=network.vpc, TagSpecifications=tags, ClientToken="rt-1")["RouteTable"]
    assert again["RouteTableId"] == first["RouteTableId"]
    assert again["Tags"] == [{"Key": "Name", "Value": "private"}]
    assert _route_tables(ec2, network.vpc) == [first["RouteTableId"]]


def test_route_table_answer_shows_the_current_state(ec2, network):
    table = ec2.create_route_table(VpcId=network.vpc, ClientToken="rt-1")["RouteTable"]["RouteTableId"]
    ec2.create_tags(Resources=[table], Tags=[{"Key": "later", "Value": "yes"}])
    again = ec2.create_route_table(VpcId=network.vpc, ClientToken="rt-1")["RouteTable"]
    assert again["RouteTableId"] == table
    assert {"Key": "later", "Value": "yes"} in again["Tags"]


def test_route_table_other_token_or_none_makes_another(ec2, network):
    ids = {
        ec2.create_route_table(VpcId=network.vpc, **token)["RouteTable"]["RouteTableId"]
        for token in ({"ClientToken": "a"}, {"ClientToken": "b"}, {})
    }
    assert len(ids) == 3
    assert _route_tables(ec2, network.vpc) == sorted(ids)


def test_route_table_same_token_other_parameters_is_a_mismatch(ec2, network):
    ec2.create_route_table(VpcId=network.vpc, ClientToken="rt-1")
    tags = [{"ResourceType": "route-table", "Tags": [{"Key": "Name", "Value": "other"}]}]
    with pytest.raises(ClientError) as e:
        ec2.create_route_table(VpcId=network.vpc, TagSpecifications=tags, ClientToken="rt-1")
    _mismatch(e)
    assert len(_route_tables(ec2, network.vpc)) == 1


def test_route_table_token_of_a_deleted_table_makes_a_new_one(ec2, network):
    first = ec2.create_route_table(VpcId=network.vpc, ClientToken="rt-1")["RouteTable"]["RouteTableId"]
    ec2.delete_route_table(RouteTableId=first)
    again = ec2.create_route_table(VpcId=network.vpc, ClientToken="rt-1")["RouteTable"]["RouteTableId"]
    assert again != first
    assert _route_tables(ec2, network.vpc) == [again]


def test_tokens_are_per_operation(ec2, network):
    allocation = ec2.allocate_address(Domain="vpc")["AllocationId"]
    ec2.create_route_table(VpcId=network.vpc, ClientToken="shared")
    ec2.create_nat_gateway(SubnetId=network.subnets[0], AllocationId=allocation, ClientToken="shared")
    assert len(_route_tables(ec2, network.vpc)) == 1
    assert len(_nat_gateways(ec2, network.subnets[0])) == 1


def test_concurrent_requests_with_one_token_make_one_table(ec2, network):
    def create(_):
        return ec2.create_route_table(VpcId=network.vpc, ClientToken="race")["RouteTable"]["RouteTableId"]

    with ThreadPoolExecutor(8) as pool:
        ids = set(pool.map(create, range(16)))
    assert len(ids) == 1
    assert _route_tables(ec2, network.vpc) == sorted(ids)


# --- EKS --------------------------------------------------------------------------------------------------------


def _in_use(e) -> None:
    status, code, _ = error_of(e)
    assert (status, code) == (409, "ResourceInUseException")


def test_cluster_same_token_is_one_cluster_in_its_current_state(eks, network, make_cluster):
    make_cluster("c1", clientRequestToken="c-1")
    first_arn = eks.describe_cluster(name="c1")["cluster"]["arn"]
    # make_cluster does not return the answer; ask directly with the same parameters.
    again = eks.create_cluster(
        name="c1", roleArn=CLUSTER_ROLE, resourcesVpcConfig={"subnetIds": network.subnets}, version="1.33",
        accessConfig={"authenticationMode": "API_AND_CONFIG_MAP"}, clientRequestToken="c-1",
    )["cluster"]
    assert again["arn"] == first_arn
    assert again["status"] == "ACTIVE"
    assert eks.list_clusters()["clusters"] == ["c1"]


def test_cluster_other_token_or_other_parameters_is_in_use(eks, make_cluster):
    make_cluster("c1", clientRequestToken="c-1")
    with pytest.raises(ClientError) as e:
        make_cluster("c1", clientRequestToken="c-2")
    _in_use(e)
    with pytest.raises(ClientError) as e:
        make_cluster("c1", version="1.34", clientRequestToken="c-1")
    _in_use(e)
    assert eks.list_clusters()["clusters"] == ["c1"]


def test_cluster_token_of_a_deleted_cluster_makes_a_new_one(eks, make_cluster):
    make_cluster("c1", clientRequestToken="c-1")
    issuer = eks.describe_cluster(name="c1")["cluster"]["identity"]["oidc"]["issuer"]  # new for each cluster
    eks.delete_cluster(name="c1")
    assert eks.list_clusters()["clusters"] == []  # gone (instant profile)
    make_cluster("c1", clientRequestToken="c-1")
    again = eks.describe_cluster(name="c1")["cluster"]
    assert again["identity"]["oidc"]["issuer"] != issuer
    assert again["status"] == "ACTIVE"


def test_nodegroup_same_token_is_one_nodegroup(eks, cluster, network):
    def create(token, **extra):
        return eks.create_nodegroup(
            clusterName=cluster, nodegroupName="ng", nodeRole=NODE_ROLE, subnets=network.subnets,
            clientRequestToken=token, **extra,
        )["nodegroup"]

    first, again = create("ng-1"), create("ng-1")
    assert again["nodegroupArn"] == first["nodegroupArn"]
    assert (first["status"], again["status"]) == ("CREATING", "ACTIVE")
    with pytest.raises(ClientError) as e:
        create("ng-2")
    _in_use(e)
    with pytest.raises(ClientError) as e:
        create("ng-1", labels={"other": "parameters"})
    _in_use(e)
    assert eks.list_nodegroups(clusterName=cluster)["nodegroups"] == ["ng"]


def test_addon_same_token_is_one_addon(eks, cluster):
    first = eks.create_addon(clusterName=cluster, addonName="vpc-cni", clientRequestToken="a-1")["addon"]
    again = eks.create_addon(clusterName=cluster, addonName="vpc-cni", clientRequestToken="a-1")["addon"]
    assert again["addonArn"] == first["addonArn"]
    assert (first["status"], again["status"]) == ("CREATING", "ACTIVE")
    with pytest.raises(ClientError) as e:
        eks.create_addon(clusterName=cluster, addonName="vpc-cni", clientRequestToken="a-2")
    _in_use(e)
    assert eks.list_addons(clusterName=cluster)["addons"] == ["vpc-cni"]


def test_access_entry_same_token_is_one_entry(eks, iam, cluster):
    role = iam.create_role(RoleName="app", AssumeRolePolicyDocument=TRUST_POLICY)["Role"]["Arn"]
    before = set(eks.list_access_entries(clusterName=cluster)["accessEntries"])
    first = eks.create_access_entry(clusterName=cluster, principalArn=role, clientRequestToken="e-1")["accessEntry"]
    again = eks.create_access_entry(clusterName=cluster, principalArn=role, clientRequestToken="e-1")["accessEntry"]
    assert again["accessEntryArn"] == first["accessEntryArn"]
    with pytest.raises(ClientError) as e:
        eks.create_access_entry(clusterName=cluster, principalArn=role, clientRequestToken="e-2")
    _in_use(e)
    with pytest.raises(ClientError) as e:
        eks.create_access_entry(clusterName=cluster, principalArn=role, username="other", clientRequestToken="e-1")
    _in_use(e)
    assert set(eks.list_access_entries(clusterName=cluster)["accessEntries"]) == before | {role}


def test_pod_identity_association_same_token_is_one_association(eks, cluster):
    def create(token, service_account="app"):
        return eks.create_pod_identity_association(
            clusterName=cluster, namespace="default", serviceAccount=service_account, roleArn=ROLE,
            clientRequestToken=token,
        )["association"]

    first, again = create("p-1"), create("p-1")
    assert again["associationId"] == first["associationId"]
    with pytest.raises(ClientError) as e:
        create("p-2")
    _in_use(e)
    # EKS has no mismatch error: the same token with other parameters is just another request.
    other = create("p-1", service_account="other")
    assert other["associationId"] != first["associationId"]
    listed = eks.list_pod_identity_associations(clusterName=cluster)["associations"]
    assert sorted(a["associationId"] for a in listed) == sorted([first["associationId"], other["associationId"]])
    # The token still answers with its first association.
    assert create("p-1")["associationId"] == first["associationId"]


def test_pod_identity_token_of_a_deleted_association_makes_a_new_one(eks, cluster):
    def create():
        return eks.create_pod_identity_association(
            clusterName=cluster, namespace="default", serviceAccount="app", roleArn=ROLE, clientRequestToken="p-1"
        )["association"]["associationId"]

    first = create()
    eks.delete_pod_identity_association(clusterName=cluster, associationId=first)
    again = create()
    assert again != first
    assert [a["associationId"] for a in eks.list_pod_identity_associations(clusterName=cluster)["associations"]] == [
        again
    ]


"""Life cycles under a scaled realistic profile: interim statuses until the delay, then settled (or gone)."""

import time

import pytest
from botocore.exceptions import ClientError
from conftest import NODE_ROLE, error_of

SCALE = 0.002  # realistic x0.002: cluster 1.2 s, node group 0.36 s, add-on 0.12 s, NAT gateway 0.18 s


def assert_went_through(seen, states):
    """`seen` ends in the final state and shows nothing outside `states`, in order. Under load a poll can come
    after the interim state is over, so only a tail of `states` is required; each test checks the interim
    state on the response of the call that starts the operation, where it is never missed."""
    assert seen and seen == states[len(states) - len(seen):], (seen, states)


def wait_for(read, want, timeout=10.0):
    """Polls `read()` until it returns `want`; returns every value seen, in order, without repeats."""
    seen = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = read()
        if not seen or seen[-1] != value:
            seen.append(value)
        if value == want:
            return seen
        time.sleep(0.05)
    raise AssertionError(f"still {seen[-1]!r} after {timeout}s (seen {seen})")


def cluster_status(eks, name):
    try:
        return eks.describe_cluster(name=name)["cluster"]["status"]
    except ClientError as e:
        return e.response["Error"]["Code"]


def test_cluster_creating_then_active_then_deleting_then_gone(eks, make_cluster, timed):
    timed("realistic", SCALE)
    started = time.monotonic()
    name = make_cluster()
    assert eks.describe_cluster(name=name)["cluster"]["status"] == "CREATING"
    assert_went_through(wait_for(lambda: cluster_status(eks, name), "ACTIVE"), ["CREATING", "ACTIVE"])
    assert time.monotonic() - started >= 600 * SCALE

    assert eks.delete_cluster(name=name)["cluster"]["status"] == "DELETING"
    seen = wait_for(lambda: cluster_status(eks, name), "ResourceNotFoundException")
    assert seen == ["DELETING", "ResourceNotFoundException"]
    assert name not in eks.list_clusters()["clusters"]


def test_instant_profile_still_answers_with_interim_status(eks, make_cluster):
    name = make_cluster()
    # CreateCluster's own answer says CREATING, as in AWS; the next request sees it settled.
    assert eks.describe_cluster(name=name)["cluster"]["status"] == "ACTIVE"


def test_children_need_an_active_cluster(eks, make_cluster, network, timed):
    timed("realistic", SCALE)
    name = make_cluster()
    with pytest.raises(ClientError) as e:
        eks.create_nodegroup(clusterName=name, nodegroupName="ng", nodeRole=NODE_ROLE, subnets=network.subnets)
    assert error_of(e) == (400, "InvalidRequestException", "Cluster 'c1' is not in ACTIVE status")
    with pytest.raises(ClientError) as e:
        eks.create_addon(clusterName=name, addonName="vpc-cni")
    assert error_of(e) == (400, "InvalidRequestException", "Cluster 'c1' is not in ACTIVE status")


def test_nodegroup_life_cycle_and_cluster_delete_guard(eks, make_cluster, network, timed):
    name = make_cluster()
    timed("realistic", SCALE)
    created = eks.create_nodegroup(clusterName=name, nodegroupName="ng", nodeRole=NODE_ROLE, subnets=network.subnets,
                                   scalingConfig={"minSize": 1, "maxSize": 3, "desiredSize": 1})
    assert created["nodegroup"]["status"] == "CREATING"
    status = lambda: eks.describe_nodegroup(clusterName=name, nodegroupName="ng")["nodegroup"]["status"]  # noqa: E731
    assert_went_through(wait_for(status, "ACTIVE"), ["CREATING", "ACTIVE"])

    update = eks.update_nodegroup_config(clusterName=name, nodegroupName="ng", scalingConfig={"desiredSize": 2})["update"]
    assert update["status"] == "InProgress"
    assert status() == "UPDATING"
    with pytest.raises(ClientError) as e:
        eks.update_nodegroup_config(clusterName=name, nodegroupName="ng", scalingConfig={"desiredSize": 3})
    assert error_of(e) == (409, "ResourceInUseException", "Nodegroup cannot be updated as it is currently not in Active State")
    wait_for(status, "ACTIVE")
    described = eks.describe_update(name=name, updateId=update["id"], nodegroupName="ng")["update"]
    assert described["status"] == "Successful"

    with pytest.raises(ClientError) as e:
        eks.delete_cluster(name=name)
    assert error_of(e) == (409, "ResourceInUseException", "Cluster has nodegroups attached")

    assert eks.delete_nodegroup(clusterName=name, nodegroupName="ng")["nodegroup"]["status"] == "DELETING"
    with pytest.raises(ClientError) as e:
        eks.delete_cluster(name=name)  # a node group that is still DELETING still blocks the cluster
    assert error_of(e)[1] == "ResourceInUseException"
    wait_for(lambda: eks.list_nodegroups(clusterName=name)["nodegroups"], [])
    assert eks.delete_cluster(name=name)["cluster"]["status"] == "DELETING"


def test_cluster_update_blocks_other_changes_until_done(eks, cluster, timed):
    timed("realistic", SCALE)
    update = eks.update_cluster_version(name=cluster, version="1.34")["update"]
    assert eks.describe_cluster(name=cluster)["cluster"]["status"] == "UPDATING"
    with pytest.raises(ClientError) as e:
        eks.update_cluster_config(name=cluster, logging={"clusterLogging": [{"types": ["api"], "enabled": True}]})
    assert error_of(e) == (
        409, "ResourceInUseException", f"Cannot LoggingUpdate because cluster c1 currently has update {update['id']} in progress")
    with pytest.raises(ClientError) as e:
        eks.delete_cluster(name=cluster)
    assert error_of(e) == (409, "ResourceInUseException", "Cannot delete because cluster c1 currently has an update in progress")
    wait_for(lambda: cluster_status(eks, cluster), "ACTIVE")
    assert eks.describe_update(name=cluster, updateId=update["id"])["update"]["status"] == "Successful"


def test_addon_life_cycle(eks, cluster, timed):
    timed("realistic", SCALE)
    assert eks.create_addon(clusterName=cluster, addonName="kube-proxy")["addon"]["status"] == "CREATING"
    status = lambda: eks.describe_addon(clusterName=cluster, addonName="kube-proxy")["addon"]["status"]  # noqa: E731
    assert_went_through(wait_for(status, "ACTIVE"), ["CREATING", "ACTIVE"])
    eks.update_addon(clusterName=cluster, addonName="kube-proxy", addonVersion="v1.33.5-eksbuild.2")
    assert_went_through(wait_for(status, "ACTIVE"), ["UPDATING", "ACTIVE"])
    assert eks.delete_addon(clusterName=cluster, addonName="kube-proxy")["addon"]["status"] == "DELETING"
    wait_for(lambda: eks.list_addons(clusterName=cluster)["addons"], [])


def test_nat_gateway_pending_then_available_then_deleting_then_deleted(ec2, network, timed):
    timed("realistic", SCALE)
    allocation = ec2.allocate_address(Domain="vpc")["AllocationId"]
    nat = ec2.create_nat_gateway(SubnetId=network.subnets[0], AllocationId=allocation)["NatGateway"]
    assert nat["State"] == "pending"
    state = lambda: ec2.describe_nat_gateways(NatGatewayIds=[nat["NatGatewayId"]])["NatGateways"][0]["State"]  # noqa: E731
    assert_went_through(wait_for(state, "available"), ["pending", "available"])
    ec2.delete_nat_gateway(NatGatewayId=nat["NatGatewayId"])
    assert_went_through(wait_for(state, "deleted"), ["deleting", "deleted"])


def test_nat_gateway_state_filter_sees_current_state(ec2, network):
    allocation = ec2.allocate_address(Domain="vpc")["AllocationId"]
    nat_id = ec2.create_nat_gateway(SubnetId=network.subnets[0], AllocationId=allocation)["NatGateway"]["NatGatewayId"]
    found = ec2.describe_nat_gateways(Filters=[{"Name": "state", "Values": ["available"]}])["NatGateways"]
    assert [n["NatGatewayId"] for n in found] == [nat_id]


def test_deleting_an_unknown_nat_gateway(ec2):
    with pytest.raises(ClientError) as e:
        ec2.delete_nat_gateway(NatGatewayId="nat-0123456789abcdef0")
    assert error_of(e)[:2] == (400, "NatGatewayNotFound")

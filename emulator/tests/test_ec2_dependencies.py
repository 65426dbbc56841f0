"""A subnet, security group or VPC that a load balancer or VPC endpoint still holds cannot be deleted, as in AWS;
once they are gone, it can. Also the load balancer quirks of `elbv2_load_balancers`."""

import boto3
import pytest
from botocore.exceptions import ClientError

from conftest import REGION


@pytest.fixture
def elbv2(endpoint):
    return boto3.client(
        "elbv2",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def _network(ec2):
    vpc = ec2.create_vpc(CidrBlock="10.8.0.0/16")["Vpc"]["VpcId"]
    subnets = [
        ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.8.{i}.0/24", AvailabilityZone=f"{REGION}{zone}")["Subnet"]["SubnetId"]
        for i, zone in ((1, "a"), (2, "b"))
    ]
    sg = ec2.create_security_group(GroupName="lb", Description="lb", VpcId=vpc)["GroupId"]
    return vpc, subnets, sg


def _refused(call, **kwargs):
    with pytest.raises(ClientError) as e:
        call(**kwargs)
    return e.value.response["Error"]


def test_a_load_balancer_holds_its_subnets_and_security_groups(ec2, elbv2):
    vpc, subnets, sg = _network(ec2)
    lb = elbv2.create_load_balancer(Name="web", Subnets=subnets, SecurityGroups=[sg])["LoadBalancers"][0]
    error = _refused(ec2.delete_subnet, SubnetId=subnets[0])
    assert (error["Code"], error["Message"]) == (
        "DependencyViolation",
        f"The subnet '{subnets[0]}' has dependencies and cannot be deleted.",
    )
    assert _refused(ec2.delete_security_group, GroupId=sg)["Code"] == "DependencyViolation"
    elbv2.delete_load_balancer(LoadBalancerArn=lb["LoadBalancerArn"])
    for subnet in subnets:
        ec2.delete_subnet(SubnetId=subnet)
    ec2.delete_security_group(GroupId=sg)
    ec2.delete_vpc(VpcId=vpc)


def test_a_vpc_endpoint_holds_its_subnets_groups_and_vpc(ec2):
    vpc, subnets, sg = _network(ec2)
    endpoint = ec2.create_vpc_endpoint(
        VpcId=vpc,
        ServiceName=f"com.amazonaws.{REGION}.ecr.api",
        VpcEndpointType="Interface",
        SubnetIds=[subnets[0]],
        SecurityGroupIds=[sg],
    )["VpcEndpoint"]["VpcEndpointId"]
    assert _refused(ec2.delete_subnet, SubnetId=subnets[0])["Code"] == "DependencyViolation"
    assert _refused(ec2.delete_security_group, GroupId=sg)["Code"] == "DependencyViolation"
    ec2.delete_subnet(SubnetId=subnets[1])
    ec2.delete_vpc_endpoints(VpcEndpointIds=[endpoint])
    ec2.delete_subnet(SubnetId=subnets[0])
    ec2.delete_security_group(GroupId=sg)
    ec2.delete_vpc(VpcId=vpc)


def test_a_gateway_endpoint_holds_its_vpc(ec2):
    vpc = ec2.create_vpc(CidrBlock="10.7.0.0/16")["Vpc"]["VpcId"]
    endpoint = ec2.create_vpc_endpoint(VpcId=vpc, ServiceName=f"com.amazonaws.{REGION}.s3")["VpcEndpoint"]
    assert endpoint["VpcEndpointType"] == "Gateway", "AWS's default type"
    assert _refused(ec2.delete_vpc, VpcId=vpc)["Code"] == "DependencyViolation"
    ec2.delete_vpc_endpoints(VpcEndpointIds=[endpoint["VpcEndpointId"]])
    ec2.delete_vpc(VpcId=vpc)


def test_what_nothing_holds_is_deleted_as_before(ec2):
    vpc, subnets, sg = _network(ec2)
    for subnet in subnets:
        ec2.delete_subnet(SubnetId=subnet)
    ec2.delete_security_group(GroupId=sg)
    ec2.delete_vpc(VpcId=vpc)
    assert _refused(ec2.delete_subnet, SubnetId=subnets[0])["Code"] == "InvalidSubnetID.NotFound"


def test_network_load_balancers_and_their_listeners_have_net_arns(ec2, elbv2):
    vpc, subnets, _ = _network(ec2)
    tags = [{"Key": "elbv2.k8s.aws/cluster", "Value": "sbx"}]
    nlb = elbv2.create_load_balancer(Name="tcp", Subnets=subnets, Type="network", Scheme="internal", Tags=tags)
    arn = nlb["LoadBalancers"][0]["LoadBalancerArn"]
    assert ":loadbalancer/net/tcp/" in arn
    assert elbv2.describe_load_balancers(LoadBalancerArns=[arn])["LoadBalancers"][0]["Type"] == "network"
    assert elbv2.describe_tags(ResourceArns=[arn])["TagDescriptions"][0]["Tags"] == tags
    group = elbv2.create_target_group(Name="tcp", Protocol="TCP", Port=80, VpcId=vpc, TargetType="ip")
    group_arn = group["TargetGroups"][0]["TargetGroupArn"]
    forward = [{"Type": "forward", "TargetGroupArn": group_arn}]
    listener = elbv2.create_listener(LoadBalancerArn=arn, Protocol="TCP", Port=80, DefaultActions=forward)
    assert ":listener/net/tcp/" in listener["Listeners"][0]["ListenerArn"]
    alb = elbv2.create_load_balancer(Name="web", Subnets=subnets)["LoadBalancers"][0]["LoadBalancerArn"]
    assert ":loadbalancer/app/web/" in alb


def test_a_target_group_in_use_waits_for_its_load_balancer_which_then_leaves_it(ec2, elbv2):
    vpc, subnets, _ = _network(ec2)
    arn = elbv2.create_load_balancer(Name="tcp", Subnets=subnets, Type="network")["LoadBalancers"][0][
        "LoadBalancerArn"
    ]
    group = elbv2.create_target_group(Name="tcp", Protocol="TCP", Port=80, VpcId=vpc, TargetType="ip")
    group_arn = group["TargetGroups"][0]["TargetGroupArn"]
    elbv2.create_listener(
        LoadBalancerArn=arn, Protocol="TCP", Port=80, DefaultActions=[{"Type": "forward", "TargetGroupArn": group_arn}]
    )
    assert _refused(elbv2.delete_target_group, TargetGroupArn=group_arn)["Code"] == "ResourceInUse"
    elbv2.delete_load_balancer(LoadBalancerArn=arn)
    assert elbv2.describe_target_groups(TargetGroupArns=[group_arn])["TargetGroups"][0]["LoadBalancerArns"] == []
    elbv2.delete_target_group(TargetGroupArn=group_arn)


def test_deletion_protection_keeps_a_load_balancer(ec2, elbv2):
    _, subnets, _ = _network(ec2)
    arn = elbv2.create_load_balancer(Name="kept", Subnets=subnets)["LoadBalancers"][0]["LoadBalancerArn"]
    on = [{"Key": "deletion_protection.enabled", "Value": "true"}]
    elbv2.modify_load_balancer_attributes(LoadBalancerArn=arn, Attributes=on)
    assert _refused(elbv2.delete_load_balancer, LoadBalancerArn=arn)["Code"] == "OperationNotPermitted"
    off = [{"Key": "deletion_protection.enabled", "Value": "false"}]
    elbv2.modify_load_balancer_attributes(LoadBalancerArn=arn, Attributes=off)
    elbv2.delete_load_balancer(LoadBalancerArn=arn)
    # AWS answers success for a load balancer that is already gone.
    elbv2.delete_load_balancer(LoadBalancerArn=arn)

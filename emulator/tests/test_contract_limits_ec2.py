"""EC2's documented limits at the emulator's front door (kbp_emulator/contract/limits/ec2.py): security group names
and descriptions (255 characters of a-zA-Z0-9, space and ._-:/()#,@[]+=&;{}!$*, no sg- name), rule descriptions,
and VPC and subnet CIDR blocks (/16 to /28, a subnet inside its VPC's blocks). A refused request creates nothing.
"""

from __future__ import annotations

import pytest
from limits_support import check, ec2_, passes, refused, unchecked  # noqa: F401  (fixtures)

ALLOWED = "a-zA-Z0-9. _-:/()#,@[]+=&;{}!$*"
VALID = f"are strings less than 256 characters from the following set:  {ALLOWED}"
BAD_DESCRIPTION = f"Invalid security group description. Valid descriptions {VALID}"
BAD_RULE = f"Invalid rule description. Valid descriptions {VALID}"


@pytest.fixture
def vpc(ec2_):
    return ec2_.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]


def groups(ec2, vpc):
    found = ec2.describe_security_groups(Filters=[{"Name": "vpc-id", "Values": [vpc]}])["SecurityGroups"]
    return sorted(g["GroupName"] for g in found if g["GroupName"] != "default")


# --- Security group names and descriptions ------------------------------------------------------------------


def test_group_name_of_255_passes_256_is_refused(ec2_, vpc):
    passes(lambda: ec2_.create_security_group(GroupName="n" * 255, Description="d", VpcId=vpc))
    refused(lambda: ec2_.create_security_group(GroupName="n" * 256, Description="d", VpcId=vpc),
            "InvalidParameterValue", "ec2.security_group_name", contains="Invalid security group name")
    assert groups(ec2_, vpc) == ["n" * 255]


def test_group_name_cannot_start_with_sg(ec2_, vpc):
    refused(lambda: ec2_.create_security_group(GroupName="sg-web", Description="d", VpcId=vpc),
            "InvalidParameterValue", "ec2.security_group_name",
            "Value (sg-web) for parameter GroupName is invalid. Group names may not be in the format sg-*.")
    passes(lambda: ec2_.create_security_group(GroupName="web-sg", Description="d", VpcId=vpc))


@pytest.mark.parametrize("name", ["a%b", "a<b>", "tab\there", "a'b", 'a"b', "a?b", "a|b", "a~b", "a^b", "a`b"])
def test_group_name_characters(ec2_, vpc, name):
    refused(lambda: ec2_.create_security_group(GroupName=name, Description="d", VpcId=vpc),
            "InvalidParameterValue", "ec2.security_group_name")
    assert groups(ec2_, vpc) == []


def test_every_allowed_character_passes(ec2_, vpc):
    text = "aZ09 ._-:/()#,@[]+=&;{}!$*"
    passes(lambda: ec2_.create_security_group(GroupName=text, Description=text, VpcId=vpc))


def test_description_of_255_passes_256_is_refused(ec2_, vpc):
    passes(lambda: ec2_.create_security_group(GroupName="inside", Description="d" * 255, VpcId=vpc))
    refused(lambda: ec2_.create_security_group(GroupName="outside", Description="d" * 256, VpcId=vpc),
            "InvalidParameterValue", "ec2.security_group_description", BAD_DESCRIPTION)
    assert groups(ec2_, vpc) == ["inside"]


def test_description_characters(ec2_, vpc):
    refused(lambda: ec2_.create_security_group(GroupName="g", Description="kbp's nodes", VpcId=vpc),
            "InvalidParameterValue", "ec2.security_group_description", BAD_DESCRIPTION)
    refused(lambda: ec2_.create_security_group(GroupName="g", Description="nœuds", VpcId=vpc),
            "InvalidParameterValue", "ec2.security_group_description",
            "Value (nœuds) for parameter GroupDescription is invalid. Character sets beyond ASCII are not supported.")
    assert groups(ec2_, vpc) == []


# --- Security group rule descriptions ----------------------------------------------------------------------


def authorize(ec2, group, description):
    return ec2.authorize_security_group_ingress(GroupId=group, IpPermissions=[
        {"IpProtocol": "tcp", "FromPort": 443, "ToPort": 443, "IpRanges": [{"CidrIp": "10.0.0.0/16", "Description": description}]}])


def test_rule_description(ec2_, vpc):
    group = ec2_.create_security_group(GroupName="g", Description="d", VpcId=vpc)["GroupId"]
    passes(lambda: authorize(ec2_, group, "HTTPS from the VPC (kbp)"))
    for description in ("x" * 256, "from <anywhere>", "nœud"):
        refused(lambda d=description: ec2_.authorize_security_group_egress(GroupId=group, IpPermissions=[
            {"IpProtocol": "tcp", "FromPort": 80, "ToPort": 80, "IpRanges": [{"CidrIp": "0.0.0.0/0", "Description": d}]}]),
            "InvalidParameterValue", "ec2.security_group_rule_description", BAD_RULE)
    rules = ec2_.describe_security_groups(GroupIds=[group])["SecurityGroups"][0]
    assert [p["FromPort"] for p in rules["IpPermissions"]] == [443]
    assert all(p.get("FromPort") != 80 for p in rules["IpPermissionsEgress"])


# --- VPC and subnet CIDR blocks ----------------------------------------------------------------------------


@pytest.mark.parametrize("cidr, ok", [("10.0.0.0/16", True), ("10.0.0.0/28", True), ("10.0.0.0/15", False),
                                      ("10.0.0.0/29", False)])
def test_vpc_block_between_16_and_28(ec2_, cidr, ok):
    call = lambda: ec2_.create_vpc(CidrBlock=cidr)  # noqa: E731
    if ok:
        passes(call)
    else:
        refused(call, "InvalidVpc.Range", "ec2.vpc_cidr", f"The CIDR '{cidr}' is invalid.")
        assert not [v for v in ec2_.describe_vpcs()["Vpcs"] if v["CidrBlock"] == cidr]


@pytest.mark.parametrize("cidr", ["10.0.0.1/16", "10.0.0.0", "10.0.0.0/33", "vpc", "2001:db8::/56"])
def test_vpc_block_must_be_an_ipv4_block(ec2_, cidr):
    refused(lambda: ec2_.create_vpc(CidrBlock=cidr), "InvalidParameterValue", "ec2.vpc_cidr",
            f"Value ({cidr}) for parameter cidrBlock is invalid. This is not a valid CIDR block.")


def test_subnet_block_between_16_and_28_inside_the_vpc(ec2_, vpc):
    passes(lambda: ec2_.create_subnet(VpcId=vpc, CidrBlock="10.0.0.0/28"))
    passes(lambda: ec2_.create_subnet(VpcId=vpc, CidrBlock="10.0.128.0/17"))
    for cidr in ("10.0.1.0/29", "10.1.0.0/24", "10.0.0.0/15"):
        refused(lambda c=cidr: ec2_.create_subnet(VpcId=vpc, CidrBlock=c), "InvalidSubnet.Range", "ec2.subnet_cidr",
                f"The CIDR '{cidr}' is invalid.")
    refused(lambda: ec2_.create_subnet(VpcId=vpc, CidrBlock="10.0.2.7/24"), "InvalidParameterValue", "ec2.subnet_cidr")
    subnets = ec2_.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [vpc]}])["Subnets"]
    assert sorted(s["CidrBlock"] for s in subnets) == ["10.0.0.0/28", "10.0.128.0/17"]


def test_a_subnet_may_be_in_a_secondary_block(ec2_, vpc):
    ec2_.associate_vpc_cidr_block(VpcId=vpc, CidrBlock="100.64.0.0/16")
    passes(lambda: ec2_.create_subnet(VpcId=vpc, CidrBlock="100.64.0.0/18"))
    refused(lambda: ec2_.create_subnet(VpcId=vpc, CidrBlock="100.65.0.0/18"), "InvalidSubnet.Range", "ec2.subnet_cidr")


def test_an_unknown_vpc_is_moto_s_to_answer():
    assert check("ec2", "CreateSubnet", {"VpcId": "vpc-unknown", "CidrBlock": "10.9.0.0/24"}) is None

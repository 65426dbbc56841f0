"""EC2's documented limits that the botocore model does not carry (EC2's model carries no constraints at all):
security group names and descriptions, security group rule descriptions, and the CIDR blocks of VPCs and
subnets. Tags are in `tags.py`.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from ..types import ContractRequest, Refusal
from .registry import items, mapping, rule

INVALID = "InvalidParameterValue"

# https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CreateSecurityGroup.html (GroupName: "Up to 255
# characters in length. Cannot start with sg-."; GroupDescription: "Up to 255 characters in length"; both "Valid
# characters: a-z, A-Z, 0-9, spaces, and ._-:/()#,@[]+=&;{}!$*"; every group is a VPC group since EC2-Classic
# was retired, so the VPC character set always applies).
SG_MAX = 255
SG_CHARS = re.compile(r"[a-zA-Z0-9 ._\-:/()#,@\[\]+=&;{}!$*]*")
SG_SET = "a-zA-Z0-9. _-:/()#,@[]+=&;{}!$*"


def _sg_text_problem(value: Any, parameter: str, what: str) -> str | None:
    """AWS's message for a group name or description it refuses. The non-ASCII and sg- messages are AWS's (seen
    in its answers), as is the description's; the name's is written like the description's."""
    text = "" if value is None else str(value)
    if not text.isascii():
        return f"Value ({text}) for parameter {parameter} is invalid. Character sets beyond ASCII are not supported."
    if len(text) > SG_MAX or not SG_CHARS.fullmatch(text):
        return (
            f"Invalid security group {what}. Valid {what}s are strings less than 256 characters from the following "
            f"set:  {SG_SET}"
        )
    return None


@rule("ec2.security_group_name", "ec2", "CreateSecurityGroup")
def security_group_name(request: ContractRequest) -> Refusal | None:
    name = request.params.get("GroupName")
    if isinstance(name, str) and name.lower().startswith("sg-"):
        return Refusal(
            INVALID, f"Value ({name}) for parameter GroupName is invalid. Group names may not be in the format sg-*."
        )
    problem = _sg_text_problem(name, "GroupName", "name")
    return Refusal(INVALID, problem) if problem else None


@rule("ec2.security_group_description", "ec2", "CreateSecurityGroup")
def security_group_description(request: ContractRequest) -> Refusal | None:
    problem = _sg_text_problem(request.params.get("Description"), "GroupDescription", "description")
    return Refusal(INVALID, problem) if problem else None


# https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_IpRange.html (Description: "Up to 255 characters in
# length", the same character set; likewise Ipv6Range, PrefixListId and UserIdGroupPair). AWS's message, seen in
# its answers.
RULE_DESCRIPTION = (
    "Invalid rule description. Valid descriptions are strings less than 256 characters from the following set:  "
    + SG_SET
)


def _rule_descriptions(params: dict[str, Any]) -> list[Any]:
    descriptions = []
    for permission in items(params.get("IpPermissions")):
        for field in ("IpRanges", "Ipv6Ranges", "PrefixListIds", "UserIdGroupPairs"):
            descriptions += [mapping(r).get("Description") for r in items(mapping(permission).get(field))]
    return [d for d in descriptions if d is not None]


@rule("ec2.security_group_rule_description", "ec2", "AuthorizeSecurityGroupIngress", "AuthorizeSecurityGroupEgress")
def security_group_rule_description(request: ContractRequest) -> Refusal | None:
    for description in _rule_descriptions(request.params):
        text = str(description)
        if len(text) > SG_MAX or not text.isascii() or not SG_CHARS.fullmatch(text):
            return Refusal(INVALID, RULE_DESCRIPTION)
    return None


# https://docs.aws.amazon.com/vpc/latest/userguide/vpc-cidr-blocks.html ("The allowed block size is between a /16
# netmask (65,536 IP addresses) and /28 netmask (16 IP addresses)", for VPCs and subnets alike; a subnet's block
# is a subset of its VPC's) and
# https://docs.aws.amazon.com/AWSEC2/latest/APIReference/errors-overview.html (InvalidVpc.Range,
# InvalidSubnet.Range: "The CIDR 'x' is invalid.")
MIN_PREFIX, MAX_PREFIX = 16, 28


def _network(cidr: Any) -> ipaddress.IPv4Network | None:
    """The IPv4 block, or None if `cidr` is not one (host bits set included: AWS wants the block's address; a bare
    address has no prefix length)."""
    if "/" not in str(cidr):
        return None
    try:
        network = ipaddress.ip_network(str(cidr), strict=True)
    except ValueError:
        return None
    return network if isinstance(network, ipaddress.IPv4Network) else None


def _not_a_block(cidr: Any) -> Refusal:
    return Refusal(INVALID, f"Value ({cidr}) for parameter cidrBlock is invalid. This is not a valid CIDR block.")


@rule("ec2.vpc_cidr", "ec2", "CreateVpc")
def vpc_cidr(request: ContractRequest) -> Refusal | None:
    cidr = request.params.get("CidrBlock")
    if cidr is None:  # an IPAM pool or Amazon-provided block; nothing to check here
        return None
    network = _network(cidr)
    if network is None:
        return _not_a_block(cidr)
    if not MIN_PREFIX <= network.prefixlen <= MAX_PREFIX:
        return Refusal("InvalidVpc.Range", f"The CIDR '{cidr}' is invalid.")
    return None


def _vpc_blocks(request: ContractRequest, vpc_id: Any) -> list[ipaddress.IPv4Network] | None:
    """The IPv4 blocks associated with the VPC, or None for an unknown VPC (moto answers InvalidVpcID.NotFound)."""
    from moto.ec2.models import ec2_backends

    if not isinstance(vpc_id, str):
        return None
    vpc = ec2_backends[request.account_id][request.region].vpcs.get(vpc_id)
    if vpc is None:
        return None
    blocks = []
    associations = getattr(vpc, "cidr_block_association_set", None) or []
    for association in associations.values() if isinstance(associations, dict) else associations:
        network = _network(association.get("cidr_block"))
        state = (association.get("cidr_block_state") or {}).get("state", "associated")
        if network is not None and state == "associated":
            blocks.append(network)
    return blocks or [n for n in [_network(vpc.cidr_block)] if n is not None]


@rule("ec2.subnet_cidr", "ec2", "CreateSubnet")
def subnet_cidr(request: ContractRequest) -> Refusal | None:
    cidr = request.params.get("CidrBlock")
    if cidr is None:  # an IPv6-only subnet or an IPAM allocation
        return None
    network = _network(cidr)
    if network is None:
        return _not_a_block(cidr)
    if not MIN_PREFIX <= network.prefixlen <= MAX_PREFIX:
        return Refusal("InvalidSubnet.Range", f"The CIDR '{cidr}' is invalid.")
    blocks = _vpc_blocks(request, request.params.get("VpcId"))
    if blocks is not None and not any(network.subnet_of(block) for block in blocks):
        return Refusal("InvalidSubnet.Range", f"The CIDR '{cidr}' is invalid.")
    return None

"""What keeps a subnet, security group or VPC from being deleted while something else still holds it. AWS
refuses with DependencyViolation to delete

- a subnet while a load balancer (ELBv2) or a VPC endpoint has network interfaces in it;
- a security group while a load balancer or a VPC endpoint uses it;
- a VPC while it still has a VPC endpoint that is not deleted.

moto 5.2.5 deletes all three regardless (it checks only a VPC's subnets, route tables and VPN gateways), so a
teardown that forgot the load balancers or endpoints a cluster's controllers left behind, or deleted the network
first, would pass here and fail in AWS. The messages are AWS's.

Also: CreateVpcEndpoint without a VpcEndpointType makes a Gateway endpoint, as AWS's API does (moto stores no
type, and DeleteVpcEndpoints of such an endpoint then fails with a 500).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterable
from typing import Any

from moto.ec2.exceptions import DependencyViolationError
from moto.ec2.models.security_groups import SecurityGroupBackend
from moto.ec2.models.subnets import SubnetBackend
from moto.ec2.models.vpcs import VPCBackend


def install() -> None:
    delete_subnet = SubnetBackend.delete_subnet
    delete_security_group = SecurityGroupBackend.delete_security_group
    delete_vpc = VPCBackend.delete_vpc
    create_vpc_endpoint = VPCBackend.create_vpc_endpoint

    @functools.wraps(create_vpc_endpoint)
    def create_gateway_by_default(self: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("endpoint_type") is None and len(args) < 3:
            kwargs["endpoint_type"] = "Gateway"
        return create_vpc_endpoint(self, *args, **kwargs)

    @functools.wraps(delete_subnet)
    def refusing_delete_subnet(self: Any, subnet_id: str) -> Any:
        held = any(subnet_id in {s.id for s in lb.subnets} for lb in _load_balancers(self)) or any(
            subnet_id in (e.subnet_ids or []) for e in _live_endpoints(self)
        )
        if held:
            raise DependencyViolationError(f"The subnet '{subnet_id}' has dependencies and cannot be deleted.")
        return delete_subnet(self, subnet_id)

    @functools.wraps(delete_security_group)
    def refusing_delete_security_group(self: Any, name: str | None = None, group_id: str | None = None) -> Any:
        group = self.get_security_group_by_name_or_id(group_id or name)
        gid = group.id if group is not None else group_id
        held = any(gid in (lb.security_groups or []) for lb in _load_balancers(self)) or any(
            gid in (e.security_group_ids or []) for e in _live_endpoints(self)
        )
        if gid and held:
            raise DependencyViolationError(f"resource {gid} has a dependent object")
        return delete_security_group(self, name=name, group_id=group_id)

    @functools.wraps(delete_vpc)
    def refusing_delete_vpc(self: Any, vpc_id: str) -> Any:
        if any(e.vpc_id == vpc_id for e in _live_endpoints(self)):
            raise DependencyViolationError(f"The vpc '{vpc_id}' has dependencies and cannot be deleted.")
        return delete_vpc(self, vpc_id)

    SubnetBackend.delete_subnet = refusing_delete_subnet
    SecurityGroupBackend.delete_security_group = refusing_delete_security_group
    VPCBackend.delete_vpc = refusing_delete_vpc
    VPCBackend.create_vpc_endpoint = create_gateway_by_default


def _load_balancers(ec2_backend: Any) -> Iterable[Any]:
    """The ELBv2 load balancers in the EC2 backend's account and region (none while ELBv2 was never used)."""
    models = sys.modules.get("moto.elbv2.models")
    if models is None:
        return []
    return list(models.elbv2_backends[ec2_backend.account_id][ec2_backend.region_name].load_balancers.values())


def _live_endpoints(ec2_backend: Any) -> Iterable[Any]:
    return [e for e in ec2_backend.vpc_end_points.values() if e.state != "deleted"]

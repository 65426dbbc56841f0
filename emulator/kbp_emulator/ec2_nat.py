"""NAT gateway life cycle. moto makes a NAT gateway `available` at once and `deleted` at once; AWS takes a minute
or two each way, and kbp waits for both. Here CreateNatGateway answers `pending` and DescribeNatGateways shows
`available` once the profile's delay has passed; DeleteNatGateway leads through `deleting` to `deleted`.

Deleting a NAT gateway that does not exist answers NatGatewayNotFound, as AWS does (moto raises a 500).

Its network interface is AWS's: requester-managed, `in-use`, of type `nat_gateway`, and gone (with its Elastic
IP association) once the gateway is deleted. moto leaves a plain `available` interface behind forever, which a
teardown would take for somebody's leftover.
"""

from __future__ import annotations

import functools
from typing import Any

from moto.ec2.exceptions import EC2ClientError
from moto.ec2.models.nat_gateways import NatGatewayBackend

from . import lifecycle


def install() -> None:
    create, describe, delete = (
        NatGatewayBackend.create_nat_gateway,
        NatGatewayBackend.describe_nat_gateways,
        NatGatewayBackend.delete_nat_gateway,
    )

    @functools.wraps(create)
    def create_nat_gateway(self: Any, *args: Any, **kwargs: Any) -> Any:
        with lifecycle.lock:
            nat = create(self, *args, **kwargs)
            eni = nat._eni
            eni.status, eni.requester_managed, eni.interface_type = "in-use", True, "nat_gateway"
            eni.description = f"Interface for NAT Gateway {nat.id}"
            lifecycle.begin(nat, "state", "pending", "available", lifecycle.deadline("ec2.create_nat_gateway"))
            return nat

    @functools.wraps(describe)
    def describe_nat_gateways(self: Any, *args: Any, **kwargs: Any) -> Any:
        with lifecycle.lock:
            for nat in self.nat_gateways.values():
                lifecycle.settle(nat)
            return describe(self, *args, **kwargs)

    @functools.wraps(delete)
    def delete_nat_gateway(self: Any, nat_gateway_id: str) -> Any:
        with lifecycle.lock:
            nat = self.nat_gateways.get(nat_gateway_id)
            if nat is None:
                raise EC2ClientError("NatGatewayNotFound", f"The Nat Gateway {nat_gateway_id} was not found")
            lifecycle.settle(nat)
            if nat.state in ("deleting", "deleted"):
                return nat
            delete(self, nat_gateway_id)
            lifecycle.begin(nat, "state", "deleting", "deleted", lifecycle.deadline("ec2.delete_nat_gateway"))
            _release_interface(self, nat)
            return nat

    NatGatewayBackend.create_nat_gateway = create_nat_gateway
    NatGatewayBackend.describe_nat_gateways = describe_nat_gateways
    NatGatewayBackend.delete_nat_gateway = delete_nat_gateway


def _release_interface(backend: Any, nat: Any) -> None:
    """AWS removes a deleted gateway's interface and frees its Elastic IP for release."""
    eni = getattr(nat, "_eni", None)
    if eni is None:
        return
    for address in backend.addresses:
        if address.eni is eni:
            address.eni, address.association_id = None, None
    backend.enis.pop(eni.id, None)

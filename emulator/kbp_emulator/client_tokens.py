"""Client tokens: a create repeated with the same token answers with what the first one made, as in AWS.

AWS (EC2 API reference, "Ensuring idempotency"; EKS API reference, `clientRequestToken`): a create that carries a
client token is idempotent. Sent again with the same token (an SDK's retry after a timeout or a dropped answer
sends the same one; the SDKs fill the token in when the caller leaves it out), it creates nothing and answers with
the resource the first request made, as that resource is now. EC2 answers a token reused with different
parameters with 400 IdempotentParameterMismatch; EKS documents no such error, so there the request is simply a
new one (a name already taken is ResourceInUseException, as without a token).

moto 5.2.5 ignores the tokens: a retried CreateNatGateway or CreateRouteTable makes a second gateway or table that
the caller never learns about, and a retried EKS create answers ResourceInUseException for the very resource its
first attempt made.

Here CreateNatGateway and CreateRouteTable (moto's handlers, wrapped by `install`) and CreateCluster,
CreateNodegroup, CreateAddon, CreateAccessEntry and CreatePodIdentityAssociation (the extension's, decorated with
`eks` in `eks/`) remember, per account, region, operation and token, the request's other parameters and the result
they answered. That result holds the live resource, so answering it again shows the resource's current state. A
token whose resource has gone since (deleted; for a NAT gateway, `deleted`) is forgotten and the request handled
as a new one. A request without a token is not touched. Tokens live in this process's memory, like all state, and
do not expire (AWS keeps them for at least a day).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from moto.core.responses import ActionResult

from . import lifecycle

#: handler → (client token or None, the request's other parameters as comparable text)
Request = Callable[[Any], tuple[Any, str]]
#: (handler, the resource the first request made) → True while that resource still exists
Alive = Callable[[Any, Any], bool]

MISMATCH = "The client token you have provided is associated with a request that had different parameters."


@dataclass
class _First:
    parameters: str
    result: ActionResult


#: (account, region, operation, token) → the token's first successful request. Guarded by lifecycle.lock.
_tokens: dict[tuple[str, str, str, str], _First] = {}


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def idempotent(member: str, alive: Alive, request: Request, mismatch: Callable[[], Exception] | None = None):
    """Makes a create handler idempotent per client token.

    `member` names the result's member holding the created resource. A repeated token with other parameters
    raises `mismatch()`, or without one is handled as a new request (and the token stays with the first).
    """

    def decorate(method: Callable[[Any], Any]) -> Callable[[Any], Any]:
        @functools.wraps(method)
        def handler(self: Any) -> Any:
            token, parameters = request(self)
            if not token:
                return method(self)
            key = (self.current_account, self.region, method.__name__, str(token))
            # The lock is re-entrant and every EKS request already holds it; EC2 requests take it here, so two
            # requests with one token never both create.
            with lifecycle.lock:
                first = _tokens.get(key)
                if first is not None and not alive(self, first.result.result[member]):
                    del _tokens[key]
                    first = None
                if first is not None:
                    if first.parameters == parameters:
                        return first.result
                    if mismatch is not None:
                        raise mismatch()
                result = method(self)
                if first is None and isinstance(result, ActionResult):
                    _tokens[key] = _First(parameters, result)
                return result

        handler.kbp_client_token = True
        return handler

    return decorate


def _ec2_request(handler: Any) -> tuple[Any, str]:
    params = dict(handler.params)
    token = params.pop("ClientToken", None)
    return token, _text(params)


def _ec2_mismatch() -> Exception:
    from moto.ec2.exceptions import EC2ClientError

    return EC2ClientError("IdempotentParameterMismatch", MISMATCH)


def ec2(member: str, alive: Alive):
    """For an EC2 create: the token is `ClientToken`; other parameters are IdempotentParameterMismatch."""
    return idempotent(member, alive, _ec2_request, _ec2_mismatch)


def _eks_request(handler: Any) -> tuple[Any, str]:
    body = handler.body_json()
    token = body.pop("clientRequestToken", None)
    return token, _text([handler.path, body])


def eks(member: str, alive: Alive):
    """For an EKS create handler: the token is the body's `clientRequestToken`; other parameters → a new request."""
    return idempotent(member, alive, _eks_request)


def _nat_gateway_alive(handler: Any, nat: Any) -> bool:
    if handler.ec2_backend.nat_gateways.get(nat.id) is not nat:
        return False
    lifecycle.settle(nat)  # as DescribeNatGateways would, so the answer and this check see the current state
    return nat.state != "deleted"


def _route_table_alive(handler: Any, table: Any) -> bool:
    return handler.ec2_backend.route_tables.get(table.id) is table


def install() -> None:
    from moto.ec2.responses.nat_gateways import NatGateways
    from moto.ec2.responses.route_tables import RouteTables

    for cls, name, member, alive in (
        (NatGateways, "create_nat_gateway", "NatGateway", _nat_gateway_alive),
        (RouteTables, "create_route_table", "RouteTable", _route_table_alive),
    ):
        method = getattr(cls, name)
        if not getattr(method, "kbp_client_token", False):
            setattr(cls, name, ec2(member, alive)(method))

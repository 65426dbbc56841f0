"""kbp's AWS emulator: moto's server plus what kbp needs that moto 5.2.5 lacks.

- EKS add-ons, access entries, Pod Identity associations, the Kubernetes versions offered (DescribeClusterVersions),
  updates (UpdateClusterVersion, UpdateNodegroupVersion, DescribeUpdate, ListUpdates) within EKS's node/control-plane
  version skew, upgrade insights (ListInsights, DescribeInsight), full UpdateClusterConfig, tagging of every EKS
  resource, and clusters, node groups and add-ons in the Resource Groups Tagging API's GetResources (package `eks`);
- life cycles for clusters, node groups, add-ons and NAT gateways timed by a latency profile (`lifecycle`,
  `profile`, `ec2_nat`);
- AWS's names and duplicate error for service-linked roles (`iam_slr`);
- GetCallerIdentity's IAM-user ARN in AWS's `iam` form (`sts_identity`);
- EventBridge rules in the Resource Groups Tagging API's GetResources, as AWS lists them (`events_tagging`);
- instances' primary network interfaces deleted on termination, as AWS does (`ec2_instances`);
- subnets, security groups and VPCs that load balancers or VPC endpoints still hold refused with
  DependencyViolation (`ec2_dependencies`); network load balancers' `net/` ARNs, deletion protection, and
  deleted load balancers taken out of their target groups (`elbv2_load_balancers`);
- client tokens honoured: a create repeated with the same token answers with the first one's resource instead of
  making another (CreateNatGateway, CreateRouteTable and the EKS creates; `client_tokens`);
- S3 conditional writes (PutObject/DeleteObject with If-Match/If-None-Match) atomic under concurrency
  (`s3_conditional`), and GetBucketVersioning in AWS's `VersioningConfiguration` shape (`s3_versioning`).
- AWS's input contract enforced before moto sees a request: the botocore model's constraints and AWS's documented
  limits, refused in each service's own error shape and logged (package `contract`);
- the Price List API's GetProducts for EC2 on-demand prices, which moto has no service for (`pricing_api`, figures
  in `prices`), and DescribeSpotPriceHistory with current per-zone prices derived from them (`ec2_spot_prices`);
  DescribeInstanceTypes and DescribeInstanceTypeOfferings paged by MaxResults/NextToken (`ec2_type_pages`).

Everything is patched into moto in-process; clients only ever see the AWS API. emulator/README.md lists what
is and is not modelled.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from . import lifecycle
from .profile import Profile

#: moto service → the modules whose install() patches it.
PATCHES = {
    "eks": ("kbp_emulator.eks",),
    "ec2": (
        "kbp_emulator.ec2_nat",
        "kbp_emulator.ec2_instances",
        "kbp_emulator.client_tokens",
        "kbp_emulator.ec2_dependencies",
        "kbp_emulator.ec2_spot_prices",
        "kbp_emulator.ec2_type_pages",
    ),
    "elbv2": ("kbp_emulator.elbv2_load_balancers",),
    "iam": ("kbp_emulator.iam_slr",),
    "sts": ("kbp_emulator.sts_identity",),
    "events": ("kbp_emulator.events_tagging",),
    "s3": ("kbp_emulator.s3_conditional", "kbp_emulator.s3_versioning"),
}
_patched: set[str] = set()
#: Services moto has no backend for at all: their requests are routed by the dispatcher, so they are installed
#: up front rather than on first use.
SERVICES = ("kbp_emulator.pricing_api",)


def patch(service: str) -> None:
    """Patches one moto service, once."""
    if service in PATCHES and service not in _patched:
        for module in PATCHES[service]:
            importlib.import_module(module).install()
        _patched.add(service)


def install_services() -> None:
    """Routes the services moto lacks to the extension's own apps, and puts AWS's input contract in front of every
    service (`contract`): both the server (`__main__`) and in-process servers (`install`) come through here."""
    for module in SERVICES:
        importlib.import_module(module).install()
    from .contract import middleware

    middleware.install()


def install(profile: Profile) -> None:
    """Selects the latency profile and patches every service now (for in-process servers, such as in tests)."""
    lifecycle.use(profile)
    install_services()
    for service in PATCHES:
        patch(service)


def patching_on_first_use(create_backend_app: Callable[[str], Any]) -> Callable[[str], Any]:
    """Wraps moto's per-service app factory so a service is patched when its first request arrives.

    moto imports a service's models only then; importing EC2's up front would add a second to every start.
    """

    def create(service: str) -> Any:
        patch(service)
        return create_backend_app(service)

    return create

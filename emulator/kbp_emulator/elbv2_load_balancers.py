"""ELBv2 load balancers as AWS has them where a teardown meets them:

- a network load balancer's ARN is `…:loadbalancer/net/<name>/<id>` (a gateway load balancer's `gwy/`), and so
  are its listeners' (`…:listener/net/…`); moto spells every one `app/`;
- DeleteLoadBalancer with deletion protection on is OperationNotPermitted (moto deletes it);
- DeleteLoadBalancer takes the balancer out of its target groups' `LoadBalancerArns` (moto leaves a deleted
  balancer named there).

Deleting a target group a listener or rule still forwards to is already ResourceInUse in moto, as in AWS. What a
load balancer holds on the EC2 side (its subnets and security groups) is `ec2_dependencies`.
"""

from __future__ import annotations

import functools
from typing import Any

from moto.elbv2.exceptions import ELBClientError
from moto.elbv2.models import ELBv2Backend

#: The ARN segment of each load balancer type.
ARN_TYPE = {"application": "app", "network": "net", "gateway": "gwy"}


def install() -> None:
    create, delete = ELBv2Backend.create_load_balancer, ELBv2Backend.delete_load_balancer

    @functools.wraps(create)
    def create_load_balancer(self: Any, *args: Any, tags: Any = None, **kwargs: Any) -> Any:
        lb = create(self, *args, **kwargs)
        kind = ARN_TYPE.get(lb.type, "app")
        if kind != "app":
            old = lb.arn
            lb.arn = old.replace(":loadbalancer/app/", f":loadbalancer/{kind}/", 1)
            self.load_balancers[lb.arn] = self.load_balancers.pop(old)
        self.tagging_service.tag_resource(lb.arn, tags)
        return lb

    @functools.wraps(delete)
    def delete_load_balancer(self: Any, arn: str) -> None:
        lb = self.load_balancers.get(arn)
        if lb is not None and lb.attrs.get("deletion_protection.enabled") == "true":
            raise ELBClientError(
                "OperationNotPermitted",
                f"Load balancer '{arn}' cannot be deleted because deletion protection is enabled",
            )
        delete(self, arn)
        for group in self.target_groups.values():
            if arn in group.load_balancer_arns:
                group.load_balancer_arns.remove(arn)

    ELBv2Backend.create_load_balancer = create_load_balancer
    ELBv2Backend.delete_load_balancer = delete_load_balancer

"""Instances' primary network interfaces. AWS creates the primary interface of an instance launched into a
subnet with DeleteOnTermination=true (unless the launch says otherwise), so terminating the instance deletes
the interface. moto 5.2.5 defaults it to false, leaving an `in-use` interface of a terminated instance behind,
which would keep a subnet from being deleted in AWS and is not what a teardown meets there.
"""

from __future__ import annotations

import functools
from typing import Any

from moto.ec2.models.instances import Instance


def install() -> None:
    prep = Instance.prep_nics

    @functools.wraps(prep)
    def prep_nics(self: Any, nic_spec: list[dict[str, Any]], *args: Any, **kwargs: Any) -> None:
        primary = next((n for n in nic_spec if int(n.get("DeviceIndex", 0)) == 0), None)
        prep(self, nic_spec, *args, **kwargs)
        explicit = primary is not None and ("NetworkInterfaceId" in primary or "DeleteOnTermination" in primary)
        nic = self.nics.get(0)
        if nic is not None and not explicit:
            nic.delete_on_termination = True

    Instance.prep_nics = prep_nics

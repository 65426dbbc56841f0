"""The prices the emulator answers with: EC2 on-demand list prices (Price List API) and Spot prices derived
from them (DescribeSpotPriceHistory).

On-demand: USD per hour, Linux, shared tenancy, no pre-installed software, as published on AWS's "Amazon EC2
On-Demand Pricing" page for US East (N. Virginia) = us-east-1, US West (Oregon) = us-west-2 and Europe
(Frankfurt) = eu-central-1. They are the published list prices as far as the writer knew them (AWS's page as
of 2024–2025; the file was written in December 2026), not read from AWS at run time (the emulator has no
network): treat them as plausible figures of the right size and ratio, not as a quote. The eu-central-1
Graviton (m7g, c7g), g5 and p4d figures are the least certain. c5 has no 8xlarge; its 9xlarge stands in.
AWS changes prices rarely but does (p4d was cut in 2025; the figure here may predate that).

Spot: the emulator cannot know live Spot prices. A type's Spot price in a zone is a fixed share of its
on-demand price, lower in the region's first zone and a little higher in each next one, so which zone is
cheapest is observable and stable: `spot = on_demand * (SPOT_SHARE + ZONE_STEP * zone_index)`, rounded to
4 decimals (zone `a` has index 0, `b` 1, …). Real Spot discounts vary by type and over time (typically 50–90 %).
Each type and zone also has an older price, a week earlier, `PREVIOUS_PREMIUM` higher, so the history has more
than one point.
"""

from __future__ import annotations

#: Region code → the `location` attribute the Price List API gives its products.
LOCATIONS = {
    "us-east-1": "US East (N. Virginia)",
    "us-west-2": "US West (Oregon)",
    "eu-central-1": "EU (Frankfurt)",
}

#: Region code → the prefix of its products' `usagetype` (us-east-1 has none).
USAGE_PREFIX = {"us-east-1": "", "us-west-2": "USW2-", "eu-central-1": "EUC1-"}

_US = {
    "t3.medium": 0.0416, "t3.large": 0.0832, "t3.xlarge": 0.1664,
    "m5.large": 0.096, "m5.xlarge": 0.192, "m5.2xlarge": 0.384, "m5.4xlarge": 0.768, "m5.8xlarge": 1.536,
    "m6i.large": 0.096, "m6i.xlarge": 0.192, "m6i.2xlarge": 0.384, "m6i.4xlarge": 0.768, "m6i.8xlarge": 1.536,
    "c5.large": 0.085, "c5.xlarge": 0.17, "c5.2xlarge": 0.34, "c5.4xlarge": 0.68, "c5.9xlarge": 1.53,
    "c6i.large": 0.085, "c6i.xlarge": 0.17, "c6i.2xlarge": 0.34, "c6i.4xlarge": 0.68, "c6i.8xlarge": 1.36,
    "r5.large": 0.126, "r5.xlarge": 0.252, "r5.2xlarge": 0.504, "r5.4xlarge": 1.008, "r5.8xlarge": 2.016,
    "r6i.large": 0.126, "r6i.xlarge": 0.252, "r6i.2xlarge": 0.504, "r6i.4xlarge": 1.008, "r6i.8xlarge": 2.016,
    "m7g.large": 0.0816, "m7g.xlarge": 0.1632, "m7g.2xlarge": 0.3264,
    "c7g.large": 0.0725, "c7g.xlarge": 0.145, "c7g.2xlarge": 0.29,
    "g5.xlarge": 1.006, "g5.2xlarge": 1.212, "g5.12xlarge": 5.672, "g5.48xlarge": 16.288,
    "p4d.24xlarge": 32.7726,
}  # fmt: skip

#: Region code → instance type → USD an hour on demand (Linux, shared tenancy).
ON_DEMAND: dict[str, dict[str, float]] = {
    "us-east-1": dict(_US),
    # Oregon's list prices for these types are N. Virginia's.
    "us-west-2": dict(_US),
    "eu-central-1": {
        "t3.medium": 0.048, "t3.large": 0.096, "t3.xlarge": 0.192,
        "m5.large": 0.115, "m5.xlarge": 0.23, "m5.2xlarge": 0.46, "m5.4xlarge": 0.92, "m5.8xlarge": 1.84,
        "m6i.large": 0.115, "m6i.xlarge": 0.23, "m6i.2xlarge": 0.46, "m6i.4xlarge": 0.92, "m6i.8xlarge": 1.84,
        "c5.large": 0.097, "c5.xlarge": 0.194, "c5.2xlarge": 0.388, "c5.4xlarge": 0.776, "c5.9xlarge": 1.746,
        "c6i.large": 0.097, "c6i.xlarge": 0.194, "c6i.2xlarge": 0.388, "c6i.4xlarge": 0.776, "c6i.8xlarge": 1.552,
        "r5.large": 0.152, "r5.xlarge": 0.304, "r5.2xlarge": 0.608, "r5.4xlarge": 1.216, "r5.8xlarge": 2.432,
        "r6i.large": 0.152, "r6i.xlarge": 0.304, "r6i.2xlarge": 0.608, "r6i.4xlarge": 1.216, "r6i.8xlarge": 2.432,
        "m7g.large": 0.0975, "m7g.xlarge": 0.195, "m7g.2xlarge": 0.39,
        "c7g.large": 0.0827, "c7g.xlarge": 0.1654, "c7g.2xlarge": 0.3308,
        "g5.xlarge": 1.258, "g5.2xlarge": 1.515, "g5.12xlarge": 7.09, "g5.48xlarge": 20.36,
        "p4d.24xlarge": 40.9657,
    },  # fmt: skip
}

#: Spot price as a share of on-demand in a region's first zone, and the step added per later zone.
SPOT_SHARE = 0.35
ZONE_STEP = 0.03
#: How much higher the week-old Spot price was (a share of on-demand).
PREVIOUS_PREMIUM = 0.05


def on_demand(region: str, instance_type: str) -> float | None:
    return ON_DEMAND.get(region, {}).get(instance_type)


def spot(region: str, instance_type: str, zone: str, previous: bool = False) -> float | None:
    """The emulator's current (or week-old) Spot price of a type in a zone of `region`, or None if unpriced."""
    price = on_demand(region, instance_type)
    if price is None or not zone.startswith(region):
        return None
    index = max(0, ord(zone[len(region) :][:1] or "a") - ord("a"))
    share = SPOT_SHARE + ZONE_STEP * index + (PREVIOUS_PREMIUM if previous else 0.0)
    return round(price * share, 4)

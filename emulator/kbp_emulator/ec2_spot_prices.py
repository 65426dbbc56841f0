"""DescribeSpotPriceHistory with prices a client can use.

moto 5.2.5 answers every type offered in the region, in every zone, at the price 0.00001, product
"Linux/UNIX (Amazon VPC)" and the timestamp 2006-01-02, ignoring ProductDescriptions, StartTime/EndTime and
paging. AWS answers the price history of the requested types and products, and with StartTime the price in
effect at that moment (so StartTime=now is the current price per type and zone), a page at a time.

Here each type priced in `prices.py` and sold as Spot in the region has, in each zone that offers it, two
points: the current price (in effect since an hour before the request) and the one a week before it; both
derived from the on-demand figure as `prices.py` documents. Product description `Linux/UNIX` (what AWS lists
for VPC instances now); other products have no history here. Honoured: InstanceTypes, ProductDescriptions,
AvailabilityZone, the `availability-zone`, `instance-type` and `product-description` filters, StartTime and
EndTime, MaxResults (at most 1000) and NextToken.
"""

from __future__ import annotations

import functools
from datetime import datetime, timedelta, timezone
from typing import Any

from moto.core.responses import ActionResult
from moto.ec2.exceptions import InvalidParameterValueError
from moto.ec2.models.instance_types import INSTANCE_TYPE_OFFERINGS, INSTANCE_TYPES
from moto.ec2.responses.spot_instances import SpotInstances

from . import prices

PRODUCT = "Linux/UNIX"
PAGE = 1000
#: When the current price took effect, and the previous one, before the request.
CURRENT_SINCE = timedelta(hours=1)
PREVIOUS_SINCE = timedelta(days=7, hours=1)


def install() -> None:
    SpotInstances.describe_spot_price_history = functools.wraps(SpotInstances.describe_spot_price_history)(
        describe_spot_price_history
    )


def describe_spot_price_history(self: Any) -> ActionResult:
    now = datetime.now(timezone.utc)
    filters = self._filters_from_querystring()
    types = set(self._get_param("InstanceTypes", []) or []) | set(filters.get("instance-type", []))
    products = set(self._get_param("ProductDescriptions", []) or []) | set(filters.get("product-description", []))
    zones = set(filters.get("availability-zone", []))
    if self._get_param("AvailabilityZone"):
        zones.add(self._get_param("AvailabilityZone"))
    start, end = _time(self._get_param("StartTime")), _time(self._get_param("EndTime")) or now
    if products and PRODUCT not in products:
        return ActionResult({"SpotPriceHistory": []})
    history = [
        point
        for point in history_of(self.region, now)
        if (not types or point["InstanceType"] in types)
        and (not zones or point["AvailabilityZone"] in zones)
        and point["Timestamp"] <= end
        and (start is None or point["_until"] > start)
    ]
    max_results = min(self._get_int_param("MaxResults", PAGE), PAGE)
    token = self._get_param("NextToken")
    first = int(token) if token and token.isdigit() else 0
    page = [{k: v for k, v in p.items() if k != "_until"} for p in history[first : first + max_results]]
    result: dict[str, Any] = {"SpotPriceHistory": page}
    if first + max_results < len(history):
        result["NextToken"] = str(first + max_results)
    return ActionResult(result)


def history_of(region: str, now: datetime) -> list[dict[str, Any]]:
    """Every point of the region's history, newest first per type and zone; `_until` is when it stopped being
    in effect."""
    offerings = INSTANCE_TYPE_OFFERINGS["availability-zone"].get(region, [])
    points = []
    for o in offerings:
        instance_type, zone = o["InstanceType"], o["Location"]
        if "spot" not in INSTANCE_TYPES.get(instance_type, {}).get("SupportedUsageClasses", []):
            continue
        current = prices.spot(region, instance_type, zone)
        previous = prices.spot(region, instance_type, zone, previous=True)
        if current is None or previous is None:
            continue
        since = now - CURRENT_SINCE
        forever = datetime.max.replace(tzinfo=timezone.utc)
        for price, at, until in ((current, since, forever), (previous, now - PREVIOUS_SINCE, since)):
            points.append(
                {
                    "AvailabilityZone": zone,
                    "InstanceType": instance_type,
                    "ProductDescription": PRODUCT,
                    "SpotPrice": f"{price:.6f}",
                    "Timestamp": at,
                    "_until": until,
                }
            )
    return points


def _time(value: str | datetime | None) -> datetime | None:
    """A timestamp parameter: moto's parser already makes a datetime of it; a string is parsed here."""
    if not value:
        return None
    if isinstance(value, datetime):
        parsed = value
    else:
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise InvalidParameterValueError(value) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)

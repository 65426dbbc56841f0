"""DescribeSpotPriceHistory with usable prices: moto answers 0.00001 for every type, in "Linux/UNIX (Amazon
VPC)", dated 2006, and ignores ProductDescriptions, StartTime and paging."""

from datetime import datetime, timezone

from kbp_emulator import prices


def history(ec2, **kwargs):
    pages = ec2.get_paginator("describe_spot_price_history").paginate(**kwargs)
    return [p for page in pages for p in page["SpotPriceHistory"]]


def test_start_time_now_gives_the_current_price_per_zone_below_on_demand(ec2):
    now = datetime.now(timezone.utc)
    points = history(ec2, InstanceTypes=["m5.large"], ProductDescriptions=["Linux/UNIX"], StartTime=now)
    by_zone = {p["AvailabilityZone"]: float(p["SpotPrice"]) for p in points}
    assert len(points) == len(by_zone), "one price per zone"
    assert sorted(by_zone) == ["us-west-2a", "us-west-2b", "us-west-2c", "us-west-2d"]
    on_demand = prices.on_demand("us-west-2", "m5.large")
    assert all(0 < price < on_demand for price in by_zone.values())
    assert by_zone["us-west-2a"] < by_zone["us-west-2b"], "zones differ, so the cheapest one is observable"
    assert by_zone["us-west-2a"] == prices.spot("us-west-2", "m5.large", "us-west-2a")
    assert {p["ProductDescription"] for p in points} == {"Linux/UNIX"}
    assert all(p["Timestamp"] <= now for p in points)


def test_without_start_time_the_history_has_an_older_higher_price(ec2):
    points = history(ec2, InstanceTypes=["c5.large"], Filters=[{"Name": "availability-zone", "Values": ["us-west-2b"]}])
    assert len(points) == 2
    newest, older = sorted(points, key=lambda p: p["Timestamp"], reverse=True)
    assert float(newest["SpotPrice"]) < float(older["SpotPrice"])


def test_other_products_have_no_history_and_pages_hold_everything(ec2):
    assert history(ec2, InstanceTypes=["m5.large"], ProductDescriptions=["Windows"]) == []
    now = datetime.now(timezone.utc)
    first = ec2.describe_spot_price_history(StartTime=now, MaxResults=5)
    assert len(first["SpotPriceHistory"]) == 5 and first["NextToken"]
    everything = history(ec2, StartTime=now, PaginationConfig={"PageSize": 50})
    keys = {(p["InstanceType"], p["AvailabilityZone"]) for p in everything}
    assert len(keys) == len(everything), "one current price per type and zone"
    assert {t for t, _ in keys} == {t for t in prices.ON_DEMAND["us-west-2"]}

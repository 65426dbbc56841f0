"""DescribeInstanceTypes and DescribeInstanceTypeOfferings in pages: moto 5.2.5 ignores MaxResults and answers
everything at once with no NextToken."""


def test_instance_types_come_a_page_at_a_time(ec2):
    first = ec2.describe_instance_types(MaxResults=100)
    assert len(first["InstanceTypes"]) == 100 and first["NextToken"]
    pages = ec2.get_paginator("describe_instance_types").paginate(PaginationConfig={"PageSize": 100})
    names = [t["InstanceType"] for page in pages for t in page["InstanceTypes"]]
    assert len(names) == len(set(names)) > 100
    assert "m5.large" in names


def test_offerings_by_zone_come_a_page_at_a_time(ec2):
    first = ec2.describe_instance_type_offerings(LocationType="availability-zone", MaxResults=1000)
    assert len(first["InstanceTypeOfferings"]) == 1000 and first["NextToken"]
    pages = ec2.get_paginator("describe_instance_type_offerings").paginate(
        LocationType="availability-zone", PaginationConfig={"PageSize": 1000}
    )
    offerings = [(o["InstanceType"], o["Location"]) for page in pages for o in page["InstanceTypeOfferings"]]
    assert len(offerings) == len(set(offerings)) > 1000
    assert {zone for t, zone in offerings if t == "m5.large"} == {f"us-west-2{z}" for z in "abcd"}

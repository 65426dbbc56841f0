"""The Price List API's GetProducts: moto has no pricing service at all, so each of these fails without
`pricing_api` (the request finds no backend)."""

import json

import boto3
import pytest
from botocore.exceptions import ClientError

from kbp_emulator import prices

LINUX_ON_DEMAND = {
    "operatingSystem": "Linux",
    "tenancy": "Shared",
    "preInstalledSw": "NA",
    "capacitystatus": "Used",
}


@pytest.fixture
def pricing(endpoint):
    # The Price List API lives in us-east-1 whatever region the prices are for.
    return boto3.client(
        "pricing",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def term_filters(**fields):
    return [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in fields.items()]


def usd(product):
    (term,) = product["terms"]["OnDemand"].values()
    (dimension,) = term["priceDimensions"].values()
    return float(dimension["pricePerUnit"]["USD"])


def test_one_linux_on_demand_product_per_type_with_the_published_price(pricing):
    answer = pricing.get_products(
        ServiceCode="AmazonEC2",
        Filters=term_filters(regionCode="us-west-2", instanceType="m5.large", **LINUX_ON_DEMAND),
    )
    assert answer["FormatVersion"] == "aws_v1"
    (item,) = answer["PriceList"]
    product = json.loads(item)
    attributes = product["product"]["attributes"]
    assert (attributes["instanceType"], attributes["regionCode"]) == ("m5.large", "us-west-2")
    assert attributes["location"] == "US West (Oregon)"
    assert usd(product) == prices.on_demand("us-west-2", "m5.large") == 0.096


def test_filters_leave_out_windows_dedicated_and_reservations(pricing):
    def listed(**fields):
        answer = pricing.get_products(
            ServiceCode="AmazonEC2", Filters=term_filters(regionCode="eu-central-1", instanceType="c6i.large", **fields)
        )
        return [json.loads(p) for p in answer["PriceList"]]

    everything = listed()
    assert len(everything) > 1, "a type has products a client must filter out"
    assert {p["product"]["attributes"]["operatingSystem"] for p in everything} == {"Linux", "Windows"}
    assert 0.0 in [usd(p) for p in everything], "an allocated reservation is listed at 0"
    (linux,) = listed(**LINUX_ON_DEMAND)
    assert usd(linux) == prices.on_demand("eu-central-1", "c6i.large")
    assert listed(operatingSystem="Linux", noSuchAttribute="x") == []


def test_products_are_paged(pricing):
    filters = term_filters(regionCode="us-east-1", **LINUX_ON_DEMAND)
    first = pricing.get_products(ServiceCode="AmazonEC2", Filters=filters, MaxResults=10)
    assert len(first["PriceList"]) == 10 and "NextToken" in first
    paginator = pricing.get_paginator("get_products")
    pages = paginator.paginate(ServiceCode="AmazonEC2", Filters=filters, PaginationConfig={"PageSize": 10})
    types = [json.loads(p)["product"]["attributes"]["instanceType"] for page in pages for p in page["PriceList"]]
    assert sorted(types) == sorted(prices.ON_DEMAND["us-east-1"]), "every type once, over several pages"


def test_other_services_list_nothing_and_bad_requests_are_refused(pricing):
    assert pricing.get_products(ServiceCode="AmazonS3")["PriceList"] == []
    with pytest.raises(ClientError) as e:
        pricing.get_products(ServiceCode="AmazonEC2", NextToken="not-a-token")
    assert e.value.response["Error"]["Code"] == "InvalidNextTokenException"

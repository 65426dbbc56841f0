"""The AWS Price List API's GetProducts for EC2 (`AWSPriceListService.GetProducts`, JSON 1.1), which moto
5.2.5 lacks altogether: its server has no `pricing` backend, so a request signed for `pricing` found no app.

Served for the instance types and regions of `prices.py`, in AWS's shape: `{"FormatVersion": "aws_v1",
"PriceList": [<JSON string per product>], "NextToken"}`, each product with `product.attributes` (instanceType,
regionCode, location, operatingSystem, tenancy, preInstalledSw, capacitystatus, marketoption, usagetype, vcpu,
memory…) and `terms.OnDemand.<sku>.<offer>.priceDimensions.<rate>.pricePerUnit.USD`. Beside the Linux,
shared-tenancy, used-capacity product each type also has products a client must filter out, as in AWS's list:
Windows, dedicated tenancy, and an allocated capacity reservation (priced 0, as AWS lists it). Their figures
are only there so that the filters matter; they are not AWS's.

Filters: TERM_MATCH and EQUALS (exact), CONTAINS, ANY_OF and NONE_OF (comma-separated values) on any product
attribute, plus `productFamily` and `serviceCode`; a field no product has matches nothing, as in AWS. Paging:
MaxResults (1–100, default 100) and NextToken. A ServiceCode other than AmazonEC2 lists nothing.

The request never reaches moto: the dispatcher hands requests whose X-Amz-Target names the Price List service
to this module's WSGI app.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable
from typing import Any

from moto.moto_server.werkzeug_app import DomainDispatcherApplication
from werkzeug.wrappers import Request, Response

from . import prices

TARGET_PREFIX = "AWSPriceListService."
MAX_RESULTS = 100
PUBLICATION_DATE = "2025-06-01T00:00:00Z"
#: On-demand term and rate codes: the same in every AWS product (JRTCKXETXF is "on demand, no upfront").
OFFER_TERM = "JRTCKXETXF"
RATE_CODE = "6YS6EN2CT7"

#: (operatingSystem, tenancy, capacitystatus, price as a function of the Linux shared price and vCPUs)
VARIANTS = (
    ("Linux", "Shared", "Used", lambda p, _: p),
    ("Linux", "Shared", "AllocatedCapacityReservation", lambda p, _: 0.0),
    ("Linux", "Dedicated", "Used", lambda p, _: round(p * 1.1, 4)),
    ("Windows", "Shared", "Used", lambda p, vcpus: round(p + 0.046 * vcpus / 2, 4)),
)


class PricingError(Exception):
    def __init__(self, code: str, message: str, status: int = 400):
        super().__init__(message)
        self.code, self.message, self.status = code, message, status


def install() -> None:
    """Routes Price List requests to `app`, before moto looks for a backend it does not have."""
    original = DomainDispatcherApplication.get_application
    if getattr(original, "_kbp_pricing", False):
        return

    @functools.wraps(original)
    def get_application(self: Any, environ: dict[str, Any]) -> Any:
        if environ.get("HTTP_X_AMZ_TARGET", "").startswith(TARGET_PREFIX):
            return app
        return original(self, environ)

    get_application._kbp_pricing = True  # type: ignore[attr-defined]
    DomainDispatcherApplication.get_application = get_application


def app(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
    request = Request(environ)
    operation = environ.get("HTTP_X_AMZ_TARGET", "")[len(TARGET_PREFIX) :]
    try:
        if operation != "GetProducts":
            raise PricingError("UnknownOperationException", f"operation {operation} is not served by the emulator")
        body = json.loads(request.get_data() or b"{}")
        answer = get_products(body)
        response = Response(json.dumps(answer), status=200, content_type="application/x-amz-json-1.1")
    except PricingError as e:
        error = {"__type": e.code, "Message": e.message}
        response = Response(json.dumps(error), status=e.status, content_type="application/x-amz-json-1.1")
    except ValueError as e:
        error = {"__type": "InvalidParameterException", "Message": f"the request is not JSON: {e}"}
        response = Response(json.dumps(error), status=400, content_type="application/x-amz-json-1.1")
    return response(environ, start_response)


def get_products(body: dict[str, Any]) -> dict[str, Any]:
    service = body.get("ServiceCode")
    if not service:
        raise PricingError("InvalidParameterException", "ServiceCode is required")
    max_results = body.get("MaxResults", MAX_RESULTS)
    if not isinstance(max_results, int) or not 1 <= max_results <= MAX_RESULTS:
        raise PricingError("InvalidParameterException", f"MaxResults must be between 1 and {MAX_RESULTS}")
    filters = body.get("Filters") or []
    matching = [p for p in products() if service == "AmazonEC2" and all(matches(p, f) for f in filters)]
    token = body.get("NextToken")
    try:
        start = int(token) if token else 0
    except ValueError:
        raise PricingError("InvalidNextTokenException", "The next token is invalid") from None
    if not 0 <= start <= len(matching):
        raise PricingError("InvalidNextTokenException", "The next token is invalid")
    page = matching[start : start + max_results]
    answer: dict[str, Any] = {"FormatVersion": "aws_v1", "PriceList": [json.dumps(p) for p in page]}
    if start + max_results < len(matching):
        answer["NextToken"] = str(start + max_results)
    return answer


def matches(product: dict[str, Any], f: dict[str, Any]) -> bool:
    field, value, kind = f.get("Field"), f.get("Value", ""), f.get("Type", "TERM_MATCH")
    if field == "productFamily":
        actual = product["product"]["productFamily"]
    elif field == "serviceCode":
        actual = product["serviceCode"]
    else:
        actual = product["product"]["attributes"].get(field)
    if actual is None:
        return False
    if kind in ("TERM_MATCH", "EQUALS"):
        return actual == value
    if kind == "CONTAINS":
        return value in actual
    if kind == "ANY_OF":
        return actual in value.split(",")
    if kind == "NONE_OF":
        return actual not in value.split(",")
    raise PricingError("InvalidParameterException", f"unknown filter type {kind}")


@functools.cache
def products() -> list[dict[str, Any]]:
    """Every product the emulator lists, in a stable order."""
    from moto.ec2.models.instance_types import INSTANCE_TYPES

    out = []
    for region, types in prices.ON_DEMAND.items():
        for instance_type, price in types.items():
            info = INSTANCE_TYPES.get(instance_type, {})
            vcpus = info.get("VCpuInfo", {}).get("DefaultVCpus", 0)
            memory_gib = info.get("MemoryInfo", {}).get("SizeInMiB", 0) / 1024
            for os_name, tenancy, capacity, priced in VARIANTS:
                price_of_variant = priced(price, vcpus)
                out.append(
                    product(region, instance_type, os_name, tenancy, capacity, price_of_variant, vcpus, memory_gib)
                )
    return out


def product(
    region: str,
    instance_type: str,
    os_name: str,
    tenancy: str,
    capacity: str,
    price: float,
    vcpus: int,
    memory_gib: float,
) -> dict[str, Any]:
    sku = hashlib.sha256(f"{region}/{instance_type}/{os_name}/{tenancy}/{capacity}".encode()).hexdigest()[:16].upper()
    usage = {"Shared": "BoxUsage", "Dedicated": "DedicatedUsage"}[tenancy]
    if capacity == "AllocatedCapacityReservation":
        usage = "Reservation"
    attributes = {
        "instanceType": instance_type,
        "instanceFamily": "GPU instance" if instance_type.startswith(("g", "p")) else "General purpose",
        "regionCode": region,
        "location": prices.LOCATIONS[region],
        "locationType": "AWS Region",
        "servicecode": "AmazonEC2",
        "servicename": "Amazon Elastic Compute Cloud",
        "operatingSystem": os_name,
        "tenancy": tenancy,
        "preInstalledSw": "NA",
        "capacitystatus": capacity,
        "marketoption": "OnDemand",
        "licenseModel": "No License required",
        "operation": "RunInstances" if os_name == "Linux" else "RunInstances:0002",
        "usagetype": f"{prices.USAGE_PREFIX[region]}{usage}:{instance_type}",
        "vcpu": str(vcpus),
        "memory": f"{memory_gib:g} GiB",
    }
    return {
        "product": {"productFamily": "Compute Instance", "attributes": attributes, "sku": sku},
        "serviceCode": "AmazonEC2",
        "terms": {
            "OnDemand": {
                f"{sku}.{OFFER_TERM}": {
                    "priceDimensions": {
                        f"{sku}.{OFFER_TERM}.{RATE_CODE}": {
                            "unit": "Hrs",
                            "endRange": "Inf",
                            "beginRange": "0",
                            "description": f"${price:g} per On Demand {os_name} {instance_type} Instance Hour",
                            "appliesTo": [],
                            "rateCode": f"{sku}.{OFFER_TERM}.{RATE_CODE}",
                            "pricePerUnit": {"USD": f"{price:.10f}"},
                        }
                    },
                    "sku": sku,
                    "effectiveDate": PUBLICATION_DATE,
                    "offerTermCode": OFFER_TERM,
                    "termAttributes": {},
                }
            }
        },
        "version": "20250601000000",
        "publicationDate": PUBLICATION_DATE,
    }

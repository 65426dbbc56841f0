"""DescribeInstanceTypes and DescribeInstanceTypeOfferings a page at a time.

moto 5.2.5 answers either call with every item at once (1395 types, ~5000 offerings in a region) and ignores
MaxResults and NextToken; AWS answers at most MaxResults items (DescribeInstanceTypes: 5–100,
DescribeInstanceTypeOfferings: 5–1000) with a NextToken for the rest, so a client that did not follow
NextToken would see only the first page there and everything here. Here a request with MaxResults gets a page
of moto's answer and a NextToken; one without gets everything, as before.
"""

from __future__ import annotations

import functools
from typing import Any

from moto.core.responses import ActionResult
from moto.ec2.exceptions import InvalidParameterValueError
from moto.ec2.responses.instances import InstanceResponse

#: Operation → the list its answer holds and AWS's largest page.
PAGED = {
    "describe_instance_types": ("InstanceTypes", 100),
    "describe_instance_type_offerings": ("InstanceTypeOfferings", 1000),
}


def install() -> None:
    for operation, (key, largest) in PAGED.items():
        setattr(InstanceResponse, operation, paged(getattr(InstanceResponse, operation), key, largest))


def paged(original: Any, key: str, largest: int) -> Any:
    @functools.wraps(original)
    def respond(self: Any) -> ActionResult:
        answer = original(self)
        max_results = self._get_int_param("MaxResults")
        if max_results is None:
            return answer
        if not 5 <= max_results <= largest:
            raise InvalidParameterValueError(str(max_results))
        items = list(answer.result[key])
        token = self._get_param("NextToken")
        if token and not token.isdigit():
            raise InvalidParameterValueError(token)
        first = int(token) if token else 0
        result: dict[str, Any] = {key: items[first : first + max_results]}
        if first + max_results < len(items):
            result["NextToken"] = str(first + max_results)
        return ActionResult(result)

    return respond

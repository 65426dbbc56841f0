"""AWS's documented limits that the botocore models do not carry, one module per service (`iam`, `eks`, `ec2`,
`sqs`, `events`, `kms`) and one for the tag limits every tagging call shares (`tags`).

`check` is the entry point the contract middleware calls after the model's own constraints: it answers the
`Refusal` AWS would give for the first limit the request breaks, or None. Each rule is a small function
registered for the operations it applies to (`registry.rule`), with the AWS page it comes from beside it.
"""

from __future__ import annotations

from ..types import ContractRequest, Refusal
from . import ec2, eks, events, iam, kms, sqs, tags  # noqa: F401  (each registers its rules)
from .registry import check as _check


def check(request: ContractRequest) -> Refusal | None:
    """The first documented limit `request` breaks, or None."""
    return _check(request)

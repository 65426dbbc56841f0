"""What the contract checks are given and what they answer: one request, already parsed by the botocore model of its
operation, and the refusal AWS would answer it with.

`middleware` (the WSGI layer in front of moto) builds a `ContractRequest` per signed request, runs the model's own
constraints (`model_rules`) and then the documented limits the models lack (`limits`); the first `Refusal` is
written back in the service's wire protocol and recorded, and moto never sees the request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ContractRequest:
    #: The SigV4 signing name: iam, ec2, eks, sqs, events, kms, sts, s3, tagging, pricing, elasticloadbalancing.
    service: str
    #: The operation's name in the botocore model, such as `CreatePolicy`.
    operation: str
    #: The input, keyed by the botocore input shape's member names exactly as boto3 takes them
    #: (`{"PolicyName": "x", "Tags": [{"Key": "k", "Value": "v"}]}` for IAM, `{"name": …, "taints": [...]}` for EKS).
    params: dict[str, Any]
    account_id: str = "123456789012"
    region: str = "us-east-1"


@dataclass(frozen=True)
class Refusal:
    #: The service's own error code: IAM `ValidationError`, EC2 `InvalidParameterValue`, EKS
    #: `InvalidParameterException`, SQS/EventBridge/KMS `ValidationException`, IAM `LimitExceeded`, …
    code: str
    #: The message, in the service's own words where AWS's are known.
    message: str
    status: int = 400
    #: Which rule refused it (`iam.tag_value_chars`, `model.length`): for the refusal log, not the client.
    rule: str = field(default="", compare=False)

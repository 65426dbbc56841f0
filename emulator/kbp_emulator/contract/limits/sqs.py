"""SQS's documented limits that the botocore model does not carry (SQS's model has no constraints): the queue
name, and the `.fifo` suffix that a FIFO queue must have and a standard queue cannot. Tags are in `tags.py`.

SQS answers InvalidParameterValue (400) for both; the protocol is JSON with awsQueryCompatible, so the middleware
writes the query code in `x-amzn-query-error` too.
"""

from __future__ import annotations

import re

from ..types import ContractRequest, Refusal
from .registry import mapping, rule

# https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html ("A queue name can
# have up to 80 characters. Valid values: alphanumeric characters, hyphens (-), and underscores (_). A FIFO queue
# name must end with the .fifo suffix.") and
# https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-queues.html (queue name)
MAX_NAME = 80
STANDARD = re.compile(r"[A-Za-z0-9_-]{1,80}")
FIFO = re.compile(r"[A-Za-z0-9_-]{1,75}\.fifo")

# AWS's messages, as its answers word them.
STANDARD_MESSAGE = "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length"
FIFO_MESSAGE = (
    "The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with "
    ".fifo suffix and be 1 to 80 in length."
)


def _fifo(request: ContractRequest) -> bool:
    return str(mapping(request.params.get("Attributes")).get("FifoQueue", "false")).lower() == "true"


@rule("sqs.queue_name", "sqs", "CreateQueue")
def queue_name(request: ContractRequest) -> Refusal | None:
    name = str(request.params.get("QueueName", ""))
    if _fifo(request):
        return None if FIFO.fullmatch(name) else Refusal("InvalidParameterValue", FIFO_MESSAGE)
    return None if STANDARD.fullmatch(name) else Refusal("InvalidParameterValue", STANDARD_MESSAGE)

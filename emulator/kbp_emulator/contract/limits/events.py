"""EventBridge's documented limits that the botocore model does not carry: the size of a rule's event pattern
(the model allows 4,096 characters, the account's default quota is 2,048) and its shape. The rule's name
(1–64 of `[.\\-_A-Za-z0-9]`) and description (≤ 512) are in the model (`model_rules`); tags are in `tags.py`.
"""

from __future__ import annotations

from typing import Any

from ..types import ContractRequest, Refusal
from .registry import parse_json, rule

# https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-quota.html ("Event pattern size | 2,048 | Maximum
# event pattern size, in characters"; adjustable up to 4,096, the model's figure). PutRule's model lists
# LimitExceededException, EventBridge's answer to its quotas ("The requested resource exceeds the maximum number
# allowed."); whether it answers an oversized pattern with that or with InvalidEventPatternException is not
# documented: LimitExceededException picked.
MAX_PATTERN = 2048


@rule("events.event_pattern_size", "events", "PutRule")
def event_pattern_size(request: ContractRequest) -> Refusal | None:
    pattern = request.params.get("EventPattern")
    if isinstance(pattern, str) and len(pattern) > MAX_PATTERN:
        return Refusal("LimitExceededException", "The requested resource exceeds the maximum number allowed.")
    return None


# https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns.html (a pattern is a JSON object
# whose fields hold either a nested object or an array of match values: "values to match are in an array").
# AWS's InvalidEventPatternException messages begin "Event pattern is not valid. Reason: "; the reasons here
# are the emulator's.


def _leaf_problem(pattern: dict[str, Any], path: str = "") -> str | None:
    for field, value in pattern.items():
        where = f"{path}{field}"
        if isinstance(value, dict):
            problem = _leaf_problem(value, where + ".")
            if problem:
                return problem
        elif not isinstance(value, list):
            return f"Match value of '{where}' must be an array or an object"
    return None


@rule("events.event_pattern_json", "events", "PutRule")
def event_pattern_json(request: ContractRequest) -> Refusal | None:
    text = request.params.get("EventPattern")
    if text is None:
        return None
    pattern, error = parse_json(text)
    if error is not None:
        reason = f"Unrecognized JSON: {error}"
    elif not isinstance(pattern, dict):
        reason = "Filter is not an object"
    else:
        reason = _leaf_problem(pattern)
    return Refusal("InvalidEventPatternException", f"Event pattern is not valid. Reason: {reason}") if reason else None

"""Which documented limit applies to which operation, and the small helpers the rules share.

Each rule is a function of one `ContractRequest` that answers the `Refusal` AWS would give, or None. A module
registers its rules with `@rule("iam.trust_policy_size", "iam", "CreateRole", "UpdateAssumeRolePolicy")`; the
rule id is written into the refusal (`Refusal.rule`) so the refusal log says which limit fired. `check` runs
the rules registered for the request's service and operation in the order their modules registered them.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable
from typing import Any

from ..types import ContractRequest, Refusal

Rule = Callable[[ContractRequest], "Refusal | None"]

#: The operation of a rule that looks at every operation of its service (EC2's TagSpecifications).
ANY = "*"

#: (service, operation) → the rules that apply, in registration order.
RULES: dict[tuple[str, str], list[tuple[str, Rule]]] = {}


def rule(rule_id: str, service: str, *operations: str) -> Callable[[Rule], Rule]:
    """Registers the decorated function as rule `rule_id` for `operations` of `service`."""

    def register(function: Rule) -> Rule:
        for operation in operations:
            RULES.setdefault((service, operation), []).append((rule_id, function))
        return function

    return register


def check(request: ContractRequest) -> Refusal | None:
    """The refusal of the first registered rule `request` breaks, with its rule id, or None."""
    rules = RULES.get((request.service, request.operation), []) + RULES.get((request.service, ANY), [])
    for rule_id, function in rules:
        refusal = function(request)
        if refusal is not None:
            return refusal if refusal.rule else dataclasses.replace(refusal, rule=rule_id)
    return None


# --- helpers the modules share ------------------------------------------------------------------------------


def without_whitespace(text: str) -> int:
    """Length of `text` not counting white space, as IAM counts a policy's size against its quotas."""
    return sum(1 for c in text if not c.isspace())


def parse_json(text: Any) -> tuple[Any, str | None]:
    """(document, None) or (None, the parser's complaint)."""
    if not isinstance(text, str):
        return None, "not a string"
    try:
        return json.loads(text), None
    except ValueError as e:
        return None, str(e)


def mapping(value: Any) -> dict[str, Any]:
    """`value` if it is a structure or map, else an empty one: the rules never fail on a request of the wrong
    shape (the model rules answer for shapes; what they let through is moto's to answer)."""
    return value if isinstance(value, dict) else {}


def items(value: Any) -> list[Any]:
    """`value` if it is a list, else an empty one (see `mapping`)."""
    return value if isinstance(value, list) else []


def as_list(value: Any) -> list[Any]:
    """A policy element that may be one value or a list of them, as a list."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def tag_pairs(tags: Any, key: str = "Key", value: str = "Value") -> list[tuple[str, str]]:
    """(key, value) pairs from any of the shapes the APIs take tags in: a list of {Key, Value} (IAM, EC2,
    EventBridge; KMS with TagKey/TagValue) or a map (EKS, SQS)."""
    if isinstance(tags, dict):
        return [(str(k), "" if v is None else str(v)) for k, v in tags.items()]
    pairs = []
    for tag in tags or ():
        if isinstance(tag, dict):
            pairs.append((str(tag.get(key, "")), "" if tag.get(value) is None else str(tag.get(value))))
    return pairs


def stored_tag_keys(tags: Any) -> list[str]:
    """The keys of tags as moto stores them on a resource: a list of {Key, Value}, a map key → {Key, Value}
    (IAM managed policies, OIDC providers) or a plain map key → value."""
    if isinstance(tags, dict):
        return [v["Key"] if isinstance(v, dict) and "Key" in v else str(k) for k, v in tags.items()]
    return [t["Key"] for t in tags or () if isinstance(t, dict) and "Key" in t]


def count_after(existing: Iterable[str], new: Iterable[str], fold: Callable[[str], str] = lambda k: k) -> int:
    """How many tags count against a resource's quota after new keys are added to existing ones: a key already
    there is overwritten, not added, and AWS's own `aws:` tags do not count. `fold` makes keys compare
    case-insensitively where the service does (IAM)."""
    keys = {fold(k) for k in existing} | {fold(k) for k in new}
    return sum(1 for k in keys if not k.lower().startswith("aws:"))

"""IAM's documented limits on policies that the botocore model does not carry: the policy grammar (what IAM
answers MalformedPolicyDocument to), the size quotas of trust, managed and inline policies, and the number of
managed policies attached to a role. Name and path lengths and patterns are in the model (`model_rules`);
tags are in `tags.py`.

Sizes are counted as IAM counts them: characters, white space not counted.
"""

from __future__ import annotations

import re
from typing import Any

from ..types import ContractRequest, Refusal
from .registry import as_list, parse_json, rule, without_whitespace

# https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html#reference_iam-quotas-entity-length
# ("Role trust policy length | 2,048 characters"; managed policy 6,144 characters; the inline policies of a role
# 10,240 characters in all; "IAM does not count white space when calculating the size of a policy against
# these quotas"; "Managed policies attached to an IAM role | 10"). Whether white space is left out of the trust
# policy's count too is not said; it is left out here as for the other policies.
TRUST_POLICY_MAX = 2048
MANAGED_POLICY_MAX = 6144
ROLE_INLINE_MAX = 10240
ROLE_ATTACHED_MAX = 10

# https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_grammar.html and
# https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements.html (Version, Id, Statement;
# a statement's Sid, Effect, Principal/NotPrincipal, Action/NotAction, Resource/NotResource, Condition)
# https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_version.html (2012-10-17, 2008-10-17)
# https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_sid.html (A-Z, a-z, 0-9; unique)
VERSIONS = ("2012-10-17", "2008-10-17")
POLICY_KEYS = {"Version", "Id", "Statement"}
STATEMENT_KEYS = {"Sid", "Effect", "Principal", "NotPrincipal", "Action", "NotAction", "Resource", "NotResource",
                  "Condition"}  # fmt: skip
SID = re.compile(r"[0-9A-Za-z]*")

# IAM's own messages, as its MalformedPolicyDocument answers word them. "Missing required field Effect" is
# written by analogy with "Missing required field Principal"; the others were seen in AWS answers.
SYNTAX = "Syntax errors in policy."
LEGACY = "The policy failed legacy parsing"
NO_ACTIONS = "Policy statement must contain actions."
NO_RESOURCES = "Policy statement must contain resources."
PRINCIPAL_IN_IDENTITY = "Policy document should not specify a principal."
NO_PRINCIPAL = "Missing required field Principal"
NO_EFFECT = "Missing required field Effect"
SID_CHARS = (
    "Statement IDs (SID) must be alpha-numeric. Check that your input satisfies the regular expression [0-9A-Za-z]*"
)
SID_UNIQUE = "Statement IDs (SID) in a single policy must be unique."


def _one_of(statement: dict[str, Any], a: str, b: str) -> str | None:
    """"both" when the statement has both elements, "none" when it has neither (or only empty ones), else None."""
    has_a, has_b = a in statement, b in statement
    if has_a and has_b:
        return "both"
    if not as_list(statement.get(a)) and not as_list(statement.get(b)):
        return "none"
    return None


def _statement_problem(statement: Any, trust: bool) -> str | None:
    """What IAM says of one statement of an identity policy (trust=False) or a role's trust policy."""
    if not isinstance(statement, dict) or set(statement) - STATEMENT_KEYS:
        return SYNTAX
    if "Effect" not in statement:
        return NO_EFFECT
    if statement["Effect"] not in ("Allow", "Deny"):
        return SYNTAX
    if not isinstance(statement.get("Sid", ""), str):
        return SYNTAX
    if not SID.fullmatch(statement.get("Sid", "")):
        return SID_CHARS
    actions = _one_of(statement, "Action", "NotAction")
    if actions == "both":
        return SYNTAX
    if actions == "none":
        return NO_ACTIONS
    if any(not isinstance(a, str) for a in as_list(statement.get("Action", statement.get("NotAction")))):
        return SYNTAX
    if "Condition" in statement and not isinstance(statement["Condition"], dict):
        return SYNTAX
    return _trust_statement_problem(statement) if trust else _identity_statement_problem(statement)


def _identity_statement_problem(statement: dict[str, Any]) -> str | None:
    if "Principal" in statement or "NotPrincipal" in statement:
        return PRINCIPAL_IN_IDENTITY
    resources = _one_of(statement, "Resource", "NotResource")
    if resources == "both":
        return SYNTAX
    if resources == "none":
        return NO_RESOURCES
    return None


def _trust_statement_problem(statement: dict[str, Any]) -> str | None:
    principals = _one_of(statement, "Principal", "NotPrincipal")
    if principals == "both":
        return SYNTAX
    if principals == "none":
        return NO_PRINCIPAL
    principal = statement.get("Principal", statement.get("NotPrincipal"))
    if principal != "*" and not isinstance(principal, dict):
        return SYNTAX
    for field in ("Resource", "NotResource"):
        if field in statement:
            return f"Has prohibited field {field}."
    return None


def policy_problem(text: Any, trust: bool = False) -> str | None:
    """The MalformedPolicyDocument message IAM answers a policy document with, or None if it takes it."""
    document, error = parse_json(text)
    if error is not None or not isinstance(document, dict) or set(document) - POLICY_KEYS:
        return SYNTAX
    if "Version" in document and document["Version"] not in VERSIONS:
        return LEGACY
    statements = document.get("Statement")
    statements = [statements] if isinstance(statements, dict) else statements
    if not isinstance(statements, list) or not statements:
        return SYNTAX
    seen: set[str] = set()
    for statement in statements:
        problem = _statement_problem(statement, trust)
        if problem:
            return problem
        sid = statement.get("Sid")
        if sid:
            if sid in seen:
                return SID_UNIQUE
            seen.add(sid)
    return None


def _trust_document(request: ContractRequest) -> Any:
    p = request.params
    return p.get("AssumeRolePolicyDocument") if request.operation == "CreateRole" else p.get("PolicyDocument")


def _iam_backend(request: ContractRequest) -> Any:
    from moto.iam.models import iam_backends
    from moto.utilities.utils import get_partition

    return iam_backends[request.account_id][get_partition(request.region)]


def _role(request: ContractRequest) -> Any:
    """The role the request names, or None (moto answers NoSuchEntity for it)."""
    try:
        return _iam_backend(request).get_role(request.params.get("RoleName"))
    except Exception:
        return None


@rule("iam.trust_policy_grammar", "iam", "CreateRole", "UpdateAssumeRolePolicy")
def trust_policy_grammar(request: ContractRequest) -> Refusal | None:
    problem = policy_problem(_trust_document(request), trust=True)
    return Refusal("MalformedPolicyDocument", problem) if problem else None


@rule("iam.policy_grammar", "iam", "CreatePolicy", "CreatePolicyVersion", "PutRolePolicy")
def identity_policy_grammar(request: ContractRequest) -> Refusal | None:
    problem = policy_problem(request.params.get("PolicyDocument"))
    return Refusal("MalformedPolicyDocument", problem) if problem else None


@rule("iam.trust_policy_size", "iam", "CreateRole", "UpdateAssumeRolePolicy")
def trust_policy_size(request: ContractRequest) -> Refusal | None:
    # AWS's words (LimitExceeded, 409), as seen in its answers.
    if without_whitespace(str(_trust_document(request) or "")) > TRUST_POLICY_MAX:
        return Refusal("LimitExceeded", f"Cannot exceed quota for ACLSizePerRole: {TRUST_POLICY_MAX}", 409)
    return None


@rule("iam.managed_policy_size", "iam", "CreatePolicy", "CreatePolicyVersion")
def managed_policy_size(request: ContractRequest) -> Refusal | None:
    # AWS's words, as seen in its answers.
    if without_whitespace(str(request.params.get("PolicyDocument") or "")) > MANAGED_POLICY_MAX:
        return Refusal("LimitExceeded", f"Cannot exceed quota for PolicySize: {MANAGED_POLICY_MAX}", 409)
    return None


@rule("iam.role_inline_policy_size", "iam", "PutRolePolicy")
def role_inline_policy_size(request: ContractRequest) -> Refusal | None:
    # All of a role's inline policies together, the one this call replaces (same name) not counted twice.
    # AWS's words ("bytes" though it counts characters), as seen in its answers.
    p = request.params
    role = _role(request)
    others = {} if role is None else {k: v for k, v in role.policies.items() if k != p.get("PolicyName")}
    total = without_whitespace(str(p.get("PolicyDocument") or ""))
    total += sum(without_whitespace(str(document)) for document in others.values())
    if total > ROLE_INLINE_MAX:
        message = f"Maximum policy size of {ROLE_INLINE_MAX} bytes exceeded for role {p.get('RoleName')}"
        return Refusal("LimitExceeded", message, 409)
    return None


@rule("iam.role_attached_policies", "iam", "AttachRolePolicy")
def role_attached_policies(request: ContractRequest) -> Refusal | None:
    # Attaching a policy the role already has changes nothing and is not refused. AWS's words.
    role = _role(request)
    if role is None or request.params.get("PolicyArn") in role.managed_policies:
        return None
    if len(role.managed_policies) >= ROLE_ATTACHED_MAX:
        return Refusal("LimitExceeded", f"Cannot exceed quota for PoliciesPerRole: {ROLE_ATTACHED_MAX}", 409)
    return None

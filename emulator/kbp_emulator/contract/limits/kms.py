"""KMS's documented limits that the botocore model does not carry: alias names (the `alias/` prefix, the
reserved `alias/aws/`, the characters the documentation allows) and the size of a key policy (the model allows
131,072 characters, KMS 32 KB). The description's 8,192 characters are in the model (`model_rules`); tags are
in `tags.py`.
"""

from __future__ import annotations

import re

from ..types import ContractRequest, Refusal
from .registry import parse_json, rule

# https://docs.aws.amazon.com/kms/latest/APIReference/API_CreateAlias.html (AliasName: "must begin with alias/
# followed by a name... can contain only alphanumeric characters, forward slashes (/), underscores (_), and
# dashes (-). The alias name cannot begin with alias/aws/. The alias/aws/ prefix is reserved for AWS managed
# keys."; 1–256 characters in all) and https://docs.aws.amazon.com/kms/latest/developerguide/kms-alias.html
PREFIX = "alias/"
RESERVED = "alias/aws/"
NAME = re.compile(r"alias/[a-zA-Z0-9/_-]{1,250}")

# The model carries the 256 characters in all and a pattern, ^[a-zA-Z0-9:/_-]+$, that allows ":" (it serves ARNs
# elsewhere) where the documentation does not; an empty name after alias/ passes the model too.
# AWS's words for a missing prefix (seen in its answers). For the reserved prefix KMS answers
# NotAuthorizedException as for the names of AWS managed keys it reserves (moto does the same for those); the
# message is the emulator's. A name with other characters is InvalidAliasNameException, the error CreateAlias's
# model lists for "the specified alias name is not valid".
NO_PREFIX = (
    'Alias must start with the prefix "alias/". Please see '
    "https://docs.aws.amazon.com/kms/latest/developerguide/kms-alias.html"
)


@rule("kms.alias_name", "kms", "CreateAlias", "UpdateAlias")
def alias_name(request: ContractRequest) -> Refusal | None:
    name = str(request.params.get("AliasName", ""))
    if not name.startswith(PREFIX):
        return Refusal("ValidationException", NO_PREFIX)
    if name.startswith(RESERVED):
        message = f"{name}: aliases beginning with alias/aws/ are reserved for AWS managed keys."
        return Refusal("NotAuthorizedException", message)
    if not NAME.fullmatch(name):
        return Refusal(
            "InvalidAliasNameException",
            f"{name} is not a valid alias name: after alias/ it can have 1 to 250 alphanumeric characters, forward "
            "slashes (/), underscores (_) and dashes (-).",
        )
    return None


# https://docs.aws.amazon.com/kms/latest/developerguide/resource-limits.html ("Key policy document size | 32 KB
# (32,768 bytes)") and https://docs.aws.amazon.com/kms/latest/APIReference/API_PutKeyPolicy.html (Policy:
# "The key policy size quota is 32 kilobytes (32768 bytes)"; LimitExceededException: "a length constraint or
# quota was exceeded"; MalformedPolicyDocumentException: "the specified policy is not syntactically or
# semantically correct"). The messages are the emulator's.
MAX_POLICY_BYTES = 32768


@rule("kms.key_policy_size", "kms", "CreateKey", "PutKeyPolicy")
def key_policy_size(request: ContractRequest) -> Refusal | None:
    policy = request.params.get("Policy")
    if isinstance(policy, str) and len(policy.encode()) > MAX_POLICY_BYTES:
        return Refusal("LimitExceededException", f"The key policy exceeds the quota of {MAX_POLICY_BYTES} bytes.")
    return None


@rule("kms.key_policy_json", "kms", "CreateKey", "PutKeyPolicy")
def key_policy_json(request: ContractRequest) -> Refusal | None:
    policy = request.params.get("Policy")
    if policy is None:
        return None
    document, error = parse_json(policy)
    if error is not None or not isinstance(document, dict):
        return Refusal("MalformedPolicyDocumentException", "The key policy is not a valid JSON policy document.")
    return None

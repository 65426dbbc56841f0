"""IAM's documented limits at the emulator's front door (kbp_emulator/contract/limits/iam.py): the policy grammar,
the trust, managed and inline policy size quotas (white space not counted), and the managed policies per role.
Each limit just inside passes, just outside is refused with AWS's code and message, and the refused request
changed nothing.
"""

from __future__ import annotations

import json

import pytest
from conftest import ACCOUNT
from limits_support import check, iam_, padded, passes, refused, unchecked  # noqa: F401  (fixtures)

PRINCIPAL = {"AWS": f"arn:aws:iam::{ACCOUNT}:root"}


def trust(**statement) -> dict:
    base = {"Sid": "Trust", "Effect": "Allow", "Principal": PRINCIPAL, "Action": "sts:AssumeRole"}
    return {"Version": "2012-10-17", "Statement": [{**base, **statement}]}


def identity(**statement) -> dict:
    base = {"Sid": "Read", "Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}
    return {"Version": "2012-10-17", "Statement": [{**base, **statement}]}


def trust_of(size: int) -> str:
    """A trust policy of exactly `size` characters (compact JSON, its Sid padded)."""
    return padded(trust(), size, ("Statement", 0, "Sid"))


def identity_of(size: int) -> str:
    return padded(identity(), size, ("Statement", 0, "Sid"))


TRUST = json.dumps(trust())
POLICY = json.dumps(identity())


# --- Trust policy size: 2,048 characters, white space not counted ----------------------------------------------


def test_trust_policy_of_2048_characters_passes_2049_is_refused(iam_):
    inside = trust_of(2048)
    passes(lambda: iam_.create_role(RoleName="inside", AssumeRolePolicyDocument=inside))
    outside = trust_of(2049)
    refused(lambda: iam_.create_role(RoleName="outside", AssumeRolePolicyDocument=outside),
            "LimitExceeded", "iam.trust_policy_size", "Cannot exceed quota for ACLSizePerRole: 2048", status=409)
    assert [r["RoleName"] for r in iam_.list_roles()["Roles"]] == ["inside"]


def test_trust_policy_white_space_is_not_counted(iam_):
    document = json.loads(trust_of(2048))
    pretty = json.dumps(document, indent=4)
    assert len(pretty) > 2048
    passes(lambda: iam_.create_role(RoleName="pretty", AssumeRolePolicyDocument=pretty))


def test_update_assume_role_policy_over_the_quota_is_refused_and_the_old_one_stays(iam_):
    iam_.create_role(RoleName="r", AssumeRolePolicyDocument=TRUST)
    passes(lambda: iam_.update_assume_role_policy(RoleName="r", PolicyDocument=trust_of(2048)))
    before = iam_.get_role(RoleName="r")["Role"]["AssumeRolePolicyDocument"]
    refused(lambda: iam_.update_assume_role_policy(RoleName="r", PolicyDocument=trust_of(2049)),
            "LimitExceeded", "iam.trust_policy_size", status=409)
    assert iam_.get_role(RoleName="r")["Role"]["AssumeRolePolicyDocument"] == before


# --- Managed policy size: 6,144 characters ------------------------------------------------------------------


def test_managed_policy_of_6144_characters_passes_6145_is_refused(iam_):
    passes(lambda: iam_.create_policy(PolicyName="inside", PolicyDocument=identity_of(6144)))
    refused(lambda: iam_.create_policy(PolicyName="outside", PolicyDocument=identity_of(6145)),
            "LimitExceeded", "iam.managed_policy_size", "Cannot exceed quota for PolicySize: 6144", status=409)
    assert [p["PolicyName"] for p in iam_.list_policies(Scope="Local")["Policies"]] == ["inside"]


def test_managed_policy_white_space_is_not_counted(iam_):
    pretty = json.dumps(json.loads(identity_of(6144)), indent=2)
    assert len(pretty) > 6144
    passes(lambda: iam_.create_policy(PolicyName="pretty", PolicyDocument=pretty))


def test_policy_version_over_the_quota_is_refused_and_makes_no_version(iam_):
    arn = iam_.create_policy(PolicyName="p", PolicyDocument=POLICY)["Policy"]["Arn"]
    passes(lambda: iam_.create_policy_version(PolicyArn=arn, PolicyDocument=identity_of(6144)))
    refused(lambda: iam_.create_policy_version(PolicyArn=arn, PolicyDocument=identity_of(6145)),
            "LimitExceeded", "iam.managed_policy_size", status=409)
    assert len(iam_.list_policy_versions(PolicyArn=arn)["Versions"]) == 2


# --- A role's inline policies: 10,240 characters in all ------------------------------------------------------


def test_inline_policies_of_a_role_count_together(iam_):
    iam_.create_role(RoleName="r", AssumeRolePolicyDocument=TRUST)
    first = identity_of(6000)
    passes(lambda: iam_.put_role_policy(RoleName="r", PolicyName="first", PolicyDocument=first))
    passes(lambda: iam_.put_role_policy(RoleName="r", PolicyName="second", PolicyDocument=identity_of(4240)))
    message = refused(
        lambda: iam_.put_role_policy(RoleName="r", PolicyName="third", PolicyDocument=identity_of(200)),
        "LimitExceeded", "iam.role_inline_policy_size", "Maximum policy size of 10240 bytes exceeded for role r", status=409)
    assert "10240" in message
    assert sorted(iam_.list_role_policies(RoleName="r")["PolicyNames"]) == ["first", "second"]


def test_replacing_an_inline_policy_counts_its_new_size_only(iam_):
    iam_.create_role(RoleName="r", AssumeRolePolicyDocument=TRUST)
    iam_.put_role_policy(RoleName="r", PolicyName="big", PolicyDocument=identity_of(10000))
    passes(lambda: iam_.put_role_policy(RoleName="r", PolicyName="big", PolicyDocument=identity_of(10240)))
    refused(lambda: iam_.put_role_policy(RoleName="r", PolicyName="big", PolicyDocument=identity_of(10241)),
            "LimitExceeded", "iam.role_inline_policy_size", status=409)


# --- Managed policies attached to a role: 10 ---------------------------------------------------------------


def test_ten_managed_policies_attach_the_eleventh_is_refused(iam_):
    iam_.create_role(RoleName="r", AssumeRolePolicyDocument=TRUST)
    arns = [iam_.create_policy(PolicyName=f"p{i}", PolicyDocument=POLICY)["Policy"]["Arn"] for i in range(11)]
    for arn in arns[:10]:
        passes(lambda arn=arn: iam_.attach_role_policy(RoleName="r", PolicyArn=arn))
    refused(lambda: iam_.attach_role_policy(RoleName="r", PolicyArn=arns[10]),
            "LimitExceeded", "iam.role_attached_policies", "Cannot exceed quota for PoliciesPerRole: 10", status=409)
    # Attaching one the role already has changes nothing: not refused.
    passes(lambda: iam_.attach_role_policy(RoleName="r", PolicyArn=arns[0]))
    assert len(iam_.list_attached_role_policies(RoleName="r")["AttachedPolicies"]) == 10


# --- Policy grammar (MalformedPolicyDocument) ----------------------------------------------------------------

SYNTAX = "Syntax errors in policy."


@pytest.mark.parametrize(
    "document, message",
    [
        ("{not json", SYNTAX),
        ('["Statement"]', SYNTAX),
        (json.dumps({**trust(), "Extra": 1}), SYNTAX),
        (json.dumps({**trust(), "Version": "2012-10-18"}), "The policy failed legacy parsing"),
        (json.dumps({"Version": "2012-10-17", "Statement": []}), SYNTAX),
        (json.dumps({"Version": "2012-10-17", "Statement": "sts:AssumeRole"}), SYNTAX),
        (json.dumps(trust(Effect="allow")), SYNTAX),
        (json.dumps({"Statement": [{"Principal": PRINCIPAL, "Action": "sts:AssumeRole"}]}), "Missing required field Effect"),
        (json.dumps(trust(Principal=None) | {"Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole"}]}),
         "Missing required field Principal"),
        (json.dumps(trust(Resource="*")), "Has prohibited field Resource."),
        (json.dumps(trust(NotAction="iam:*")), SYNTAX),
        (json.dumps(trust(Sid="trust-me")), "Statement IDs (SID) must be alpha-numeric. Check that your input "
                                            "satisfies the regular expression [0-9A-Za-z]*"),
        (json.dumps({"Version": "2012-10-17", "Statement": [trust()["Statement"][0]] * 2}),
         "Statement IDs (SID) in a single policy must be unique."),
    ],
    ids=["not-json", "not-object", "unknown-element", "version", "no-statement", "statement-string", "effect",
         "no-effect", "no-principal", "resource", "action-and-notaction", "sid-chars", "sid-unique"],
)
def test_trust_policy_grammar(iam_, document, message):
    refused(lambda: iam_.create_role(RoleName="r", AssumeRolePolicyDocument=document),
            "MalformedPolicyDocument", "iam.trust_policy_grammar", message)
    assert iam_.list_roles()["Roles"] == []


@pytest.mark.parametrize(
    "document",
    [
        trust(),
        {**trust(), "Version": "2008-10-17"},
        {"Statement": trust()["Statement"][0]},
        {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": ["sts:AssumeRole", "sts:TagSession"]}]},
        {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Federated": f"arn:aws:iam::{ACCOUNT}:oidc-provider/o"},
                                                 "Action": "sts:AssumeRoleWithWebIdentity",
                                                 "Condition": {"StringEquals": {"o:sub": "system:serviceaccount:kube-system:x"}}}]},
    ],
    ids=["plain", "2008-version", "single-statement-object", "star-principal", "web-identity"],
)
def test_trust_policies_aws_takes_pass(iam_, document):
    passes(lambda: iam_.create_role(RoleName="r", AssumeRolePolicyDocument=json.dumps(document)))


def test_update_assume_role_policy_is_held_to_the_trust_grammar(iam_):
    iam_.create_role(RoleName="r", AssumeRolePolicyDocument=TRUST)
    refused(lambda: iam_.update_assume_role_policy(RoleName="r", PolicyDocument=json.dumps(trust(Resource="*"))),
            "MalformedPolicyDocument", "iam.trust_policy_grammar", "Has prohibited field Resource.")
    assert iam_.get_role(RoleName="r")["Role"]["AssumeRolePolicyDocument"] == json.loads(TRUST)


@pytest.mark.parametrize(
    "statement, message",
    [
        ({"Principal": PRINCIPAL}, "Policy document should not specify a principal."),
        ({"Resource": None}, "Policy statement must contain resources."),
        ({"Action": None}, "Policy statement must contain actions."),
        ({"Action": []}, "Policy statement must contain actions."),
        ({"NotResource": "arn:aws:s3:::b"}, SYNTAX),
        ({"Condition": "yes"}, SYNTAX),
    ],
    ids=["principal", "no-resource", "no-action", "empty-action", "resource-and-notresource", "condition"],
)
def test_identity_policy_grammar(iam_, statement, message):
    document = identity(**statement)
    document["Statement"][0] = {k: v for k, v in document["Statement"][0].items() if v is not None}
    text = json.dumps(document)
    refused(lambda: iam_.create_policy(PolicyName="p", PolicyDocument=text),
            "MalformedPolicyDocument", "iam.policy_grammar", message)
    iam_.create_role(RoleName="r", AssumeRolePolicyDocument=TRUST)
    refused(lambda: iam_.put_role_policy(RoleName="r", PolicyName="inline", PolicyDocument=text),
            "MalformedPolicyDocument", "iam.policy_grammar", message)
    assert iam_.list_role_policies(RoleName="r")["PolicyNames"] == []
    assert iam_.list_policies(Scope="Local")["Policies"] == []


def test_identity_policies_aws_takes_pass(iam_):
    document = {"Version": "2012-10-17", "Statement": [
        {"Sid": "One", "Effect": "Allow", "Action": ["ec2:Describe*"], "Resource": "*"},
        {"Sid": "Two", "Effect": "Deny", "NotAction": "iam:*", "NotResource": ["arn:aws:s3:::b/*"],
         "Condition": {"Bool": {"aws:SecureTransport": "false"}}},
    ]}
    passes(lambda: iam_.create_policy(PolicyName="p", PolicyDocument=json.dumps(document)))


def test_the_rules_of_each_operation():
    assert check("iam", "CreateRole", {"RoleName": "r", "AssumeRolePolicyDocument": TRUST}) is None
    refusal = check("iam", "CreatePolicy", {"PolicyName": "p", "PolicyDocument": json.dumps(trust())})
    assert (refusal.code, refusal.rule) == ("MalformedPolicyDocument", "iam.policy_grammar")

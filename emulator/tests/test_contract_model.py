"""AWS's input contract at the emulator's front door (kbp_emulator/contract): the botocore model's own constraints,
each shown just inside (moto answers) and just outside (refused in the service's AWS error code and message shape,
and moto never sees the request), with operations kbp really calls; the refusal log and the switch.

Clients are built with `parameter_validation=False` so that boto3's own client-side checks do not stop a request
before the server: what is tested is what the emulator does with a request the client did send.
"""

from __future__ import annotations

import json

import boto3
import pytest
import requests
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials
from botocore.exceptions import ClientError
from conftest import ACCOUNT, NODE_ROLE, REGION, TRUST_POLICY, error_of

from kbp_emulator.contract import model_rules

UNCHECKED = Config(parameter_validation=False, retries={"max_attempts": 1})
IAM_TAG_PATTERN = r"[\p{L}\p{Z}\p{N}_.:/=+\-@]*"
POLICY = json.dumps(
    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]}
)


def client(endpoint: str, service: str, region: str = REGION):
    return boto3.client(
        service,
        endpoint_url=endpoint,
        region_name=region,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=UNCHECKED,
    )


@pytest.fixture
def clients(endpoint):
    """Unvalidated clients by service name: clients.iam, clients.eks, …"""

    class Clients:
        def __getattr__(self, service):
            # The Price List API lives in us-east-1 whatever region the prices are for.
            made = client(endpoint, service, "us-east-1" if service == "pricing" else REGION)
            setattr(self, service, made)
            return made

    return Clients()


@pytest.fixture
def refusals(endpoint):
    """The refusal log, emptied first: refusals() lists what was refused since."""
    requests.delete(f"{endpoint}/moto-api/kbp/refusals", timeout=10).raise_for_status()
    return lambda: requests.get(f"{endpoint}/moto-api/kbp/refusals", timeout=10).json()


def refused(call, *args, **kwargs) -> tuple[int, str, str]:
    with pytest.raises(ClientError) as e:
        call(*args, **kwargs)
    return error_of(e)


def one_error(value: str, at: str, constraint: str) -> str:
    return f"1 validation error detected: Value '{value}' at '{at}' failed to satisfy constraint: {constraint}"


# --- One case per kind of model rule -----------------------------------------------------------------------------


def test_string_length_iam_role_name_64_passes_65_is_refused(clients):
    iam = clients.iam
    assert iam.create_role(RoleName="r" * 64, AssumeRolePolicyDocument=TRUST_POLICY)["Role"]["RoleName"] == "r" * 64
    assert refused(iam.create_role, RoleName="r" * 65, AssumeRolePolicyDocument=TRUST_POLICY) == (
        400,
        "ValidationError",
        one_error("r" * 65, "roleName", "Member must have length less than or equal to 64"),
    )


@pytest.mark.parametrize("value", ["a[b", 'say "hi"'])
def test_pattern_iam_tag_value_with_a_bracket_or_a_quote_is_refused(clients, value):
    iam = clients.iam
    tags = [{"Key": "kbp:component", "Value": value}]
    assert refused(iam.create_policy, PolicyName="p", PolicyDocument=POLICY, Tags=tags) == (
        400,
        "ValidationError",
        one_error(value, "tags.1.member.value", f"Member must satisfy regular expression pattern: {IAM_TAG_PATTERN}"),
    )
    with pytest.raises(ClientError) as e:
        iam.get_policy(PolicyArn=f"arn:aws:iam::{ACCOUNT}:policy/p")
    assert error_of(e)[1] == "NoSuchEntity"


def test_pattern_iam_tag_value_of_letters_digits_and_the_allowed_marks_passes(clients):
    # `\p{L}` is any letter, not only ASCII; `_ . : / = + - @` and spaces are allowed.
    tags = [{"Key": "kbp:component", "Value": "iam_policy.x/y"}, {"Key": "équipe", "Value": "Équipe 7 = a+b@c"}]
    answer = clients.iam.create_policy(PolicyName="p", PolicyDocument=POLICY, Tags=tags)
    assert answer["Policy"]["PolicyName"] == "p"


def test_required_member_missing_is_refused(clients):
    assert refused(clients.iam.create_role, AssumeRolePolicyDocument=TRUST_POLICY) == (
        400,
        "ValidationError",
        "1 validation error detected: Value null at 'roleName' failed to satisfy constraint: Member must not be null",
    )


def test_enum_eventbridge_rule_state(clients):
    events = clients.events
    assert events.put_rule(Name="nightly", ScheduleExpression="rate(1 day)", State="DISABLED")["RuleArn"]
    allowed = "ENABLED, DISABLED, ENABLED_WITH_ALL_CLOUDTRAIL_MANAGEMENT_EVENTS"
    assert refused(events.put_rule, Name="nightly", ScheduleExpression="rate(1 day)", State="PAUSED") == (
        400,
        "ValidationException",
        one_error("PAUSED", "state", f"Member must satisfy enum value set: [{allowed}]"),
    )


@pytest.mark.parametrize("seconds", [3600, 43200])
def test_numeric_range_max_session_duration_bounds_pass(clients, seconds):
    role = clients.iam.create_role(RoleName="r", AssumeRolePolicyDocument=TRUST_POLICY, MaxSessionDuration=seconds)
    assert role["Role"]["MaxSessionDuration"] == seconds


@pytest.mark.parametrize(
    "seconds, constraint",
    [
        (3599, "Member must have value greater than or equal to 3600"),
        (43201, "Member must have value less than or equal to 43200"),
    ],
)
def test_numeric_range_max_session_duration_outside_is_refused(clients, seconds, constraint):
    iam = clients.iam
    assert refused(iam.create_role, RoleName="r", AssumeRolePolicyDocument=TRUST_POLICY, MaxSessionDuration=seconds) == (
        400,
        "ValidationError",
        one_error(str(seconds), "maxSessionDuration", constraint),
    )


def test_numeric_range_eks_query_parameter(clients, cluster):
    eks = clients.eks
    assert eks.list_nodegroups(clusterName=cluster, maxResults=100)["nodegroups"] == []
    assert refused(eks.list_nodegroups, clusterName=cluster, maxResults=101) == (
        400,
        "InvalidParameterException",
        one_error("101", "maxResults", "Member must have value less than or equal to 100"),
    )


def test_numeric_range_eks_scaling_config(clients, cluster, network):
    eks = clients.eks
    scaling = {"minSize": 0, "maxSize": 0, "desiredSize": 0}
    code = refused(eks.create_nodegroup, clusterName=cluster, nodegroupName="ng", nodeRole=NODE_ROLE,
                   subnets=network.subnets, scalingConfig=scaling)
    assert code == (
        400,
        "InvalidParameterException",
        one_error("0", "scalingConfig.maxSize", "Member must have value greater than or equal to 1"),
    )
    with pytest.raises(ClientError) as e:
        eks.describe_nodegroup(clusterName=cluster, nodegroupName="ng")
    assert error_of(e)[1] == "ResourceNotFoundException"


def test_list_size_iam_tags_50_pass_51_is_refused(clients):
    iam = clients.iam
    tags = [{"Key": f"k{i}", "Value": "v"} for i in range(51)]
    assert iam.create_role(RoleName="fifty", AssumeRolePolicyDocument=TRUST_POLICY, Tags=tags[:50])["Role"]
    status, code, message = refused(iam.create_role, RoleName="more", AssumeRolePolicyDocument=TRUST_POLICY, Tags=tags)
    assert (status, code) == (400, "ValidationError")
    assert message.startswith("1 validation error detected: Value '[")
    assert message.endswith("' at 'tags' failed to satisfy constraint: Member must have length less than or equal to 50")


def test_map_size_eks_tags_50_pass_51_is_refused(clients, cluster):
    eks = clients.eks
    arn = eks.describe_cluster(name=cluster)["cluster"]["arn"]
    tags = {f"k{i}": "v" for i in range(51)}
    eks.tag_resource(resourceArn=arn, tags=dict(list(tags.items())[:50]))
    status, code, message = refused(eks.tag_resource, resourceArn=arn, tags=tags)
    assert (status, code) == (400, "InvalidParameterException")
    assert message.startswith("1 validation error detected: Value '{k0=v, k1=v")
    assert message.endswith("' at 'tags' failed to satisfy constraint: Member must have length less than or equal to 50")


def test_map_keys_eks_tag_key_128_passes_129_is_refused(clients, cluster):
    eks = clients.eks
    arn = eks.describe_cluster(name=cluster)["cluster"]["arn"]
    eks.tag_resource(resourceArn=arn, tags={"k" * 128: "v"})
    status, code, message = refused(eks.tag_resource, resourceArn=arn, tags={"k" * 129: "v"})
    assert (status, code) == (400, "InvalidParameterException")
    assert message == (
        f"1 validation error detected: Value '{{{'k' * 129}=v}}' at 'tags' failed to satisfy constraint: "
        "Map keys must satisfy constraint: [Member must have length less than or equal to 128, "
        "Member must have length greater than or equal to 1]"
    )
    assert "k" * 129 not in eks.list_tags_for_resource(resourceArn=arn)["tags"]


def test_eventbridge_put_rule_name_length_and_pattern(clients):
    events = clients.events
    assert events.put_rule(Name="n" * 64, ScheduleExpression="rate(5 minutes)")["RuleArn"]
    assert refused(events.put_rule, Name="n" * 65, ScheduleExpression="rate(5 minutes)") == (
        400,
        "ValidationException",
        one_error("n" * 65, "name", "Member must have length less than or equal to 64"),
    )
    assert refused(events.put_rule, Name="kbp rule", ScheduleExpression="rate(5 minutes)") == (
        400,
        "ValidationException",
        one_error("kbp rule", "name", r"Member must satisfy regular expression pattern: [\.\-_A-Za-z0-9]+"),
    )
    assert [r["Name"] for r in events.list_rules()["Rules"]] == ["n" * 64]


def test_kms_create_alias_name_pattern(clients):
    kms = clients.kms
    key = kms.create_key()["KeyMetadata"]["KeyId"]
    kms.create_alias(AliasName="alias/kbp/demo_key-1", TargetKeyId=key)
    assert refused(kms.create_alias, AliasName="alias/kbp demo", TargetKeyId=key) == (
        400,
        "ValidationException",
        one_error("alias/kbp demo", "aliasName", "Member must satisfy regular expression pattern: ^[a-zA-Z0-9:/_-]+$"),
    )
    assert [a["AliasName"] for a in kms.list_aliases(KeyId=key)["Aliases"]] == ["alias/kbp/demo_key-1"]


def test_two_violations_are_both_reported(clients):
    iam = clients.iam
    _, code, message = refused(
        iam.create_role,
        RoleName="r",
        AssumeRolePolicyDocument=TRUST_POLICY,
        MaxSessionDuration=60,
        Tags=[{"Key": "team", "Value": "a[b"}],
    )
    assert code == "ValidationError"
    assert message == (
        "2 validation errors detected: "
        "Value '60' at 'maxSessionDuration' failed to satisfy constraint: "
        "Member must have value greater than or equal to 3600; "
        "Value 'a[b' at 'tags.1.member.value' failed to satisfy constraint: "
        f"Member must satisfy regular expression pattern: {IAM_TAG_PATTERN}"
    )


def test_sts_assume_role_session_name_is_two_characters_at_least(clients):
    sts = clients.sts
    role = clients.iam.create_role(RoleName="deployer", AssumeRolePolicyDocument=TRUST_POLICY)["Role"]["Arn"]
    assert sts.assume_role(RoleArn=role, RoleSessionName="ci")["Credentials"]["AccessKeyId"]
    assert refused(sts.assume_role, RoleArn=role, RoleSessionName="c") == (
        400,
        "ValidationError",
        one_error("c", "roleSessionName", "Member must have length greater than or equal to 2"),
    )


def test_elbv2_page_size(clients):
    elbv2 = clients.elbv2
    assert elbv2.describe_load_balancers(PageSize=400)["LoadBalancers"] == []
    assert refused(elbv2.describe_load_balancers, PageSize=401) == (
        400,
        "ValidationError",
        one_error("401", "pageSize", "Member must have value less than or equal to 400"),
    )


# --- Services with their own words: EC2 and SQS ------------------------------------------------------------------


def signed_post(endpoint: str, service: str, body: str, content_type: str, headers: dict | None = None):
    """A request as an SDK would send it, signed with SigV4 (the front door checks signed requests only)."""
    request = AWSRequest(method="POST", url=f"{endpoint}/", data=body,
                         headers={"Content-Type": content_type, **(headers or {})})
    SigV4Auth(Credentials("testing", "testing"), service, REGION).add_auth(request)
    return requests.post(request.url, data=body, headers=dict(request.headers.items()), timeout=10)


def test_ec2_missing_required_member_is_missing_parameter_in_ec2_xml(endpoint, ec2):
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    form = "application/x-www-form-urlencoded; charset=utf-8"
    answer = signed_post(endpoint, "ec2", "Action=CreateSubnet&Version=2016-11-15&CidrBlock=10.0.1.0/24", form)
    assert answer.status_code == 400
    assert answer.text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error>')
    assert "<Code>MissingParameter</Code><Message>The request must contain the parameter VpcId</Message>" in answer.text
    body = f"Action=CreateSubnet&Version=2016-11-15&CidrBlock=10.0.1.0/24&VpcId={vpc}"
    assert signed_post(endpoint, "ec2", body, form).status_code == 200
    assert len(ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [vpc]}])["Subnets"]) == 1


def test_ec2_out_of_range_value_is_invalid_parameter_value(clients):
    ec2 = clients.ec2
    assert ec2.describe_instance_types(MaxResults=5)["InstanceTypes"]
    assert refused(ec2.describe_instance_types, MaxResults=4) == (
        400,
        "InvalidParameterValue",
        "Value (4) for parameter MaxResults is invalid. Member must have value greater than or equal to 5.",
    )


def test_ec2_unknown_instance_types_are_named_as_ec2_names_them(clients):
    ec2 = clients.ec2
    assert ec2.describe_instance_types(InstanceTypes=["m5.large"])["InstanceTypes"]
    assert refused(ec2.describe_instance_types, InstanceTypes=["m5.large", "m5.huge", "t3.tiny"]) == (
        400,
        "InvalidInstanceType",
        "The following supplied instance types do not exist: [m5.huge, t3.tiny]",
    )


def test_sqs_missing_queue_name_and_unknown_attribute(clients, endpoint):
    sqs = clients.sqs
    assert refused(sqs.create_queue) == (400, "MissingParameter", "The request must contain the parameter QueueName")
    url = sqs.create_queue(QueueName="jobs")["QueueUrl"]
    assert sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])["Attributes"]
    assert refused(sqs.get_queue_attributes, QueueUrl=url, AttributeNames=["Colour"]) == (
        400,
        "InvalidAttributeName",
        "Unknown Attribute Colour.",
    )
    # SQS's JSON protocol: the code travels in x-amzn-query-error, as SQS's query compatibility has it.
    answer = signed_post(endpoint, "sqs", "{}", "application/x-amz-json-1.0", {"X-Amz-Target": "AmazonSQS.CreateQueue"})
    assert answer.status_code == 400
    assert answer.headers["x-amzn-query-error"] == "MissingParameter;Sender"
    assert answer.json()["__type"] == "com.amazonaws.sqs#MissingParameter"


# --- The extension's own Price List service passes the same door -------------------------------------------------


def test_pricing_goes_through_the_front_door(clients, refusals):
    pricing = clients.pricing
    assert pricing.get_products(ServiceCode="AmazonEC2", MaxResults=1)["PriceList"]
    assert refused(pricing.get_products, MaxResults=1) == (
        400,
        "InvalidParameterException",
        "1 validation error detected: Value null at 'serviceCode' failed to satisfy constraint: Member must not be null",
    )
    assert [(r["service"], r["operation"], r["rule"]) for r in refusals()] == [
        ("pricing", "GetProducts", "model.required")
    ]


# --- What a refusal leaves behind, the log and the switch ---------------------------------------------------------


def test_a_refused_request_changes_nothing(clients):
    iam = clients.iam
    refused(iam.create_role, RoleName="app", AssumeRolePolicyDocument=TRUST_POLICY, MaxSessionDuration=10)
    assert error_of_get_role(iam, "app")[1] == "NoSuchEntity"


def error_of_get_role(iam, name):
    with pytest.raises(ClientError) as e:
        iam.get_role(RoleName=name)
    return error_of(e)


def test_refusals_are_logged_and_survive_a_reset(endpoint, clients, refusals):
    refused(clients.iam.create_role, RoleName="r" * 65, AssumeRolePolicyDocument=TRUST_POLICY)
    (entry,) = refusals()
    assert {k: entry[k] for k in ("service", "operation", "status", "code", "rule")} == {
        "service": "iam",
        "operation": "CreateRole",
        "status": 400,
        "code": "ValidationError",
        "rule": "model.length",
    }
    assert "at 'roleName'" in entry["message"] and entry["time"].endswith("Z")
    requests.post(f"{endpoint}/moto-api/reset", timeout=10).raise_for_status()
    assert len(refusals()) == 1
    assert requests.delete(f"{endpoint}/moto-api/kbp/refusals", timeout=10).json() == {"cleared": 1}
    assert refusals() == []


def test_unsigned_requests_are_not_checked(endpoint, refusals):
    requests.post(f"{endpoint}/", data={"Action": "CreateRole", "RoleName": "r" * 65}, timeout=10)
    assert refusals() == []


def test_turned_off_moto_accepts_what_the_contract_refuses(endpoint, clients, refusals):
    switch = f"{endpoint}/moto-api/kbp/contract"
    assert requests.get(switch, timeout=10).json() == {"enabled": True}
    iam = clients.iam
    refused(iam.create_role, RoleName="r" * 65, AssumeRolePolicyDocument=TRUST_POLICY)
    assert requests.post(switch, json={"enabled": False}, timeout=10).json() == {"enabled": False}
    try:
        # moto itself has no length rule for role names.
        assert iam.create_role(RoleName="r" * 65, AssumeRolePolicyDocument=TRUST_POLICY)["Role"]["RoleName"] == "r" * 65
    finally:
        assert requests.post(switch, json={"enabled": True}, timeout=10).json() == {"enabled": True}
    assert len(refusals()) == 1
    assert requests.post(switch, json={"enabled": "no"}, timeout=10).status_code == 400


# --- The pattern dialect ------------------------------------------------------------------------------------------


def test_java_pattern_semantics():
    matches = model_rules._matches
    # Java's \w is ASCII: IAM names refuse accented letters, which the regex module's \w would take.
    assert matches(r"[\w+=,.@-]+", "my-role_1") and not matches(r"[\w+=,.@-]+", "rôle")
    # The whole value must match, not a prefix of it.
    assert not matches(r"^[0-9A-Za-z][A-Za-z0-9\-_]*", "ok cluster")
    # A surrogate pair in a class is the code point it encodes (U+10000-U+10FFFF).
    assert matches(r"[\u0020-\uD7FF\uE000-\uFFFD\uD800\uDC00-\uDBFF\uDFFF\t]*", "emoji 😀")
    # After a class escape, `-` is itself.
    assert matches(r"[\w-.~]+", "a-b.c~d")
    # Java's class intersection.
    assert matches(r"[\p{Print}&&[^|:/]]+", "ab c") and not matches(r"[\p{Print}&&[^|:/]]+", "a|b")


def test_patterns_are_compiled_once():
    assert model_rules.java_pattern(r"[\w+=,.@-]+") is model_rules.java_pattern(r"[\w+=,.@-]+")

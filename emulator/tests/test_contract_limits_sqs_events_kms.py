"""SQS, EventBridge and KMS's documented limits at the emulator's front door (kbp_emulator/contract/limits/sqs.py,
events.py, kms.py): queue names and the `.fifo` suffix, the event pattern's size and shape, alias names and the
key policy's size. Each just inside passes, just outside is refused with AWS's code, and changes nothing.
"""

from __future__ import annotations

import json

import pytest
from conftest import ACCOUNT
from limits_support import check, events_, kms_, padded, passes, refused, sqs_, unchecked  # noqa: F401  (fixtures)

# --- SQS queue names --------------------------------------------------------------------------------------

STANDARD = "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length"
FIFO = ("The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with "
        ".fifo suffix and be 1 to 80 in length.")


def queues(sqs):
    return [url.rsplit("/", 1)[-1] for url in sqs.list_queues().get("QueueUrls", [])]


def test_queue_name_of_80_passes_81_is_refused(sqs_):
    passes(lambda: sqs_.create_queue(QueueName="q" * 80))
    refused(lambda: sqs_.create_queue(QueueName="q" * 81), "InvalidParameterValue", "sqs.queue_name", STANDARD)
    assert queues(sqs_) == ["q" * 80]


@pytest.mark.parametrize("name", ["a.b", "a b", "a:b", "kbp/q", "q.fifo", ""])
def test_standard_queue_name_characters(sqs_, name):
    refused(lambda: sqs_.create_queue(QueueName=name), "InvalidParameterValue", "sqs.queue_name", STANDARD)
    assert queues(sqs_) == []


def test_fifo_queue_needs_the_suffix_within_80(sqs_):
    fifo = {"FifoQueue": "true"}
    passes(lambda: sqs_.create_queue(QueueName="f" * 75 + ".fifo", Attributes=fifo))
    refused(lambda: sqs_.create_queue(QueueName="f" * 76 + ".fifo", Attributes=fifo), "InvalidParameterValue",
            "sqs.queue_name", FIFO)
    refused(lambda: sqs_.create_queue(QueueName="orders", Attributes=fifo), "InvalidParameterValue", "sqs.queue_name", FIFO)
    assert queues(sqs_) == ["f" * 75 + ".fifo"]


def test_queue_names_kbp_uses_pass(sqs_):
    passes(lambda: sqs_.create_queue(QueueName="kbp-demo-karpenter_interruptions"))


# --- EventBridge event patterns ---------------------------------------------------------------------------


def pattern(size: int) -> str:
    return padded({"source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"],
                   "detail": {"instance-id": ["i-"]}}, size, ("detail", "instance-id", 0))


def test_event_pattern_of_2048_passes_2049_is_refused(events_):
    passes(lambda: events_.put_rule(Name="inside", EventPattern=pattern(2048)))
    refused(lambda: events_.put_rule(Name="outside", EventPattern=pattern(2049)),
            "LimitExceededException", "events.event_pattern_size")
    assert [r["Name"] for r in events_.list_rules()["Rules"]] == ["inside"]


@pytest.mark.parametrize("text", ["{source: [aws.ec2]}", "[\"aws.ec2\"]", '"aws.ec2"', '{"source": "aws.ec2"}',
                                  '{"detail": {"state": "running"}}'])
def test_event_pattern_must_be_an_object_of_arrays(events_, text):
    refused(lambda: events_.put_rule(Name="r", EventPattern=text), "InvalidEventPatternException",
            "events.event_pattern_json", contains="Event pattern is not valid. Reason: ")
    assert events_.list_rules()["Rules"] == []


def test_event_patterns_kbp_uses_pass(events_):
    text = json.dumps({"source": ["aws.ec2", "aws.health"], "detail-type": ["EC2 Instance State-change Notification"],
                       "detail": {"state": [{"anything-but": "running"}], "prefix": [{"prefix": "kbp-"}]}})
    passes(lambda: events_.put_rule(Name="r", EventPattern=text, State="ENABLED"))


# --- KMS alias names and key policies ---------------------------------------------------------------------


@pytest.fixture
def key(kms_):
    return kms_.create_key()["KeyMetadata"]["KeyId"]


def aliases(kms):
    return [a["AliasName"] for a in kms.list_aliases()["Aliases"] if not a["AliasName"].startswith("alias/aws/")]


def test_alias_needs_its_prefix(kms_, key):
    refused(lambda: kms_.create_alias(AliasName="kbp-state", TargetKeyId=key), "ValidationException", "kms.alias_name",
            'Alias must start with the prefix "alias/". Please see '
            "https://docs.aws.amazon.com/kms/latest/developerguide/kms-alias.html")
    assert aliases(kms_) == []


def test_alias_aws_prefix_is_reserved(kms_, key):
    refused(lambda: kms_.create_alias(AliasName="alias/aws/kbp", TargetKeyId=key), "NotAuthorizedException", "kms.alias_name")
    assert aliases(kms_) == []


def test_alias_name_of_250_passes_251_is_refused(kms_, key):
    passes(lambda: kms_.create_alias(AliasName="alias/" + "a" * 250, TargetKeyId=key))
    # 256 in all is the model's (model_rules): alias/ and 250.
    refused(lambda: kms_.create_alias(AliasName="alias/" + "a" * 251, TargetKeyId=key), "ValidationException",
            "model.length")
    refused(lambda: kms_.create_alias(AliasName="alias/", TargetKeyId=key), "InvalidAliasNameException", "kms.alias_name")
    assert aliases(kms_) == ["alias/" + "a" * 250]


def test_alias_characters(kms_, key):
    # The model's pattern allows ":" (for ARNs elsewhere); the documentation's character set does not.
    refused(lambda: kms_.create_alias(AliasName="alias/kbp:state", TargetKeyId=key), "InvalidAliasNameException",
            "kms.alias_name")
    for name in ("alias/kbp state", "alias/kbp.state"):
        refused(lambda n=name: kms_.create_alias(AliasName=n, TargetKeyId=key), "ValidationException", "model.pattern")
    passes(lambda: kms_.create_alias(AliasName="alias/kbp/state_key-1", TargetKeyId=key))
    assert aliases(kms_) == ["alias/kbp/state_key-1"]


def test_update_alias_is_held_to_the_same_names(kms_, key):
    kms_.create_alias(AliasName="alias/kbp", TargetKeyId=key)
    refused(lambda: kms_.update_alias(AliasName="alias/aws/kbp", TargetKeyId=key), "NotAuthorizedException", "kms.alias_name")


def key_policy(size: int) -> str:
    document = {"Version": "2012-10-17", "Id": "kbp", "Statement": [
        {"Sid": "Root", "Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"}, "Action": "kms:*",
         "Resource": "*"}]}
    return padded(document, size, ("Id",))


def test_key_policy_of_32768_bytes_passes_32769_is_refused(kms_):
    passes(lambda: kms_.create_key(Policy=key_policy(32768)))
    refused(lambda: kms_.create_key(Policy=key_policy(32769)), "LimitExceededException", "kms.key_policy_size")
    assert len(kms_.list_keys()["Keys"]) == 1


def test_put_key_policy_over_the_quota_keeps_the_old_one(kms_, key):
    passes(lambda: kms_.put_key_policy(KeyId=key, PolicyName="default", Policy=key_policy(32768)))
    refused(lambda: kms_.put_key_policy(KeyId=key, PolicyName="default", Policy=key_policy(32769)),
            "LimitExceededException", "kms.key_policy_size")
    assert len(kms_.get_key_policy(KeyId=key, PolicyName="default")["Policy"]) == 32768


def test_key_policy_size_is_in_bytes():
    # "é" is two bytes in UTF-8: 32,767 characters of which one is "é" are 32,768 bytes.
    text = key_policy(32767).replace('"kbp', '"kbé', 1)
    assert check("kms", "CreateKey", {"Policy": text}) is None
    assert check("kms", "CreateKey", {"Policy": text + " "}).rule == "kms.key_policy_size"


def test_key_policy_must_be_json(kms_):
    refused(lambda: kms_.create_key(Policy="{not json"), "MalformedPolicyDocumentException", "kms.key_policy_json")
    assert kms_.list_keys()["Keys"] == []

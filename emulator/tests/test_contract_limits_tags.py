"""Tag limits at the emulator's front door (kbp_emulator/contract/limits/tags.py) on the tagging calls kbp makes:
50 tags per resource counted after the call (the resource's tags in moto plus the new keys), the reserved `aws:`
prefix, and the key and value lengths where the service's model does not carry them (EC2, SQS). Each service
answers in its own code; a refused call leaves the resource's tags as they were.
"""

from __future__ import annotations

import json

import pytest
from conftest import ACCOUNT, CLUSTER_ROLE
from limits_support import (  # noqa: F401  (fixtures)
    check, ec2_, eks_, events_, iam_, kms_, passes, refused, sqs_, tag_map, tags, unchecked,
)

TRUST = json.dumps({"Version": "2012-10-17", "Statement": [
    {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"}, "Action": "sts:AssumeRole"}]})
POLICY = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]})


# --- IAM: LimitExceeded (409) past 50, InvalidInput for `aws:` ----------------------------------------------


def _iam_role(iam, n):
    iam.create_role(RoleName="r", AssumeRolePolicyDocument=TRUST, Tags=tags(n))
    return (lambda t: iam.tag_role(RoleName="r", Tags=t)), (lambda: iam.list_role_tags(RoleName="r")["Tags"])


def _iam_policy(iam, n):
    arn = iam.create_policy(PolicyName="p", PolicyDocument=POLICY, Tags=tags(n))["Policy"]["Arn"]
    return (lambda t: iam.tag_policy(PolicyArn=arn, Tags=t)), (lambda: iam.list_policy_tags(PolicyArn=arn)["Tags"])


def _iam_instance_profile(iam, n):
    iam.create_instance_profile(InstanceProfileName="ip", Tags=tags(n))
    return ((lambda t: iam.tag_instance_profile(InstanceProfileName="ip", Tags=t)),
            (lambda: iam.get_instance_profile(InstanceProfileName="ip")["InstanceProfile"]["Tags"]))


def _iam_oidc_provider(iam, n):
    arn = iam.create_open_id_connect_provider(Url="https://oidc.example.com/id/X", ClientIDList=["sts.amazonaws.com"],
                                              ThumbprintList=["a" * 40], Tags=tags(n))["OpenIDConnectProviderArn"]
    return ((lambda t: iam.tag_open_id_connect_provider(OpenIDConnectProviderArn=arn, Tags=t)),
            (lambda: iam.list_open_id_connect_provider_tags(OpenIDConnectProviderArn=arn)["Tags"]))


@pytest.mark.parametrize("make", [_iam_role, _iam_policy, _iam_instance_profile, _iam_oidc_provider],
                         ids=["role", "policy", "instance-profile", "oidc-provider"])
def test_iam_tags_count_with_the_resources_own(iam_, make):
    tag, listed = make(iam_, 45)
    passes(lambda: tag(tags(5, "new")))  # 50 in all
    passes(lambda: tag([{"Key": "k0", "Value": "changed"}]))  # an existing key is overwritten, not added
    before = sorted((t["Key"], t["Value"]) for t in listed())
    refused(lambda: tag([{"Key": "one-more", "Value": "v"}]),
            "LimitExceeded", "iam.tag_count", "The number of tags has reached the maximum limit.", status=409)
    assert sorted((t["Key"], t["Value"]) for t in listed()) == before
    assert len(before) == 50


def test_iam_aws_prefix_is_refused_in_any_case(iam_):
    for key in ("aws:owner", "AWS:owner", "Aws:Owner"):
        refused(lambda key=key: iam_.create_role(RoleName="r", AssumeRolePolicyDocument=TRUST, Tags=[{"Key": key, "Value": "x"}]),
                "InvalidInput", "iam.tag_reserved_prefix")
    assert iam_.list_roles()["Roles"] == []
    passes(lambda: iam_.create_role(RoleName="r", AssumeRolePolicyDocument=TRUST, Tags=[{"Key": "awsome", "Value": "x"}]))


def test_iam_tag_characters_are_the_models(iam_):
    # Carried by the model ([\p{L}\p{Z}\p{N}_.:/=+\-@]), checked by model_rules: shown here because kbp's tags
    # reach IAM.
    passes(lambda: iam_.create_role(RoleName="r", AssumeRolePolicyDocument=TRUST, Tags=[{"Key": "équipe 1", "Value": "a/b=c+d@e"}]))
    with pytest.raises(Exception) as e:
        iam_.tag_role(RoleName="r", Tags=[{"Key": "k", "Value": "a#b"}])
    assert e.value.response["Error"]["Code"] == "ValidationError"


# --- EC2: TagLimitExceeded past 50, InvalidParameterValue for `aws:` and lengths; any characters ---------------


def _vpc(ec2, n=0):
    spec = [{"ResourceType": "vpc", "Tags": tags(n)}] if n else []
    return ec2.create_vpc(CidrBlock="10.0.0.0/16", TagSpecifications=spec)["Vpc"]["VpcId"]


def _ec2_tags(ec2, resource):
    described = ec2.describe_tags(Filters=[{"Name": "resource-id", "Values": [resource]}])["Tags"]
    return sorted((t["Key"], t["Value"]) for t in described)


def test_ec2_create_tags_counts_with_the_resources_own(ec2_):
    vpc = _vpc(ec2_, 45)
    passes(lambda: ec2_.create_tags(Resources=[vpc], Tags=tags(5, "new")))
    passes(lambda: ec2_.create_tags(Resources=[vpc], Tags=[{"Key": "k1", "Value": "changed"}]))
    before = _ec2_tags(ec2_, vpc)
    refused(lambda: ec2_.create_tags(Resources=[vpc], Tags=[{"Key": "one-more", "Value": "v"}]),
            "TagLimitExceeded", "ec2.tag_count", "The maximum number of Tags for a resource has been reached.")
    assert _ec2_tags(ec2_, vpc) == before and len(before) == 50


def test_ec2_tag_specifications_of_51_create_nothing(ec2_):
    refused(lambda: ec2_.create_vpc(CidrBlock="10.1.0.0/16", TagSpecifications=[{"ResourceType": "vpc", "Tags": tags(51)}]),
            "TagLimitExceeded", "ec2.tag_count")
    assert not [v for v in ec2_.describe_vpcs()["Vpcs"] if v["CidrBlock"] == "10.1.0.0/16"]
    passes(lambda: ec2_.create_vpc(CidrBlock="10.1.0.0/16", TagSpecifications=[{"ResourceType": "vpc", "Tags": tags(50)}]))


def test_ec2_aws_prefix_is_refused(ec2_):
    vpc = _vpc(ec2_)
    refused(lambda: ec2_.create_tags(Resources=[vpc], Tags=[{"Key": "aws:cloudformation:stack-name", "Value": "s"}]),
            "InvalidParameterValue", "ec2.tag_reserved_prefix", "Tag keys starting with 'aws:' are reserved for internal use")
    refused(lambda: ec2_.create_security_group(GroupName="g", Description="d", VpcId=vpc,
                                               TagSpecifications=[{"ResourceType": "security-group", "Tags": [{"Key": "AWS:x", "Value": ""}]}]),
            "InvalidParameterValue", "ec2.tag_reserved_prefix")
    assert _ec2_tags(ec2_, vpc) == []


def test_ec2_key_128_value_256_pass_one_more_is_refused(ec2_):
    vpc = _vpc(ec2_)
    passes(lambda: ec2_.create_tags(Resources=[vpc], Tags=[{"Key": "k" * 128, "Value": "v" * 256}]))
    refused(lambda: ec2_.create_tags(Resources=[vpc], Tags=[{"Key": "k" * 129, "Value": "v"}]),
            "InvalidParameterValue", "ec2.tag_length", contains="Tag key exceeds the maximum length of 128 characters")
    refused(lambda: ec2_.create_tags(Resources=[vpc], Tags=[{"Key": "k", "Value": "v" * 257}]),
            "InvalidParameterValue", "ec2.tag_length", contains="Tag value exceeds the maximum length of 256 characters")
    assert _ec2_tags(ec2_, vpc) == [("k" * 128, "v" * 256)]


def test_ec2_takes_any_characters(ec2_):
    vpc = _vpc(ec2_)
    passes(lambda: ec2_.create_tags(Resources=[vpc], Tags=[{"Key": "Name #1 (日本)", "Value": "a&b <c> \"d\""}]))


# --- EKS: BadRequestException for TagResource, InvalidParameterException for creates ------------------------


def test_eks_tag_resource_counts_with_the_clusters_own(eks_, cluster):
    arn = eks_.describe_cluster(name=cluster)["cluster"]["arn"]
    passes(lambda: eks_.tag_resource(resourceArn=arn, tags=tag_map(50)))
    passes(lambda: eks_.tag_resource(resourceArn=arn, tags={"k0": "changed"}))
    refused(lambda: eks_.tag_resource(resourceArn=arn, tags={"one-more": "v"}),
            "BadRequestException", "eks.tag_count", "A resource can have at most 50 tags.")
    assert len(eks_.list_tags_for_resource(resourceArn=arn)["tags"]) == 50


def test_eks_aws_prefix_is_refused(eks_, network, cluster):
    refused(lambda: eks_.create_cluster(name="c2", roleArn=CLUSTER_ROLE, resourcesVpcConfig={"subnetIds": network.subnets},
                                        tags={"aws:eks:cluster-name": "c2"}),
            "InvalidParameterException", "eks.tag_reserved_prefix")
    assert eks_.list_clusters()["clusters"] == [cluster]
    arn = eks_.describe_cluster(name=cluster)["cluster"]["arn"]
    refused(lambda: eks_.tag_resource(resourceArn=arn, tags={"AWS:x": "y"}), "BadRequestException", "eks.tag_reserved_prefix")


# --- SQS: InvalidParameterValue -----------------------------------------------------------------------------


def test_sqs_tag_queue_counts_with_the_queues_own(sqs_):
    url = sqs_.create_queue(QueueName="q", tags=tag_map(45))["QueueUrl"]
    passes(lambda: sqs_.tag_queue(QueueUrl=url, Tags=tag_map(5, "new")))
    passes(lambda: sqs_.tag_queue(QueueUrl=url, Tags={"k0": "changed"}))
    refused(lambda: sqs_.tag_queue(QueueUrl=url, Tags={"one-more": "v"}),
            "InvalidParameterValue", "sqs.tag_count", "Too many tags added for queue q.")
    assert len(sqs_.list_queue_tags(QueueUrl=url)["Tags"]) == 50


def test_sqs_create_queue_tags(sqs_):
    refused(lambda: sqs_.create_queue(QueueName="q", tags=tag_map(51)), "InvalidParameterValue", "sqs.tag_count")
    refused(lambda: sqs_.create_queue(QueueName="q", tags={"aws:x": "y"}), "InvalidParameterValue", "sqs.tag_reserved_prefix")
    refused(lambda: sqs_.create_queue(QueueName="q", tags={"k" * 129: "v"}), "InvalidParameterValue", "sqs.tag_length")
    refused(lambda: sqs_.create_queue(QueueName="q", tags={"k": "v" * 257}), "InvalidParameterValue", "sqs.tag_length")
    assert "QueueUrls" not in sqs_.list_queues()
    passes(lambda: sqs_.create_queue(QueueName="q", tags={"k" * 128: "v" * 256, **tag_map(49)}))


# --- KMS: TagException --------------------------------------------------------------------------------------


def test_kms_tag_resource_counts_with_the_keys_own(kms_):
    key = kms_.create_key(Tags=tags(45, key="TagKey", value="TagValue"))["KeyMetadata"]["KeyId"]
    passes(lambda: kms_.tag_resource(KeyId=key, Tags=tags(5, "new", "TagKey", "TagValue")))
    passes(lambda: kms_.tag_resource(KeyId=key, Tags=[{"TagKey": "k0", "TagValue": "changed"}]))
    refused(lambda: kms_.tag_resource(KeyId=key, Tags=[{"TagKey": "one-more", "TagValue": "v"}]),
            "TagException", "kms.tag_count", "A KMS key can have at most 50 tags.")
    assert len(kms_.list_resource_tags(KeyId=key)["Tags"]) == 50


def test_kms_aws_prefix_is_refused(kms_):
    refused(lambda: kms_.create_key(Tags=[{"TagKey": "aws:x", "TagValue": "y"}]), "TagException", "kms.tag_reserved_prefix")
    assert kms_.list_keys()["Keys"] == []


# --- EventBridge: LimitExceededException past 50, ValidationException for `aws:` ----------------------------


def test_events_tag_resource_counts_with_the_rules_own(events_):
    arn = events_.put_rule(Name="r", ScheduleExpression="rate(1 day)", Tags=tags(45))["RuleArn"]
    passes(lambda: events_.tag_resource(ResourceARN=arn, Tags=tags(5, "new")))
    passes(lambda: events_.tag_resource(ResourceARN=arn, Tags=[{"Key": "k0", "Value": "changed"}]))
    refused(lambda: events_.tag_resource(ResourceARN=arn, Tags=[{"Key": "one-more", "Value": "v"}]),
            "LimitExceededException", "events.tag_count", "The requested resource exceeds the maximum number allowed.")
    assert len(events_.list_tags_for_resource(ResourceARN=arn)["Tags"]) == 50


def test_events_aws_prefix_is_refused(events_):
    refused(lambda: events_.put_rule(Name="r", ScheduleExpression="rate(1 day)", Tags=[{"Key": "aws:x", "Value": "y"}]),
            "ValidationException", "events.tag_reserved_prefix")
    assert events_.list_rules()["Rules"] == []


def test_own_aws_tags_do_not_count():
    # AWS's own `aws:` tags do not count against the 50 ("Tags with this prefix do not count against your tags per
    # resource limit"): a resource moto holds with such tags still takes 50 of the caller's.
    from kbp_emulator.contract.limits.registry import count_after

    assert count_after(["aws:eks:cluster-name"] + [f"k{i}" for i in range(49)], ["k50"]) == 50
    assert check("ec2", "CreateTags", {"Resources": ["vpc-unknown"], "Tags": tags(50)}) is None

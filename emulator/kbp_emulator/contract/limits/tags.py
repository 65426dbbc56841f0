"""Tag limits on every tagging call kbp makes: IAM (Create*/Tag* of roles, policies, instance profiles, OIDC
providers), EC2 (CreateTags and every create's TagSpecifications), EKS (creates with `tags`, TagResource), SQS
(CreateQueue `tags`, TagQueue), KMS (CreateKey, TagResource) and EventBridge (PutRule, CreateEventBus,
TagResource).

The figures are the same everywhere (50 tags per resource, keys ≤ 128 and values ≤ 256 characters, no key
starting with `aws:` in any case); what differs is each service's error code and where the tags are. The 50
counts the resource's tags after the call: the tags moto already holds for it plus the new keys (a key already
there is overwritten, not added; IAM compares keys case-insensitively). Length limits the botocore model
already carries (IAM, EKS, KMS, EventBridge), and IAM's character set, are left to `model_rules`; EC2's and
SQS's models carry none.
"""

from __future__ import annotations

from typing import Any

from ..types import ContractRequest, Refusal
from .registry import ANY, count_after, items, mapping, rule, stored_tag_keys, tag_pairs

MAX_TAGS = 50
MAX_KEY = 128
MAX_VALUE = 256


def _reserved(pairs: list[tuple[str, str]]) -> str | None:
    """The first key with the `aws:` prefix, which every service reserves for its own tags (any case)."""
    return next((k for k, _ in pairs if k.lower().startswith("aws:")), None)


def _too_long(pairs: list[tuple[str, str]]) -> tuple[str, str] | None:
    """("key"|"value", the text) of the first key over 128 or value over 256 characters."""
    for k, v in pairs:
        if len(k) > MAX_KEY:
            return "key", k
        if len(v) > MAX_VALUE:
            return "value", v
    return None


# --- IAM ----------------------------------------------------------------------------------------------------
# https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html ("Tags that can be attached to an
# IAM role | 50", likewise customer managed policies, instance profiles, OIDC providers; tag key 128, value 256)
# https://docs.aws.amazon.com/IAM/latest/UserGuide/id_tags.html (tag keys are case-insensitive in IAM; the
# `aws:` prefix is reserved)
# The character set ([\p{L}\p{Z}\p{N}_.:/=+\-@], https://docs.aws.amazon.com/IAM/latest/APIReference/API_Tag.html)
# and the lengths are in the model, checked by `model_rules` (with the `regex` module, which reads \p{..}).

IAM_TAGGING = (
    "CreateRole", "TagRole", "CreatePolicy", "TagPolicy", "CreateInstanceProfile", "TagInstanceProfile",
    "CreateOpenIDConnectProvider", "TagOpenIDConnectProvider",
)  # fmt: skip


def _iam_backend(request: ContractRequest) -> Any:
    from moto.iam.models import iam_backends
    from moto.utilities.utils import get_partition

    return iam_backends[request.account_id][get_partition(request.region)]


def _iam_existing(request: ContractRequest) -> list[str]:
    """The keys of the tags the resource of a Tag* call has now (none for a create or an unknown resource,
    which moto answers NoSuchEntity)."""
    p = request.params
    try:
        iam = _iam_backend(request)
        if request.operation == "TagRole":
            return stored_tag_keys(iam.get_role(p.get("RoleName")).tags)
        if request.operation == "TagInstanceProfile":
            return stored_tag_keys(iam.get_instance_profile(p.get("InstanceProfileName")).tags)
        if request.operation == "TagPolicy":
            return stored_tag_keys(iam.managed_policies[p.get("PolicyArn")].tags)
        if request.operation == "TagOpenIDConnectProvider":
            return stored_tag_keys(iam.open_id_providers[p.get("OpenIDConnectProviderArn")].tags)
    except Exception:  # the resource does not exist: moto answers for that
        return []
    return []


@rule("iam.tag_count", "iam", *IAM_TAGGING)
def iam_tag_count(request: ContractRequest) -> Refusal | None:
    # IAM answers a quota with LimitExceeded (409). The message is the emulator's: AWS's wording for this one
    # was not found.
    new = [k for k, _ in tag_pairs(request.params.get("Tags"))]
    if count_after(_iam_existing(request), new, str.lower) > MAX_TAGS:
        return Refusal("LimitExceeded", "The number of tags has reached the maximum limit.", 409)
    return None


@rule("iam.tag_reserved_prefix", "iam", *IAM_TAGGING)
def iam_tag_reserved_prefix(request: ContractRequest) -> Refusal | None:
    # InvalidInput is IAM's code for a parameter it refuses; the message is the emulator's.
    key = _reserved(tag_pairs(request.params.get("Tags")))
    if key is not None:
        return Refusal("InvalidInput", f"Tag key '{key}' is not valid: the aws: prefix is reserved for AWS use.")
    return None


# --- EC2 ----------------------------------------------------------------------------------------------------
# https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/Using_Tags.html#tag-restrictions (50 tags per resource,
# key 128 and value 256 Unicode characters, any characters allowed, `aws:` reserved)
# https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CreateTags.html (TagLimitExceeded)


def _ec2_existing(request: ContractRequest, resource_id: str) -> list[str]:
    from moto.ec2.models import ec2_backends

    return list(ec2_backends[request.account_id][request.region].tags.get(resource_id, {}))


def _ec2_tag_sets(request: ContractRequest) -> list[tuple[list[str], list[tuple[str, str]]]]:
    """(existing keys, new tags) per resource the call tags: CreateTags' Resources, or the one new resource of
    each TagSpecification (a launch template's LaunchTemplateData.TagSpecifications too)."""
    p = request.params
    if request.operation == "CreateTags":
        new = tag_pairs(p.get("Tags"))
        return [(_ec2_existing(request, rid), new) for rid in items(p.get("Resources")) if isinstance(rid, str)]
    specs = items(p.get("TagSpecifications")) + items(mapping(p.get("LaunchTemplateData")).get("TagSpecifications"))
    return [([], tag_pairs(spec.get("Tags"))) for spec in specs if isinstance(spec, dict)]


@rule("ec2.tag_count", "ec2", ANY)
def ec2_tag_count(request: ContractRequest) -> Refusal | None:
    for existing, new in _ec2_tag_sets(request):
        if count_after(existing, [k for k, _ in new]) > MAX_TAGS:
            return Refusal("TagLimitExceeded", "The maximum number of Tags for a resource has been reached.")
    return None


@rule("ec2.tag_reserved_prefix", "ec2", ANY)
def ec2_tag_reserved_prefix(request: ContractRequest) -> Refusal | None:
    # AWS's words (seen in RunInstances and CreateTags answers).
    for _, new in _ec2_tag_sets(request):
        if _reserved(new) is not None:
            return Refusal("InvalidParameterValue", "Tag keys starting with 'aws:' are reserved for internal use")
    return None


@rule("ec2.tag_length", "ec2", ANY)
def ec2_tag_length(request: ContractRequest) -> Refusal | None:
    # The message is the emulator's in AWS's style; the code is EC2's for a bad parameter value.
    for _, new in _ec2_tag_sets(request):
        bad = _too_long(new)
        if bad:
            part, text = bad
            limit = MAX_KEY if part == "key" else MAX_VALUE
            return Refusal(
                "InvalidParameterValue", f"Tag {part} exceeds the maximum length of {limit} characters: {text}"
            )
    return None


# --- EKS ----------------------------------------------------------------------------------------------------
# https://docs.aws.amazon.com/eks/latest/userguide/eks-using-tags.html#tag-restrictions (50 tags per resource,
# key 128, value 256, `aws:` reserved: "You can't edit or delete tag keys or values with this prefix")
# Lengths and the 50 per request are in the model; the total after TagResource and the prefix are not.

EKS_CREATES = (
    "CreateCluster", "CreateNodegroup", "CreateAddon", "CreateAccessEntry", "CreatePodIdentityAssociation",
    "CreateFargateProfile",
)  # fmt: skip


def _eks_code(request: ContractRequest) -> str:
    """TagResource's model lists BadRequestException for a bad request; the creates, InvalidParameterException."""
    return "BadRequestException" if request.operation == "TagResource" else "InvalidParameterException"


def _eks_existing(request: ContractRequest) -> list[str]:
    if request.operation != "TagResource":
        return []
    from moto.eks.models import eks_backends

    from ...eks.tags import taggable_resources

    arn = request.params.get("resourceArn")
    for candidate, resource in taggable_resources(eks_backends[request.account_id][request.region]):
        if candidate == arn:
            return list(resource.tags or {})
    return []


@rule("eks.tag_count", "eks", "TagResource", *EKS_CREATES)
def eks_tag_count(request: ContractRequest) -> Refusal | None:
    # The message is the emulator's.
    new = [k for k, _ in tag_pairs(request.params.get("tags"))]
    if count_after(_eks_existing(request), new) > MAX_TAGS:
        return Refusal(_eks_code(request), f"A resource can have at most {MAX_TAGS} tags.")
    return None


@rule("eks.tag_reserved_prefix", "eks", "TagResource", *EKS_CREATES)
def eks_tag_reserved_prefix(request: ContractRequest) -> Refusal | None:
    key = _reserved(tag_pairs(request.params.get("tags")))
    if key is not None:
        return Refusal(_eks_code(request), f"Tag key '{key}' is not valid: the aws: prefix is reserved.")
    return None


# --- SQS ----------------------------------------------------------------------------------------------------
# https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-queues.html ("Tags": 50 per
# queue, key 128 and value 256 Unicode characters, `aws:` reserved)
# SQS answers InvalidParameterValue for a bad parameter (awsQueryCompatible: the same code over JSON).


def _sqs_tags(request: ContractRequest) -> list[tuple[str, str]]:
    p = request.params
    return tag_pairs(p.get("tags") if request.operation == "CreateQueue" else p.get("Tags"))


def _sqs_queue(request: ContractRequest) -> tuple[str, list[str]]:
    """(queue name, keys of its tags now) for TagQueue; the name alone for CreateQueue."""
    if request.operation == "CreateQueue":
        return str(request.params.get("QueueName", "")), []
    from moto.sqs.models import sqs_backends

    name = str(request.params.get("QueueUrl", "")).rstrip("/").rsplit("/", 1)[-1]
    queue = sqs_backends[request.account_id][request.region].queues.get(name)
    return name, list(queue.tags) if queue is not None else []


@rule("sqs.tag_count", "sqs", "CreateQueue", "TagQueue")
def sqs_tag_count(request: ContractRequest) -> Refusal | None:
    name, existing = _sqs_queue(request)
    if count_after(existing, [k for k, _ in _sqs_tags(request)]) > MAX_TAGS:
        return Refusal("InvalidParameterValue", f"Too many tags added for queue {name}.")
    return None


@rule("sqs.tag_reserved_prefix", "sqs", "CreateQueue", "TagQueue")
def sqs_tag_reserved_prefix(request: ContractRequest) -> Refusal | None:
    key = _reserved(_sqs_tags(request))
    if key is not None:
        return Refusal("InvalidParameterValue", f"Tag key '{key}' is not valid: the aws: prefix is reserved.")
    return None


@rule("sqs.tag_length", "sqs", "CreateQueue", "TagQueue")
def sqs_tag_length(request: ContractRequest) -> Refusal | None:
    bad = _too_long(_sqs_tags(request))
    if bad:
        part, text = bad
        limit = MAX_KEY if part == "key" else MAX_VALUE
        return Refusal("InvalidParameterValue", f"Tag {part} exceeds the maximum length of {limit} characters.")
    return None


# --- KMS ----------------------------------------------------------------------------------------------------
# https://docs.aws.amazon.com/kms/latest/developerguide/tagging-keys.html (50 tags per KMS key; a tag key cannot
# begin with `aws:`) and https://docs.aws.amazon.com/kms/latest/APIReference/API_TagResource.html (TagException:
# "one or more tags are not valid"; whether AWS answers the 51st tag with TagException or LimitExceededException
# is not documented: TagException picked).


def _kms_existing(request: ContractRequest) -> list[str]:
    if request.operation != "TagResource":
        return []
    from moto.kms.models import kms_backends

    kms = kms_backends[request.account_id][request.region]
    key_id = kms.get_key_id(str(request.params.get("KeyId", "")))
    return list(kms.tagger.get_tag_dict_for_resource(key_id)) if key_id in kms.keys else []


def _kms_tags(request: ContractRequest) -> list[tuple[str, str]]:
    return tag_pairs(request.params.get("Tags"), "TagKey", "TagValue")


@rule("kms.tag_count", "kms", "CreateKey", "TagResource")
def kms_tag_count(request: ContractRequest) -> Refusal | None:
    if count_after(_kms_existing(request), [k for k, _ in _kms_tags(request)]) > MAX_TAGS:
        return Refusal("TagException", f"A KMS key can have at most {MAX_TAGS} tags.")
    return None


@rule("kms.tag_reserved_prefix", "kms", "CreateKey", "TagResource")
def kms_tag_reserved_prefix(request: ContractRequest) -> Refusal | None:
    key = _reserved(_kms_tags(request))
    if key is not None:
        return Refusal("TagException", f"Tag key '{key}' is not valid: the aws: prefix is reserved.")
    return None


# --- EventBridge --------------------------------------------------------------------------------------------
# https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-tagging.html (tag restrictions: 50 per resource,
# `aws:` reserved). The model has no error for either on TagResource; EventBridge answers a quota with
# LimitExceededException ("The requested resource exceeds the maximum number allowed.", its words for its
# other quotas) and a bad parameter with ValidationException.


def _events_existing(request: ContractRequest) -> list[str]:
    if request.operation != "TagResource":
        return []
    from moto.events.models import events_backends

    events = events_backends[request.account_id][request.region]
    return list(events.tagger.get_tag_dict_for_resource(str(request.params.get("ResourceARN", ""))))


@rule("events.tag_count", "events", "PutRule", "CreateEventBus", "TagResource")
def events_tag_count(request: ContractRequest) -> Refusal | None:
    new = [k for k, _ in tag_pairs(request.params.get("Tags"))]
    if count_after(_events_existing(request), new) > MAX_TAGS:
        return Refusal("LimitExceededException", "The requested resource exceeds the maximum number allowed.")
    return None


@rule("events.tag_reserved_prefix", "events", "PutRule", "CreateEventBus", "TagResource")
def events_tag_reserved_prefix(request: ContractRequest) -> Refusal | None:
    key = _reserved(tag_pairs(request.params.get("Tags")))
    if key is not None:
        return Refusal("ValidationException", f"Tag key '{key}' is not valid: the aws: prefix is reserved.")
    return None

"""EKS's documented limits that the botocore model does not carry: the shape of node group names,
node group taints (how many, their keys and values) and labels (keys and values, reserved prefixes), the public
endpoint's CIDR blocks, and the Kubernetes names of Pod Identity associations and access entries.

Everything here is InvalidParameterException (400), EKS's code for a parameter it refuses. Where EKS passes
Kubernetes' own validation through, the messages are Kubernetes' (as EKS answers them); the others are the
emulator's wording. Tags are in `tags.py`.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from ..types import ContractRequest, Refusal
from .registry import items, mapping, rule

INVALID = "InvalidParameterException"

# https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-eks-nodegroup.html
# (NodegroupName: 1–63 characters, of the cluster name's shape ^[0-9A-Za-z][A-Za-z0-9\-_]*$); the API model
# gives node group names no constraint at all. A cluster's name (1–100, same shape) is in the model.
NAME = re.compile(r"[0-9A-Za-z][A-Za-z0-9\-_]*")
NODEGROUP_NAME_MAX = 63

# https://docs.aws.amazon.com/eks/latest/userguide/node-taints-managed-node-groups.html ("a maximum of 50
# taints per node group"; key 1–63 characters, value up to 63) and
# https://docs.aws.amazon.com/eks/latest/APIReference/API_Taint.html
# Keys and values are Kubernetes'
# (https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set):
# a key is an optional DNS-subdomain prefix (≤ 253) and "/", then a name of ≤ 63 alphanumerics, "-", "_", "."
# beginning and ending alphanumeric; a value is empty or like a name.
MAX_TAINTS = 50
K8S_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
NAME_RULE = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
VALUE_RULE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)

# Managed node groups refuse labels and taints under these prefixes (AWS's message, seen in its answers:
# "Taint cannot contain reserved prefixes [kubernetes.io/, k8s.io/, eks.amazonaws.com/]"; see
# https://github.com/aws/containers-roadmap/issues/1451, and
# https://docs.aws.amazon.com/eks/latest/userguide/create-managed-node-group.html).
RESERVED = ("kubernetes.io/", "k8s.io/", "eks.amazonaws.com/")

# https://docs.aws.amazon.com/eks/latest/userguide/service-quotas.html ("Public endpoint access CIDR ranges per
# cluster | 40") and https://docs.aws.amazon.com/eks/latest/APIReference/API_VpcConfigRequest.html
# (publicAccessCidrs: the blocks allowed to reach the public endpoint). A private block (RFC 1918, loopback,
# link-local) cannot reach a public endpoint and is refused with AWS's message (seen in its answers).
MAX_PUBLIC_CIDRS = 40
PRIVATE = [ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "127.0.0.0/8",
                                             "169.254.0.0/16", "fc00::/7", "fe80::/10", "::1/128")]  # fmt: skip


def _name_problem(name: Any, limit: int, field: str) -> str | None:
    if not isinstance(name, str) or not 1 <= len(name) <= limit or not NAME.fullmatch(name):
        return (
            f"1 validation error detected: Value '{name}' at '{field}' failed to satisfy constraint: Member must "
            f"have length between 1 and {limit} and satisfy regular expression pattern: ^[0-9A-Za-z][A-Za-z0-9\\-_]*$"
        )
    return None


@rule("eks.nodegroup_name", "eks", "CreateNodegroup")
def nodegroup_name(request: ContractRequest) -> Refusal | None:
    problem = _name_problem(request.params.get("nodegroupName"), NODEGROUP_NAME_MAX, "nodegroupName")
    return Refusal(INVALID, problem) if problem else None


def key_problem(key: Any) -> str | None:
    """What Kubernetes says of a label or taint key, or None."""
    if not isinstance(key, str) or not key:
        return f"Invalid value: \"{key}\": name part must be non-empty"
    prefix, _, name = key.rpartition("/")
    if "/" in key and (len(prefix) > 253 or not DNS_SUBDOMAIN.fullmatch(prefix)):
        return (
            f"Invalid value: \"{key}\": prefix part a lowercase RFC 1123 subdomain must consist of lower case "
            "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
        )
    if len(name) > 63:
        return f"Invalid value: \"{key}\": name part must be no more than 63 characters"
    if not K8S_NAME.fullmatch(name):
        return f"Invalid value: \"{key}\": {NAME_RULE}"
    return None


def value_problem(value: Any) -> str | None:
    """What Kubernetes says of a label or taint value, or None."""
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > 63:
        return f"Invalid value: \"{value}\": must be no more than 63 characters"
    if not K8S_NAME.fullmatch(value):
        return f"Invalid value: \"{value}\": {VALUE_RULE}"
    return None


def _reserved(key: Any) -> bool:
    return isinstance(key, str) and any(prefix in key for prefix in RESERVED)


def _labels(request: ContractRequest) -> dict[str, Any]:
    p = request.params
    if request.operation == "CreateNodegroup":
        return mapping(p.get("labels"))
    return mapping(mapping(p.get("labels")).get("addOrUpdateLabels"))


def _taints(request: ContractRequest) -> list[dict[str, Any]]:
    p = request.params
    if request.operation == "CreateNodegroup":
        return [t for t in items(p.get("taints")) if isinstance(t, dict)]
    return [t for t in items(mapping(p.get("taints")).get("addOrUpdateTaints")) if isinstance(t, dict)]


@rule("eks.label_syntax", "eks", "CreateNodegroup", "UpdateNodegroupConfig")
def label_syntax(request: ContractRequest) -> Refusal | None:
    for key, value in _labels(request).items():
        problem = key_problem(key) or value_problem(value)
        if problem:
            return Refusal(INVALID, problem)
    return None


@rule("eks.label_reserved_prefix", "eks", "CreateNodegroup", "UpdateNodegroupConfig")
def label_reserved_prefix(request: ContractRequest) -> Refusal | None:
    if any(_reserved(key) for key in _labels(request)):
        return Refusal(INVALID, "Label cannot contain reserved prefixes [kubernetes.io/, k8s.io/, eks.amazonaws.com/]")
    return None


@rule("eks.taint_syntax", "eks", "CreateNodegroup", "UpdateNodegroupConfig")
def taint_syntax(request: ContractRequest) -> Refusal | None:
    for taint in _taints(request):
        problem = key_problem(taint.get("key")) or value_problem(taint.get("value"))
        if problem:
            return Refusal(INVALID, problem)
    return None


@rule("eks.taint_reserved_prefix", "eks", "CreateNodegroup", "UpdateNodegroupConfig")
def taint_reserved_prefix(request: ContractRequest) -> Refusal | None:
    if any(_reserved(taint.get("key")) for taint in _taints(request)):
        return Refusal(INVALID, "Taint cannot contain reserved prefixes [kubernetes.io/, k8s.io/, eks.amazonaws.com/]")
    return None


def _existing_taints(request: ContractRequest) -> list[dict[str, Any]]:
    """The taints the node group of an UpdateNodegroupConfig has now (none for an unknown one)."""
    from moto.eks.models import eks_backends

    p = request.params
    name, nodegroup_name = p.get("clusterName"), p.get("nodegroupName")
    if not isinstance(name, str) or not isinstance(nodegroup_name, str):
        return []
    cluster = eks_backends[request.account_id][request.region].clusters.get(name)
    nodegroup = cluster.nodegroups.get(nodegroup_name) if cluster is not None else None
    return list(getattr(nodegroup, "taints", None) or ())


def _identity(taint: Any) -> tuple[str, str]:
    """A taint is one per key and effect, as Kubernetes and EKS's addOrUpdate/remove treat it."""
    return str(mapping(taint).get("key")), str(mapping(taint).get("effect"))


@rule("eks.taint_count", "eks", "CreateNodegroup", "UpdateNodegroupConfig")
def taint_count(request: ContractRequest) -> Refusal | None:
    # The count after the call: the group's taints, less removeTaints, plus addOrUpdateTaints (one per key and
    # effect). The message is the emulator's.
    taints = {_identity(t) for t in _taints(request)}
    if request.operation == "UpdateNodegroupConfig":
        removed = {_identity(t) for t in items(mapping(request.params.get("taints")).get("removeTaints"))}
        taints |= {_identity(t) for t in _existing_taints(request)} - removed
    if len(taints) > MAX_TAINTS:
        return Refusal(INVALID, f"A node group can have at most {MAX_TAINTS} taints; this would give it {len(taints)}.")
    return None


def _public_cidrs(request: ContractRequest) -> list[Any] | None:
    cidrs = mapping(request.params.get("resourcesVpcConfig")).get("publicAccessCidrs")
    return None if cidrs is None else items(cidrs)


def _bad_cidr(cidr: Any) -> bool:
    try:
        network = ipaddress.ip_network(cidr, strict=False)
    except (TypeError, ValueError):
        return True
    return any(network.version == p.version and network.subnet_of(p) for p in PRIVATE)  # type: ignore[arg-type]


@rule("eks.public_access_cidrs", "eks", "CreateCluster", "UpdateClusterConfig")
def public_access_cidrs(request: ContractRequest) -> Refusal | None:
    cidrs = _public_cidrs(request)
    if cidrs is None:
        return None
    if len(cidrs) > MAX_PUBLIC_CIDRS:
        return Refusal(INVALID, f"publicAccessCidrs can contain at most {MAX_PUBLIC_CIDRS} CIDR blocks.")
    bad = [str(c) for c in cidrs if _bad_cidr(c)]
    if bad:
        return Refusal(INVALID, f"The following CIDRs are invalid in publicAccessCidrs: [{','.join(bad)}]")
    return None


# https://docs.aws.amazon.com/eks/latest/APIReference/API_CreatePodIdentityAssociation.html: the namespace and
# service account of a Kubernetes service account; Kubernetes names a namespace with a DNS label (≤ 63) and a
# service account with a DNS subdomain (≤ 253):
# https://kubernetes.io/docs/concepts/overview/working-with-objects/names/


@rule("eks.pod_identity_names", "eks", "CreatePodIdentityAssociation")
def pod_identity_names(request: ContractRequest) -> Refusal | None:
    p = request.params
    namespace, account = p.get("namespace"), p.get("serviceAccount")
    if not isinstance(namespace, str) or len(namespace) > 63 or not DNS_LABEL.fullmatch(namespace):
        message = f"Invalid namespace '{namespace}': it must be an RFC 1123 DNS label of at most 63 characters."
        return Refusal(INVALID, message)
    if not isinstance(account, str) or len(account) > 253 or not DNS_SUBDOMAIN.fullmatch(account):
        message = f"Invalid service account '{account}': it must be an RFC 1123 DNS subdomain of at most 253 characters."
        return Refusal(INVALID, message)
    return None


# https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateAccessEntry.html: kubernetesGroups "can't start
# with system:" (EKS maps those itself), and a username "can't start with system:, eks:, aws:, amazon:, or iam:".
RESERVED_GROUP_PREFIX = "system:"
RESERVED_USER_PREFIXES = ("system:", "eks:", "aws:", "amazon:", "iam:")


@rule("eks.access_entry_names", "eks", "CreateAccessEntry", "UpdateAccessEntry")
def access_entry_names(request: ContractRequest) -> Refusal | None:
    p = request.params
    for group in items(p.get("kubernetesGroups")):
        if isinstance(group, str) and group.startswith(RESERVED_GROUP_PREFIX):
            return Refusal(INVALID, f"The kubernetes group name {group} is invalid, it cannot start with system:")
    username = p.get("username")
    if isinstance(username, str) and username.startswith(RESERVED_USER_PREFIXES):
        prefixes = ", ".join(RESERVED_USER_PREFIXES)
        return Refusal(INVALID, f"The username {username} is invalid, it cannot start with {prefixes}")
    return None

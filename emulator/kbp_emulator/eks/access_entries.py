"""EKS access entries and their access policy associations (Create/Describe/Update/Delete/ListAccessEntries,
AssociateAccessPolicy, DisassociateAccessPolicy, ListAssociatedAccessPolicies, ListAccessPolicies), which moto
5.2.5 does not serve. As in AWS an entry has no status, and the cluster's authentication mode must include API.

The principal ARN travels in the URL percent-encoded ('/' as %2F); moto's router hands it over decoded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from moto.core.responses import ActionResult
from moto.iam.models import iam_backends

from .. import client_tokens
from .base import EKSHandlers, in_use, invalid_parameter, invalid_request, new_uuid, not_found, now
from .cluster_extras import extras

PRINCIPAL = re.compile(r"^arn:(?P<partition>aws[a-z-]*):iam::(?P<account>\d{12}):(?P<kind>role|user)/(?P<path>.+)$")
TYPES = ("STANDARD", "EC2_LINUX", "EC2_WINDOWS", "FARGATE_LINUX", "EC2", "HYBRID_LINUX", "HYPERPOD_LINUX")
POLICY_PREFIX = "arn:aws:eks::aws:cluster-access-policy/"
ACCESS_POLICIES = (
    "AmazonEKSAdminPolicy",
    "AmazonEKSAdminViewPolicy",
    "AmazonEKSAutoNodePolicy",
    "AmazonEKSBlockStoragePolicy",
    "AmazonEKSClusterAdminPolicy",
    "AmazonEKSComputePolicy",
    "AmazonEKSEditPolicy",
    "AmazonEKSHybridPolicy",
    "AmazonEKSLoadBalancingPolicy",
    "AmazonEKSNetworkingPolicy",
    "AmazonEKSViewPolicy",
    "AmazonEMRJobPolicy",
)


@dataclass
class AccessEntry:
    cluster_name: str
    principal_arn: str
    access_entry_arn: str
    type: str
    username: str
    kubernetes_groups: list[str]
    tags: dict[str, str] = field(default_factory=dict)
    created_at: Any = field(default_factory=now)
    modified_at: Any = field(default_factory=now)
    policies: dict[str, dict[str, Any]] = field(default_factory=dict)  # policy ARN → AssociatedAccessPolicy


def _require_api_mode(cluster: Any) -> None:
    mode = (getattr(cluster, "access_config", None) or {}).get("authenticationMode", "CONFIG_MAP")
    if mode not in ("API", "API_AND_CONFIG_MAP"):
        raise invalid_request(
            "The cluster's authentication mode must be set to one of [API, API_AND_CONFIG_MAP] to perform this "
            "operation.",
            clusterName=cluster.name,
        )


def create(backend: Any, cluster: Any, principal_arn: str, entry_type: str = "STANDARD",
           username: str | None = None, groups: list[str] | None = None, tags: dict[str, str] | None = None,
           check_principal: bool = True) -> AccessEntry:
    """Adds an access entry; also used for those EKS makes itself (the cluster creator, node group roles)."""
    match = PRINCIPAL.match(principal_arn or "")
    if not match or (check_principal and not _principal_exists(backend, principal_arn, match)):
        raise invalid_parameter("The specified principalArn is invalid: invalid principal.", clusterName=cluster.name)
    if entry_type not in TYPES:
        raise invalid_parameter(f"The access entry type {entry_type} is invalid; valid types: {', '.join(TYPES)}")
    if entry_type != "STANDARD" and (username or groups):
        raise invalid_parameter(
            f"username and kubernetesGroups cannot be set on an access entry of type {entry_type}",
            clusterName=cluster.name,
        )
    for group in groups or []:
        if group.startswith("system:"):
            raise invalid_parameter(
                f"The kubernetes group name {group} is invalid, it cannot start with system:", clusterName=cluster.name
            )
    entries = extras(cluster).access_entries
    if principal_arn in entries:
        raise in_use("The specified access entry resource is already in use on this cluster.", clusterName=cluster.name)
    kind, name = match["kind"], match["path"].rsplit("/", 1)[-1]
    entry = AccessEntry(
        cluster_name=cluster.name,
        principal_arn=principal_arn,
        access_entry_arn=(
            f"arn:{backend.partition}:eks:{backend.region_name}:{backend.account_id}:access-entry/{cluster.name}"
            f"/{kind}/{match['account']}/{name}/{new_uuid()}"
        ),
        type=entry_type,
        username=username or _default_username(entry_type, match),
        kubernetes_groups=list(groups or []) if entry_type == "STANDARD" else ["system:nodes"],
        tags=tags or {},
    )
    entries[principal_arn] = entry
    return entry


CALLER_WITHOUT_IAM_USER = "moto"


def _principal_exists(backend: Any, arn: str, match: re.Match[str]) -> bool:
    iam = iam_backends[match["account"]][match["partition"]]
    name = match["path"].rsplit("/", 1)[-1]
    if match["kind"] == "user" and name == CALLER_WITHOUT_IAM_USER:
        # moto's STS reports credentials it has no IAM user for as user/moto; in AWS the caller always
        # exists, so a tool granting itself access (kbp's admin entry) must be able to name it.
        return True
    if match["kind"] == "user":
        return name in iam.users
    return any(role.arn == arn for role in iam.roles.values())


def _default_username(entry_type: str, match: re.Match[str]) -> str:
    """What AWS puts in `username` when the request leaves it out."""
    if entry_type in ("EC2_LINUX", "EC2_WINDOWS"):
        return "system:node:{{EC2PrivateDNSName}}"
    if entry_type != "STANDARD":
        return "system:node:{{SessionName}}"
    if match["kind"] == "user":
        return match.string
    role = match["path"].rsplit("/", 1)[-1]
    return f"arn:{match['partition']}:sts::{match['account']}:assumed-role/{role}/{{{{SessionName}}}}"


def associate_policy(cluster: Any, entry: AccessEntry, policy_arn: str | None, scope: dict[str, Any] | None) -> dict:
    name = (policy_arn or "").removeprefix(POLICY_PREFIX)
    if not (policy_arn or "").startswith(POLICY_PREFIX) or name not in ACCESS_POLICIES:
        raise not_found(f"The specified policyArn {policy_arn} could not be found.", clusterName=cluster.name)
    if entry.type != "STANDARD":
        raise invalid_parameter(
            'This operation can only be performed on Access Entries with a type of "STANDARD".', clusterName=cluster.name
        )
    scope = scope or {}
    namespaces = scope.get("namespaces") or []
    if scope.get("type") not in ("cluster", "namespace") or (scope["type"] == "namespace") != bool(namespaces):
        raise invalid_parameter(
            "accessScope must be {type: cluster} or {type: namespace, namespaces: [...]}", clusterName=cluster.name
        )
    previous = entry.policies.get(policy_arn)
    association = {
        "policyArn": policy_arn,
        "accessScope": {"type": scope["type"], "namespaces": namespaces},
        "associatedAt": previous["associatedAt"] if previous else now(),
        "modifiedAt": now(),
    }
    entry.policies[policy_arn] = association
    return association


def _entry_exists(handler: Any, entry: AccessEntry) -> bool:
    return extras(handler.cluster()).access_entries.get(entry.principal_arn) is entry


class AccessEntryHandlers(EKSHandlers):
    def _entry(self, cluster: Any) -> AccessEntry:
        _require_api_mode(cluster)
        try:
            return extras(cluster).access_entries[self.path_param("principalArn")]
        except KeyError:
            raise not_found(
                "The specified principalArn could not be found. You can view your available access entries with "
                "'list-access-entries'.",
                clusterName=cluster.name,
            ) from None

    @client_tokens.eks("accessEntry", _entry_exists)
    def create_access_entry(self) -> ActionResult:
        cluster = self.cluster()
        _require_api_mode(cluster)
        body = self.body_json()
        entry = create(
            self.eks_backend,
            cluster,
            body.get("principalArn"),
            body.get("type") or "STANDARD",
            body.get("username"),
            body.get("kubernetesGroups"),
            body.get("tags"),
        )
        return ActionResult({"accessEntry": entry})

    def describe_access_entry(self) -> ActionResult:
        return ActionResult({"accessEntry": self._entry(self.cluster())})

    def update_access_entry(self) -> ActionResult:
        cluster = self.cluster()
        entry = self._entry(cluster)
        body = self.body_json()
        if entry.type != "STANDARD" and (body.get("username") or body.get("kubernetesGroups")):
            raise invalid_parameter(
                'This operation can only be performed on Access Entries with a type of "STANDARD".',
                clusterName=cluster.name,
            )
        for group in body.get("kubernetesGroups") or []:
            if group.startswith("system:"):
                raise invalid_parameter(
                    f"The kubernetes group name {group} is invalid, it cannot start with system:",
                    clusterName=cluster.name,
                )
        if "kubernetesGroups" in body:
            entry.kubernetes_groups = list(body["kubernetesGroups"] or [])
        if body.get("username"):
            entry.username = body["username"]
        entry.modified_at = now()
        return ActionResult({"accessEntry": entry})

    def delete_access_entry(self) -> ActionResult:
        cluster = self.cluster()
        entry = self._entry(cluster)
        del extras(cluster).access_entries[entry.principal_arn]
        return ActionResult({})

    def list_access_entries(self) -> ActionResult:
        cluster = self.cluster()
        _require_api_mode(cluster)
        policy = self.query_one("associatedPolicyArn")
        arns = [a for a, e in extras(cluster).access_entries.items() if policy is None or policy in e.policies]
        arns, token = self.page(sorted(arns))
        return ActionResult({"accessEntries": arns, "nextToken": token})

    def associate_access_policy(self) -> ActionResult:
        cluster = self.cluster()
        entry = self._entry(cluster)
        body = self.body_json()
        association = associate_policy(cluster, entry, body.get("policyArn"), body.get("accessScope"))
        return ActionResult(
            {"clusterName": cluster.name, "principalArn": entry.principal_arn, "associatedAccessPolicy": association}
        )

    def disassociate_access_policy(self) -> ActionResult:
        cluster = self.cluster()
        entry = self._entry(cluster)
        policy_arn = self.path_param("policyArn")
        if entry.policies.pop(policy_arn, None) is None:
            raise not_found(f"The specified policyArn {policy_arn} is not associated.", clusterName=cluster.name)
        return ActionResult({})

    def list_associated_access_policies(self) -> ActionResult:
        cluster = self.cluster()
        entry = self._entry(cluster)
        policies, token = self.page(list(entry.policies.values()))
        return ActionResult(
            {
                "clusterName": cluster.name,
                "principalArn": entry.principal_arn,
                "associatedAccessPolicies": policies,
                "nextToken": token,
            }
        )

    def list_access_policies(self) -> ActionResult:
        policies = [{"name": n, "arn": POLICY_PREFIX + n} for n in ACCESS_POLICIES]
        policies, token = self.page(policies)
        return ActionResult({"accessPolicies": policies, "nextToken": token})

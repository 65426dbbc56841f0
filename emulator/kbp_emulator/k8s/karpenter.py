"""Karpenter's controller, simulated: what a running Karpenter does to its own objects.

"Up" means a Deployment whose pod template runs `public.ecr.aws/karpenter/controller*` is Available. While it
is up:

- EC2NodeClasses (karpenter.k8s.aws) get the `karpenter.k8s.aws/termination` finalizer and a status: subnets
  and security groups resolved from their selector terms against the emulator's EC2 state (tags, `*` values,
  ids, names), AMIs for the alias, the instance profile of `spec.role` (which must exist in IAM) and the
  conditions SubnetsReady, SecurityGroupsReady, AMIsReady, InstanceProfileReady, ValidationSucceeded and Ready
  (False with the failing dependency named when a selector matches nothing).
- NodePools (karpenter.sh) get ValidationSucceeded, NodeClassReady (their EC2NodeClass exists and is Ready) and
  Ready, `status.resources` and `status.nodes` counting their NodeClaims.
- NodeClaims get the `karpenter.sh/termination` finalizer; one being deleted loses it `k8s.node_termination`
  seconds later (the instance "terminated").
- An EC2NodeClass being deleted loses its finalizer once no NodeClaim refers to it (`spec.nodeClassRef.name`).

While it is not up, nothing happens: a deletion waiting on those finalizers hangs, as in a cluster whose
Karpenter was uninstalled first. Not modelled: provisioning (NodeClaims never launch instances or become Nodes),
disruption, drift, interruption handling.
"""

from __future__ import annotations

import copy
import hashlib
import time
from typing import TYPE_CHECKING, Any

from .. import lifecycle
from .meta import condition_true, deleting, dig, finalizers_of, name_of, set_condition, timestamp, uid_of
from .resources import DEPLOYMENTS

if TYPE_CHECKING:
    from .controlplane import ControlPlane

IMAGE_PREFIX = "public.ecr.aws/karpenter/controller"
NODECLASSES = ("karpenter.k8s.aws", "ec2nodeclasses")
NODEPOOLS = ("karpenter.sh", "nodepools")
NODECLAIMS = ("karpenter.sh", "nodeclaims")
NODECLASS_FINALIZER = "karpenter.k8s.aws/termination"
NODECLAIM_FINALIZER = "karpenter.sh/termination"
MANAGER = "karpenter"


def controller_up(cp: "ControlPlane") -> bool:
    for stored in cp.store.list(DEPLOYMENTS.key):
        d = stored.obj
        images = [c.get("image", "") for c in dig(d, "spec", "template", "spec", "containers", default=[]) or []]
        if any(i.startswith(IMAGE_PREFIX) for i in images) and not deleting(d) and condition_true(d, "Available"):
            return True
    return False


def reconcile(cp: "ControlPlane") -> bool:
    if not controller_up(cp):
        return False
    catalog = cp.catalog()
    changed = False
    claims = cp.store.list(NODECLAIMS)
    if catalog.by_key(*NODECLAIMS) is not None:
        for stored in claims:
            changed |= _nodeclaim(cp, catalog.by_key(*NODECLAIMS), stored.obj)
    claims = cp.store.list(NODECLAIMS)
    nodeclass_type = catalog.by_key(*NODECLASSES)
    if nodeclass_type is not None:
        for stored in cp.store.list(NODECLASSES):
            changed |= _nodeclass(cp, nodeclass_type, stored.obj, [c.obj for c in claims])
    nodepool_type = catalog.by_key(*NODEPOOLS)
    if nodepool_type is not None:
        for stored in cp.store.list(NODEPOOLS):
            changed |= _nodepool(cp, nodepool_type, stored.obj, [c.obj for c in claims])
    return changed


def _condition(type_: str, ok: bool, generation: int, reason: str = "", message: str = "") -> dict[str, Any]:
    return {
        "type": type_,
        "status": "True" if ok else "False",
        "observedGeneration": generation,
        "lastTransitionTime": timestamp(),
        "reason": type_ if ok else reason,
        "message": "" if ok else message,
    }


def _with_conditions(status: dict[str, Any], conditions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = status.get("conditions") or []
    for cond in conditions:
        out = set_condition(out, cond)
    return out


# --- NodeClaims -------------------------------------------------------------------------------------------------


def _nodeclaim(cp: "ControlPlane", rt: Any, claim: dict[str, Any]) -> bool:
    if not deleting(claim):
        if NODECLAIM_FINALIZER in finalizers_of(claim):
            return False
        return cp.add_finalizer(rt, claim, NODECLAIM_FINALIZER, MANAGER)
    if NODECLAIM_FINALIZER not in finalizers_of(claim):
        return False
    due = cp.deadlines.setdefault(("terminate", uid_of(claim)), lifecycle.deadline("k8s.node_termination"))
    if time.monotonic() < due:
        cp.wake_at(due)
        return False
    return cp.remove_finalizer(rt.key, name_of(claim), claim["metadata"].get("namespace", ""), NODECLAIM_FINALIZER, MANAGER)


# --- EC2NodeClasses ---------------------------------------------------------------------------------------------


def _tags(resource: Any) -> dict[str, str]:
    try:
        return {t.get("Key", t.get("key")): t.get("Value", t.get("value")) for t in resource.get_tags()}
    except Exception:
        return {}


def _term_matches(term: dict[str, Any], ident: str, tags: dict[str, str], name: str | None = None) -> bool:
    if term.get("id"):
        return term["id"] == ident
    if term.get("name") is not None and name is not None and term["name"] != name:
        return False
    wanted = term.get("tags") or {}
    if not wanted and term.get("name") is None:
        return False
    return all(k in tags and (v == "*" or tags[k] == v) for k, v in wanted.items())


def _subnets(cp: "ControlPlane", terms: list[dict[str, Any]]) -> list[dict[str, str]]:
    out = []
    try:
        subnets = [s for zone in list(cp.ec2().subnets.values()) for s in list(zone.values())]
    except Exception:
        return out
    for subnet in subnets:
        tags = _tags(subnet)
        if any(_term_matches(t, subnet.id, tags) for t in terms):
            out.append({"id": subnet.id, "zone": subnet.availability_zone,
                        "zoneID": getattr(subnet, "availability_zone_id", "") or ""})
    return sorted(out, key=lambda s: s["id"])


def _security_groups(cp: "ControlPlane", terms: list[dict[str, Any]]) -> list[dict[str, str]]:
    out = []
    try:
        groups = [g for vpc in list(cp.ec2().groups.values()) for g in list(vpc.values())]
    except Exception:
        return out
    for group in groups:
        tags = _tags(group)
        if any(_term_matches(t, group.id, tags, group.name) for t in terms):
            out.append({"id": group.id, "name": group.name})
    return sorted(out, key=lambda g: g["id"])


def _amis(cp: "ControlPlane", terms: list[dict[str, Any]]) -> list[dict[str, Any]]:
    version = cp.kubernetes_version
    out = []
    for term in terms:
        alias = term.get("alias")
        if alias:
            family = alias.split("@")[0]
            for arch, suffix in (("amd64", "x86_64"), ("arm64", "arm64")):
                ident = "ami-0" + hashlib.sha256(f"{family}{arch}{version}".encode()).hexdigest()[:16]
                out.append({
                    "id": ident,
                    "name": f"amazon-eks-node-{family}-{suffix}-standard-{version}-v20251120",
                    "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": [arch]}],
                })
        elif term.get("id"):
            out.append({"id": term["id"], "requirements": []})
        elif term.get("tags") or term.get("name"):
            out.append({"id": "ami-0" + hashlib.sha256(repr(sorted(term.items())).encode()).hexdigest()[:16],
                        "name": term.get("name") or "", "requirements": []})
    return out


def _role_exists(cp: "ControlPlane", role: str) -> bool:
    try:
        from moto.iam.models import iam_backends

        iam = iam_backends[cp.account][cp.partition]
        iam.get_role(role.rsplit("/", 1)[-1])
        return True
    except Exception:
        return False


def _nodeclass(cp: "ControlPlane", rt: Any, nc: dict[str, Any], claims: list[dict[str, Any]]) -> bool:
    changed = False
    name = name_of(nc)
    if deleting(nc):
        if NODECLASS_FINALIZER not in finalizers_of(nc):
            return False
        users = [c for c in claims if dig(c, "spec", "nodeClassRef", "name") == name
                 and dig(c, "spec", "nodeClassRef", "group", default="karpenter.k8s.aws") == "karpenter.k8s.aws"]
        if users:
            return False
        return cp.remove_finalizer(rt.key, name, "", NODECLASS_FINALIZER, MANAGER)
    if NODECLASS_FINALIZER not in finalizers_of(nc):
        changed |= cp.add_finalizer(rt, nc, NODECLASS_FINALIZER, MANAGER)
        stored = cp.store.get(rt.key, "", name)
        if stored is None:
            return changed
        nc = stored.obj
    spec = nc.get("spec") or {}
    generation = int(nc["metadata"].get("generation", 1))
    subnets = _subnets(cp, spec.get("subnetSelectorTerms") or [])
    groups = _security_groups(cp, spec.get("securityGroupSelectorTerms") or [])
    amis = _amis(cp, spec.get("amiSelectorTerms") or [])
    role = spec.get("role")
    profile = spec.get("instanceProfile") or (
        f"{cp.name}_{int(hashlib.sha256(f'{cp.name}{role}'.encode()).hexdigest()[:16], 16)}" if role else "")
    profile_ok = bool(spec.get("instanceProfile")) or (bool(role) and _role_exists(cp, role))
    checks = [
        _condition("SubnetsReady", bool(subnets), generation, "SubnetsNotFound", "SubnetSelector did not match any Subnets"),
        _condition("SecurityGroupsReady", bool(groups), generation, "SecurityGroupsNotFound",
                   "SecurityGroupSelector did not match any SecurityGroups"),
        _condition("AMIsReady", bool(amis), generation, "AMINotFound", "AMISelector did not match any AMIs"),
        _condition("InstanceProfileReady", profile_ok, generation, "InstanceProfileCreationFailed",
                   f"failed to create instance profile: role {role!r} does not exist"),
        _condition("ValidationSucceeded", True, generation),
    ]
    failing = [c["type"] for c in checks if c["status"] != "True"]
    ready = _condition("Ready", not failing, generation, "UnhealthyDependents",
                       ", ".join(f"{t}=False" for t in failing))
    status = copy.deepcopy(nc.get("status") or {})
    status.update({"subnets": subnets, "securityGroups": groups, "amis": amis})
    if profile_ok:
        status["instanceProfile"] = profile
    status["conditions"] = _with_conditions(status, checks + [ready])
    changed |= cp.write_status(rt, nc, status, manager=MANAGER)
    return changed


# --- NodePools --------------------------------------------------------------------------------------------------


def _nodepool(cp: "ControlPlane", rt: Any, pool: dict[str, Any], claims: list[dict[str, Any]]) -> bool:
    name = name_of(pool)
    generation = int(pool["metadata"].get("generation", 1))
    ref = dig(pool, "spec", "template", "spec", "nodeClassRef", default={}) or {}
    nodeclass = cp.store.get(NODECLASSES, "", ref.get("name", "")) if ref.get("kind", "EC2NodeClass") == "EC2NodeClass" else None
    class_ready = nodeclass is not None and condition_true(nodeclass.obj, "Ready") and not deleting(nodeclass.obj)
    message = (f"EC2NodeClass {ref.get('name')!r} not found" if nodeclass is None
               else f"EC2NodeClass {ref.get('name')!r} is not ready")
    checks = [
        _condition("ValidationSucceeded", True, generation),
        _condition("NodeClassReady", class_ready, generation, "NodeClassNotReady", message),
    ]
    failing = [c["type"] for c in checks if c["status"] != "True"]
    ready = _condition("Ready", not failing, generation, "UnhealthyDependents", ", ".join(f"{t}=False" for t in failing))
    mine = [c for c in claims if (c["metadata"].get("labels") or {}).get("karpenter.sh/nodepool") == name
            or any(r.get("uid") == uid_of(pool) for r in c["metadata"].get("ownerReferences") or [])]
    status = copy.deepcopy(pool.get("status") or {})
    status["conditions"] = _with_conditions(status, checks + [ready])
    status["resources"] = {"cpu": "0", "ephemeral-storage": "0", "memory": "0", "nodes": str(len(mine)), "pods": "0"}
    status["nodes"] = len(mine)
    if nodeclass is not None:
        status["nodeClassObservedGeneration"] = int(nodeclass.obj["metadata"].get("generation", 1))
    return cp.write_status(rt, pool, status, manager=MANAGER)

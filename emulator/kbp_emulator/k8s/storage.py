"""PersistentVolumeClaims and PersistentVolumes: their defaulting and validation, the StorageObjectInUseProtection
admission plugin, and kube-controller-manager's controllers for them.

What a client of a real cluster sees, reduced to static binding (there is no provisioner, so no StorageClasses and
no dynamic provisioning):

- Admission gives every new claim the `kubernetes.io/pvc-protection` finalizer and every new volume
  `kubernetes.io/pv-protection`, so deleting either only marks it until the protection controllers let it go.
- The binder binds a claim and a volume that name each other (the claim's `spec.volumeName`, the volume's
  `spec.claimRef`; either one is enough, the binder fills in the other): both get `status.phase: Bound`, the
  claim its capacity and access modes. A volume nobody claims is `Available`; a claim nothing binds stays `Pending`.
- The reclaimer acts when a bound volume's claim is gone: the volume becomes `Released`; with
  `persistentVolumeReclaimPolicy: Delete` (what a provisioner such as the EBS CSI driver sets) the backing volume
  is deleted, instantly here, and the PersistentVolume with it; with `Retain` (the default for volumes made by
  hand) it stays `Released`.
- The protection controllers drop `pvc-protection` from a claim being deleted once no pod that has not finished
  mounts it, and `pv-protection` from a volume being deleted once it is not `Bound`.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from . import quantity
from .errors import FieldError, forbidden, not_supported, required
from .meta import deleting, dig, finalizers_of, name_of, namespace_of, uid_of
from .resources import PODS, PVCS, PVS, ResourceType

if TYPE_CHECKING:
    from .controlplane import ControlPlane

PVC_PROTECTION = "kubernetes.io/pvc-protection"
PV_PROTECTION = "kubernetes.io/pv-protection"
MANAGER = "kube-controller-manager"
ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
RECLAIM_POLICIES = ["Delete", "Recycle", "Retain"]
#: The volume sources a PersistentVolume may name, exactly one of them.
VOLUME_SOURCES = (
    "awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "csi", "fc", "flexVolume", "flocker",
    "gcePersistentDisk", "glusterfs", "hostPath", "iscsi", "local", "nfs", "photonPersistentDisk", "portworxVolume",
    "quobyte", "rbd", "scaleIO", "storageos", "vsphereVolume",
)


def handles(rt: ResourceType) -> bool:
    return rt.key in (PVCS.key, PVS.key)


# --- defaulting, admission, validation ----------------------------------------------------------------------------


def default(rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    """Defaults, canonical quantities and, on create, the protection finalizer and the Pending phase."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    spec.setdefault("volumeMode", "Filesystem")
    if rt.key == PVS.key:
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
        amounts = spec.get("capacity")
    else:
        amounts = dig(spec, "resources", "requests")
    if isinstance(amounts, dict):
        for name, amount in amounts.items():
            amounts[name] = quantity.canonical(amount)
    if old is None:
        finalizer = PV_PROTECTION if rt.key == PVS.key else PVC_PROTECTION
        meta = obj["metadata"]
        if finalizer not in finalizers_of(obj):
            meta["finalizers"] = finalizers_of(obj) + [finalizer]
        obj["status"] = {"phase": "Pending"}


def validate(rt: ResourceType, obj: dict[str, Any]) -> list[FieldError]:
    spec = obj.get("spec") or {}
    errors: list[FieldError] = []
    modes = spec.get("accessModes") or []
    if not modes:
        errors.append(required("spec.accessModes", "at least 1 access mode is required" if rt.key == PVCS.key else ""))
    for mode in modes:
        if mode not in ACCESS_MODES:
            errors.append(not_supported("spec.accessModes", mode, ACCESS_MODES))
    if rt.key == PVCS.key:
        if "storage" not in (dig(spec, "resources", "requests") or {}):
            errors.append(required("spec.resources[storage]"))
        return errors
    if "storage" not in (spec.get("capacity") or {}):
        errors.append(required("spec.capacity"))
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy not in RECLAIM_POLICIES:
        errors.append(not_supported("spec.persistentVolumeReclaimPolicy", policy, RECLAIM_POLICIES))
    sources = [s for s in VOLUME_SOURCES if s in spec]
    if not sources:
        errors.append(required("spec", "must specify a volume type"))
    for extra in sources[1:]:
        errors.append(forbidden(f"spec.{extra}", "may not specify more than 1 volume type"))
    return errors


# --- controllers ----------------------------------------------------------------------------------------------


def reconcile(cp: "ControlPlane") -> bool:
    changed = _bind(cp)
    changed |= _reclaim(cp)
    changed |= _protect(cp)
    return changed


def _claim_ref(pv: dict[str, Any]) -> dict[str, Any]:
    return dig(pv, "spec", "claimRef") or {}


def _refers_to(ref: dict[str, Any], claim: dict[str, Any]) -> bool:
    return (
        ref.get("namespace") == namespace_of(claim)
        and ref.get("name") == name_of(claim)
        and ref.get("uid") in (None, "", uid_of(claim))
    )


def _bind(cp: "ControlPlane") -> bool:
    changed = False
    volumes = cp.store.list(PVS.key)
    for stored in cp.store.list(PVCS.key):
        claim = stored.obj
        volume_name = dig(claim, "spec", "volumeName")
        if not volume_name:
            # A volume made for this claim (its claimRef names it): the claim takes its name.
            pre_bound = next((v for v in volumes if _refers_to(_claim_ref(v.obj), claim)), None)
            if pre_bound is not None and not deleting(claim):
                new = copy.deepcopy(claim)
                new["spec"]["volumeName"] = name_of(pre_bound.obj)
                changed |= cp.update(PVCS, claim, new, manager=MANAGER)
            continue
        volume = cp.store.get(PVS.key, "", volume_name)
        if volume is None:
            lost = dig(claim, "status", "phase") in ("Bound", "Lost")
            changed |= cp.write_status(PVCS, claim, {"phase": "Lost" if lost else "Pending"}, manager=MANAGER)
            continue
        ref = _claim_ref(volume.obj)
        if ref and not _refers_to(ref, claim):
            continue  # the volume is someone else's: the claim stays Pending
        if not ref.get("uid"):
            new = copy.deepcopy(volume.obj)
            new["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
                                       "namespace": namespace_of(claim), "name": name_of(claim), "uid": uid_of(claim),
                                       "resourceVersion": claim["metadata"].get("resourceVersion", "")}
            changed |= cp.update(PVS, volume.obj, new, manager=MANAGER)
            continue
        changed |= cp.write_status(PVS, volume.obj, {"phase": "Bound"}, manager=MANAGER)
        spec = volume.obj.get("spec") or {}
        bound = {"phase": "Bound", "accessModes": spec.get("accessModes") or [], "capacity": spec.get("capacity") or {}}
        changed |= cp.write_status(PVCS, claim, bound, manager=MANAGER)
    for stored in cp.store.list(PVS.key):
        if not _claim_ref(stored.obj) and dig(stored.obj, "status", "phase") != "Available":
            changed |= cp.write_status(PVS, stored.obj, {"phase": "Available"}, manager=MANAGER)
    return changed


def _reclaim(cp: "ControlPlane") -> bool:
    changed = False
    for stored in cp.store.list(PVS.key):
        volume = stored.obj
        ref = _claim_ref(volume)
        if not ref.get("uid"):
            continue
        claim = cp.store.get(PVCS.key, ref.get("namespace") or "", ref.get("name") or "")
        if claim is not None and uid_of(claim.obj) == ref["uid"]:
            continue
        phase = dig(volume, "status", "phase")
        if phase == "Bound":
            changed |= cp.write_status(PVS, volume, {"phase": "Released"}, manager=MANAGER)
        elif phase == "Released" and dig(volume, "spec", "persistentVolumeReclaimPolicy") == "Delete" \
                and not deleting(volume):
            changed |= cp.delete_object(PVS.key, volume, "Background")
    return changed


def _in_use(cp: "ControlPlane", claim: dict[str, Any]) -> bool:
    for pod in cp.store.list(PODS.key, namespace_of(claim)):
        if dig(pod.obj, "status", "phase") in ("Succeeded", "Failed"):
            continue
        for volume in dig(pod.obj, "spec", "volumes") or []:
            if dig(volume, "persistentVolumeClaim", "claimName") == name_of(claim):
                return True
    return False


def _protect(cp: "ControlPlane") -> bool:
    changed = False
    for stored in cp.store.list(PVCS.key):
        claim = stored.obj
        if deleting(claim) and PVC_PROTECTION in finalizers_of(claim) and not _in_use(cp, claim):
            changed |= cp.remove_finalizer(PVCS.key, name_of(claim), namespace_of(claim), PVC_PROTECTION, MANAGER)
    for stored in cp.store.list(PVS.key):
        volume = stored.obj
        if deleting(volume) and PV_PROTECTION in finalizers_of(volume) and dig(volume, "status", "phase") != "Bound":
            changed |= cp.remove_finalizer(PVS.key, name_of(volume), "", PV_PROTECTION, MANAGER)
    return changed

"""The EBS CSI driver's external provisioner, reduced to what a teardown depends on: deleting released volumes.

kube-controller-manager binds claims and volumes, marks a volume Released when its claim goes and protects both
with finalizers; deleting the disk behind a `persistentVolumeReclaimPolicy: Delete` volume is the CSI driver's
job. Here a PersistentVolume of driver `ebs.csi.aws.com` that is Released (or Failed, which is what the
controller manager makes of a deletion nobody in-tree can do) with policy Delete has its EBS volume
(`spec.csi.volumeHandle`) deleted from the emulator's EC2, if there is one, and is then deleted itself.
Provisioning (claims with a StorageClass) is not simulated.
"""

from __future__ import annotations

from .client import NotFound
from .plane_view import PlaneView

DRIVER = "ebs.csi.aws.com"


def reconcile(plane: PlaneView) -> None:
    for pv in plane.api.items("/api/v1/persistentvolumes"):
        spec, meta = pv.get("spec") or {}, pv["metadata"]
        if (spec.get("csi") or {}).get("driver") != DRIVER or spec.get("persistentVolumeReclaimPolicy") != "Delete":
            continue
        if (pv.get("status") or {}).get("phase") not in ("Released", "Failed") or meta.get("deletionTimestamp"):
            continue
        handle = spec["csi"].get("volumeHandle", "")
        try:
            plane.ec2().delete_volume(handle)
        except Exception:  # no such volume in EC2 (a handle made up by hand, or already deleted): nothing to do
            pass
        try:
            plane.api.call("DELETE", f"/api/v1/persistentvolumes/{meta['name']}")
        except NotFound:
            pass

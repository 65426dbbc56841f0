"""Latency profiles: how long each long-running AWS operation takes in the emulator.

A profile is a TOML file of seconds per operation, for example::

    eks.create_cluster = 600
    ec2.create_nat_gateway = 90

An operation the profile leaves out takes no time. A key the emulator does not know is an error, so a typo
does not silently make an operation instant. The time scale multiplies every delay: 0.01 turns a 600 s
cluster creation into 6 s.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # moto supports 3.10, whose standard library has no TOML parser
    import tomli as tomllib

PROFILES_DIR = Path(__file__).resolve().parent.parent / "profiles"
DEFAULT_PROFILE = "instant"

#: Every operation a profile may time, with what the delay covers.
OPERATIONS = {
    "eks.create_cluster": "cluster CREATING until ACTIVE",
    "eks.delete_cluster": "cluster DELETING until gone",
    "eks.update_cluster": "cluster UPDATING until ACTIVE (UpdateClusterVersion, UpdateClusterConfig)",
    "eks.create_nodegroup": "node group CREATING until ACTIVE",
    "eks.delete_nodegroup": "node group DELETING until gone",
    "eks.update_nodegroup": "node group UPDATING until ACTIVE (UpdateNodegroupConfig, UpdateNodegroupVersion)",
    "eks.create_addon": "add-on CREATING until ACTIVE",
    "eks.delete_addon": "add-on DELETING until gone",
    "eks.update_addon": "add-on UPDATING until ACTIVE",
    # AWS gives these no status: they are usable the moment the call returns, so only 0 makes sense.
    "eks.create_access_entry": "always 0: an access entry has no status",
    "eks.create_pod_identity_association": "always 0: a pod identity association has no status",
    "ec2.create_nat_gateway": "NAT gateway pending until available",
    "ec2.delete_nat_gateway": "NAT gateway deleting until deleted",
    # What the emulator simulates around each cluster's real control plane (package k8s).
    "k8s.deployment_ready": "pod bound to a node until its containers run and are Ready",
    "k8s.node_termination": "NodeClaim deleted until Karpenter removes its finalizer (instance terminated)",
}


class ProfileError(ValueError):
    """A profile that cannot be used; the message says which file and key."""


@dataclass(frozen=True)
class Profile:
    name: str
    seconds: dict[str, float] = field(default_factory=dict)
    time_scale: float = 1.0

    def delay(self, operation: str) -> float:
        """Seconds `operation` takes, after scaling."""
        if operation not in OPERATIONS:
            raise KeyError(f"unknown operation {operation!r}; add it to OPERATIONS")
        return self.seconds.get(operation, 0.0) * self.time_scale


def load(name_or_path: str | None = None, time_scale: float | str | None = None) -> Profile:
    """Reads a profile by name (a file in emulator/profiles/) or by path."""
    spec = name_or_path or DEFAULT_PROFILE
    path = Path(spec)
    if not path.suffix:
        path = PROFILES_DIR / f"{spec}.toml"
    try:
        with open(path, "rb") as f:
            raw = tomllib.load(f)
    except FileNotFoundError:
        known = ", ".join(sorted(p.stem for p in PROFILES_DIR.glob("*.toml")))
        raise ProfileError(f"no latency profile {spec!r} (looked for {path}; shipped: {known})") from None
    except tomllib.TOMLDecodeError as e:
        raise ProfileError(f"{path}: {e}") from None
    return Profile(name=path.stem, seconds=_flatten(path, raw), time_scale=_scale(time_scale))


def from_env() -> Profile:
    """The profile chosen by KBP_EMULATOR_PROFILE and KBP_EMULATOR_TIME_SCALE."""
    return load(os.environ.get("KBP_EMULATOR_PROFILE"), os.environ.get("KBP_EMULATOR_TIME_SCALE"))


def _flatten(path: Path, raw: dict) -> dict[str, float]:
    """`[eks] create_cluster = 600` and `eks.create_cluster = 600` are the same TOML; both become one key."""
    seconds = {}
    for service, ops in raw.items():
        if not isinstance(ops, dict):
            raise ProfileError(f"{path}: {service!r} is not a service; write e.g. eks.create_cluster = 600")
        for op, value in ops.items():
            key = f"{service}.{op}"
            if key not in OPERATIONS:
                raise ProfileError(f"{path}: unknown operation {key!r}; known: {', '.join(OPERATIONS)}")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ProfileError(f"{path}: {key} must be a number of seconds >= 0, not {value!r}")
            if value and OPERATIONS[key].startswith("always 0"):
                raise ProfileError(f"{path}: {key} must be 0: {OPERATIONS[key].split(': ', 1)[1]}")
            seconds[key] = float(value)
    return seconds


def _scale(value: float | str | None) -> float:
    if value is None or value == "":
        return 1.0
    try:
        scale = float(value)
    except ValueError:
        raise ProfileError(f"KBP_EMULATOR_TIME_SCALE must be a number, not {value!r}") from None
    if scale < 0:
        raise ProfileError(f"KBP_EMULATOR_TIME_SCALE must be >= 0, not {value!r}")
    return scale

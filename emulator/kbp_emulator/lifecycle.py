"""Life cycles: a status that moves on by itself once the profile's delay has passed.

moto makes every resource ready the moment it is created. Here a long operation starts a *phase* instead: the
resource shows an interim status (CREATING, pending, DELETING, UPDATING, InProgress) until a deadline, then its
settled status, or it disappears. Nothing runs in the background. Each request first settles the phases whose
deadline has passed (see `settle`), so what a client sees is always computed from timestamps at the moment it
looks, and a request never observes a half-applied change.

The call that starts a phase answers with the interim status even when the delay is 0, as AWS does
(CreateCluster says CREATING); with the instant profile the very next request sees the settled status.
"""

from __future__ import annotations

import threading
import time
from collections.abc import MutableMapping
from typing import Any

from .profile import Profile, load

#: `after` value for phases that end with the resource gone (deletes).
GONE = "<gone>"

_profile: Profile = load()
#: moto's server is threaded; one lock keeps a settle walk from racing another request's changes.
lock = threading.RLock()


def use(profile: Profile) -> None:
    global _profile
    _profile = profile


def current() -> Profile:
    return _profile


def deadline(operation: str) -> float:
    """When an `operation` started now settles, on the monotonic clock."""
    return time.monotonic() + _profile.delay(operation)


def begin(resource: Any, attr: str, during: str, after: str, until: float) -> None:
    """Shows `during` in `resource.<attr>` until `until`, then `after` (or GONE: the owner drops it)."""
    setattr(resource, attr, during)
    resource._kbp_phase = (attr, after, until)


def busy(resource: Any) -> bool:
    """True while a phase is under way."""
    return getattr(resource, "_kbp_phase", None) is not None


def effective(resource: Any, attr: str) -> Any:
    """`resource.<attr>` as the next request will see it: a due phase counts as settled, without settling it.

    For readers outside an AWS request (the threads that simulate each cluster's kubelets), which must not change AWS state.
    GONE means the resource is as good as deleted.
    """
    phase = getattr(resource, "_kbp_phase", None)
    if phase is not None and phase[0] == attr and time.monotonic() >= phase[2]:
        return phase[1]
    return getattr(resource, attr)


def settle(resource: Any) -> bool:
    """Applies `resource`'s phase if it is due. True if the resource is now gone and its owner must drop it."""
    phase = getattr(resource, "_kbp_phase", None)
    if phase is None:
        return False
    attr, after, until = phase
    if time.monotonic() < until:
        return False
    resource._kbp_phase = None
    if after == GONE:
        return True
    setattr(resource, attr, after)
    return False


def settle_all(resources: MutableMapping[Any, Any]) -> list[Any]:
    """Settles every value of `resources`, removes the gone ones and returns them."""
    gone = [key for key, resource in list(resources.items()) if settle(resource)]
    return [resources.pop(key) for key in gone]

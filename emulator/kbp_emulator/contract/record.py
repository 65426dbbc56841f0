"""The refusal log: every request the front door (middleware.py) refused, kept in memory for the server's lifetime.

Served as `GET /moto-api/kbp/refusals` (a JSON list, oldest first) and cleared by `DELETE /moto-api/kbp/refusals`.
moto's `POST /moto-api/reset` does not touch it: test suites reset between cases yet ask at the end whether kbp's
own requests were ever refused. Each refusal is also one line on stderr, so a server log shows it too.
"""

from __future__ import annotations

import sys
import threading
from collections import deque
from datetime import datetime, timezone
from typing import Any

from .types import Refusal

#: A server refusing in a loop must not grow without bound; the oldest entries go first.
MAX_ENTRIES = 10_000

_lock = threading.Lock()
_entries: deque[dict[str, Any]] = deque(maxlen=MAX_ENTRIES)


def add(service: str, operation: str, refusal: Refusal) -> dict[str, Any]:
    """Records one refusal and says so on stderr."""
    entry = {
        "time": datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "service": service,
        "operation": operation,
        "status": refusal.status,
        "code": refusal.code,
        "message": refusal.message,
        "rule": refusal.rule,
    }
    with _lock:
        _entries.append(entry)
    print(f"kbp_emulator: refused {service}:{operation} {refusal.status} {refusal.code} [{refusal.rule}]: "
          f"{refusal.message}", file=sys.stderr, flush=True)
    return entry


def entries() -> list[dict[str, Any]]:
    with _lock:
        return list(_entries)


def clear() -> int:
    """Forgets every refusal; answers how many there were."""
    with _lock:
        count = len(_entries)
        _entries.clear()
    return count

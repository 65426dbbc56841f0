"""S3 conditional writes are atomic, as in AWS.

AWS (S3 User Guide, "Conditional writes"; API reference, PutObject and DeleteObject): when several conditional
writes for the same key run at once, the first to finish wins and the others fail with 412 PreconditionFailed (or
409 ConditionalRequestConflict), so `If-None-Match: *` creates a key at most once and `If-Match: <etag>` is a
compare-and-swap. kbp's S3 state backend builds its lock and its state writes on that.

moto 5.2.5 gets each answer right (412/404 and the codes; tests/test_s3_conditional.py pins them), but checks the
condition and then writes as two steps while its server handles requests on parallel threads: two writers can
both pass the check, so two `If-None-Match: *` PUTs can both succeed (two lock holders), and two PUTs that
overwrite one key at once can answer one of them with a 500. PutObject and DeleteObject are serialized here, so
each one's check and write happen together; the loser then gets AWS's 412 (never 409, which AWS also allows).
"""

from __future__ import annotations

import functools
import threading
from typing import Any

from moto.s3.responses import S3Response

#: One lock for every bucket and key: an S3 write here takes well under a millisecond.
_writes = threading.RLock()


def _serialized(method: Any) -> Any:
    @functools.wraps(method)
    def serialized(self: Any, *args: Any, **kwargs: Any) -> Any:
        with _writes:
            return method(self, *args, **kwargs)

    serialized.kbp_serialized = True
    return serialized


def install() -> None:
    for name in ("put_object", "delete_object"):
        method = getattr(S3Response, name)
        if not getattr(method, "kbp_serialized", False):
            setattr(S3Response, name, _serialized(method))

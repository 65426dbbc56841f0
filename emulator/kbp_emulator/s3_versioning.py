"""GetBucketVersioning answers in AWS's shape.

AWS (S3 API reference, GetBucketVersioning) answers with a `VersioningConfiguration` element holding `Status`
(`Enabled` or `Suspended`), and an empty `VersioningConfiguration` for a bucket that never had versioning.
moto 5.2.5 wraps the same data in a `GetBucketVersioningResponse` element, which boto3 accepts but the AWS SDK
for Rust refuses (it checks the root element), so kbp could never tell a versioned state bucket from one that
is not. The body is written here as AWS writes it.
"""

from __future__ import annotations

from typing import Any

from moto.s3.responses import S3Response

_NS = "http://s3.amazonaws.com/doc/2006-03-01/"


def _get_bucket_versioning(self: Any) -> Any:
    status = self.backend.get_bucket_versioning(self.bucket_name)
    inner = f"<Status>{status}</Status>" if status else ""
    body = f'<?xml version="1.0" encoding="UTF-8"?>\n<VersioningConfiguration xmlns="{_NS}">{inner}</VersioningConfiguration>'
    return 200, {"Content-Type": "application/xml"}, body


def install() -> None:
    S3Response.get_bucket_versioning = _get_bucket_versioning

"""EKS bearer tokens, checked the way aws-iam-authenticator checks them before it asks STS.

A token is `k8s-aws-v1.` + base64url (no padding) of a presigned STS GetCallerIdentity URL (what
`aws eks get-token` prints). The URL must be http(s), `Action=GetCallerIdentity`, signed (`X-Amz-Signature`)
with `x-k8s-aws-id` among `X-Amz-SignedHeaders`, `X-Amz-Expires` at most 900, and `X-Amz-Date` no older than
15 minutes (nor more than 5 minutes ahead). Any host is accepted (the real STS one, or the emulator's own
endpoint), and the signature is not verified: the cluster name sits in a signed header we never see, and there
is no IAM to map the caller to. Anything else is 401 Unauthorized.

The caller ARN STS then reports is turned into the ARN of the IAM principal it stands for (`iam_principal`: an
assumed role's is its role's), as aws-iam-authenticator does before it looks the principal up, and as EKS records
the cluster creator for its access entry (CreateCluster).
"""

from __future__ import annotations

import base64
import binascii
import datetime
import re
from urllib.parse import parse_qs, urlsplit

PREFIX = "k8s-aws-v1."
MAX_EXPIRES = 900
MAX_AGE = datetime.timedelta(minutes=15)
MAX_SKEW = datetime.timedelta(minutes=5)


def query_of(url: str) -> dict[str, str]:
    """A presigned URL's query parameters, names lower-cased (AWS's are case-insensitive), first values."""
    return {k.lower(): v[0] for k, v in parse_qs(urlsplit(url).query, keep_blank_values=True).items()}


def url_of(token: str) -> str:
    """The presigned URL inside `k8s-aws-v1.<base64url>`; raises ValueError (binascii.Error) when it is not one."""
    encoded = token[len(PREFIX):]
    return base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode()


def problem(authorization: str | None, now: datetime.datetime | None = None) -> str | None:
    """Why the Authorization header is not a usable EKS token, or None if it is."""
    if not authorization:
        return "no Authorization header"
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return "not a bearer token"
    token = token.strip()
    if not token.startswith(PREFIX):
        return f"token does not start with {PREFIX}"
    try:
        url = url_of(token)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return "token is not base64url"
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.netloc:
        return "token is not a presigned URL"
    query = query_of(url)
    if query.get("action") != "GetCallerIdentity":
        return "presigned URL is not for GetCallerIdentity"
    if not query.get("x-amz-signature"):
        return "presigned URL is not signed"
    if "x-k8s-aws-id" not in [h.strip().lower() for h in query.get("x-amz-signedheaders", "").split(";")]:
        return "x-k8s-aws-id is not a signed header"
    try:
        expires = int(query.get("x-amz-expires", ""))
    except ValueError:
        return "X-Amz-Expires missing"
    if expires > MAX_EXPIRES or expires < 0:
        return f"X-Amz-Expires {expires} is more than {MAX_EXPIRES}"
    try:
        signed = datetime.datetime.strptime(query.get("x-amz-date", ""), "%Y%m%dT%H%M%SZ").replace(
            tzinfo=datetime.timezone.utc
        )
    except ValueError:
        return "X-Amz-Date missing or malformed"
    now = now or datetime.datetime.now(datetime.timezone.utc)
    if now - signed > MAX_AGE:
        return "X-Amz-Date parameter is expired (15 minute expiration)"
    if signed - now > MAX_SKEW:
        return "X-Amz-Date parameter is in the future"
    return None


def iam_principal(sts_arn: str) -> str:
    """The IAM principal behind a caller ARN, as EKS records it for the cluster creator."""
    m = re.match(r"^arn:([^:]+):sts::(\d{12}):assumed-role/([^/]+)/", sts_arn)
    if m:
        return f"arn:{m[1]}:iam::{m[2]}:role/{m[3]}"
    return sts_arn.replace(":sts::", ":iam::", 1)

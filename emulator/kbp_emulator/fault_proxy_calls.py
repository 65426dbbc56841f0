"""Which AWS call an HTTP request is, for the fault proxy (fault_proxy.py): its service, its operation and the
wire protocol its errors must be written in.

The service is the signing name in the SigV4 credential scope (`Credential=AKID/20260101/us-west-2/ec2/aws4_request`
in the Authorization header, or `X-Amz-Credential` of a presigned URL): the one thing every protocol carries.
The operation comes from where each protocol puts it:

- awsJson (KMS, EventBridge, SQS): the `X-Amz-Target` header, `TrentService.CreateKey` → CreateKey;
- awsQuery and ec2 (EC2, IAM, STS, SQS's old protocol): `Action=` in the form body or the query string;
- restJson (EKS): method and path, matched against the EKS API's routes below;
- restXml (S3): method, path, sub-resource query parameters and a few headers, or the `x-id` query parameter the
  SDKs add themselves.

A request that none of these names (an unsigned request, moto's own `/moto-api/`) is `METHOD /first-segment`.
Standard library only, like the proxy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit

# Wire protocols, as the error answers (fault_proxy_errors.py) need them.
EC2 = "ec2"  # <Response><Errors><Error>…
QUERY = "query"  # <ErrorResponse><Error>… (IAM, STS, SQS before JSON)
JSON = "json"  # {"__type": …} (KMS, EventBridge, SQS)
REST_JSON = "rest-json"  # x-amzn-ErrorType header (EKS)
S3 = "s3"  # <Error><Code>…

FORM_CONTENT_TYPE = "application/x-www-form-urlencoded"


@dataclass(frozen=True)
class Call:
    service: str  # the SigV4 signing name: ec2, iam, sts, kms, events, sqs, eks, s3; "" when unsigned
    operation: str
    protocol: str
    # awsJson's Content-Type (application/x-amz-json-1.0 or 1.1), echoed in error answers.
    json_version: str = "1.1"

    @property
    def key(self) -> str:
        """`ec2:CreateVpc`, the name the proxy counts and logs by (IAM's action syntax)."""
        return f"{self.service or 'unsigned'}:{self.operation}"


def identify(method: str, target: str, headers, form_body: bytes | None) -> Call:
    """The call a request is. `headers` is case-insensitive (an http.client/email Message); `form_body` is the
    body when it is a form (the query protocols' Action lives there), else None."""
    parts = urlsplit(target)
    query = parse_qs(parts.query, keep_blank_values=True)
    service = signing_service(headers.get("Authorization", ""), query)

    amz_target = headers.get("X-Amz-Target")
    if amz_target:
        content_type = headers.get("Content-Type", "")
        version = "1.0" if content_type.endswith("1.0") else "1.1"
        return Call(service, amz_target.rsplit(".", 1)[-1], JSON, version)

    action = query.get("Action", [None])[0]
    if action is None and form_body:
        action = parse_qs(form_body.decode("utf-8", "replace")).get("Action", [None])[0]
    if action:
        return Call(service, action, EC2 if service == "ec2" else QUERY)

    if service == "eks":
        return Call(service, eks_operation(method, parts.path), REST_JSON)
    if service == "s3":
        return Call(service, s3_operation(method, parts.path, query, headers), S3)
    first = parts.path.strip("/").split("/", 1)[0]
    return Call(service, f"{method} /{first}", REST_JSON)


def signing_service(authorization: str, query: dict) -> str:
    """The service of the SigV4 (or SigV4a) credential scope; SigV4's scope is AKID/date/region/service/aws4_request,
    SigV4a's has no region, so the service is always second to last."""
    m = re.search(r"Credential=([^,\s]+)", authorization)
    credential = m.group(1) if m else query.get("X-Amz-Credential", [""])[0]
    scope = credential.split("/")
    return scope[-2] if len(scope) >= 4 else ""


# EKS's REST routes (botocore's eks model, 2017-11-01), most specific first within each method. `{}` is one
# path segment.
_EKS_ROUTES = [
    ("POST", "/clusters", "CreateCluster"),
    ("GET", "/clusters", "ListClusters"),
    ("GET", "/clusters/{}", "DescribeCluster"),
    ("DELETE", "/clusters/{}", "DeleteCluster"),
    ("POST", "/clusters/{}/update-config", "UpdateClusterConfig"),
    ("POST", "/clusters/{}/updates", "UpdateClusterVersion"),
    ("GET", "/clusters/{}/updates", "ListUpdates"),
    ("GET", "/clusters/{}/updates/{}", "DescribeUpdate"),
    ("POST", "/clusters/{}/updates/{}/cancel-update", "CancelUpdate"),
    ("POST", "/clusters/{}/encryption-config/associate", "AssociateEncryptionConfig"),
    ("POST", "/clusters/{}/node-groups", "CreateNodegroup"),
    ("GET", "/clusters/{}/node-groups", "ListNodegroups"),
    ("GET", "/clusters/{}/node-groups/{}", "DescribeNodegroup"),
    ("DELETE", "/clusters/{}/node-groups/{}", "DeleteNodegroup"),
    ("POST", "/clusters/{}/node-groups/{}/update-config", "UpdateNodegroupConfig"),
    ("POST", "/clusters/{}/node-groups/{}/update-version", "UpdateNodegroupVersion"),
    ("POST", "/clusters/{}/addons", "CreateAddon"),
    ("GET", "/clusters/{}/addons", "ListAddons"),
    ("GET", "/clusters/{}/addons/{}", "DescribeAddon"),
    ("DELETE", "/clusters/{}/addons/{}", "DeleteAddon"),
    ("POST", "/clusters/{}/addons/{}/update", "UpdateAddon"),
    ("GET", "/addons/supported-versions", "DescribeAddonVersions"),
    ("GET", "/addons/configuration-schemas", "DescribeAddonConfiguration"),
    ("POST", "/clusters/{}/access-entries", "CreateAccessEntry"),
    ("GET", "/clusters/{}/access-entries", "ListAccessEntries"),
    ("GET", "/clusters/{}/access-entries/{}", "DescribeAccessEntry"),
    ("POST", "/clusters/{}/access-entries/{}", "UpdateAccessEntry"),
    ("DELETE", "/clusters/{}/access-entries/{}", "DeleteAccessEntry"),
    ("POST", "/clusters/{}/access-entries/{}/access-policies", "AssociateAccessPolicy"),
    ("GET", "/clusters/{}/access-entries/{}/access-policies", "ListAssociatedAccessPolicies"),
    ("DELETE", "/clusters/{}/access-entries/{}/access-policies/{}", "DisassociateAccessPolicy"),
    ("GET", "/access-policies", "ListAccessPolicies"),
    ("POST", "/clusters/{}/pod-identity-associations", "CreatePodIdentityAssociation"),
    ("GET", "/clusters/{}/pod-identity-associations", "ListPodIdentityAssociations"),
    ("GET", "/clusters/{}/pod-identity-associations/{}", "DescribePodIdentityAssociation"),
    ("POST", "/clusters/{}/pod-identity-associations/{}", "UpdatePodIdentityAssociation"),
    ("DELETE", "/clusters/{}/pod-identity-associations/{}", "DeletePodIdentityAssociation"),
    ("POST", "/clusters/{}/fargate-profiles", "CreateFargateProfile"),
    ("GET", "/clusters/{}/fargate-profiles", "ListFargateProfiles"),
    ("GET", "/clusters/{}/fargate-profiles/{}", "DescribeFargateProfile"),
    ("DELETE", "/clusters/{}/fargate-profiles/{}", "DeleteFargateProfile"),
    ("POST", "/clusters/{}/identity-provider-configs/associate", "AssociateIdentityProviderConfig"),
    ("POST", "/clusters/{}/identity-provider-configs/describe", "DescribeIdentityProviderConfig"),
    ("POST", "/clusters/{}/identity-provider-configs/disassociate", "DisassociateIdentityProviderConfig"),
    ("GET", "/clusters/{}/identity-provider-configs", "ListIdentityProviderConfigs"),
    ("POST", "/clusters/{}/insights", "ListInsights"),
    ("GET", "/clusters/{}/insights/{}", "DescribeInsight"),
    ("GET", "/cluster-versions", "DescribeClusterVersions"),
    ("POST", "/cluster-registrations", "RegisterCluster"),
    ("DELETE", "/cluster-registrations/{}", "DeregisterCluster"),
    # A resource ARN is one URL-encoded segment, but accept it unencoded too (`{}+` is the rest of the path).
    ("GET", "/tags/{}+", "ListTagsForResource"),
    ("POST", "/tags/{}+", "TagResource"),
    ("DELETE", "/tags/{}+", "UntagResource"),
]


def _route_regex(template: str) -> re.Pattern:
    pattern = re.escape(template).replace(r"\{\}\+", ".+").replace(r"\{\}", "[^/]+")
    return re.compile(f"^{pattern}/?$")


_EKS_COMPILED = [(method, _route_regex(path), op) for method, path, op in _EKS_ROUTES]


def eks_operation(method: str, path: str) -> str:
    for route_method, regex, op in _EKS_COMPILED:
        if route_method == method and regex.match(path):
            return op
    return f"{method} {path}"


# S3 sub-resources (a query parameter naming what of a bucket or object is read or written) and their operation
# names after Get/Put/Delete.
_BUCKET_SUBRESOURCES = {
    "versioning": "BucketVersioning",
    "encryption": "BucketEncryption",
    "policy": "BucketPolicy",
    "tagging": "BucketTagging",
    "lifecycle": "BucketLifecycleConfiguration",
    "acl": "BucketAcl",
    "cors": "BucketCors",
    "publicAccessBlock": "PublicAccessBlock",
    "ownershipControls": "BucketOwnershipControls",
    "notification": "BucketNotificationConfiguration",
    "logging": "BucketLogging",
    "website": "BucketWebsite",
    "replication": "BucketReplication",
    "object-lock": "ObjectLockConfiguration",
    "accelerate": "BucketAccelerateConfiguration",
    "requestPayment": "BucketRequestPayment",
    "location": "BucketLocation",
}
_OBJECT_SUBRESOURCES = {
    "tagging": "ObjectTagging",
    "acl": "ObjectAcl",
    "retention": "ObjectRetention",
    "legal-hold": "ObjectLegalHold",
    "attributes": "ObjectAttributes",
}


def s3_operation(method: str, path: str, query: dict, headers) -> str:
    """S3's operation from the request. The Rust SDK and botocore add `x-id=PutObject` (and the like) to some
    requests themselves; otherwise the path says bucket or object and the sub-resource parameters say what.
    Path-style addressing (http://host/bucket/key), as kbp and the tests address the emulator, unless the Host
    names a bucket (`bucket.s3.…`, `bucket.localhost…`)."""
    if "x-id" in query:
        return query["x-id"][0]
    segments = unquote(path).lstrip("/")
    host = headers.get("Host", "")
    virtual_bucket = re.match(r"^([^.]+)\.(s3[.-]|localhost)", host)
    if virtual_bucket:
        bucket, key = virtual_bucket.group(1), segments
    else:
        bucket, _, key = segments.partition("/")
    copy = "x-amz-copy-source" in headers
    if not bucket:
        return "ListBuckets" if method == "GET" else f"{method} /"
    if not key:
        return _s3_bucket_operation(method, query)
    verb = {"GET": "Get", "PUT": "Put", "DELETE": "Delete"}.get(method)
    if method == "PUT" and "partNumber" in query:
        return "UploadPartCopy" if copy else "UploadPart"
    if method == "POST":
        if "uploads" in query:
            return "CreateMultipartUpload"
        if "uploadId" in query:
            return "CompleteMultipartUpload"
        if "restore" in query:
            return "RestoreObject"
        return "POST object"
    if method == "GET" and "uploadId" in query:
        return "ListParts"
    if method == "DELETE" and "uploadId" in query:
        return "AbortMultipartUpload"
    if method == "HEAD":
        return "HeadObject"
    for param, name in _OBJECT_SUBRESOURCES.items():
        if param in query and verb:
            return verb + name
    if method == "PUT" and copy:
        return "CopyObject"
    return f"{verb}Object" if verb else f"{method} object"


def _s3_bucket_operation(method: str, query: dict) -> str:
    if method == "HEAD":
        return "HeadBucket"
    if method == "POST":
        return "DeleteObjects" if "delete" in query else "POST bucket"
    verb = {"GET": "Get", "PUT": "Put", "DELETE": "Delete"}[method] if method in ("GET", "PUT", "DELETE") else None
    if verb is None:
        return f"{method} bucket"
    for param, name in _BUCKET_SUBRESOURCES.items():
        if param in query:
            return verb + name
    if method == "GET":
        if "versions" in query:
            return "ListObjectVersions"
        if "uploads" in query:
            return "ListMultipartUploads"
        return "ListObjectsV2" if query.get("list-type") == ["2"] else "ListObjects"
    return {"PUT": "CreateBucket", "DELETE": "DeleteBucket"}[method]

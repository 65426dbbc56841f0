"""The S3 calls of kbp's state backend answer as AWS's do: the lock is a PutObject with `If-None-Match: *`, the
state a PutObject with `If-Match: "<etag>"`, both with server-side encryption and the flexible checksum the AWS SDK
for Rust sends by default.

AWS's documented behaviour (S3 User Guide, "Conditional writes"; API reference, PutObject and DeleteObject):

- `If-None-Match: *` writes only if the key has no current version; otherwise 412 PreconditionFailed. A delete
  marker as the current version counts as no object, so the write succeeds.
- `If-Match: <etag>` writes only if the current version's ETag matches; otherwise 412 PreconditionFailed. With no
  current version (never written, deleted, or a delete marker) it fails with 404 NoSuchKey.
- A failed precondition leaves the object as it was.
- Of conditional writes racing for one key, the first to finish wins; the others fail (412, or 409
  ConditionalRequestConflict).

moto 5.2.5 answers each request alone as AWS does; these tests pin that so a moto bump that breaks it fails here.
Only the race needs the extension (`kbp_emulator/s3_conditional.py`): moto checks, then writes, and serves requests
on parallel threads.
"""

from __future__ import annotations

import base64
import threading
import zlib

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from conftest import _client, error_of
from moto.s3.models import S3Backend

KMS_KEY = "arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
#: A well-formed ETag no object here has.
OTHER_ETAG = '"0123456789abcdef0123456789abcdef"'


def crc32(data: bytes) -> str:
    return base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode()


@pytest.fixture(params=["unversioned", "versioned"])
def bucket(request, s3):
    name = f"kbp-state-{request.param}"
    s3.create_bucket(Bucket=name, CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    if request.param == "versioned":
        s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    return name


def body(s3, bucket: str, key: str) -> bytes:
    return s3.get_object(Bucket=bucket, Key=key)["Body"].read()


def failed_put(s3, **kwargs) -> tuple[int, str]:
    with pytest.raises(ClientError) as e:
        s3.put_object(**kwargs)
    return error_of(e)[:2]


# --- the lock: If-None-Match: * ---------------------------------------------------------------------------------


def test_if_none_match_creates_an_absent_key(s3, bucket):
    put = s3.put_object(Bucket=bucket, Key="lock", Body=b"holder-1", IfNoneMatch="*")
    assert put["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert put["ETag"].startswith('"')
    assert body(s3, bucket, "lock") == b"holder-1"


def test_if_none_match_on_an_existing_key_is_412_and_keeps_the_object(s3, bucket):
    s3.put_object(Bucket=bucket, Key="lock", Body=b"holder-1", IfNoneMatch="*")
    assert failed_put(s3, Bucket=bucket, Key="lock", Body=b"holder-2", IfNoneMatch="*") == (412, "PreconditionFailed")
    assert body(s3, bucket, "lock") == b"holder-1"


def test_if_none_match_succeeds_again_once_the_lock_is_deleted(s3, bucket):
    # In a versioned bucket DeleteObject leaves a delete marker as the current version; it does not count.
    s3.put_object(Bucket=bucket, Key="lock", Body=b"holder-1", IfNoneMatch="*")
    s3.delete_object(Bucket=bucket, Key="lock")
    put = s3.put_object(Bucket=bucket, Key="lock", Body=b"holder-2", IfNoneMatch="*")
    assert put["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert body(s3, bucket, "lock") == b"holder-2"
    assert failed_put(s3, Bucket=bucket, Key="lock", Body=b"holder-3", IfNoneMatch="*") == (412, "PreconditionFailed")


# --- the state: If-Match: "<etag>" ------------------------------------------------------------------------------


def test_if_match_on_a_missing_key_is_404_no_such_key(s3, bucket):
    assert failed_put(s3, Bucket=bucket, Key="state", Body=b"s1", IfMatch=OTHER_ETAG) == (404, "NoSuchKey")
    with pytest.raises(ClientError) as e:
        s3.head_object(Bucket=bucket, Key="state")
    assert error_of(e)[0] == 404


def test_if_match_on_a_deleted_key_is_404_no_such_key(s3, bucket):
    etag = s3.put_object(Bucket=bucket, Key="state", Body=b"s1")["ETag"]
    s3.delete_object(Bucket=bucket, Key="state")
    assert failed_put(s3, Bucket=bucket, Key="state", Body=b"s2", IfMatch=etag) == (404, "NoSuchKey")


def test_if_match_with_another_etag_is_412_and_keeps_the_object(s3, bucket):
    s3.put_object(Bucket=bucket, Key="state", Body=b"s1")
    assert failed_put(s3, Bucket=bucket, Key="state", Body=b"s2", IfMatch=OTHER_ETAG) == (412, "PreconditionFailed")
    assert body(s3, bucket, "state") == b"s1"


def test_if_match_with_the_current_etag_writes_and_the_old_etag_then_fails(s3, bucket):
    first = s3.put_object(Bucket=bucket, Key="state", Body=b"s1")["ETag"]
    read = s3.get_object(Bucket=bucket, Key="state")
    assert read["ETag"] == first
    put = s3.put_object(Bucket=bucket, Key="state", Body=b"s2", IfMatch=read["ETag"])
    assert put["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert put["ETag"] != first
    assert s3.head_object(Bucket=bucket, Key="state")["ETag"] == put["ETag"]
    assert body(s3, bucket, "state") == b"s2"
    # A writer that read before that write must lose.
    assert failed_put(s3, Bucket=bucket, Key="state", Body=b"s3", IfMatch=first) == (412, "PreconditionFailed")
    assert body(s3, bucket, "state") == b"s2"


# --- encryption, checksums, versions ----------------------------------------------------------------------------


def test_sse_kms_is_reported_back(s3, bucket):
    put = s3.put_object(Bucket=bucket, Key="state", Body=b"s1", ServerSideEncryption="aws:kms", SSEKMSKeyId=KMS_KEY,
                        IfNoneMatch="*")
    for answer in (put, s3.head_object(Bucket=bucket, Key="state"), s3.get_object(Bucket=bucket, Key="state")):
        assert (answer.get("ServerSideEncryption"), answer.get("SSEKMSKeyId")) == ("aws:kms", KMS_KEY)
    put = s3.put_object(Bucket=bucket, Key="state", Body=b"s2", ServerSideEncryption="aws:kms", SSEKMSKeyId=KMS_KEY,
                        IfMatch=put["ETag"])
    head = s3.head_object(Bucket=bucket, Key="state")
    assert (head["ETag"], head["ServerSideEncryption"], head["SSEKMSKeyId"]) == (put["ETag"], "aws:kms", KMS_KEY)


def test_sse_s3_is_reported_back(s3, bucket):
    put = s3.put_object(Bucket=bucket, Key="state", Body=b"s1", ServerSideEncryption="AES256", IfNoneMatch="*")
    for answer in (put, s3.head_object(Bucket=bucket, Key="state"), s3.get_object(Bucket=bucket, Key="state")):
        assert answer.get("ServerSideEncryption") == "AES256"
        assert "SSEKMSKeyId" not in answer


def test_flexible_checksum_headers_are_accepted_and_returned(s3, bucket):
    """The SDK for Rust sends x-amz-checksum-crc32 and x-amz-sdk-checksum-algorithm with every PutObject of an
    in-memory body, conditional ones included, and validates the checksum GetObject returns."""
    sent = []
    s3.meta.events.register("before-send.s3.PutObject", lambda request, **_: sent.append(dict(request.headers)))
    put = s3.put_object(Bucket=bucket, Key="state", Body=b"state-v1", ChecksumAlgorithm="CRC32", IfNoneMatch="*")
    headers = {k.lower(): v.decode() if isinstance(v, bytes) else v for k, v in sent[-1].items()}
    assert headers["x-amz-checksum-crc32"] == crc32(b"state-v1")
    assert headers["x-amz-sdk-checksum-algorithm"] == "CRC32"
    assert put["ChecksumCRC32"] == crc32(b"state-v1")
    put = s3.put_object(Bucket=bucket, Key="state", Body=b"state-v2", ChecksumAlgorithm="CRC32", IfMatch=put["ETag"])
    assert put["ChecksumCRC32"] == crc32(b"state-v2")
    got = s3.get_object(Bucket=bucket, Key="state", ChecksumMode="ENABLED")
    assert (got["Body"].read(), got["ChecksumCRC32"]) == (b"state-v2", crc32(b"state-v2"))


def test_bucket_versioning_is_reported(s3, bucket):
    status = s3.get_bucket_versioning(Bucket=bucket).get("Status")
    assert status == ("Enabled" if bucket.endswith("-versioned") else None)


def test_object_versions_are_listed(s3, bucket):
    versioned = bucket.endswith("-versioned")
    v1 = s3.put_object(Bucket=bucket, Key="state", Body=b"s1")
    v2 = s3.put_object(Bucket=bucket, Key="state", Body=b"s2", IfMatch=v1["ETag"])
    lock = s3.put_object(Bucket=bucket, Key="lock", Body=b"l", IfNoneMatch="*")
    s3.delete_object(Bucket=bucket, Key="lock")
    listed = s3.list_object_versions(Bucket=bucket)
    versions = [(v["Key"], v["ETag"], v["IsLatest"]) for v in listed.get("Versions", [])]
    markers = [(m["Key"], m["IsLatest"]) for m in listed.get("DeleteMarkers", [])]
    if versioned:
        assert sorted(versions) == sorted([("lock", lock["ETag"], False), ("state", v1["ETag"], False),
                                           ("state", v2["ETag"], True)])
        assert markers == [("lock", True)]
        assert all(v["VersionId"] != "null" for v in listed["Versions"])
        assert {v["VersionId"] for v in listed["Versions"] if v["Key"] == "state"} == {v1["VersionId"], v2["VersionId"]}
    else:
        assert versions == [("state", v2["ETag"], True)]
        assert markers == []
        assert listed["Versions"][0]["VersionId"] == "null"


# --- races: the first conditional write to finish wins ----------------------------------------------------------


@pytest.fixture
def race(s3, endpoint, monkeypatch):
    """race(write, first, second): runs `first`; when its request reaches moto's write step (S3Backend.<write>, after
    moto checked the condition), runs `second` to the end (or for half a second, if the emulator holds it back)
    before `first` writes. Returns each one's outcome: the answer, or (HTTP status, error code)."""
    other = _client(endpoint, "s3", config=Config(s3={"addressing_style": "path"}))

    def outcome(call, client):
        try:
            return call(client)
        except ClientError as e:
            return e.response["ResponseMetadata"]["HTTPStatusCode"], e.response["Error"]["Code"]

    def run(write, first, second):
        original = getattr(S3Backend, write)
        results = {}
        thread = threading.Thread(target=lambda: results.update(second=outcome(second, other)))

        def hooked(self, *args, **kwargs):
            if thread.ident is None:  # the first request's write; the second's passes straight through
                thread.start()
                thread.join(timeout=0.5)
            return original(self, *args, **kwargs)

        monkeypatch.setattr(S3Backend, write, hooked)
        results["first"] = outcome(first, s3)
        assert thread.ident is not None, "the first request never reached moto's write step"
        thread.join(timeout=10)
        return results["first"], results["second"]

    return run


def test_two_lock_acquisitions_at_once_have_one_winner(s3, bucket, race):
    first, second = race(
        "put_object",
        lambda c: c.put_object(Bucket=bucket, Key="lock", Body=b"holder-1", IfNoneMatch="*"),
        lambda c: c.put_object(Bucket=bucket, Key="lock", Body=b"holder-2", IfNoneMatch="*"),
    )
    assert first["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert second == (412, "PreconditionFailed")
    assert body(s3, bucket, "lock") == b"holder-1"


def test_two_state_writes_from_one_read_have_one_winner(s3, bucket, race):
    etag = s3.put_object(Bucket=bucket, Key="state", Body=b"s0")["ETag"]
    first, second = race(
        "put_object",
        lambda c: c.put_object(Bucket=bucket, Key="state", Body=b"s1", IfMatch=etag),
        lambda c: c.put_object(Bucket=bucket, Key="state", Body=b"s2", IfMatch=etag),
    )
    assert first["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert second == (412, "PreconditionFailed")
    assert body(s3, bucket, "state") == b"s1"


def test_a_conditional_delete_and_write_at_once_have_one_winner(s3, bucket, race):
    etag = s3.put_object(Bucket=bucket, Key="lock", Body=b"holder-1")["ETag"]
    first, second = race(
        "delete_object",
        lambda c: c.delete_object(Bucket=bucket, Key="lock", IfMatch=etag),
        lambda c: c.put_object(Bucket=bucket, Key="lock", Body=b"holder-1b", IfMatch=etag),
    )
    assert first["ResponseMetadata"]["HTTPStatusCode"] == 204
    assert second == (404, "NoSuchKey")
    with pytest.raises(ClientError) as e:
        s3.head_object(Bucket=bucket, Key="lock")
    assert error_of(e)[0] == 404


# --- GetBucketVersioning in AWS's shape (kbp_emulator/s3_versioning.py) ------------------------------------------


def test_get_bucket_versioning_answers_with_aws_root_element(s3, bucket):
    """The AWS SDK for Rust checks the root element: AWS's is VersioningConfiguration (moto says
    GetBucketVersioningResponse). A bucket that never had versioning has no Status."""
    import urllib.request
    from xml.etree import ElementTree

    url = f"{s3.meta.endpoint_url}/{bucket}?versioning"
    with urllib.request.urlopen(url) as r:
        root = ElementTree.fromstring(r.read())
    assert root.tag == "{http://s3.amazonaws.com/doc/2006-03-01/}VersioningConfiguration"
    status = root.find("{http://s3.amazonaws.com/doc/2006-03-01/}Status")
    if bucket.endswith("-versioned"):
        assert status is not None and status.text == "Enabled"
        assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"
    else:
        assert status is None
        assert "Status" not in s3.get_bucket_versioning(Bucket=bucket)

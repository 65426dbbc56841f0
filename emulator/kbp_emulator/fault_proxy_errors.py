"""The error answers the fault proxy (fault_proxy.py) injects, each in its service's own wire protocol, so an SDK
parses the code from where that protocol puts it and classifies it as a real AWS answer: throttling is retried
with backoff (and slows an adaptive client down), a 5xx is retried as transient.

| Protocol | Throttling | Server error (500 / 503) |
|---|---|---|
| ec2 (EC2) | 503 `RequestLimitExceeded` | `InternalError` / `Unavailable` |
| query (IAM, STS) | 400 `Throttling` | `InternalFailure` / `ServiceUnavailable` |
| json (KMS, EventBridge) | 400 `ThrottlingException` | `InternalFailure` / `ServiceUnavailable` |
| json, SQS | 400 `RequestThrottled` (+ `x-amzn-query-error`) | `InternalFailure` / `ServiceUnavailable` |
| rest-json (EKS) | 429 `ThrottlingException` | `ServerException` / `ServiceUnavailableException` |
| s3 (S3) | 503 `SlowDown` | `InternalError` / `ServiceUnavailable` |

SQS speaks awsJson with query compatibility: the SDKs take the code from the `x-amzn-query-error` header
(`CODE;Sender`) when present, and `RequestThrottled` is the throttling error SQS's model declares.
"""

from __future__ import annotations

import json
import uuid
from xml.sax.saxutils import escape

from .fault_proxy_calls import EC2, JSON, QUERY, REST_JSON, S3, Call
from .fault_proxy_rules import SERVER_ERROR, THROTTLE, Fault

_THROTTLING = {
    EC2: (503, "RequestLimitExceeded", "Request limit exceeded."),
    QUERY: (400, "Throttling", "Rate exceeded"),
    JSON: (400, "ThrottlingException", "Rate exceeded"),
    REST_JSON: (429, "ThrottlingException", "Rate exceeded"),
    S3: (503, "SlowDown", "Please reduce your request rate."),
}
_SQS_THROTTLING = (400, "RequestThrottled", "Request is throttled.")

_SERVER_ERRORS = {
    EC2: {500: "InternalError", 503: "Unavailable"},
    QUERY: {500: "InternalFailure", 503: "ServiceUnavailable"},
    JSON: {500: "InternalFailure", 503: "ServiceUnavailable"},
    REST_JSON: {500: "ServerException", 503: "ServiceUnavailableException"},
    S3: {500: "InternalError", 503: "ServiceUnavailable"},
}
_SERVER_MESSAGES = {
    500: "We encountered an internal error. Please try again.",
    503: "Service is unavailable. Please try again later.",
}


def for_fault(call: Call, fault: Fault) -> tuple[int, list[tuple[str, str]], bytes]:
    """The answer to `call` for an injected throttle, server_error or fail."""
    if fault.kind == THROTTLE:
        return throttling(call)
    if fault.kind == SERVER_ERROR:
        return server_error(call, fault.status)
    code = fault.code or default_code(call, fault.status)
    return answer(call, fault.status, code, fault.message or code)


def throttling(call: Call) -> tuple[int, list[tuple[str, str]], bytes]:
    status, code, message = _SQS_THROTTLING if call.service == "sqs" else _THROTTLING[call.protocol]
    return answer(call, status, code, message)


def server_error(call: Call, status: int) -> tuple[int, list[tuple[str, str]], bytes]:
    """A 500 or 503 in the protocol's usual code for it."""
    return answer(call, status, default_code(call, status), _SERVER_MESSAGES.get(status, "Internal error"))


def default_code(call: Call, status: int) -> str:
    codes = _SERVER_ERRORS[call.protocol]
    return codes.get(status, codes[500] if status >= 500 else "BadRequest")


def answer(call: Call, status: int, code: str, message: str) -> tuple[int, list[tuple[str, str]], bytes]:
    """(status, headers, body) of error `code` for `call`, shaped as its protocol writes errors. Content-Length is
    the caller's to add."""
    request_id = str(uuid.uuid4())
    fault = "Sender" if status < 500 else "Receiver"
    if call.protocol == EC2:
        body = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f"<Response><Errors><Error><Code>{escape(code)}</Code><Message>{escape(message)}</Message></Error>"
            f"</Errors><RequestID>{request_id}</RequestID></Response>"
        )
        return status, [("Content-Type", "text/xml;charset=UTF-8")], body.encode()
    if call.protocol == QUERY:
        body = (
            f"<ErrorResponse><Error><Type>{fault}</Type><Code>{escape(code)}</Code>"
            f"<Message>{escape(message)}</Message></Error><RequestId>{request_id}</RequestId></ErrorResponse>"
        )
        return status, [("Content-Type", "text/xml"), ("x-amzn-RequestId", request_id)], body.encode()
    if call.protocol == JSON:
        headers = [("Content-Type", f"application/x-amz-json-{call.json_version}"), ("x-amzn-RequestId", request_id)]
        type_name = code
        if call.service == "sqs":
            headers.append(("x-amzn-query-error", f"{code};{fault}"))
            type_name = f"com.amazonaws.sqs#{code}"
        return status, headers, json.dumps({"__type": type_name, "message": message}).encode()
    if call.protocol == REST_JSON:
        headers = [("Content-Type", "application/json"), ("x-amzn-ErrorType", code), ("x-amzn-RequestId", request_id)]
        return status, headers, json.dumps({"message": message}).encode()
    body = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Error><Code>{escape(code)}</Code><Message>{escape(message)}</Message>"
        f"<RequestId>{request_id[:16]}</RequestId><HostId>{uuid.uuid4().hex}</HostId></Error>"
    )
    return status, [("Content-Type", "application/xml"), ("x-amz-request-id", request_id[:16])], body.encode()

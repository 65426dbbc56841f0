"""The front door: a WSGI layer in front of moto's dispatcher that refuses, as AWS does, every signed request breaking
its operation's input contract, before moto (or the extension's own Price List app) sees it.

For each request signed with SigV4 (unsigned ones and moto's own `/moto-api/` pass untouched) it

1. names the service from the credential scope's signing name (`elasticloadbalancing` → botocore's `elbv2`,
   `tagging` → `resourcegroupstaggingapi`, …) and the operation with moto's botocore-model router
   (`moto.core.routing`; `fault_proxy_calls.identify` gives the wire protocol the error must be written in);
2. parses the input with moto's botocore-model request parsers (`moto.core.parse`) into a dict keyed by the input
   shape's member names, as boto3 takes them; the body is read once and put back for moto;
3. checks the model's constraints (`model_rules`), then the documented limits the models lack (`limits.check`);
4. answers the first refusal in the service's own error shape and code (`fault_proxy_errors.answer`), records it
   (`record`), and never calls moto: a refused request changes nothing.

A request it cannot identify or parse goes through unchecked (said once per kind on stderr): the front door must
never break what moto itself answers.

Admin endpoints (never checked): `GET /moto-api/kbp/refusals`, `DELETE /moto-api/kbp/refusals` (see `record`),
`GET /moto-api/kbp/contract` → `{"enabled": …}`, `POST /moto-api/kbp/contract` with `{"enabled": false|true}`.
On by default; `KBP_EMULATOR_CONTRACT=off` in the environment when it is installed turns it off.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import json
import os
import sys
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qs, quote

from werkzeug.wrappers import Response
from werkzeug.wsgi import get_input_stream

from .. import fault_proxy_errors
from ..fault_proxy_calls import EC2, JSON, QUERY, REST_JSON, S3, Call, identify, signing_service
from . import limits, model_rules, record
from .types import ContractRequest, Refusal

ADMIN = "/moto-api/kbp/"
SWITCH_ENV = "KBP_EMULATOR_CONTRACT"
DEFAULT_ACCOUNT = "123456789012"

_state = {"enabled": True}

#: SigV4 signing names that are not botocore's service names. `elasticloadbalancing` signs both load balancer
#: APIs; the request's Version picks one (`_CLASSIC_ELB_VERSION` is the classic API's).
_BOTOCORE_NAMES = {
    "elasticloadbalancing": "elbv2",
    "tagging": "resourcegroupstaggingapi",
    "monitoring": "cloudwatch",
    "states": "stepfunctions",
    "eventbridge": "events",
    "email": "ses",
}
_CLASSIC_ELB_VERSION = "2012-06-01"

#: The error code AWS answers a model violation with, per signing name: (a bad value, a missing member).
_CODES = {
    "iam": ("ValidationError", "ValidationError"),
    "sts": ("ValidationError", "ValidationError"),
    "elasticloadbalancing": ("ValidationError", "ValidationError"),
    "ec2": ("InvalidParameterValue", "MissingParameter"),
    "sqs": ("InvalidParameterValue", "MissingParameter"),
    "eks": ("InvalidParameterException", "InvalidParameterException"),
    "logs": ("InvalidParameterException", "InvalidParameterException"),
    "tagging": ("InvalidParameterException", "InvalidParameterException"),
    # The Price List API's model declares InvalidParameterException for bad parameters, and no ValidationException.
    "pricing": ("InvalidParameterException", "InvalidParameterException"),
    "events": ("ValidationException", "ValidationException"),
    "kms": ("ValidationException", "ValidationException"),
    "s3": ("InvalidArgument", "InvalidArgument"),
}
#: Other services: the usual code of their protocol.
_PROTOCOL_CODES = {
    QUERY: ("ValidationError", "ValidationError"),
    EC2: ("InvalidParameterValue", "MissingParameter"),
    JSON: ("ValidationException", "ValidationException"),
    REST_JSON: ("ValidationException", "ValidationException"),
    S3: ("InvalidArgument", "InvalidArgument"),
}
#: Services that report one violation in their own words (`Value (x) for parameter Y is invalid`) rather than
#: the validation layer's list.
_OWN_WORDS = {"ec2", "sqs"}

_unknown_services: set[str] = set()
_said: set[str] = set()


# --- Switch and installation -----------------------------------------------------------------------------------


def enabled() -> bool:
    return _state["enabled"]


def set_enabled(on: bool) -> None:
    _state["enabled"] = bool(on)


def _enabled_by_env() -> bool:
    return os.environ.get(SWITCH_ENV, "on").strip().lower() not in ("off", "0", "false", "no")


def install() -> None:
    """Puts the front door before moto's dispatcher (the app `python -m kbp_emulator` and ThreadedMotoServer both
    serve), once; the environment's switch is read now."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication

    original = DomainDispatcherApplication.__call__
    if getattr(original, "_kbp_contract", False):
        return
    set_enabled(_enabled_by_env())

    @functools.wraps(original)
    def __call__(self: Any, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        answer = front_door(environ)
        if answer is not None:
            return answer(environ, start_response)
        return original(self, environ, start_response)

    __call__._kbp_contract = True  # type: ignore[attr-defined]
    DomainDispatcherApplication.__call__ = __call__  # type: ignore[method-assign]


def front_door(environ: dict[str, Any]) -> Callable[..., Iterable[bytes]] | None:
    """The WSGI app answering this request instead of moto (an admin answer or a refusal), or None to let it in."""
    path = environ.get("PATH_INFO", "")
    if path.startswith(ADMIN):
        return _admin(environ)
    if path.startswith("/moto-api") or not _state["enabled"]:
        return None
    try:
        return _check(environ)
    except Exception as e:  # noqa: BLE001 - whatever breaks here, moto must still answer the request
        _say_once(f"error:{type(e).__name__}:{e}", f"contract check failed ({type(e).__name__}: {e}); let through")
        return None


# --- The check ---------------------------------------------------------------------------------------------------


def _check(environ: dict[str, Any]) -> Callable[..., Iterable[bytes]] | None:
    query = parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True)
    authorization = environ.get("HTTP_AUTHORIZATION", "")
    signing = signing_service(authorization, query)
    if not signing:
        return None
    name = _BOTOCORE_NAMES.get(signing, signing)
    if signing == "s3" and environ.get("PATH_INFO", "").startswith("/v20180820/"):
        name = "s3control"
    model = _service_model(name)
    if model is None:
        return None

    from moto.core.parse import PROTOCOL_PARSERS
    from moto.core.request import Request, determine_request_protocol

    protocol = determine_request_protocol(model, environ.get("CONTENT_TYPE", ""))
    parser_class = PROTOCOL_PARSERS.get(protocol)
    if parser_class is None:
        _say_once(f"protocol:{signing}:{protocol}", f"no parser for {signing}'s {protocol} protocol; let through")
        return None

    rest = protocol in ("rest-json", "rest-xml")
    if rest:
        # A REST operation is named by method, path, query and headers alone, so it is routed before the body is
        # read, and a streamed payload (an S3 object) is never read here at all.
        routed = _route(name, Request(_with_body(environ, b"")))
        if routed is None:
            return None
        operation, uri_params = routed
        body = b"" if _streams(operation) else _read_body(environ)
        request = Request(_with_body(environ, body))
    else:
        body = _read_body(environ)
        request = Request(_with_body(environ, body))
        if signing == "elasticloadbalancing" and request.values.get("Version") == _CLASSIC_ELB_VERSION:
            name = "elb"
            model = _service_model(name)
            if model is None:
                return None
        routed = _route(name, request)
        if routed is None:
            return None
        operation, uri_params = routed

    call = identify(
        request.method,
        quote(environ.get("PATH_INFO", "")) + "?" + environ.get("QUERY_STRING", ""),
        request.headers,
        body if (request.content_type or "").startswith("application/x-www-form-urlencoded") else None,
    )
    call = dataclasses.replace(call, service=signing, operation=operation.name)
    if protocol == "rest-xml":
        call = dataclasses.replace(call, protocol=S3)

    values = request.args if rest else request.values
    params = parser_class(operation).parse(
        {
            "method": request.method,
            "values": values,
            "headers": request.headers,
            "body": body,
            "url_path": request.path,
            "url_params": uri_params,
        }
    )
    if rest and _streams(operation):
        # The payload was not read: do not report it missing.
        params.pop(operation.input_shape.serialization["payload"], None)

    refusal = _model_refusal(signing, operation.name, call, model_rules.check(name, operation.input_shape, params))
    if refusal is None:
        credential = _credential(authorization, query)
        request_for_limits = ContractRequest(
            service=signing,
            operation=operation.name,
            params=params,
            account_id=_account(environ, credential),
            region=credential[2] if len(credential) >= 5 else "us-east-1",
        )
        try:
            refusal = limits.check(request_for_limits)
        except Exception as e:  # noqa: BLE001 - a broken limit check must not break moto's answer
            _say_once(f"limits:{type(e).__name__}:{e}", f"limits check failed ({type(e).__name__}: {e}); let through")
            refusal = None
    if refusal is None:
        return None
    record.add(signing, operation.name, refusal)
    return _refusal_app(call, refusal)


def _route(name: str, request: Any) -> tuple[Any, dict[str, Any]] | None:
    """(operation model, URI labels) by moto's botocore-model router, or None for a request that names no operation
    of the model (moto answers it as it always has)."""
    from moto.core.routing import get_service_router
    from werkzeug.exceptions import HTTPException

    try:
        return get_service_router(name).match(request)
    except (HTTPException, NotImplementedError):
        first = request.path.strip("/").split("/", 1)[0]
        _say_once(f"route:{name}:{request.method}:{first}",
                  f"no {name} operation for {request.method} {request.path}; let through")
        return None


def _service_model(name: str) -> Any:
    """moto's botocore service model (moto's own classes, which its parsers need; cached by moto), or None for a
    service botocore does not know."""
    if name in _unknown_services:
        return None
    from moto.core.utils import get_service_model

    try:
        return get_service_model(name)
    except Exception:  # noqa: BLE001 - botocore's UnknownServiceError/DataNotFoundError and the like
        _unknown_services.add(name)
        _say_once(f"service:{name}", f"no botocore model for service {name!r}; its requests are not checked")
        return None


def _streams(operation: Any) -> bool:
    """The operation's payload is a blob or string (S3's PutObject body), not a structure to parse."""
    shape = operation.input_shape
    if shape is None:
        return False
    payload = shape.serialization.get("payload")
    return bool(payload) and shape.members[payload].type_name in ("blob", "string")


def _read_body(environ: dict[str, Any]) -> bytes:
    """The request body, read once and put back as a fresh stream for moto (Content-Length and chunked bodies as
    werkzeug's server hands them over)."""
    body = get_input_stream(environ).read()
    environ["wsgi.input"] = io.BytesIO(body)
    return body


def _with_body(environ: dict[str, Any], body: bytes) -> dict[str, Any]:
    """A copy of the environ for the front door's own werkzeug request, reading `body`."""
    copy = dict(environ)
    copy["wsgi.input"] = io.BytesIO(body)
    copy["CONTENT_LENGTH"] = str(len(body))
    copy.pop("wsgi.input_terminated", None)
    return copy


def _credential(authorization: str, query: dict[str, list[str]]) -> list[str]:
    """AKID/date/region/service/aws4_request, split."""
    marker = "Credential="
    if marker in authorization:
        return authorization.split(marker, 1)[1].split(",", 1)[0].strip().split("/")
    return query.get("X-Amz-Credential", [""])[0].split("/")


def _account(environ: dict[str, Any], credential: list[str]) -> str:
    """The account moto files the request under (its own order: MOTO_ACCOUNT_ID, x-moto-account-id, access key)."""
    if "MOTO_ACCOUNT_ID" in os.environ:
        return os.environ["MOTO_ACCOUNT_ID"]
    if environ.get("HTTP_X_MOTO_ACCOUNT_ID"):
        return environ["HTTP_X_MOTO_ACCOUNT_ID"]
    try:
        from moto.iam.models import get_account_id_from

        return get_account_id_from(credential[0])
    except Exception:  # noqa: BLE001 - the default account is moto's last resort too
        return DEFAULT_ACCOUNT


# --- Refusals ----------------------------------------------------------------------------------------------------


def _model_refusal(
    signing: str, operation: str, call: Call, violations: list[model_rules.Violation]
) -> Refusal | None:
    """The answer AWS gives to a request breaking its model's constraints, in the service's code and words."""
    if not violations:
        return None
    if signing == "ec2" and operation == "DescribeInstanceTypes":
        # EC2 names unknown instance types with its own error, every one of them (moto answers the same).
        unknown = [str(v.value) for v in violations if v.shape == "InstanceType" and v.rule == "model.enum"]
        if unknown:
            message = f"The following supplied instance types do not exist: [{', '.join(unknown)}]"
            return Refusal("InvalidInstanceType", message, 400, "model.enum")
    bad_value, missing = _CODES.get(signing) or _PROTOCOL_CODES.get(call.protocol, _PROTOCOL_CODES[JSON])
    if signing == "sqs":
        for v in violations:
            # SQS names an unknown attribute with its own error, as it does for any attribute it does not know.
            if v.shape == "QueueAttributeName" and v.rule == "model.enum":
                unknown = v.offender if v.offender is not None else v.value
                return Refusal("InvalidAttributeName", f"Unknown Attribute {unknown}.", 400, "model.enum")
    if signing in _OWN_WORDS:
        absent = [v for v in violations if v.value is model_rules.MISSING]
        if absent:
            parameter = model_rules.wire_path(absent[0].path)
            return Refusal(missing, f"The request must contain the parameter {parameter}", 400, "model.required")
        v = violations[0]
        parameter = model_rules.wire_path(v.path)
        shown = model_rules.shown(v.offender if v.offender is not None else v.value)
        if signing == "sqs":
            message = f"Value {shown} for parameter {parameter} is invalid. Reason: {v.constraint}."
        else:
            message = f"Value ({shown}) for parameter {parameter} is invalid. {v.constraint}."
        return Refusal(bad_value, message, 400, v.rule)
    absent_only = all(v.value is model_rules.MISSING for v in violations)
    code = missing if absent_only else bad_value
    return Refusal(code, model_rules.coral_message(violations), 400, violations[0].rule)


def _refusal_app(call: Call, refusal: Refusal) -> Callable[..., Iterable[bytes]]:
    status, headers, body = fault_proxy_errors.answer(call, refusal.status, refusal.code, refusal.message)
    response = Response(body, status=status)
    for key, value in headers:
        response.headers[key] = value
    return response


# --- Admin endpoints ---------------------------------------------------------------------------------------------


def _admin(environ: dict[str, Any]) -> Callable[..., Iterable[bytes]]:
    path = environ.get("PATH_INFO", "")[len(ADMIN) :].strip("/")
    method = environ.get("REQUEST_METHOD", "GET")
    if path == "refusals":
        if method == "GET":
            return _json(record.entries())
        if method == "DELETE":
            return _json({"cleared": record.clear()})
        return _json({"message": f"{method} is not allowed here: GET or DELETE"}, 405)
    if path == "contract":
        if method == "GET":
            return _json({"enabled": enabled()})
        if method in ("POST", "PUT"):
            try:
                wanted = json.loads(_read_body(environ) or b"{}").get("enabled")
            except (ValueError, AttributeError):
                wanted = None
            if not isinstance(wanted, bool):
                return _json({"message": 'send {"enabled": true} or {"enabled": false}'}, 400)
            set_enabled(wanted)
            print(f"kbp_emulator: contract {'on' if wanted else 'off'}", file=sys.stderr, flush=True)
            return _json({"enabled": enabled()})
        return _json({"message": f"{method} is not allowed here: GET or POST"}, 405)
    return _json({"message": f"no such kbp endpoint: {ADMIN}{path}"}, 404)


def _json(document: Any, status: int = 200) -> Response:
    return Response(json.dumps(document), status=status, content_type="application/json")


def _say_once(key: str, message: str) -> None:
    if key not in _said:
        _said.add(key)
        print(f"kbp_emulator: contract: {message}", file=sys.stderr, flush=True)

"""Kubernetes `Status` errors, worded and coded as kube-apiserver words and codes them.

Every failure the stand-in answers is an `ApiError`; the HTTP layer turns it into a `Status` body. Field errors
(`FieldError`) render like apimachinery's `field.Error`: the cause's `message` is the error body without the
field ("Required value", "Unsupported value: ..."), the overall message is
`<Kind>.<group> "<name>" is invalid: <field>: <body>` (several causes in brackets).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

#: FieldError.type → the text apimachinery starts the error body with.
_FIELD_TYPES = {
    "FieldValueRequired": "Required value",
    "FieldValueInvalid": "Invalid value",
    "FieldValueTypeInvalid": "Invalid value",
    "FieldValueNotSupported": "Unsupported value",
    "FieldValueForbidden": "Forbidden",
    "FieldValueTooLong": "Too long",
    "FieldValueTooMany": "Too many",
    "FieldValueDuplicate": "Duplicate value",
}
_NO_VALUE = object()


class Raw(str):
    """A value shown as is in a message (e.g. a Go map literal), not quoted."""


def go_value(value: Any) -> str:
    """A value as Go's %v-ish rendering in apimachinery messages: strings quoted, the rest as JSON."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


@dataclass
class FieldError:
    type: str
    field: str
    value: Any = _NO_VALUE
    detail: str = ""

    def body(self) -> str:
        head = _FIELD_TYPES[self.type]
        if self.type in ("FieldValueRequired", "FieldValueForbidden", "FieldValueTooLong"):
            return f"{head}: {self.detail}" if self.detail else head
        value = "" if self.value is _NO_VALUE else go_value(self.value)
        if self.type == "FieldValueNotSupported":
            return f"{head}: {value}: {self.detail}" if self.detail else f"{head}: {value}"
        parts = [head, value] if value else [head]
        if self.detail:
            parts.append(self.detail)
        return ": ".join(parts)

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}" if self.field else self.body()

    def cause(self) -> dict[str, str]:
        return {"reason": self.type, "message": self.body(), "field": self.field}


def required(field: str, detail: str = "") -> FieldError:
    return FieldError("FieldValueRequired", field, detail=detail)


def invalid(field: str, value: Any, detail: str) -> FieldError:
    return FieldError("FieldValueInvalid", field, value, detail)


def not_supported(field: str, value: Any, allowed: list[Any]) -> FieldError:
    return FieldError(
        "FieldValueNotSupported", field, value, "supported values: " + ", ".join(go_value(a) for a in allowed)
    )


def forbidden(field: str, detail: str) -> FieldError:
    return FieldError("FieldValueForbidden", field, detail=detail)


class ApiError(Exception):
    """A failed request: HTTP code, Status reason, message and optional details."""

    def __init__(self, code: int, reason: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
        }
        if self.details:
            body["details"] = self.details
        body["code"] = self.code
        return body


def _details(name: str, group: str, kind: str, **more: Any) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name} if name else {}
    if group:
        details["group"] = group
    details["kind"] = kind
    details.update(more)
    return details


def _resource(plural: str, group: str) -> str:
    return f"{plural}.{group}" if group else plural


def not_found(plural: str, group: str, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{_resource(plural, group)} "{name}" not found', _details(name, group, plural))


def no_route() -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource", {})


def already_exists(plural: str, group: str, name: str) -> ApiError:
    return ApiError(
        409, "AlreadyExists", f'{_resource(plural, group)} "{name}" already exists', _details(name, group, plural)
    )


def conflict(plural: str, group: str, name: str, why: str, causes: list[dict[str, str]] | None = None) -> ApiError:
    extra = {"causes": causes} if causes else {}
    return ApiError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {_resource(plural, group)} "{name}": {why}',
        _details(name, group, plural, **extra),
    )


def stale(plural: str, group: str, name: str) -> ApiError:
    return conflict(
        plural, group, name, "the object has been modified; please apply your changes to the latest version and try again"
    )


def invalid_object(kind: str, group: str, name: str, errors: list[FieldError]) -> ApiError:
    qualified = f"{kind}.{group}" if group else kind
    listed = str(errors[0]) if len(errors) == 1 else "[" + ", ".join(str(e) for e in errors) + "]"
    return ApiError(
        422,
        "Invalid",
        f'{qualified} "{name}" is invalid: {listed}',
        _details(name, group, kind, causes=[e.cause() for e in errors]),
    )


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def method_not_allowed(message: str = "the server does not allow this method on the requested resource") -> ApiError:
    return ApiError(405, "MethodNotAllowed", message, {})


def unsupported_media_type(content_type: str, accepted: list[str]) -> ApiError:
    return ApiError(
        415,
        "UnsupportedMediaType",
        f"the body of the request was in an unknown format - accepted media types include: {', '.join(accepted)}",
        {"causes": [{"reason": "UnexpectedServerResponse", "message": content_type}]} if content_type else None,
    )


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized", "Unauthorized")


def unavailable(message: str) -> ApiError:
    return ApiError(503, "ServiceUnavailable", message)


def success(plural: str, group: str, name: str, uid: str) -> dict[str, Any]:
    """What DELETE answers for most resources once the object is gone."""
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": _details(name, group, plural, uid=uid),
    }

"""Custom resources against their CRD version's structural `openAPIV3Schema`, in kube-apiserver's order:
prune unknown fields, drop nulls the schema does not allow, apply `default`s, then validate.

Validated: type (with `nullable` and `x-kubernetes-int-or-string`), required, enum, minimum/maximum (and the
exclusive forms), minLength/maxLength, minItems/maxItems, minProperties/maxProperties, pattern, and the value
constraints inside anyOf/allOf/oneOf/not. Not evaluated: `x-kubernetes-validations` (CEL), `format`,
`x-kubernetes-list-type` uniqueness. Error causes are worded as kube-openapi's validator words them
("spec.x in body should be greater than or equal to 1").
"""

from __future__ import annotations

import copy
import re
from functools import lru_cache
from typing import Any

from .errors import FieldError, invalid, not_supported, required

#: metadata of a custom resource is ObjectMeta: never pruned by the CR schema.
_ROOT_KEEP = ("apiVersion", "kind", "metadata")


def _child_path(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _preserves(schema: dict[str, Any]) -> bool:
    return bool(schema.get("x-kubernetes-preserve-unknown-fields")) or bool(schema.get("x-kubernetes-embedded-resource"))


def prune(value: Any, schema: dict[str, Any] | None, root: bool = False) -> Any:
    """Drops object fields the schema does not specify, as the server's pruning does. Returns the value."""
    if schema is None or not isinstance(value, (dict, list)):
        return value
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for item in value:
                prune(item, items)
        return value
    props = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    embedded = bool(schema.get("x-kubernetes-embedded-resource"))
    for key in list(value):
        if root and key in _ROOT_KEEP:
            continue
        if embedded and key in _ROOT_KEEP:
            continue
        if key in props:
            prune(value[key], props[key])
        elif isinstance(additional, dict):
            prune(value[key], additional)
        elif additional is True or _preserves(schema):
            continue
        else:
            del value[key]
    return value


def drop_disallowed_nulls(value: Any, schema: dict[str, Any] | None) -> None:
    """Nulls in object fields whose schema is not nullable are removed before defaulting (then defaulted)."""
    if schema is None:
        return
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        for key in list(value):
            sub = props.get(key) or (additional if isinstance(additional, dict) else None)
            if value[key] is None and sub is not None and not sub.get("nullable"):
                del value[key]
            elif sub is not None:
                drop_disallowed_nulls(value[key], sub)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            drop_disallowed_nulls(item, schema["items"])


def apply_defaults(value: Any, schema: dict[str, Any] | None) -> None:
    """Structural defaulting: a missing property with a `default` gets a copy of it; recursion goes into the
    defaulted values too, into every array item and every additionalProperties value."""
    if schema is None:
        return
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for key, sub in props.items():
            if key not in value and "default" in sub:
                value[key] = copy.deepcopy(sub["default"])
        for key, item in value.items():
            if key in props:
                apply_defaults(item, props[key])
            elif isinstance(schema.get("additionalProperties"), dict):
                apply_defaults(item, schema["additionalProperties"])
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            apply_defaults(item, schema["items"])


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _type_ok(value: Any, schema: dict[str, Any]) -> bool:
    have = _type_of(value)
    if have == "null":
        return bool(schema.get("nullable"))
    if schema.get("x-kubernetes-int-or-string"):
        return have in ("integer", "string")
    want = schema.get("type")
    if not want:
        return True
    return have == want or (want == "number" and have == "integer")


@lru_cache(maxsize=512)
def _regex(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except re.error:  # an RE2 construct Python lacks: the pattern is not checked
        return None


def validate(value: Any, schema: dict[str, Any] | None, path: str = "") -> list[FieldError]:
    """Every violation of `schema` in `value`, with kube-openapi's messages and apimachinery's reasons."""
    if schema is None:
        return []
    shown = path or "<root>"
    if not _type_ok(value, schema):
        want = "integer or string" if schema.get("x-kubernetes-int-or-string") else schema.get("type")
        if value is None:
            return [invalid(path, value, f"{shown} in body must be of type {want}: \"null\"")]
        return [FieldError("FieldValueTypeInvalid", path, value, f'{shown} in body must be of type {want}: "{_type_of(value)}"')]
    if value is None:
        return []
    errors: list[FieldError] = []
    enum = schema.get("enum")
    if enum is not None and value not in enum:
        errors.append(not_supported(path, value, enum))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        errors += _numbers(value, schema, path, shown)
    if isinstance(value, str):
        errors += _strings(value, schema, path, shown)
    if isinstance(value, list):
        errors += _arrays(value, schema, path, shown)
    if isinstance(value, dict):
        errors += _objects(value, schema, path, shown)
    errors += _combinators(value, schema, path, shown)
    return errors


def _numbers(value: float, schema: dict[str, Any], path: str, shown: str) -> list[FieldError]:
    errors = []
    if "minimum" in schema:
        low, exclusive = schema["minimum"], schema.get("exclusiveMinimum") is True
        if value < low or (exclusive and value == low):
            op = "greater than" if exclusive else "greater than or equal to"
            errors.append(invalid(path, value, f"{shown} in body should be {op} {_num(low)}"))
    if "maximum" in schema:
        high, exclusive = schema["maximum"], schema.get("exclusiveMaximum") is True
        if value > high or (exclusive and value == high):
            op = "less than" if exclusive else "less than or equal to"
            errors.append(invalid(path, value, f"{shown} in body should be {op} {_num(high)}"))
    if schema.get("multipleOf") and value % schema["multipleOf"]:
        errors.append(invalid(path, value, f"{shown} in body should be a multiple of {_num(schema['multipleOf'])}"))
    return errors


def _num(n: float) -> str:
    return str(int(n)) if float(n).is_integer() else str(n)


def _strings(value: str, schema: dict[str, Any], path: str, shown: str) -> list[FieldError]:
    errors = []
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        errors.append(FieldError("FieldValueTooLong", path, value, f"may not be longer than {schema['maxLength']}"))
    if "minLength" in schema and len(value) < schema["minLength"]:
        errors.append(invalid(path, value, f"{shown} in body should be at least {schema['minLength']} chars long"))
    if "pattern" in schema:
        regex = _regex(schema["pattern"])
        if regex is not None and not regex.search(value):
            errors.append(invalid(path, value, f"{shown} in body should match '{schema['pattern']}'"))
    return errors


def _arrays(value: list[Any], schema: dict[str, Any], path: str, shown: str) -> list[FieldError]:
    errors = []
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        errors.append(FieldError("FieldValueTooMany", path, len(value), f"must have at most {schema['maxItems']} items"))
    if "minItems" in schema and len(value) < schema["minItems"]:
        errors.append(invalid(path, value, f"{shown} in body should have at least {schema['minItems']} items"))
    items = schema.get("items")
    if isinstance(items, dict):
        for i, item in enumerate(value):
            errors += validate(item, items, f"{path}[{i}]")
    return errors


def _objects(value: dict[str, Any], schema: dict[str, Any], path: str, shown: str) -> list[FieldError]:
    errors = []
    for key in schema.get("required") or []:
        if key not in value:
            errors.append(required(_child_path(path, key)))
    if "maxProperties" in schema and len(value) > schema["maxProperties"]:
        errors.append(FieldError("FieldValueTooMany", path, len(value), f"must have at most {schema['maxProperties']} items"))
    if "minProperties" in schema and len(value) < schema["minProperties"]:
        errors.append(invalid(path, value, f"{shown} in body should have at least {schema['minProperties']} properties"))
    props = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    for key, item in value.items():
        if not path and key in _ROOT_KEEP:
            continue
        if key in props:
            errors += validate(item, props[key], _child_path(path, key))
        elif isinstance(additional, dict):
            errors += validate(item, additional, _child_path(path, key))
    return errors


def _combinators(value: Any, schema: dict[str, Any], path: str, shown: str) -> list[FieldError]:
    """anyOf/allOf/oneOf/not in a structural schema carry value validations only (no types of their own)."""
    errors: list[FieldError] = []
    for sub in schema.get("allOf") or []:
        errors += _branch(value, sub, path)
    if schema.get("anyOf") and not any(not _branch(value, sub, path) for sub in schema["anyOf"]):
        errors.append(invalid(path, value, f"{shown} in body must be of one of the types in anyOf"))
    if schema.get("oneOf"):
        passing = sum(1 for sub in schema["oneOf"] if not _branch(value, sub, path))
        if passing != 1:
            errors.append(invalid(path, value, f"{shown} in body must validate one and only one schema (oneOf)"))
    if isinstance(schema.get("not"), dict) and not _branch(value, schema["not"], path):
        errors.append(invalid(path, value, f"{shown} in body must not validate the schema (not)"))
    return errors


def _branch(value: Any, schema: dict[str, Any], path: str) -> list[FieldError]:
    if schema.get("type") and not _type_ok(value, schema):
        return [invalid(path, value, "type")]
    return validate(value, {k: v for k, v in schema.items() if k != "type"}, path)


def process(obj: dict[str, Any], schema: dict[str, Any] | None, parts: tuple[str, ...]) -> list[FieldError]:
    """Prunes, defaults and validates the top-level fields `parts` of a custom resource in place.

    `parts` says which top-level fields the write may touch: everything but metadata for the main resource,
    ("status",) for /status. Returns the validation errors (empty when valid).
    """
    if schema is None:
        return []
    parts = tuple(p for p in parts if p not in _ROOT_KEEP)
    props = schema.get("properties") or {}
    for key in list(obj):
        if key in _ROOT_KEEP or key not in parts:
            continue
        if key not in props and not _preserves(schema) and not isinstance(schema.get("additionalProperties"), dict):
            del obj[key]
    for key in parts:
        if key in obj and key in props:
            prune(obj[key], props[key])
            drop_disallowed_nulls(obj[key], props[key])
            if obj[key] is None and not props[key].get("nullable"):
                del obj[key]
    for key in parts:
        sub = props.get(key)
        if sub is None:
            continue
        if key not in obj and "default" in sub:
            obj[key] = copy.deepcopy(sub["default"])
        if key in obj:
            apply_defaults(obj[key], sub)
    errors: list[FieldError] = []
    for key in schema.get("required") or []:
        if key in parts and key not in obj:
            errors.append(required(key))
    for key in parts:
        if key in obj and key in props:
            errors += validate(obj[key], props[key], key)
    return errors

#!/usr/bin/env python3
"""What the Kubernetes API server would say about custom resources, from their CRDs alone: test tooling only.

An oracle for kbp's `validate`, written apart from kbp's Rust code so that the two can check each other
(tests/it/crd_corpus.rs runs both over tests/fixtures/crd_corpus). For each object it finds the CRD version
that serves it (apiVersion + kind) and answers as the API server answers a create with strict field
validation, in the server's order:

1. unknown fields: a field the structural schema does not declare is an error (the server would prune it
   silently; kbp refuses it), except under `x-kubernetes-preserve-unknown-fields` and in `metadata`;
2. defaulting: every `default` of an absent property is filled in, top-down, so rules see defaulted values;
3. the OpenAPI schema, translated into a JSON Schema checked with `jsonschema` (type, nullable,
   x-kubernetes-int-or-string, enum, pattern, format, length, item and property bounds, required,
   x-kubernetes-list-type set and map);
4. `metadata.name` as a DNS-1123 subdomain, as for every custom resource;
5. every `x-kubernetes-validations` rule evaluated with cel-python (`celpy`) at the schema node where it sits,
   `self` bound to the value there, for every value present (each item of a list, each value of a map).
   Transition rules (those that use `oldSelf`) apply only to updates and are skipped. As in the server, the
   rules are not evaluated at all when step 1 or 3 found a "blocking" error (wrong type, unsupported enum
   value, missing required field, too long, too many); one error then says so. A rule whose evaluation
   fails (index out of range, `int('x')`) is an error at the rule's field, as in the server.

celpy lacks the Kubernetes CEL library functions some rules use; they are defined here with the Kubernetes
semantics (k8s.io/apiserver/pkg/cel/library): `<string>.find(regex)` (the first match, or '' when none:
RE2, as Go's regexp), `<string>.findAll(regex[, n])`, `<string>.split(sep[, n])` (Go's strings.Split /
SplitN), `<string>.lowerAscii()`, `<string>.upperAscii()`, `<string>.trim()`, `<string>.replace(a, b[, n])`,
`<string>.indexOf(s)`, `<string>.lastIndexOf(s)`, `<list>.isSorted()`, `<list>.sum()`, `<list>.min()`,
`<list>.max()`, `<list>.indexOf(v)`. celpy's own `matches` already uses RE2.

    crd_oracle.py --crds DIR_OR_FILE [--crds ...] [--unknown TEXT] [OBJECTS.json]   (stdin without a file)
    crd_oracle.py --crds DIR --rules                                                 (every rule, as JSON)

OBJECTS.json is a list of objects, or of {"id": ..., "object": {...}}. The answer (stdout, JSON) is a list in
the same order of {"id", "kind", "name", "valid", "errors": [{"path", "type", "message", "rule"?,
"schema_path"?}]}; `rule` and `schema_path` (`spec.amiSelectorTerms[].alias`) name the CEL rule of a rule
error. `--unknown TEXT`: a string leaf equal to TEXT is a value kbp knows only after apply; its schema
checks are skipped (kbp does the same).
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import sys
from pathlib import Path
from typing import Any, Iterator

import celpy
import celpy.evaluation
import jsonschema
import re2
import yaml
from celpy import celtypes

# The field.ErrorType values of the server that stop CEL from running (apiextensions-apiserver's
# customresource strategy, hasBlockingErr).
BLOCKING = {"FieldValueTypeInvalid", "FieldValueNotSupported", "FieldValueRequired", "FieldValueTooLong",
            "FieldValueTooMany", "FieldValueUnknown"}
NOT_CHECKED = ("some validation rules were not checked because the object was invalid; correct the existing "
               "errors to complete validation")

DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


# ---- CRDs -------------------------------------------------------------------------------------------------

class Crd:
    """One served version of a CRD: its structural schema and the validator built from it."""

    def __init__(self, group: str, version: str, kind: str, schema: dict):
        self.group, self.version, self.kind, self.schema = group, version, kind, schema
        self.validator = jsonschema.Draft202012Validator(
            to_json_schema(schema), format_checker=FORMAT_CHECKER)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"


def load_crds(paths: list[str]) -> dict[tuple[str, str], Crd]:
    files: list[Path] = []
    for p in map(Path, paths):
        files += sorted(p.glob("*.yaml")) + sorted(p.glob("*.yml")) if p.is_dir() else [p]
    crds: dict[tuple[str, str], Crd] = {}
    for f in files:
        for doc in yaml.safe_load_all(f.read_text()):
            if not doc or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc["spec"]
            for v in spec["versions"]:
                if v.get("served", True):
                    crd = Crd(spec["group"], v["name"], spec["names"]["kind"], v["schema"]["openAPIV3Schema"])
                    crds[(crd.api_version, crd.kind)] = crd
    return crds


def rules(crds: dict[tuple[str, str], Crd]) -> list[dict]:
    """Every x-kubernetes-validations rule, with its schema path and whether it is a transition rule."""
    out = []
    for crd in crds.values():
        for path, node in schema_nodes(crd.schema, ""):
            for r in node.get("x-kubernetes-validations", []):
                out.append({"kind": crd.kind, "api_version": crd.api_version, "schema_path": path,
                            "rule": r["rule"], "message": r.get("message"), "transition": uses_old_self(r)})
    return out


def schema_nodes(node: dict, path: str) -> Iterator[tuple[str, dict]]:
    yield path, node
    for k, child in (node.get("properties") or {}).items():
        yield from schema_nodes(child, f"{path}.{k}" if path else k)
    if isinstance(node.get("items"), dict):
        yield from schema_nodes(node["items"], path + "[]")
    if isinstance(node.get("additionalProperties"), dict):
        yield from schema_nodes(node["additionalProperties"], path + "{}")


def uses_old_self(rule: dict) -> bool:
    return re.search(r"\boldSelf\b", rule["rule"]) is not None or rule.get("optionalOldSelf", False)


# ---- OpenAPI v3 (Kubernetes flavour) → JSON Schema --------------------------------------------------------

VALUE_KEYWORDS = ("enum", "pattern", "minLength", "maxLength", "minimum", "maximum", "multipleOf", "minItems",
                  "maxItems", "uniqueItems", "minProperties", "maxProperties", "required", "format")


def to_json_schema(node: dict) -> dict:
    """The JSON Schema that checks what the server's schema validator checks. Unknown fields are found by
    [`unknown_fields`] instead, so that each is reported at its own path."""
    out: dict[str, Any] = {k: node[k] for k in VALUE_KEYWORDS if k in node}
    if node.get("x-kubernetes-int-or-string"):
        out["type"] = ["integer", "string"]
    elif "type" in node:
        out["type"] = [node["type"], "null"] if node.get("nullable") else node["type"]
    # OpenAPI v3.0's boolean exclusive bounds are JSON Schema's numeric ones.
    if node.get("exclusiveMinimum") is True:
        out["exclusiveMinimum"] = out.pop("minimum")
    if node.get("exclusiveMaximum") is True:
        out["exclusiveMaximum"] = out.pop("maximum")
    if node.get("x-kubernetes-list-type") == "set":
        out["uniqueItems"] = True
    if node.get("nullable") and "enum" in out:
        out["enum"] = list(out["enum"]) + [None]
    if "properties" in node:
        out["properties"] = {k: to_json_schema(v) for k, v in node["properties"].items()}
    if isinstance(node.get("additionalProperties"), dict):
        out["additionalProperties"] = to_json_schema(node["additionalProperties"])
    if isinstance(node.get("items"), dict):
        out["items"] = to_json_schema(node["items"])
    for k in ("allOf", "anyOf", "oneOf"):
        # Value validations only (structural schemas): the int-or-string anyOf is the type list above.
        if k in node and not node.get("x-kubernetes-int-or-string"):
            out[k] = [to_json_schema(s) for s in node[k]]
    if "not" in node:
        out["not"] = to_json_schema(node["not"])
    return out


# Formats both the server (kube-openapi's strfmt) and jsonschema know with the same meaning; the integer formats
# (int32, int64) are not checked by the server either. jsonschema checks date-time with rfc3339-validator.
FORMAT_CHECKER = jsonschema.FormatChecker(
    formats=[f for f in ("date-time", "date", "ipv4", "ipv6", "uuid") if f in jsonschema.FormatChecker.checkers])


# ---- the checks -------------------------------------------------------------------------------------------

def field_path(parts) -> str:
    """`spec.template.spec.requirements[0].key`; a key that is no identifier (a map key such as a label
    `karpenter.sh/foo`) in brackets, as the server writes map keys."""
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        elif not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(p)):
            out += f"[{p}]"
        else:
            out += f".{p}" if out else str(p)
    return out


def unknown_fields(node: dict, value: Any, path: list, top: bool = True) -> Iterator[dict]:
    """Fields the schema does not declare (the server would prune them)."""
    if node.get("x-kubernetes-preserve-unknown-fields") and "properties" not in node:
        return
    if isinstance(value, dict):
        props = node.get("properties")
        addl = node.get("additionalProperties")
        for k, v in value.items():
            if top and k in ("apiVersion", "kind", "metadata"):
                continue
            if props is not None and k in props:
                yield from unknown_fields(props[k], v, path + [k], False)
            elif isinstance(addl, dict):
                yield from unknown_fields(addl, v, path + [k], False)
            elif addl is True or node.get("x-kubernetes-preserve-unknown-fields"):
                continue
            else:
                yield {"path": field_path(path + [k]), "type": "FieldValueUnknown",
                       "message": f'unknown field "{field_path(path + [k])}": field not declared in schema'}
    elif isinstance(value, list) and isinstance(node.get("items"), dict):
        for i, v in enumerate(value):
            yield from unknown_fields(node["items"], v, path + [i], False)


def apply_defaults(node: dict, value: Any) -> None:
    """Fills defaults top-down, in place, as the server does after pruning."""
    if isinstance(value, dict):
        for k, child in (node.get("properties") or {}).items():
            if k not in value and "default" in child:
                value[k] = copy.deepcopy(child["default"])
            if k in value:
                apply_defaults(child, value[k])
        addl = node.get("additionalProperties")
        if isinstance(addl, dict) and "properties" not in node:
            for v in value.values():
                apply_defaults(addl, v)
    elif isinstance(value, list) and isinstance(node.get("items"), dict):
        for v in value:
            apply_defaults(node["items"], v)


def schema_errors(crd: Crd, obj: dict, unknown: str | None) -> Iterator[dict]:
    for e in crd.validator.iter_errors(obj):
        if unknown is not None and e.instance == unknown:
            continue
        yield from describe(e)


def describe(e: jsonschema.ValidationError) -> Iterator[dict]:
    path = field_path(e.absolute_path)
    v, val = e.validator, e.validator_value
    shown = json.dumps(e.instance)
    if v == "required":
        missing = [k for k in val if isinstance(e.instance, dict) and k not in e.instance]
        for k in missing:
            yield {"path": field_path(list(e.absolute_path) + [k]), "type": "FieldValueRequired",
                   "message": "Required value"}
        return
    if v == "type":
        kind, message = "FieldValueTypeInvalid", f"Invalid value: {shown}: {path} in body must be of type {val}"
    elif v == "enum":
        kind = "FieldValueNotSupported"
        message = f"Unsupported value: {shown}: supported values: " + ", ".join(json.dumps(x) for x in val)
    elif v == "maxLength":
        kind, message = "FieldValueTooLong", f"Too long: may not be more than {val} bytes"
    elif v == "maxItems":
        kind, message = "FieldValueTooMany", f"Too many: {len(e.instance)}: must have at most {val} items"
    elif v == "maxProperties":
        kind, message = "FieldValueTooMany", f"Too many: {len(e.instance)}: must have at most {val} items"
    elif v == "uniqueItems":
        kind, message = "FieldValueDuplicate", f"Duplicate value: {shown}"
    elif v == "pattern":
        kind, message = "FieldValueInvalid", f"Invalid value: {shown}: {path} in body should match '{val}'"
    elif v in ("minimum", "exclusiveMinimum"):
        kind, message = "FieldValueInvalid", f"Invalid value: {shown}: {path} in body should be greater than or equal to {val}"
    elif v in ("maximum", "exclusiveMaximum"):
        kind, message = "FieldValueInvalid", f"Invalid value: {shown}: {path} in body should be less than or equal to {val}"
    elif v == "minLength":
        kind, message = "FieldValueInvalid", f"Invalid value: {shown}: {path} in body should be at least {val} chars long"
    elif v == "minItems":
        kind, message = "FieldValueInvalid", f"Invalid value: {len(e.instance)}: {path} in body should have at least {val} items"
    elif v == "format":
        kind, message = "FieldValueInvalid", f"Invalid value: {shown}: {path} in body must be of type {val}"
    else:
        kind, message = "FieldValueInvalid", f"Invalid value: {shown}: {e.message}"
    yield {"path": path, "type": kind, "message": message}


def list_map_errors(node: dict, value: Any, path: list) -> Iterator[dict]:
    """x-kubernetes-list-type: map: the list-map-keys identify one item each."""
    if isinstance(value, list) and isinstance(node.get("items"), dict):
        if node.get("x-kubernetes-list-type") == "map":
            keys = node.get("x-kubernetes-list-map-keys", [])
            seen = set()
            for i, item in enumerate(value):
                if isinstance(item, dict):
                    k = json.dumps([item.get(x) for x in keys])
                    if k in seen:
                        yield {"path": field_path(path + [i]), "type": "FieldValueDuplicate",
                               "message": f"Duplicate value: {k}"}
                    seen.add(k)
        for i, item in enumerate(value):
            yield from list_map_errors(node["items"], item, path + [i])
    elif isinstance(value, dict):
        props = node.get("properties") or {}
        addl = node.get("additionalProperties")
        for k, v in value.items():
            child = props.get(k) if k in props else (addl if isinstance(addl, dict) else None)
            if child is not None:
                yield from list_map_errors(child, v, path + [k])


def name_errors(obj: dict) -> Iterator[dict]:
    name = (obj.get("metadata") or {}).get("name")
    if not isinstance(name, str) or not name:
        yield {"path": "metadata.name", "type": "FieldValueRequired", "message": "Required value: name is required"}
    elif len(name) > 253 or not DNS1123_SUBDOMAIN.match(name):
        yield {"path": "metadata.name", "type": "FieldValueInvalid",
               "message": f'Invalid value: "{name}": a lowercase RFC 1123 subdomain must consist of lower case '
                          "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"}


# ---- CEL --------------------------------------------------------------------------------------------------

def _str(s) -> celtypes.StringType:
    return celtypes.StringType(s)


def cel_find(s, pattern):
    m = re2.search(str(pattern), str(s))
    return _str(m.group(0) if m else "")


def cel_find_all(s, pattern, n=None):
    found = [m.group(0) for m in re2.finditer(str(pattern), str(s))]
    if n is not None and int(n) >= 0:
        found = found[: int(n)]
    return celtypes.ListType([_str(x) for x in found])


def cel_split(s, sep, n=None):
    s, sep = str(s), str(sep)
    if n is not None and int(n) == 0:
        return celtypes.ListType([])
    if sep == "":  # Go's strings.Split: one string per UTF-8 sequence
        parts = list(s)
        if n is not None and 0 < int(n) < len(parts):
            parts = parts[: int(n) - 1] + ["".join(parts[int(n) - 1:])]
    else:
        parts = s.split(sep) if n is None or int(n) < 0 else s.split(sep, int(n) - 1)
    return celtypes.ListType([_str(p) for p in parts])


def cel_replace(s, old, new, n=None):
    return _str(str(s).replace(str(old), str(new), -1 if n is None else int(n)))


def cel_index_of(target, v, start=None):
    if isinstance(target, celtypes.ListType):
        for i, x in enumerate(target):
            if x == v:
                return celtypes.IntType(i)
        return celtypes.IntType(-1)
    return celtypes.IntType(str(target).find(str(v), 0 if start is None else int(start)))


def cel_last_index_of(target, v):
    if isinstance(target, celtypes.ListType):
        for i in range(len(target) - 1, -1, -1):
            if target[i] == v:
                return celtypes.IntType(i)
        return celtypes.IntType(-1)
    return celtypes.IntType(str(target).rfind(str(v)))


def _strict(op):
    """celpy 0.4.0 answers `error == 'text'` with false (Python's str comparison wins); CEL, and the server,
    answer with the error. `'windows2019'.split('@')[1] == 'latest'` must be an error, not a failed rule.
    For `in`, celpy's answer is an error already, but one that blames a missing overload; CEL's is the
    operand's own error (`no such key`), so that is the one passed on."""
    def compare(a, b):
        for x in (a, b):
            if isinstance(x, celpy.CELEvalError):
                return x
        return op(a, b)
    return compare


KUBERNETES_FUNCTIONS = {
    "_==_": _strict(celpy.evaluation.bool_eq),
    "_!=_": _strict(celpy.evaluation.bool_ne),
    # `e in self.evictionSoftGracePeriod` with the map absent: the missing key is the error, not an overload.
    "_in_": _strict(celpy.evaluation.operator_in),
    "find": cel_find,
    "findAll": cel_find_all,
    "split": cel_split,
    "lowerAscii": lambda s: _str("".join(c.lower() if c.isascii() else c for c in str(s))),
    "upperAscii": lambda s: _str("".join(c.upper() if c.isascii() else c for c in str(s))),
    "trim": lambda s: _str(str(s).strip()),
    "replace": cel_replace,
    "indexOf": cel_index_of,
    "lastIndexOf": cel_last_index_of,
    "isSorted": lambda xs: celtypes.BoolType(all(xs[i] <= xs[i + 1] for i in range(len(xs) - 1))),
    "sum": lambda xs: sum(xs[1:], xs[0]) if len(xs) else celtypes.IntType(0),
    "min": lambda xs: min(xs),
    "max": lambda xs: max(xs),
}

_ENV = celpy.Environment()
_PROGRAMS: dict[str, Any] = {}


def program(rule: str):
    if rule not in _PROGRAMS:
        _PROGRAMS[rule] = _ENV.program(_ENV.compile(rule), functions=KUBERNETES_FUNCTIONS)
    return _PROGRAMS[rule]


def evaluate(rule: str, value: Any) -> bool | str:
    """True or False, or the evaluation error's text."""
    try:
        result = program(rule).evaluate({"self": celpy.json_to_cel(value)})
    except celpy.CELEvalError as e:
        return str(e.args[0]) if e.args else repr(e)
    except Exception as e:  # noqa: BLE001 - any failure inside a rule is the rule's error, as in the server
        return f"{type(e).__name__}: {e}"
    if isinstance(result, celpy.CELEvalError):
        return str(result.args[0]) if result.args else repr(result)
    if not isinstance(result, celtypes.BoolType):
        return f"rule returned {type(result).__name__}, not bool"
    return bool(result)


def rule_errors(node: dict, value: Any, path: list, schema_path: str) -> Iterator[dict]:
    for r in node.get("x-kubernetes-validations", []):
        if uses_old_self(r):
            continue
        verdict = evaluate(r["rule"], value)
        where = field_path(path)
        if verdict is True:
            continue
        if verdict is False:
            message = r.get("message") or f"failed rule: {r['rule']}"
            yield {"path": where, "type": "FieldValueInvalid", "message": f"Invalid value: \"object\": {message}",
                   "rule": r["rule"], "schema_path": schema_path}
        else:
            yield {"path": where, "type": "FieldValueInvalid",
                   "message": f"{verdict} evaluating rule: {r['rule']}", "rule": r["rule"],
                   "schema_path": schema_path}
    if isinstance(value, dict):
        props = node.get("properties")
        addl = node.get("additionalProperties")
        for k, v in value.items():
            if props is not None and k in props:
                yield from rule_errors(props[k], v, path + [k], f"{schema_path}.{k}" if schema_path else k)
            elif props is None and isinstance(addl, dict):
                yield from rule_errors(addl, v, path + [k], schema_path + "{}")
    elif isinstance(value, list) and isinstance(node.get("items"), dict):
        for i, v in enumerate(value):
            yield from rule_errors(node["items"], v, path + [i], schema_path + "[]")


# ---- one object -------------------------------------------------------------------------------------------

def check(crds: dict[tuple[str, str], Crd], obj: Any, unknown: str | None = None) -> dict:
    if not isinstance(obj, dict):
        return {"kind": None, "name": None, "valid": False,
                "errors": [{"path": "", "type": "FieldValueTypeInvalid", "message": "not an object"}]}
    kind, name = obj.get("kind"), (obj.get("metadata") or {}).get("name")
    crd = crds.get((obj.get("apiVersion"), kind))
    if crd is None:
        return {"kind": kind, "name": name, "valid": False,
                "errors": [{"path": "", "type": "FieldValueNotSupported",
                            "message": f"no CRD serves {obj.get('apiVersion')} {kind}"}]}
    obj = copy.deepcopy(obj)
    errors = list(unknown_fields(crd.schema, obj, []))
    apply_defaults(crd.schema, obj)
    errors += schema_errors(crd, obj, unknown)
    errors += list_map_errors(crd.schema, obj, [])
    errors += name_errors(obj)
    if any(e["type"] in BLOCKING for e in errors):
        errors.append({"path": "", "type": "FieldValueInvalid", "message": NOT_CHECKED})
    else:
        errors += rule_errors(crd.schema, obj, [], "")
    return {"kind": kind, "name": name, "valid": not errors, "errors": errors}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--crds", action="append", required=True, help="a CRD YAML file or a directory of them")
    ap.add_argument("--unknown", help="the placeholder of a value known only after apply")
    ap.add_argument("--rules", action="store_true", help="list every x-kubernetes-validations rule and exit")
    ap.add_argument("objects", nargs="?", help="JSON file of objects (default: stdin)")
    args = ap.parse_args(argv)
    crds = load_crds(args.crds)
    if args.rules:
        json.dump(rules(crds), sys.stdout, indent=1)
        print()
        return 0
    data = json.loads(Path(args.objects).read_text() if args.objects else sys.stdin.read())
    out = []
    for i, item in enumerate(data):
        if isinstance(item, dict) and "object" in item and "id" in item:
            ident, obj = item["id"], item["object"]
        else:
            ident, obj = i, item
        out.append({"id": ident, **check(crds, obj, args.unknown)})
    json.dump(out, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Label and field selectors: the `labelSelector`/`fieldSelector` query strings, `metav1.LabelSelector` objects,
node selector terms (node affinity) and tolerations."""

from __future__ import annotations

import re
from typing import Any, Callable

from .errors import bad_request
from .meta import dig

Requirement = tuple[str, str, tuple[str, ...]]  # (key, operator, values)

_SET = re.compile(r"^\s*(!?)\s*([A-Za-z0-9./_-]+)\s*(?:(in|notin)\s*\(([^)]*)\))?\s*$")
_EQ = re.compile(r"^\s*([A-Za-z0-9./_-]+)\s*(==|=|!=)\s*([A-Za-z0-9._-]*)\s*$")


def _split_terms(text: str) -> list[str]:
    """Splits on commas outside parentheses."""
    terms, depth, current = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            terms.append(current)
            current = ""
        else:
            current += ch
    terms.append(current)
    return [t for t in terms if t.strip()]


def parse_label_selector(text: str) -> list[Requirement]:
    """`a=b,c!=d,e,!f,g in (h,i),j notin (k)` → requirements; a 400 for what kube would not parse."""
    requirements: list[Requirement] = []
    for term in _split_terms(text or ""):
        m = _EQ.match(term)
        if m:
            key, op, value = m.groups()
            requirements.append((key, "!=" if op == "!=" else "=", (value,)))
            continue
        m = _SET.match(term)
        if m and not (m[1] and m[3]):
            negate, key, op, values = m.groups()
            if op:
                vals = tuple(v.strip() for v in values.split(",") if v.strip())
                requirements.append((key, "in" if op == "in" else "notin", vals))
            else:
                requirements.append((key, "!" if negate else "exists", ()))
            continue
        raise bad_request(f"unable to parse requirement: found '{term.strip()}', expected: valid label selector")
    return requirements


def matches(requirements: list[Requirement], labels: dict[str, str]) -> bool:
    for key, op, values in requirements:
        present = key in labels
        value = labels.get(key)
        if op == "=" and value != values[0]:
            return False
        if op == "!=" and present and value == values[0]:
            return False
        if op == "exists" and not present:
            return False
        if op == "!" and present:
            return False
        if op == "in" and value not in values:
            return False
        if op == "notin" and present and value in values:
            return False
    return True


def label_selector_matches(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """A metav1.LabelSelector object. None matches nothing, {} matches everything (as kube's conversion does)."""
    if selector is None:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def node_selector_term_matches(term: dict[str, Any], node: dict[str, Any]) -> bool:
    labels = dig(node, "metadata", "labels", default={}) or {}
    for expr in term.get("matchExpressions") or []:
        if not _node_requirement(expr, labels):
            return False
    for expr in term.get("matchFields") or []:
        if expr.get("key") == "metadata.name" and not _node_requirement(
            {**expr, "key": "name"}, {"name": dig(node, "metadata", "name")}
        ):
            return False
    return bool(term.get("matchExpressions") or term.get("matchFields"))


def _node_requirement(expr: dict[str, Any], labels: dict[str, str]) -> bool:
    key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
    if op == "In":
        return labels.get(key) in values
    if op == "NotIn":
        return labels.get(key) not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    if op in ("Gt", "Lt"):
        try:
            have, want = int(labels[key]), int(values[0])
        except (KeyError, ValueError, IndexError):
            return False
        return have > want if op == "Gt" else have < want
    return False


def tolerates(tolerations: list[dict[str, Any]], taint: dict[str, Any]) -> bool:
    for t in tolerations or []:
        effect = t.get("effect")
        if effect and effect != taint.get("effect"):
            continue
        op = t.get("operator") or "Equal"
        key = t.get("key") or ""
        if op == "Exists":
            if not key or key == taint.get("key"):
                return True
        elif key == taint.get("key") and (t.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


#: Field selectors kube-apiserver accepts per resource (plural), beyond metadata.name/namespace.
FIELD_SELECTORS: dict[str, dict[str, Callable[[dict[str, Any]], Any]]] = {
    "events": {
        "involvedObject.kind": lambda o: dig(o, "involvedObject", "kind"),
        "involvedObject.name": lambda o: dig(o, "involvedObject", "name"),
        "involvedObject.namespace": lambda o: dig(o, "involvedObject", "namespace"),
        "involvedObject.uid": lambda o: dig(o, "involvedObject", "uid"),
        "involvedObject.apiVersion": lambda o: dig(o, "involvedObject", "apiVersion"),
        "involvedObject.fieldPath": lambda o: dig(o, "involvedObject", "fieldPath"),
        "involvedObject.resourceVersion": lambda o: dig(o, "involvedObject", "resourceVersion"),
        "reason": lambda o: o.get("reason"),
        "reportingComponent": lambda o: o.get("reportingComponent"),
        "source": lambda o: dig(o, "source", "component"),
        "type": lambda o: o.get("type"),
    },
    "pods": {
        "spec.nodeName": lambda o: dig(o, "spec", "nodeName"),
        "spec.serviceAccountName": lambda o: dig(o, "spec", "serviceAccountName"),
        "spec.schedulerName": lambda o: dig(o, "spec", "schedulerName"),
        "spec.restartPolicy": lambda o: dig(o, "spec", "restartPolicy"),
        "status.phase": lambda o: dig(o, "status", "phase"),
        "status.podIP": lambda o: dig(o, "status", "podIP"),
        "status.nominatedNodeName": lambda o: dig(o, "status", "nominatedNodeName"),
    },
    "nodes": {"spec.unschedulable": lambda o: str(bool(dig(o, "spec", "unschedulable"))).lower()},
    "namespaces": {"status.phase": lambda o: dig(o, "status", "phase")},
    "secrets": {"type": lambda o: o.get("type")},
    "replicasets": {"status.replicas": lambda o: str(dig(o, "status", "replicas", default=0))},
}

FieldRequirement = tuple[Callable[[dict[str, Any]], Any], bool, str]  # (getter, equal?, value)


def parse_field_selector(text: str, plural: str) -> list[FieldRequirement]:
    getters: dict[str, Callable[[dict[str, Any]], Any]] = {
        "metadata.name": lambda o: dig(o, "metadata", "name"),
        "metadata.namespace": lambda o: dig(o, "metadata", "namespace") or "",
        **FIELD_SELECTORS.get(plural, {}),
    }
    out: list[FieldRequirement] = []
    for term in _split_terms(text or ""):
        m = re.match(r"^\s*([A-Za-z0-9._]+)\s*(==|=|!=)\s*(.*?)\s*$", term)
        if not m:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{term}'")
        field, op, value = m.groups()
        if field not in getters:
            raise bad_request(f'field label not supported: {field}')
        out.append((getters[field], op != "!=", value))
    return out


def fields_match(requirements: list[FieldRequirement], obj: dict[str, Any]) -> bool:
    for getter, equal, value in requirements:
        have = getter(obj)
        have = "" if have is None else str(have)
        if (have == value) != equal:
            return False
    return True

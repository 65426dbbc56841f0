"""Defaulting and validation of built-in kinds: the part of each kind's registry strategy a client notices.

Defaults are those a client reads back after writing (a Deployment's replicas, strategy and pod template
fields, a Service's cluster IP, a Namespace's finalizer and name label...). Validation covers object names,
labels, annotation size, and per kind the mistakes a client makes (a Deployment selector that does not match its
template, a missing container image, a changed RoleBinding roleRef). Messages are kube-apiserver's.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import re
import secrets
from typing import Any

from . import quantity, storage
from .errors import FieldError, Raw, bad_request, forbidden, invalid, not_supported, required
from .meta import dig
from .resources import ResourceType

DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN = DNS1123_LABEL + r"(\." + DNS1123_LABEL + r")*"
DNS1035_LABEL = r"[a-z]([-a-z0-9]*[a-z0-9])?"
LABEL_VALUE = r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"
QUALIFIED_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '" + DNS1123_SUBDOMAIN + "')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '" + DNS1123_LABEL + "')"
)
DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, "
    "and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '"
    + DNS1035_LABEL + "')"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation "
    "is '" + LABEL_VALUE + "')"
)
NAME_PART_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '" + QUALIFIED_NAME + "')"
)
ANNOTATIONS_MAX = 256 * 1024


def _full(pattern: str, value: str) -> bool:
    return re.fullmatch(pattern, value) is not None


# --- names, labels, annotations -------------------------------------------------------------------------------


def validate_name(rt: ResourceType, name: str) -> list[FieldError]:
    if not name:
        return [required("metadata.name", "name or generateName is required")]
    if rt.group == "rbac.authorization.k8s.io":
        bad = [c for c in ("/", "%") if c in name] or (["'..'"] if name in (".", "..") else [])
        return [invalid("metadata.name", name, f"may not contain '{bad[0]}'")] if bad else []
    if rt.key == ("", "namespaces"):
        if len(name) > 63 or not _full(DNS1123_LABEL, name):
            return [invalid("metadata.name", name, LABEL_MSG)]
        return []
    if rt.key == ("", "services"):
        if len(name) > 63 or not _full(DNS1035_LABEL, name):
            return [invalid("metadata.name", name, DNS1035_MSG)]
        return []
    if len(name) > 253 or not _full(DNS1123_SUBDOMAIN, name):
        return [invalid("metadata.name", name, SUBDOMAIN_MSG)]
    return []


def _qualified_key(field: str, key: str) -> list[FieldError]:
    prefix, _, name = key.rpartition("/")
    errors = []
    if prefix and (len(prefix) > 253 or not _full(DNS1123_SUBDOMAIN, prefix)):
        errors.append(invalid(field, key, "prefix part " + SUBDOMAIN_MSG))
    if not name or len(name) > 63 or not _full(QUALIFIED_NAME, name):
        errors.append(invalid(field, key, NAME_PART_MSG))
    return errors


def validate_metadata(obj: dict[str, Any]) -> list[FieldError]:
    meta = obj.get("metadata") or {}
    errors: list[FieldError] = []
    labels = meta.get("labels") or {}
    if not isinstance(labels, dict):
        return [invalid("metadata.labels", labels, "must be a map of strings")]
    for key, value in labels.items():
        errors += _qualified_key("metadata.labels", key)
        if not isinstance(value, str) or len(value) > 63 or not _full(LABEL_VALUE, value):
            errors.append(invalid("metadata.labels", value, LABEL_VALUE_MSG))
    annotations = meta.get("annotations") or {}
    for key in annotations:
        errors += _qualified_key("metadata.annotations", key)
    size = sum(len(k) + len(str(v)) for k, v in annotations.items())
    if size > ANNOTATIONS_MAX:
        errors.append(FieldError("FieldValueTooLong", "metadata.annotations", detail=f"must have at most {ANNOTATIONS_MAX} bytes"))
    return errors


# --- defaults ---------------------------------------------------------------------------------------------------


def _default_probe(probe: dict[str, Any] | None) -> None:
    if not isinstance(probe, dict):
        return
    for key, value in (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1), ("failureThreshold", 3)):
        probe.setdefault(key, value)
    if isinstance(probe.get("httpGet"), dict):
        probe["httpGet"].setdefault("scheme", "HTTP")


def _image_tag(image: str) -> str | None:
    if "@" in image:
        return "@digest"
    last = image.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else None


def _default_container(c: dict[str, Any]) -> None:
    image = c.get("image") or ""
    tag = _image_tag(image)
    c.setdefault("imagePullPolicy", "Always" if tag in (None, "latest") else "IfNotPresent")
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    c.setdefault("resources", {})
    for kind in ("requests", "limits"):
        amounts = dig(c, "resources", kind)
        if isinstance(amounts, dict):
            for name, amount in amounts.items():
                amounts[name] = quantity.canonical(amount)
    for port in c.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        _default_probe(c.get(probe))
    for env in c.get("env") or []:
        ref = dig(env, "valueFrom", "fieldRef")
        if isinstance(ref, dict):
            ref.setdefault("apiVersion", "v1")


def default_pod_spec(spec: dict[str, Any], pod: bool = False) -> None:
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or []:
            if isinstance(c, dict):
                _default_container(c)
    for volume in spec.get("volumes") or []:
        for source in ("configMap", "secret", "projected", "downwardAPI"):
            if isinstance(volume.get(source), dict):
                volume[source].setdefault("defaultMode", 420)
    if pod:
        spec.setdefault("enableServiceLinks", True)
        spec.setdefault("serviceAccountName", spec.get("serviceAccount") or "default")
        spec.setdefault("serviceAccount", spec["serviceAccountName"])
        spec.setdefault("priority", 0)
        spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
        tolerations = spec.setdefault("tolerations", [])
        keys = {t.get("key") for t in tolerations}
        for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
            if key not in keys:
                tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300})


def _default_template(spec: dict[str, Any]) -> None:
    template = spec.get("template")
    if isinstance(template, dict):
        template.setdefault("metadata", {})
        template["metadata"].pop("creationTimestamp", None)
        if isinstance(template.get("spec"), dict):
            default_pod_spec(template["spec"])


def _allocate_cluster_ip() -> str:
    net = ipaddress.ip_network("10.100.0.0/16")
    return str(net.network_address + 10 + secrets.randbelow(net.num_addresses - 20))


def default(rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    """Fills in what the kind's defaulting and PrepareForCreate/Update fill in; quantities become canonical (a
    malformed one is a 400, as the server cannot decode it)."""
    try:
        _default(rt, obj, old)
    except quantity.QuantityError as e:
        raise bad_request(f'{rt.kind} in version "{rt.versions[0]}" cannot be handled as a {rt.kind}: {e}') from None


def _default(rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else None
    key = rt.key
    if key == ("", "namespaces"):
        meta = obj["metadata"]
        meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta["name"]
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
        if old is None:
            obj["status"] = {"phase": "Active"}
    elif key in (("apps", "deployments"), ("apps", "replicasets")):
        if spec is None:
            spec = obj["spec"] = {}
        spec.setdefault("replicas", 1)
        spec.setdefault("revisionHistoryLimit", 10)
        if key == ("apps", "deployments"):
            spec.setdefault("progressDeadlineSeconds", 600)
            strategy = spec.setdefault("strategy", {})
            strategy.setdefault("type", "RollingUpdate")
            if strategy["type"] == "RollingUpdate":
                rolling = strategy.setdefault("rollingUpdate", {})
                rolling.setdefault("maxUnavailable", "25%")
                rolling.setdefault("maxSurge", "25%")
        _default_template(spec)
        if old is None:
            obj["status"] = {}
    elif key == ("", "pods"):
        if spec is not None:
            default_pod_spec(spec, pod=True)
        if old is None:
            obj["status"] = {"phase": "Pending", "qosClass": qos_class(spec or {})}
    elif key == ("", "services"):
        if spec is None:
            spec = obj["spec"] = {}
        spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        old_spec = (old or {}).get("spec") or {}
        if spec["type"] != "ExternalName":
            if "clusterIP" not in spec:
                spec["clusterIP"] = old_spec.get("clusterIP") or _allocate_cluster_ip()
            spec.setdefault("clusterIPs", [spec["clusterIP"]])
            spec.setdefault("ipFamilies", ["IPv4"])
            spec.setdefault("ipFamilyPolicy", "SingleStack")
            spec.setdefault("internalTrafficPolicy", "Cluster")
        for port in spec.get("ports") or []:
            port.setdefault("protocol", "TCP")
            port.setdefault("targetPort", port.get("port"))
        if old is None:
            obj["status"] = {"loadBalancer": {}}
    elif key == ("networking.k8s.io", "ingresses"):
        if old is None:
            obj["status"] = {"loadBalancer": {}}
    elif storage.handles(rt):
        storage.default(rt, obj, old)
    elif key == ("", "secrets"):
        obj.setdefault("type", "Opaque")
        string_data = obj.pop("stringData", None) or {}
        if string_data:
            data = obj.setdefault("data", {})
            for k, v in string_data.items():
                data[k] = base64.b64encode(str(v).encode()).decode()
    elif key == ("apiextensions.k8s.io", "customresourcedefinitions"):
        if spec is not None:
            names = spec.get("names") or {}
            if names.get("kind"):
                names.setdefault("singular", names["kind"].lower())
                names.setdefault("listKind", names["kind"] + "List")
            spec.setdefault("conversion", {"strategy": "None"})
    elif key[0] == "admissionregistration.k8s.io":
        for hook in obj.get("webhooks") or []:
            hook.setdefault("failurePolicy", "Fail")
            hook.setdefault("matchPolicy", "Equivalent")
            hook.setdefault("namespaceSelector", {})
            hook.setdefault("objectSelector", {})
            hook.setdefault("timeoutSeconds", 10)
            if key[1] == "mutatingwebhookconfigurations":
                hook.setdefault("reinvocationPolicy", "Never")
            for rule in hook.get("rules") or []:
                rule.setdefault("scope", "*")
            service = dig(hook, "clientConfig", "service")
            if isinstance(service, dict):
                service.setdefault("port", 443)


def qos_class(spec: dict[str, Any]) -> str:
    containers = spec.get("containers") or []
    requests = [dig(c, "resources", "requests", default={}) or {} for c in containers]
    limits = [dig(c, "resources", "limits", default={}) or {} for c in containers]
    if not any(requests) and not any(limits):
        return "BestEffort"
    guaranteed = all(
        lim.get(r) and (req.get(r, lim.get(r)) == lim.get(r)) for req, lim in zip(requests, limits) for r in ("cpu", "memory")
    )
    return "Guaranteed" if guaranteed else "Burstable"


# --- validation -------------------------------------------------------------------------------------------------


def _go_map(labels: dict[str, Any]) -> str:
    return "map[string]string{" + ", ".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in sorted(labels.items())) + "}"


def _validate_pod_spec(spec: Any, path: str, restart_always: bool) -> list[FieldError]:
    if not isinstance(spec, dict):
        return [required(path)]
    errors: list[FieldError] = []
    containers = spec.get("containers")
    if not containers:
        errors.append(required(f"{path}.containers"))
    names = set()
    for key in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(key) or []):
            where = f"{path}.{key}[{i}]"
            if not c.get("name"):
                errors.append(required(f"{where}.name"))
            elif c["name"] in names:
                errors.append(FieldError("FieldValueDuplicate", f"{where}.name", c["name"]))
            else:
                names.add(c["name"])
            if not c.get("image"):
                errors.append(required(f"{where}.image"))
            requests = dig(c, "resources", "requests", default={}) or {}
            limits = dig(c, "resources", "limits", default={}) or {}
            for resource in sorted(set(requests) & set(limits)):
                try:
                    too_much = quantity.compare(str(requests[resource]), str(limits[resource])) > 0
                except quantity.QuantityError:
                    continue
                if too_much:
                    errors.append(invalid(f"{where}.resources.requests", Raw(json.dumps(str(requests[resource]))),
                                          f"must be less than or equal to {resource} limit of {limits[resource]}"))
    if restart_always and spec.get("restartPolicy", "Always") != "Always":
        errors.append(not_supported(f"{path}.restartPolicy", spec.get("restartPolicy"), ["Always"]))
    return errors


def _validate_workload(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    spec = obj.get("spec") or {}
    errors: list[FieldError] = []
    replicas = spec.get("replicas")
    if isinstance(replicas, int) and replicas < 0:
        errors.append(invalid("spec.replicas", replicas, "must be greater than or equal to 0"))
    selector = spec.get("selector")
    if selector is None:
        errors.append(required("spec.selector"))
    elif not (selector.get("matchLabels") or selector.get("matchExpressions")):
        errors.append(invalid("spec.selector", selector, "empty selector is invalid for deployment"))
    else:
        from .selectors import label_selector_matches

        labels = dig(spec, "template", "metadata", "labels", default={}) or {}
        if not label_selector_matches(selector, labels):
            errors.append(invalid("spec.template.metadata.labels", Raw(_go_map(labels)), "`selector` does not match template `labels`"))
    if old is not None and selector is not None and dig(old, "spec", "selector") not in (None, selector):
        errors.append(invalid("spec.selector", selector, "field is immutable"))
    errors += _validate_pod_spec(dig(spec, "template", "spec"), "spec.template.spec", restart_always=True)
    return errors


def validate(rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    key = rt.key
    errors: list[FieldError] = []
    if key in (("apps", "deployments"), ("apps", "replicasets")):
        errors += _validate_workload(obj, old)
    elif key == ("", "pods"):
        errors += _validate_pod_spec(obj.get("spec"), "spec", restart_always=False)
        if old is not None and dig(old, "spec", "nodeName") and dig(obj, "spec", "nodeName") != dig(old, "spec", "nodeName"):
            errors.append(forbidden("spec", "pod updates may not change fields other than `spec.containers[*].image`, "
                                    "`spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, "
                                    "`spec.tolerations` (only additions to existing tolerations), "
                                    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"))
    elif key == ("", "services"):
        spec = obj.get("spec") or {}
        if spec.get("type") != "ExternalName" and spec.get("clusterIP") != "None" and not spec.get("ports"):
            errors.append(required("spec.ports"))
        for i, port in enumerate(spec.get("ports") or []):
            p = port.get("port")
            if not isinstance(p, int) or not 1 <= p <= 65535:
                errors.append(invalid(f"spec.ports[{i}].port", p, "must be between 1 and 65535, inclusive"))
        old_ip = dig(old or {}, "spec", "clusterIP")
        if old is not None and old_ip and spec.get("clusterIP") != old_ip:
            errors.append(invalid("spec.clusterIPs[0]", spec.get("clusterIP"), "may not change once set"))
    elif key in (("rbac.authorization.k8s.io", "rolebindings"), ("rbac.authorization.k8s.io", "clusterrolebindings")):
        ref = obj.get("roleRef")
        if not isinstance(ref, dict) or not ref.get("name"):
            errors.append(required("roleRef.name"))
        elif not ref.get("kind"):
            errors.append(not_supported("roleRef.kind", "", ["Role", "ClusterRole"]))
        if old is not None and old.get("roleRef") != obj.get("roleRef"):
            errors.append(invalid("roleRef", obj.get("roleRef"), "cannot change roleRef"))
    elif key in (("rbac.authorization.k8s.io", "roles"), ("rbac.authorization.k8s.io", "clusterroles")):
        for i, rule in enumerate(obj.get("rules") or []):
            if not rule.get("verbs"):
                errors.append(required(f"rules[{i}].verbs", "verbs must contain at least one value"))
    elif key == ("networking.k8s.io", "ingresses"):
        spec = obj.get("spec") or {}
        if not spec.get("defaultBackend") and not spec.get("rules"):
            errors.append(invalid("spec", spec.get("rules"), "either `defaultBackend` or `rules` must be specified"))
    elif storage.handles(rt):
        errors += storage.validate(rt, obj)
    elif key == ("policy", "poddisruptionbudgets"):
        spec = obj.get("spec") or {}
        if "minAvailable" in spec and "maxUnavailable" in spec:
            errors.append(invalid("spec", spec, "minAvailable and maxUnavailable cannot be both set"))
    return errors

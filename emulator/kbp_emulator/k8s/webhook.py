"""EKS authentication for real control planes: a TokenReview webhook, as aws-iam-authenticator serves EKS's.

kube-apiserver posts every bearer token it does not know itself (`authentication.k8s.io/v1` TokenReview) to
`http://127.0.0.1:<port>/authenticate/<plane>`. A token must first pass the checks aws-iam-authenticator makes
before it asks STS (auth.py); then the caller is the identity STS reports for the access key the URL was
presigned with (this emulator's STS, in process), turned into its IAM principal as EKS does (`auth.iam_principal`;
an assumed role is its role, whatever the role's path). The cluster's access entry for that principal gives the
user name and groups, as on EKS; the entries are the EKS side's, which it hands in at install
(`use_access_entries`):

- `username`: the entry's (for a role, `{{SessionName}}` is the session's name);
- `groups`: the entry's `kubernetesGroups`, plus one group per access policy associated with cluster scope,
  `eks-access-policy:<PolicyName>`, which the plane binds to the ClusterRole EKS's authorizer maps the policy
  to (`POLICY_ROLES`, bound by `bind_access_policies` before the cluster is ACTIVE). Namespace-scoped
  associations are not modelled.

Not checked: the SigV4 signature (moto keeps no secret to check it with) and the cluster
name (`x-k8s-aws-id` is a signed header the URL does not carry). A token with no access entry is refused.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from . import auth
from .client import Client, Conflict
from .plane_view import PlaneView

log = logging.getLogger("kbp_emulator.k8s")
POLICY_GROUP_PREFIX = "eks-access-policy:"
#: The ClusterRole each cluster-scoped access policy grants, as EKS's authorizer does.
POLICY_ROLES = {
    "AmazonEKSClusterAdminPolicy": "cluster-admin",
    "AmazonEKSAdminPolicy": "admin",
    "AmazonEKSEditPolicy": "edit",
    "AmazonEKSViewPolicy": "view",
    "AmazonEKSAdminViewPolicy": "view",
}

_lock = threading.Lock()
_planes: dict[str, PlaneView] = {}
_server: ThreadingHTTPServer | None = None
#: A cluster → its access entries by principal ARN (each with `username`, `kubernetes_groups` and `policies`):
#: kept by the EKS side, which imports this package and hands the lookup in (`use_access_entries`, at install).
_access_entries: Callable[[Any], Mapping[str, Any]] | None = None


def use_access_entries(lookup: Callable[[Any], Mapping[str, Any]]) -> None:
    """Where `review` finds a cluster's access entries: `lookup(cluster)` maps principal ARNs to entries."""
    global _access_entries
    _access_entries = lookup


def register(plane: PlaneView) -> str:
    """The webhook URL for the plane's apiserver; the server starts with the first plane."""
    global _server
    key = f"{plane.account}-{plane.region}-{plane.name}-{id(plane):x}"
    with _lock:
        if _server is None:
            _server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
            _server.daemon_threads = True
            threading.Thread(target=_server.serve_forever, name="kube-token-webhook", daemon=True).start()
        _planes[key] = plane
        plane.webhook_key = key
        return f"http://127.0.0.1:{_server.server_address[1]}/authenticate/{key}"


def unregister(plane: PlaneView) -> None:
    with _lock:
        _planes.pop(getattr(plane, "webhook_key", ""), None)


def bind_access_policies(api: Client) -> None:
    """The ClusterRoleBindings that grant each access policy's group its ClusterRole."""
    for policy, role in POLICY_ROLES.items():
        binding = {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": POLICY_GROUP_PREFIX + policy, "labels": {"eks.amazonaws.com/component": "access"}},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": POLICY_GROUP_PREFIX + policy}],
        }
        try:
            api.call("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", binding)
        except Conflict:
            pass


def review(plane: PlaneView, token: str) -> tuple[dict[str, Any] | None, str]:
    """(the user info, "") for a token the cluster's access entries admit, else (None, why not)."""
    problem = auth.problem(f"Bearer {token}")
    if problem:
        return None, problem
    query = auth.query_of(auth.url_of(token))
    credential = query.get("x-amz-credential", "").split("/")
    if len(credential) < 3 or not credential[0]:
        return None, "presigned URL has no X-Amz-Credential"
    access_key, region = credential[0], credential[2]
    caller = _caller(plane, access_key, region)
    if _access_entries is None:
        raise RuntimeError("the EKS side has not handed the token webhook its access entries (k8s.install)")
    principal = auth.iam_principal(caller)
    entries = _access_entries(plane.cluster)
    entry = entries.get(principal)
    if entry is None and ":assumed-role/" in caller:
        # An assumed-role ARN has no path; the entry names the role with it (role/ci/deployer): same role name.
        prefix, name = principal.split(":role/", 1)
        entry = next((e for arn, e in entries.items() if arn.startswith(prefix + ":role/")
                      and arn.rsplit("/", 1)[-1] == name), None)
    if entry is None:
        return None, f"no access entry on cluster {plane.name} for {principal} (caller {caller})"
    session = caller.rsplit("/", 1)[-1] if ":assumed-role/" in caller else ""
    groups = list(entry.kubernetes_groups)
    for policy_arn, association in entry.policies.items():
        name = policy_arn.rsplit("/", 1)[-1]
        if name in POLICY_ROLES and association["accessScope"]["type"] == "cluster":
            groups.append(POLICY_GROUP_PREFIX + name)
    username = entry.username.replace("{{SessionName}}", session)
    return {"username": username, "uid": f"aws-iam-authenticator:{plane.account}:{access_key}", "groups": groups,
            "extra": {"arn": [caller], "principalId": [access_key], "accessKeyId": [access_key]}}, ""


def _caller(plane: PlaneView, access_key: str, region: str) -> str:
    from moto.sts.models import sts_backends

    sts = sts_backends[plane.account][getattr(plane.backend, "partition", "aws")]
    _, arn, _ = sts.get_caller_identity(access_key, region)
    return arn


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # the emulator's log, not stderr lines per call
        log.debug("token webhook: " + format, *args)

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        key = urlsplit(self.path).path.rsplit("/", 1)[-1]  # the apiserver adds ?timeout=…
        with _lock:
            plane = _planes.get(key)
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        except ValueError:
            self._answer(400, {"error": "not JSON"})
            return
        status: dict[str, Any] = {"authenticated": False}
        if plane is None:
            status["error"] = "cluster is gone"
        else:
            user, why = review(plane, (body.get("spec") or {}).get("token", ""))
            if user is None:
                log.warning("cluster %s refused a token: %s", plane.name, why)
                status["error"] = why
            else:
                status = {"authenticated": True, "user": user, "audiences": (body.get("spec") or {}).get("audiences")}
                if status["audiences"] is None:
                    del status["audiences"]
        self._answer(200, {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "status": status})

    def _answer(self, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError, socket.timeout):
            pass

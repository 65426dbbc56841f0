"""The HTTPS side: a threaded HTTP/1.1 server on 127.0.0.1 behind TLS, bearer-token authentication, and the
routing of kube-apiserver's REST paths to the verbs in `api`.

Paths: /version, /healthz|/livez|/readyz, /api, /apis, /apis/{g}, /api/v1, /apis/{g}/{v}, and
`/api/v1[/namespaces/{ns}]/{plural}[/{name}[/status]]`, the same under `/apis/{g}/{v}`. A request before the
cluster is ACTIVE (or while it is being deleted) is answered 503 ServiceUnavailable; a request without a valid EKS
token 401. Watches (`?watch=true`, `/watch/` paths) are 405 MethodNotAllowed. Responses are JSON only (no
protobuf, no Table). TLS handshakes run in the request's own thread, so a stuck client cannot block others.
"""

from __future__ import annotations

import json
import logging
import socket
import ssl
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from . import api, auth, discovery, errors
from .errors import ApiError

if TYPE_CHECKING:
    from .controlplane import ControlPlane

log = logging.getLogger("kbp_emulator.k8s")
#: Longer than hyper's 90 s pool idle timeout, so a kube-rs client always closes an idle connection first.
IDLE_TIMEOUT = 120.0


class KubeHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False
    block_on_close = False
    request_queue_size = 64

    def __init__(self, control_plane: "ControlPlane", context: ssl.SSLContext):
        self.control_plane = control_plane
        self.context = context
        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def port(self) -> int:
        return self.server_address[1]

    def finish_request(self, request: Any, client_address: Any) -> None:
        request.settimeout(IDLE_TIMEOUT)
        try:
            conn = self.context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as e:
            log.debug("TLS handshake with %s failed: %s", client_address, e)
            return
        try:
            self.RequestHandlerClass(conn, client_address, self)
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("connection from %s failed", client_address, exc_info=True)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kbp-kube-standin"
    sys_version = ""
    server: KubeHTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - BaseHTTPRequestHandler's signature
        log.debug("%s " + format, self.client_address[0], *args)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_PATCH(self) -> None:
        self._serve("PATCH")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def do_HEAD(self) -> None:
        self._serve("HEAD")

    def _body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, code: int, body: Any, content_type: str = "application/json") -> None:
        data = body if isinstance(body, bytes) else json.dumps(body, separators=(",", ":")).encode()
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-cache, private")
        self.send_header("Audit-Id", str(uuid.uuid4()))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _serve(self, method: str) -> None:
        try:
            raw = self._body()
        except (OSError, ValueError):
            self.close_connection = True
            return
        cp = self.server.control_plane
        try:
            state = cp.serving_state()
            if state != "ok":
                raise errors.unavailable(f"the server is currently unable to handle the request (cluster {cp.name} is {state})")
            why = auth.problem(self.headers.get("Authorization"))
            if why is not None:
                # The client only gets "Unauthorized", as from EKS; the reason goes to the emulator's log.
                log.warning("cluster %s: 401 for %s %s: %s", cp.name, method, parts_of(self.path), why)
                raise errors.unauthorized()
            code, body, content_type = route(cp, method, self.path, self.headers, raw)
        except ApiError as e:
            code, body, content_type = e.code, e.status(), "application/json"
        except Exception as e:  # a bug in the stand-in: answer as the real server answers an internal error
            log.exception("internal error serving %s %s", method, self.path)
            code, body, content_type = 500, ApiError(500, "InternalError", f"Internal error occurred: {e}").status(), "application/json"
        try:
            self._send(code, body, content_type)
        except (OSError, socket.timeout):
            self.close_connection = True


def parts_of(raw_path: str) -> str:
    return urlsplit(raw_path).path


def _params(query: str) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(query, keep_blank_values=True).items()}


def _user_agent_manager(headers: Any) -> str:
    agent = headers.get("User-Agent") or "unknown"
    return agent.split("/", 1)[0] or "unknown"


def route(cp: "ControlPlane", method: str, raw_path: str, headers: Any, raw: bytes) -> tuple[int, Any, str]:
    parts = urlsplit(raw_path)
    params = _params(parts.query)
    segments = [unquote(s) for s in parts.path.split("/") if s]
    accept = headers.get("Accept") or ""
    read = method in ("GET", "HEAD")

    if segments in (["healthz"], ["livez"], ["readyz"]) and read:
        return 200, b"ok", "text/plain; charset=utf-8"
    if segments == ["version"] and read:
        return 200, discovery.version_info(cp.kubernetes_patch_version), "application/json"
    with cp.lock:
        catalog = cp.catalog()
        if segments in (["api"], ["apis"]) and read:
            wanted = discovery.wants_aggregated(accept)
            if wanted:
                return 200, discovery.aggregated(catalog, segments == ["api"], wanted), discovery.content_type(wanted)
            if segments == ["api"]:
                return 200, discovery.api_versions(f"127.0.0.1:{cp.port}"), "application/json"
            return 200, discovery.group_list(catalog), "application/json"
        if len(segments) == 2 and segments[0] == "apis" and read:
            found = discovery.group(catalog, segments[1])
            if found is None:
                raise errors.no_route()
            return 200, found, "application/json"
        if segments == ["api", "v1"] and read:
            return 200, discovery.resource_list(catalog, "", "v1"), "application/json"
        if len(segments) == 3 and segments[0] == "apis" and read:
            found = discovery.resource_list(catalog, segments[1], segments[2])
            if found is None:
                raise errors.no_route()
            return 200, found, "application/json"

        if segments[:2] == ["api", "v1"]:
            group, version, rest = "", "v1", segments[2:]
        elif len(segments) >= 3 and segments[0] == "apis":
            group, version, rest = segments[1], segments[2], segments[3:]
        else:
            raise errors.no_route()
        if rest[:1] == ["watch"] or params.get("watch") in ("true", "1"):
            raise errors.method_not_allowed("watch is not supported by the kbp Kubernetes stand-in; poll with list/get")
        return _resource_request(cp, catalog, method, group, version, rest, params, headers, raw)


def _resource_request(
    cp: "ControlPlane", catalog: Any, method: str, group: str, version: str, rest: list[str], params: dict[str, str],
    headers: Any, raw: bytes,
) -> tuple[int, Any, str]:
    ns: str | None = None
    namespace_status = group == "" and len(rest) == 3 and rest[0] == "namespaces" and rest[2] == "status"
    if len(rest) >= 3 and rest[0] == "namespaces" and not namespace_status:
        ns, rest = rest[1], rest[2:]
    # else /api/v1/namespaces/{name}[/status]: the Namespace object itself
    if not rest or len(rest) > 3:
        raise errors.no_route()
    rt = catalog.lookup(group, version, rest[0])
    if rt is None or (ns is not None and not rt.namespaced):
        raise errors.no_route()
    name = rest[1] if len(rest) >= 2 else None
    sub = rest[2] if len(rest) == 3 else ""
    if sub and (sub != "status" or not rt.has_status(version)):
        raise errors.no_route()
    if rt.namespaced and name is not None and ns is None:
        raise errors.no_route()
    namespace = ns or ""

    dry_run = params.get("dryRun") == "All"
    manager = params.get("fieldManager") or ""
    options = api.Options(manager=manager, dry_run=dry_run, force=params.get("force") in ("true", "1"))
    json_type = "application/json"

    if name is None:
        if method in ("GET", "HEAD"):
            return 200, api.list_objects(cp, rt, version, ns, params.get("labelSelector", ""),
                                         params.get("fieldSelector", "")), json_type
        if method == "POST":
            if rt.namespaced and ns is None:
                raise errors.method_not_allowed()
            options.manager = manager or _user_agent_manager(headers)
            stored = api.create(cp, rt, version, namespace, _decode_body(headers, raw), options)
            return 201, api.render(rt, version, stored), json_type
        if method == "DELETE":
            if "deletecollection" not in rt.verbs:
                raise errors.method_not_allowed()
            options_body = _delete_options(params, raw)
            return 200, api.delete_collection(cp, rt, version, ns, params.get("labelSelector", ""),
                                              params.get("fieldSelector", ""), options_body,
                                              dry_run or _dry_run_in(options_body)), json_type
        raise errors.method_not_allowed()

    if method in ("GET", "HEAD"):
        return 200, api.get(cp, rt, version, namespace, name), json_type
    if method == "PUT":
        options.manager = manager or _user_agent_manager(headers)
        stored = api.replace(cp, rt, version, namespace, name, sub, _decode_body(headers, raw), options)
        return 200, api.render(rt, version, stored), json_type
    if method == "PATCH":
        content_type = (headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if content_type != api.APPLY:
            options.manager = manager or _user_agent_manager(headers)
        code, stored = api.patch(cp, rt, version, namespace, name, sub, content_type, raw, options)
        return code, api.render(rt, version, stored), json_type
    if method == "DELETE" and not sub:
        options_body = _delete_options(params, raw)
        return 200, api.delete(cp, rt, version, namespace, name, options_body,
                               dry_run or _dry_run_in(options_body)), json_type
    raise errors.method_not_allowed()


def _decode_body(headers: Any, raw: bytes) -> Any:
    content_type = (headers.get("Content-Type") or "application/json").split(";")[0].strip().lower()
    if content_type in ("application/yaml", "application/x-yaml", "text/yaml"):
        import yaml

        try:
            return yaml.safe_load(raw)
        except yaml.YAMLError as e:
            raise errors.bad_request(f"error decoding YAML: {e}") from None
    if content_type not in ("application/json", "*/*", ""):
        raise errors.unsupported_media_type(content_type, ["application/json", "application/yaml"])
    try:
        return json.loads(raw or b"null")
    except ValueError as e:
        raise errors.bad_request(f"error decoding JSON: {e}") from None


def _dry_run_in(options: dict[str, Any]) -> bool:
    """DeleteOptions.dryRun in the body (kube-rs sends it there): ["All"]."""
    value = options.get("dryRun")
    return value == "All" or (isinstance(value, list) and "All" in value)


def _delete_options(params: dict[str, str], raw: bytes) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if raw.strip():
        try:
            body = json.loads(raw)
        except ValueError as e:
            raise errors.bad_request(f"error decoding DeleteOptions: {e}") from None
        if isinstance(body, dict):
            options.update(body)
    if params.get("propagationPolicy"):
        options["propagationPolicy"] = params["propagationPolicy"]
    if params.get("orphanDependents"):
        options["orphanDependents"] = params["orphanDependents"] == "true"
    return options


def start(control_plane: "ControlPlane", context: ssl.SSLContext) -> tuple[KubeHTTPServer, threading.Thread]:
    server = KubeHTTPServer(control_plane, context)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2},
                              name=f"kube-{control_plane.name}", daemon=True)
    thread.start()
    return server, thread

"""A fault-injecting HTTP proxy between kbp and the emulator, for tests of what real AWS does to a client:
throttling, 5xx, an answer lost after the change was made, a request that lands long after its caller gave up.

    python -m kbp_emulator.fault_proxy --listen 127.0.0.1:0 --upstream http://127.0.0.1:4566 \\
        [--config faults.json] [--log proxy.log] [--watch-pid PID]

kbp's AWS_ENDPOINT_URL points at the proxy; the proxy forwards every request to the emulator unchanged (method,
path, headers in order, Host as the SDK signed it, bodies streamed, chunked and aws-chunked uploads with their
framing and trailers) unless the configuration (fault_proxy_rules.py) says otherwise for that call
(fault_proxy_calls.py names the call). Injected errors are written in the service's own protocol
(fault_proxy_errors.py), so the SDK classifies them as it would AWS's.

Admin paths (never faulted): `GET /__fault_proxy/stats` (JSON counters), `GET|POST /__fault_proxy/config`
(read or replace the configuration), `POST /__fault_proxy/reset` (zero the counters). Once listening it prints
`fault_proxy: listening on http://HOST:PORT ...` on stdout (with `--listen HOST:0` the port is chosen there).
It exits on SIGTERM or SIGINT, and when the `--watch-pid` process (default KBP_EMULATOR_WATCH_PID) is gone.

Standard library only (http.server + http.client): it must run wherever the emulator runs, and no maintained
proxy library injects faults in AWS's protocols.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import select
import signal
import socket
import socketserver
import sys
import threading
import time
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from . import fault_proxy_errors as errors
from .fault_proxy_calls import FORM_CONTENT_TYPE, Call, identify
from .fault_proxy_rules import (
    DROP_RESPONSE,
    FAIL,
    SERVER_ERROR,
    THROTTLE,
    ConfigError,
    Fault,
    Injector,
    parse_config,
)

ADMIN = "/__fault_proxy/"
# Hop-by-hop headers (RFC 9110 §7.6.1) are the connection's, not the request's; everything else goes through.
HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "te", "upgrade"}
# The emulator answers at once even for long operations (they settle lazily), so this only bounds a hung emulator.
UPSTREAM_TIMEOUT_SECS = 300
PIECE = 64 * 1024


class RequestBody:
    """The client's request body, read once: streamed to the emulator, or buffered first when the call must be
    identified from it (query protocols' forms) or it must outlive the client (delay_forward). A chunked body
    keeps its chunks and trailers so the emulator receives the same framing."""

    def __init__(self, rfile, headers):
        self._rfile = rfile
        self.chunked = "chunked" in headers.get("Transfer-Encoding", "").lower()
        self._length = 0 if self.chunked else int(headers.get("Content-Length") or 0)
        self._buffer: list[bytes] | None = None
        self.trailers: list[bytes] = []

    def _read(self):
        if not self.chunked:
            left = self._length
            while left > 0:
                piece = self._rfile.read(min(PIECE, left))
                if not piece:
                    raise ConnectionError("the client closed the connection in the middle of the request body")
                left -= len(piece)
                yield piece
            return
        while True:
            size_line = self._rfile.readline(65537)
            if not size_line:
                raise ConnectionError("the client closed the connection in the middle of a chunked body")
            size = int(size_line.split(b";", 1)[0].strip(), 16)
            if size == 0:
                break
            data = self._rfile.read(size)
            self._rfile.readline()  # the CRLF after the chunk
            yield data
        while True:
            line = self._rfile.readline(65537)
            if line in (b"\r\n", b"\n", b""):
                break
            self.trailers.append(line)

    def pieces(self):
        """The body's data, chunk by chunk; streamed from the client unless it was buffered."""
        if self._buffer is not None:
            yield from self._buffer
        else:
            self._buffer = []  # read once: a second pass sees an empty body rather than a hung socket
            yield from self._read()

    def read_all(self) -> bytes:
        if self._buffer is None:
            self._buffer = list(self._read())
        return b"".join(self._buffer)

    def discard(self) -> None:
        """Reads the body without keeping it, so the next request on a kept-alive connection parses."""
        for _ in self.pieces():
            pass

    def framed(self):
        """The body as it goes on the wire to the emulator."""
        if not self.chunked:
            yield from self.pieces()
            return
        for piece in self.pieces():
            yield b"%x\r\n%s\r\n" % (len(piece), piece)
        yield b"0\r\n" + b"".join(self.trailers) + b"\r\n"


class RequestLog:
    """One line per request in the --log file: time, call, method and path, fault, what the client got."""

    def __init__(self, path: str | None):
        self._file = open(path, "a", buffering=1, encoding="utf-8") if path else None
        self._lock = threading.Lock()

    def line(self, text: str) -> None:
        if self._file is None:
            return
        stamp = datetime.now().isoformat(timespec="milliseconds")
        with self._lock:
            self._file.write(f"{stamp} {text}\n")

    def close(self) -> None:
        if self._file is not None:
            self._file.close()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDKs' connection pools expect
    server: FaultProxy

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in separate writes; with Nagle's algorithm and the client's delayed ACK each
        # answer would wait 40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format, *args):  # noqa: A002 - BaseHTTPRequestHandler's signature
        pass  # the request log has one line per request; stderr stays quiet

    def handle_any(self) -> None:
        if self.path.startswith(ADMIN):
            self.admin()
            return
        started = time.monotonic()
        body = RequestBody(self.rfile, self.headers)
        form = body.read_all() if self.headers.get("Content-Type", "").startswith(FORM_CONTENT_TYPE) else None
        call = identify(self.command, self.path, self.headers, form)
        fault = self.server.injector.decide(call)
        outcome = self.serve(call, fault, body)
        took = (time.monotonic() - started) * 1000
        fault_name = f"{fault.kind} " if fault else ""
        self.server.log.line(f"{call.key} {self.command} {self.path[:160]} {fault_name}-> {outcome} ({took:.0f} ms)")

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = do_OPTIONS = handle_any

    def serve(self, call: Call, fault: Fault | None, body: RequestBody) -> str:
        """Answers the request as `fault` says; returns what happened, for the log."""
        injector = self.server.injector
        if fault is None:
            status = self.forward(body)
            return str(status) if status is not None else "502 (the emulator did not answer)"
        if fault.kind in (THROTTLE, SERVER_ERROR, FAIL):
            body.discard()
            status, headers, payload = errors.for_fault(call, fault)
            injector.record(status, forwarded=False)
            self.reply(status, headers, payload)
            return f"{status} (not forwarded)"
        if fault.kind == DROP_RESPONSE:
            status = self.forward(body, relay=False)
            self.close_connection = True
            injector.record(None, forwarded=status is not None)
            return f"emulator answered {status}; connection closed without an answer"
        # delay_forward: the whole body first, so the request survives its client.
        body.read_all()
        time.sleep(fault.seconds)
        gone = self.client_gone()
        status = self.forward(body, relay=not gone)
        if gone:
            self.close_connection = True
            injector.record(None, forwarded=status is not None)
        return f"{status} after {fault.seconds:g} s" + (" (the client had gone; not relayed)" if gone else "")

    def forward(self, body: RequestBody, relay: bool = True) -> int | None:
        """Sends the request to the emulator; relays its answer unless `relay` is false (the answer is still read
        whole, so the emulator has finished the call). Returns the emulator's status, None if it did not answer
        (the client then gets a 502 from the proxy)."""
        injector = self.server.injector
        host, port = self.server.upstream
        conn = http.client.HTTPConnection(host, port, timeout=UPSTREAM_TIMEOUT_SECS)
        try:
            try:
                response = self.send_upstream(conn, body)
            except (OSError, http.client.HTTPException) as e:
                self.server.log.line(f"the emulator did not answer {self.command} {self.path[:160]}: {e!r}")
                if relay:
                    message = f"fault_proxy: the emulator at {host}:{port} did not answer: {e}\n".encode()
                    self.close_connection = True
                    injector.record(502, forwarded=False, upstream_error=True)
                    self.reply(502, [("Content-Type", "text/plain")], message)
                return None
            if not relay:
                response.read()
                return response.status
            # Counted before the client can see the answer, so stats read right after it include it.
            injector.record(response.status, forwarded=True)
            self.relay(response)
            return response.status
        finally:
            conn.close()

    def send_upstream(self, conn: http.client.HTTPConnection, body: RequestBody) -> http.client.HTTPResponse:
        conn.connect()
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # Host and every other end-to-end header as the client sent (and signed) them, in their order.
        conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
        for name, value in self.headers.items():
            if name.lower() not in HOP_BY_HOP:
                conn.putheader(name, value)
        conn.putheader("Connection", "close")
        conn.endheaders()
        for piece in body.framed():
            conn.send(piece)
        return conn.getresponse()

    def relay(self, response: http.client.HTTPResponse) -> None:
        self.send_response_only(response.status, response.reason)
        has_body = self.command != "HEAD" and response.status not in (204, 304) and response.status >= 200
        length = response.getheader("Content-Length")
        for name, value in response.getheaders():
            if name.lower() not in HOP_BY_HOP and name.lower() != "transfer-encoding":
                self.send_header(name, value)
        chunked = has_body and length is None
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if not has_body:
            return
        while True:
            piece = response.read1(PIECE) if chunked else response.read(PIECE)
            if not piece:
                break
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
        if chunked:
            self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def reply(self, status: int, headers: list[tuple[str, str]], payload: bytes) -> None:
        self.send_response_only(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Date", self.date_time_string())
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)
        self.wfile.flush()

    def client_gone(self) -> bool:
        """True if the client closed its side (a read would return end of file) while the request was held."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def admin(self) -> None:
        injector = self.server.injector
        length = int(self.headers.get("Content-Length") or 0)
        payload = self.rfile.read(length) if length else b""
        route = (self.command, self.path.split("?", 1)[0])
        if route == ("GET", ADMIN + "stats"):
            self.reply_json(200, injector.stats())
        elif route == ("GET", ADMIN + "config"):
            self.reply_json(200, self.server.raw_config)
        elif route == ("POST", ADMIN + "config"):
            try:
                raw = json.loads(payload or b"{}")
                config = parse_config(raw)
            except (ValueError, ConfigError) as e:
                self.reply_json(400, {"error": str(e)})
                return
            injector.replace(config)
            self.server.raw_config = {**raw, "seed": config.seed}
            self.server.log.line(f"config replaced: {json.dumps(self.server.raw_config)}")
            self.reply_json(200, self.server.raw_config)
        elif route == ("POST", ADMIN + "reset"):
            injector.reset()
            self.server.log.line("counters reset")
            self.reply_json(200, injector.stats())
        else:
            self.reply_json(404, {"error": f"no admin route {self.command} {self.path}"})

    def reply_json(self, status: int, value) -> None:
        self.reply(status, [("Content-Type", "application/json")], json.dumps(value, indent=1).encode())


class FaultProxy(ThreadingHTTPServer):
    daemon_threads = True
    # kbp opens dozens of connections at once; the default backlog of 5 would make some wait for a SYN retry.
    request_queue_size = 256

    def __init__(self, listen: tuple[str, int], upstream: str, raw_config: dict, log_path: str | None = None):
        parts = urlsplit(upstream)
        if parts.scheme != "http" or not parts.hostname or not parts.port:
            raise ValueError(f"--upstream must be http://HOST:PORT, not {upstream!r}")
        self.upstream = (parts.hostname, parts.port)
        config = parse_config(raw_config)
        self.raw_config = {**raw_config, "seed": config.seed}
        self.injector = Injector(config)
        self.log = RequestLog(log_path)
        super().__init__(listen, Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind looks up the host's FQDN, which can take seconds without DNS.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    @property
    def url(self) -> str:
        return f"http://{self.server_name}:{self.server_port}"

    def handle_error(self, request, client_address) -> None:
        self.log.line(f"connection from {client_address[0]}:{client_address[1]} failed: {sys.exc_info()[1]!r}")


def watch(pid: int, stop) -> None:
    """Calls `stop` once process `pid` is gone (or a zombie), like scripts/emulator.sh's watchdog."""

    def alive() -> bool:
        try:
            with open(f"/proc/{pid}/status") as f:
                return not any(line.startswith("State:") and "Z" in line.split()[1] for line in f)
        except FileNotFoundError:
            return False
        except OSError:
            try:
                os.kill(pid, 0)
                return True
            except ProcessLookupError:
                return False

    def loop() -> None:
        while alive():
            time.sleep(1)
        stop()

    threading.Thread(target=loop, name="watchdog", daemon=True).start()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m kbp_emulator.fault_proxy", description=__doc__.split("\n\n")[0])
    parser.add_argument("--listen", default="127.0.0.1:0", help="HOST:PORT to listen on (port 0: any free port)")
    parser.add_argument("--upstream", required=True, help="the emulator, http://HOST:PORT")
    parser.add_argument("--config", help="a JSON file of rates and rules (default: no faults)")
    parser.add_argument("--log", help="append one line per request to this file")
    parser.add_argument("--watch-pid", type=int, default=int(os.environ.get("KBP_EMULATOR_WATCH_PID") or 0) or None,
                        help="exit when this process is gone (default: $KBP_EMULATOR_WATCH_PID)")
    args = parser.parse_args(argv)
    host, _, port = args.listen.rpartition(":")
    try:
        raw = {}
        if args.config:
            with open(args.config, encoding="utf-8") as f:
                raw = json.load(f)
        server = FaultProxy((host or "127.0.0.1", int(port)), args.upstream, raw, args.log)
    except (OSError, ValueError, ConfigError) as e:
        sys.exit(f"fault_proxy: {e}")

    def stop(*_) -> None:
        # shutdown() waits for serve_forever to return, so it cannot run on the thread serving (a signal handler's).
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if args.watch_pid:
        watch(args.watch_pid, stop)
    seed = server.raw_config["seed"]
    server.log.line(f"listening on {server.url}, forwarding to {args.upstream}, seed {seed}")
    print(f"fault_proxy: listening on {server.url}, forwarding to {args.upstream}, seed {seed}", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        server.log.line("stopped")
        server.log.close()


if __name__ == "__main__":
    main()

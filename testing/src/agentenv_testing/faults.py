"""A fault-injecting HTTP proxy: put it between a store and its emulator to answer some requests with 5xx or
throttling errors, and check that the store retries with backoff instead of failing the run.

    with FaultProxy("http://127.0.0.1:5000") as proxy:
        store = S3ObjectStore({"bucket": "b", "endpoint_url": proxy.url})
        proxy.fail_next(2, Fault(503, b"<Error><Code>SlowDown</Code></Error>"))
        store.put("k", b"v")          # two 503s, then the real answer
        assert proxy.injected == 2

Requests that are not failed are forwarded to the upstream unchanged (HTTP/1.1, keep-alive); the proxy
records when each request arrived so a test can check that retries were spaced out.
"""

from __future__ import annotations

import http.client
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

from agentenv_testing.services import ThreadedHttpServer

_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"}


@dataclass(frozen=True)
class Fault:
    """One injected answer: status, body and headers (for example 503 SlowDown, or 429)."""

    status: int = 503
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "text/plain"})


class FaultProxy(ThreadedHttpServer):
    """A reverse proxy on 127.0.0.1 that fails the next N requests with a `Fault`, then forwards again."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        if parts.scheme != "http" or not parts.hostname or not parts.port:
            raise ValueError(f"upstream must be http://HOST:PORT, got {upstream!r}")
        self.upstream_host, self.upstream_port = parts.hostname, parts.port
        self._lock = threading.Lock()
        self._pending: list[Fault] = []
        self.injected = 0
        self.forwarded = 0
        self.arrivals: list[float] = []
        super().__init__()

    def fail_next(self, count: int, fault: Fault | None = None) -> None:
        """Answer the next `count` requests with `fault` (503 by default) instead of forwarding them."""
        with self._lock:
            self._pending.extend([fault or Fault()] * count)

    def _take(self) -> Fault | None:
        with self._lock:
            self.arrivals.append(time.monotonic())
            if self._pending:
                self.injected += 1
                return self._pending.pop(0)
            self.forwarded += 1
            return None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                """Quiet: test output is not the place for an access log."""

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    chunks = []
                    while (size := int(self.rfile.readline().split(b";")[0], 16)) > 0:
                        chunks.append(self.rfile.read(size))
                        self.rfile.readline()
                    while self.rfile.readline() not in (b"\r\n", b""):
                        pass  # trailers
                    return b"".join(chunks)
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _relay(self) -> None:
                body = self._body()
                fault = proxy._take()
                if fault is not None:
                    self._answer(fault.status, fault.headers, fault.body)
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
                if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                    headers["Content-Length"] = str(len(body))
                upstream = http.client.HTTPConnection(proxy.upstream_host, proxy.upstream_port, timeout=60)
                try:
                    upstream.request(self.command, self.path, body=body, headers=headers)
                    response = upstream.getresponse()
                    data = response.read()
                    kept = {k: v for k, v in response.getheaders() if k.lower() not in _HOP_BY_HOP}
                    self._answer(response.status, kept, data, head=self.command == "HEAD")
                finally:
                    upstream.close()

            def _answer(self, status: int, headers: dict[str, str], body: bytes, *, head: bool = False) -> None:
                self.send_response(status)
                for name, value in headers.items():
                    if name.lower() != "content-length":
                        self.send_header(name, value)
                length = headers.get("Content-Length", headers.get("content-length")) if head else None
                self.send_header("Content-Length", length or str(len(body)))
                self.end_headers()
                if not head:
                    self.wfile.write(body)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = do_PATCH = _relay

        return Handler

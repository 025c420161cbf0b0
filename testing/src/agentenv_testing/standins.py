"""A stand-in of Google Secret Manager's REST API (v1), for tests: Secret Manager has no emulator.

It serves what `SecretManagerServiceClient(transport="rest")` calls to create a secret, add a version and
access one — `POST /v1/projects/P/secrets?secretId=S`, `POST /v1/projects/P/secrets/S:addVersion`,
`GET /v1/projects/P/secrets/S/versions/V:access` — with Google's JSON error shape. Secrets live in memory.
"""

from __future__ import annotations

import base64
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

_SECRETS = re.compile(r"/v1/projects/(?P<project>[^/]+)/secrets$")
_ADD = re.compile(r"/v1/projects/(?P<project>[^/]+)/secrets/(?P<secret>[^/:]+):addVersion$")
_ACCESS = re.compile(r"/v1/projects/(?P<project>[^/]+)/secrets/(?P<secret>[^/:]+)/versions/(?P<version>[^/:]+):access$")


class SecretManagerStandIn:
    """An in-memory Secret Manager REST server on 127.0.0.1; `url` is its endpoint."""

    def __init__(self) -> None:
        self.versions: dict[str, list[bytes]] = {}  # projects/P/secrets/S → payloads, version n at n-1
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                """Quiet."""

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _error(self, status: int, reason: str, message: str) -> None:
                self._send(status, {"error": {"code": status, "message": message, "status": reason}})

            def _json(self) -> dict[str, Any]:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                found: dict[str, Any] = json.loads(raw or b"{}")
                return found

            def do_POST(self) -> None:
                url = urlsplit(self.path)
                body = self._json()
                if match := _SECRETS.match(url.path):
                    secret_id = parse_qs(url.query).get("secretId", [""])[0]
                    name = f"projects/{match['project']}/secrets/{secret_id}"
                    with standin.lock:
                        if name in standin.versions:
                            return self._error(409, "ALREADY_EXISTS", f"Secret [{name}] already exists.")
                        standin.versions[name] = []
                    return self._send(200, {"name": name, "replication": body.get("replication", {})})
                if match := _ADD.match(url.path):
                    name = f"projects/{match['project']}/secrets/{match['secret']}"
                    payload = base64.b64decode(body.get("payload", {}).get("data", ""))
                    with standin.lock:
                        if name not in standin.versions:
                            return self._error(404, "NOT_FOUND", f"Secret [{name}] not found.")
                        standin.versions[name].append(payload)
                        number = len(standin.versions[name])
                    return self._send(200, {"name": f"{name}/versions/{number}", "state": "ENABLED"})
                return self._error(404, "NOT_FOUND", f"no such method: POST {url.path}")

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                match = _ACCESS.match(url.path)
                if not match:
                    return self._error(404, "NOT_FOUND", f"no such method: GET {url.path}")
                name = f"projects/{match['project']}/secrets/{match['secret']}"
                with standin.lock:
                    payloads = standin.versions.get(name, [])
                    version = match["version"]
                    index = len(payloads) if version == "latest" else int(version) if version.isdigit() else 0
                    if not 1 <= index <= len(payloads):
                        return self._error(404, "NOT_FOUND", f"Secret Version [{name}/versions/{version}] not found.")
                    data = payloads[index - 1]
                self._send(
                    200, {"name": f"{name}/versions/{index}", "payload": {"data": base64.b64encode(data).decode()}}
                )

        return Handler

    def start(self) -> SecretManagerStandIn:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> SecretManagerStandIn:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

"""A local stand-in for E2B, spoken to by the real `e2b` SDK: control plane, envd and the traffic edge.

Three parts, all on 127.0.0.1 with ephemeral ports (so tests can run in parallel), standard library only
plus the Connect-RPC server bases that ship inside the SDK (`e2b.envd.*.*_connect`):

- **control plane** (the SDK's `api_url`): `POST /v2/sandboxes`, `GET /v2/sandboxes` (metadata filter),
  `POST /v2/sandboxes/{id}/connect`, `GET /sandboxes/{id}`, `DELETE /sandboxes/{id}`; checks `X-API-KEY`;
  kills sandboxes past their timeout, as E2B does.
- **envd** (the SDK's `sandbox_url`; the sandbox is picked by the `E2b-Sandbox-Id` header, as E2B's edge does,
  and `X-Access-Token` must be the sandbox's envd token): `GET /health`, `GET`/`POST /files` (octet-stream
  and multipart uploads), Connect-RPC `process.Process/{Start,List,SendSignal}` (JSON codec, server
  streaming for Start) and `filesystem.Filesystem/MakeDir`. Commands run for real as local subprocesses,
  one process group each, in a per-sandbox folder: `<root>/<id>/home/user` is the home and working folder,
  and absolute paths of the file API are mapped under `<root>/<id>/`. Bookkeeping, not isolation: a command
  that names an absolute path sees the host's filesystem.
- **edge** (a plain HTTP forward proxy): `http://<port>-<id>.<domain>/…` is routed to `127.0.0.1:<port>`
  while sandbox `<id>` is alive, 502 "… was not found" after it was killed — what E2B's edge does by host.

What it does not do: pause/resume, snapshots, templates beyond a name check, PTYs, stdin, reconnecting to
a process (`Process/Connect`), the other `filesystem.Filesystem` methods (the provider does not use them),
egress enforcement (each create request body is kept in `created`, so tests check what the SDK sent).
"""

from __future__ import annotations

import contextlib
import email.parser
import email.policy
import http.client
import json
import os
import queue
import re
import shutil
import signal
import socketserver
import subprocess
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path, PurePosixPath
from typing import Any
from wsgiref.simple_server import ServerHandler, WSGIRequestHandler, WSGIServer

ENVD_VERSION = "0.6.7"
HOME = "/home/user"
_EDGE_HOST = re.compile(r"^(?P<port>\d+)-(?P<id>[a-z0-9]+)\.(?P<domain>.+)$")


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat().replace("+00:00", "Z")


@dataclass
class StandinSandbox:
    """One sandbox: its folder, settings from the create request, and the process groups it started."""

    id: str
    template: str
    root: Path
    metadata: dict[str, str]
    envs: dict[str, str]
    token: str
    started: float
    end: float
    request: dict[str, Any]
    procs: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def home(self) -> Path:
        return self.root / HOME.lstrip("/")

    def resolve(self, path: str) -> Path:
        """A sandbox path (relative to the home, or absolute) mapped into the sandbox folder."""
        posix = PurePosixPath(path if path.startswith("/") else f"{HOME}/{path}")
        parts = [p for p in posix.parts if p != "/"]
        if ".." in parts:
            raise PermissionError(f"path {path!r} uses '..'")
        return self.root.joinpath(*parts)

    def kill(self) -> None:
        with self.lock:
            for pid, proc in list(self.procs.items()):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=5)
            self.procs.clear()
        shutil.rmtree(self.root, ignore_errors=True)

    def listed(self, domain: str) -> dict[str, Any]:
        return {
            "templateID": self.template,
            "sandboxID": self.id,
            "clientID": "standin",
            "startedAt": _iso(self.started),
            "endAt": _iso(self.end),
            "cpuCount": 2,
            "memoryMB": 512,
            "diskSizeMB": 1024,
            "state": "running",
            "envdVersion": ENVD_VERSION,
            "metadata": dict(self.metadata),
        }


def _json(start_response: Any, status: int, body: Any, headers: list[tuple[str, str]] | None = None) -> list[bytes]:
    data = b"" if body is None else json.dumps(body).encode()
    reason = http.client.responses.get(status, "")
    start_response(f"{status} {reason}", [("Content-Type", "application/json"), *(headers or [])])
    return [data]


class _ProcessService:
    """`process.Process` over local subprocesses; the sandbox comes from the `E2b-Sandbox-Id` header."""

    def __init__(self, standin: E2BStandIn) -> None:
        self.standin = standin

    def _sandbox(self, ctx: Any) -> StandinSandbox:
        from connectrpc.code import Code
        from connectrpc.errors import ConnectError

        sandbox = self.standin.sandboxes.get(ctx.request_headers.get("e2b-sandbox-id", ""))
        if sandbox is None:
            raise ConnectError(Code.UNAVAILABLE, "The sandbox was not found")
        return sandbox

    def start(self, request: Any, ctx: Any) -> Iterator[Any]:
        from e2b.envd.process import process_pb
        from protobuf import Oneof

        sandbox = self._sandbox(ctx)
        config = request.process
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "HOME": str(sandbox.home),
            "USER": "user",
            **sandbox.envs,
            **dict(config.envs or {}),
        }
        cwd = sandbox.resolve(config.cwd) if config.cwd else sandbox.home
        proc = subprocess.Popen(
            [config.cmd, *config.args],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        with sandbox.lock:
            sandbox.procs[proc.pid] = proc
        event = process_pb.ProcessEvent
        yield process_pb.StartResponse(event=event(event=Oneof("start", event.StartEvent(pid=proc.pid))))
        chunks: queue.Queue[tuple[str, bytes | None]] = queue.Queue()

        def pump(name: str, pipe: Any) -> None:
            for block in iter(lambda: pipe.read1(65536), b""):
                chunks.put((name, block))
            chunks.put((name, None))

        for name, pipe in (("stdout", proc.stdout), ("stderr", proc.stderr)):
            threading.Thread(target=pump, args=(name, pipe), daemon=True).start()
        open_pipes, exited_at = 2, None
        while open_pipes:
            try:
                name, block = chunks.get(timeout=0.1)
            except queue.Empty:
                if proc.poll() is not None:  # a background child may hold the pipes: stop waiting soon
                    exited_at = exited_at or time.monotonic()
                    if time.monotonic() - exited_at > 0.5:
                        break
                continue
            if block is None:
                open_pipes -= 1
            else:
                data = event.DataEvent(output=Oneof(name, block))
                yield process_pb.StartResponse(event=event(event=Oneof("data", data)))
        code = proc.wait()
        if not _group_alive(proc.pid):  # else it left processes running (`server &`): kill() must find them
            with sandbox.lock:
                sandbox.procs.pop(proc.pid, None)
        if code < 0:  # what envd (Go's ProcessState) reports for a signal
            end = event.EndEvent(exit_code=-1, exited=False, status=f"signal: {signal.Signals(-code).name}")
        else:
            end = event.EndEvent(exit_code=code, exited=True, status=f"exit status {code}")
        yield process_pb.StartResponse(event=event(event=Oneof("end", end)))

    def send_signal(self, request: Any, ctx: Any) -> Any:
        from connectrpc.code import Code
        from connectrpc.errors import ConnectError
        from e2b.envd.process import process_pb

        sandbox = self._sandbox(ctx)
        selector = request.process.selector if request.process else None
        pid = selector.value if selector is not None and selector.field == "pid" else None
        if pid not in sandbox.procs:
            raise ConnectError(Code.NOT_FOUND, f"process with pid {pid} not found")
        sig = signal.SIGKILL if request.signal == process_pb.Signal.SIGKILL else signal.SIGTERM
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, sig)
        self.standin.signals.append((sandbox.id, pid, sig.name))
        return process_pb.SendSignalResponse()

    def list(self, request: Any, ctx: Any) -> Any:
        from e2b.envd.process import process_pb

        sandbox = self._sandbox(ctx)
        infos = [
            process_pb.ProcessInfo(
                config=process_pb.ProcessConfig(cmd=str(p.args[0]), args=[str(a) for a in p.args[1:]]), pid=pid
            )
            for pid, p in sandbox.procs.items()
            if p.poll() is None
        ]
        return process_pb.ListResponse(processes=infos)

    def connect(self, request: Any, ctx: Any) -> Iterator[Any]:
        from connectrpc.code import Code
        from connectrpc.errors import ConnectError

        raise ConnectError(Code.UNIMPLEMENTED, "the stand-in does not reconnect to running processes")
        yield  # pragma: no cover - makes this a generator like the real endpoint

    def _unimplemented(self, *args: Any) -> Any:
        from connectrpc.code import Code
        from connectrpc.errors import ConnectError

        raise ConnectError(Code.UNIMPLEMENTED, "not implemented by the stand-in")

    update = stream_input = send_input = close_stdin = _unimplemented


class _FilesystemService:
    """`filesystem.Filesystem`, only MakeDir (what the provider uses); the rest answers UNIMPLEMENTED."""

    def __init__(self, standin: E2BStandIn) -> None:
        self.standin = standin

    def make_dir(self, request: Any, ctx: Any) -> Any:
        from connectrpc.code import Code
        from connectrpc.errors import ConnectError
        from e2b.envd.filesystem import filesystem_pb

        sandbox = self.standin.sandboxes.get(ctx.request_headers.get("e2b-sandbox-id", ""))
        if sandbox is None:
            raise ConnectError(Code.UNAVAILABLE, "The sandbox was not found")
        target = sandbox.resolve(request.path)
        if target.is_dir():
            raise ConnectError(Code.ALREADY_EXISTS, f"directory {request.path} already exists")
        target.mkdir(parents=True)
        entry = filesystem_pb.EntryInfo(name=target.name, type=filesystem_pb.FileType.DIRECTORY, path=request.path)
        return filesystem_pb.MakeDirResponse(entry=entry)

    def _unimplemented(self, *args: Any) -> Any:
        from connectrpc.code import Code
        from connectrpc.errors import ConnectError

        raise ConnectError(Code.UNIMPLEMENTED, "not implemented by the stand-in")

    stat = move = list_dir = remove = watch_dir = _unimplemented
    create_watcher = get_watcher_events = remove_watcher = _unimplemented


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


class _ChunkedReader:
    """`Transfer-Encoding: chunked` request bodies (the SDK's Connect streams send them) as a plain stream."""

    def __init__(self, raw: Any) -> None:
        self.raw, self.left, self.done = raw, 0, False

    def read(self, size: int = -1) -> bytes:
        out = bytearray()
        while not self.done and (size < 0 or len(out) < size):
            if self.left == 0:
                line = self.raw.readline(65537)
                self.left = int(line.split(b";")[0].strip() or b"0", 16)
                if self.left == 0:
                    while self.raw.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    self.done = True
                    break
            take = self.left if size < 0 else min(self.left, size - len(out))
            out += self.raw.read(take)
            self.left -= take
            if self.left == 0:
                self.raw.readline(3)  # the CRLF after a chunk
        return bytes(out)

    def readline(self, size: int = -1) -> bytes:
        return self.read(size if size >= 0 else 65536)


class _QuietHandler(WSGIRequestHandler):
    """wsgiref's handler, plus chunked request bodies, without request logging."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def handle(self) -> None:
        self.raw_requestline = self.rfile.readline(65537)
        if not self.parse_request():
            return
        body = self.rfile
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            body = _ChunkedReader(self.rfile)  # type: ignore[assignment]
        handler = ServerHandler(body, self.wfile, self.get_stderr(), self.get_environ(), multithread=True)
        handler.request_handler = self  # type: ignore[attr-defined]
        handler.run(self.server.get_app())  # type: ignore[attr-defined]


class _ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class E2BStandIn:
    """Control plane + envd (one WSGI server) and the traffic edge (a forward proxy), started by `start()`."""

    def __init__(
        self, root: Path, *, api_key: str = "e2b_standin_key", templates: frozenset[str] = frozenset({"base"})
    ):
        self.root = root
        self.api_key = api_key
        self.templates = templates
        self.domain = "e2b-standin.test"
        self.sandboxes: dict[str, StandinSandbox] = {}
        self.created: list[dict[str, Any]] = []
        """Every create request body the control plane accepted, in order."""
        self.signals: list[tuple[str, int, str]] = []
        self.killed: list[str] = []
        self._counter = 0
        self._lock = threading.Lock()
        self._servers: list[Any] = []

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> E2BStandIn:
        from e2b.envd.filesystem.filesystem_connect import FilesystemWSGIApplication
        from e2b.envd.process.process_connect import ProcessWSGIApplication

        self._rpc = {
            "/process.Process/": ProcessWSGIApplication(_ProcessService(self)),  # type: ignore[arg-type]
            "/filesystem.Filesystem/": FilesystemWSGIApplication(_FilesystemService(self)),  # type: ignore[arg-type]
        }
        api = _ThreadingWSGIServer(("127.0.0.1", 0), _QuietHandler)
        api.set_app(self._app)
        edge = ThreadingHTTPServer(("127.0.0.1", 0), _edge_handler(self))
        edge.daemon_threads = True
        for server in (api, edge):
            threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
            self._servers.append(server)
        self.api_url = f"http://127.0.0.1:{api.server_address[1]}"
        self.sandbox_url = self.api_url
        self.edge_url = f"http://127.0.0.1:{edge.server_address[1]}"
        return self

    def stop(self) -> None:
        for sandbox in list(self.sandboxes.values()):
            sandbox.kill()
        self.sandboxes.clear()
        for server in self._servers:
            server.shutdown()
            server.server_close()
        self._servers.clear()

    def __enter__(self) -> E2BStandIn:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def settings(self) -> dict[str, Any]:
        """Settings of the `e2b` provider that point it at this stand-in."""
        return {
            "api_key": self.api_key,
            "api_url": self.api_url,
            "sandbox_url": self.sandbox_url,
            "domain": self.domain,
            "url_scheme": "http",
        }

    # -- WSGI dispatch ----------------------------------------------------------------------------

    def _app(self, environ: dict[str, Any], start_response: Any) -> Any:
        self._reap()
        path, method = environ.get("PATH_INFO", ""), environ["REQUEST_METHOD"]
        service = next((prefix for prefix in self._rpc if path.startswith(prefix)), None)
        if service is not None:
            _, problem = self._envd_sandbox(environ)
            if problem:
                status, message = problem
                code = "unavailable" if status == 502 else "unauthenticated"
                return _json(start_response, status, {"code": code, "message": message})
            return self._rpc[service](environ, start_response)
        if path in ("/health", "/files"):
            return self._envd(environ, start_response, path, method)
        if path.startswith(("/v2/sandboxes", "/sandboxes")):
            if environ.get("HTTP_X_API_KEY") != self.api_key:
                return _json(start_response, 401, {"code": 401, "message": "Invalid API key"})
            return self._control(environ, start_response, path, method)
        return _json(start_response, 404, {"code": 404, "message": f"no route {method} {path}"})

    def _reap(self) -> None:
        """Kill sandboxes past their timeout, as E2B does."""
        now = time.time()
        for sandbox in list(self.sandboxes.values()):
            if sandbox.end <= now:
                self._kill(sandbox.id)

    def _kill(self, sandbox_id: str) -> bool:
        with self._lock:
            sandbox = self.sandboxes.pop(sandbox_id, None)
        if sandbox is None:
            return False
        sandbox.kill()
        self.killed.append(sandbox_id)
        return True

    # -- control plane --------------------------------------------------------------------------

    def _control(self, environ: dict[str, Any], start_response: Any, path: str, method: str) -> Any:
        if path == "/v2/sandboxes" and method == "POST":
            length = int(environ.get("CONTENT_LENGTH") or 0)
            body = json.loads(environ["wsgi.input"].read(length) or b"{}")
            return self._create(body, start_response)
        if path == "/v2/sandboxes" and method == "GET":
            query = dict(urllib.parse.parse_qsl(environ.get("QUERY_STRING", "")))
            wanted = {
                urllib.parse.unquote(k): urllib.parse.unquote(v)
                for k, v in urllib.parse.parse_qsl(query.get("metadata", ""))
            }
            states = set(filter(None, query.get("state", "running,paused").split(",")))
            found = [
                s.listed(self.domain)
                for s in sorted(self.sandboxes.values(), key=lambda s: (s.started, s.id))
                if "running" in states and all(s.metadata.get(k) == v for k, v in wanted.items())
            ]
            return _json(start_response, 200, found)
        connect = re.fullmatch(r"/v2/sandboxes/([^/]+)/connect", path)
        if connect and method == "POST":  # connecting to a running sandbox: its envd coordinates
            sandbox = self.sandboxes.get(connect.group(1))
            if sandbox is None:
                return _json(start_response, 404, {"code": 404, "message": f"sandbox {connect.group(1)} not found"})
            return _json(start_response, 200, self._coordinates(sandbox))
        match = re.fullmatch(r"/sandboxes/([^/]+)", path)
        if match and method == "GET":
            sandbox = self.sandboxes.get(match.group(1))
            if sandbox is None:
                return _json(start_response, 404, {"code": 404, "message": f"sandbox {match.group(1)} not found"})
            detail = {**sandbox.listed(self.domain), "domain": self.domain, "envdAccessToken": sandbox.token}
            return _json(start_response, 200, detail)
        if match and method == "DELETE":
            if not self._kill(match.group(1)):
                return _json(start_response, 404, {"code": 404, "message": f"sandbox {match.group(1)} not found"})
            start_response("204 No Content", [])
            return [b""]
        return _json(start_response, 404, {"code": 404, "message": f"no route {method} {path}"})

    def _create(self, body: dict[str, Any], start_response: Any) -> Any:
        template = body.get("templateID", "")
        if template not in self.templates:
            return _json(start_response, 404, {"code": 404, "message": f"template '{template}' not found"})
        with self._lock:
            self._counter += 1
            sandbox_id = f"isb{self._counter:04d}{os.urandom(3).hex()}"
        now, timeout = time.time(), int(body.get("timeout", 300))  # E2B's default
        sandbox = StandinSandbox(
            id=sandbox_id,
            template=template,
            root=self.root / sandbox_id,
            metadata=dict(body.get("metadata") or {}),
            envs=dict(body.get("envVars") or {}),
            token=os.urandom(12).hex(),
            started=now,
            end=now + timeout,
            request=body,
        )
        sandbox.home.mkdir(parents=True)
        self.sandboxes[sandbox_id] = sandbox
        self.created.append(body)
        return _json(start_response, 201, self._coordinates(sandbox))

    def _coordinates(self, sandbox: StandinSandbox) -> dict[str, Any]:
        return {
            "templateID": sandbox.template,
            "sandboxID": sandbox.id,
            "clientID": "standin",
            "envdVersion": ENVD_VERSION,
            "envdAccessToken": sandbox.token,
            "domain": self.domain,
        }

    # -- envd -----------------------------------------------------------------------------------

    def _envd_sandbox(self, environ: dict[str, Any]) -> tuple[StandinSandbox | None, tuple[int, str] | None]:
        sandbox_id = environ.get("HTTP_E2B_SANDBOX_ID", "")
        sandbox = self.sandboxes.get(sandbox_id)
        if sandbox is None:
            return None, (502, f"The sandbox {sandbox_id} was not found")
        if environ.get("HTTP_X_ACCESS_TOKEN") != sandbox.token:
            return None, (401, "invalid envd access token")
        return sandbox, None

    def _envd(self, environ: dict[str, Any], start_response: Any, path: str, method: str) -> Any:
        sandbox, problem = self._envd_sandbox(environ)
        if problem:
            status, message = problem
            return _json(start_response, status, {"sandboxId": environ.get("HTTP_E2B_SANDBOX_ID"), "message": message})
        assert sandbox is not None
        if path == "/health":
            start_response("204 No Content", [])
            return [b""]
        query = dict(urllib.parse.parse_qsl(environ.get("QUERY_STRING", "")))
        length = int(environ.get("CONTENT_LENGTH") or 0)
        if method == "GET":
            try:
                target = sandbox.resolve(query.get("path", ""))
                data = target.read_bytes()
            except (FileNotFoundError, NotADirectoryError):
                return _json(start_response, 404, {"code": 404, "message": f"path '{query.get('path')}' not found"})
            except (IsADirectoryError, PermissionError) as exc:
                return _json(start_response, 400, {"code": 400, "message": str(exc)})
            start_response("200 OK", [("Content-Type", "application/octet-stream"), ("Content-Length", str(len(data)))])
            return [data]
        if method != "POST":
            return _json(start_response, 405, {"code": 405, "message": f"{method} /files"})
        body = environ["wsgi.input"].read(length)
        content_type = environ.get("CONTENT_TYPE", "")
        if content_type.startswith("multipart/form-data"):
            message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
                f"Content-Type: {content_type}\r\n\r\n".encode() + body
            )
            parts = [
                (query.get("path") or part.get_filename(), part.get_payload(decode=True) or b"")
                for part in message.iter_parts()
            ]
        else:
            parts = [(query.get("path"), body)]
        written = []
        for name, data in parts:
            try:
                target = sandbox.resolve(name or "")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            except (PermissionError, IsADirectoryError, NotADirectoryError) as exc:
                return _json(start_response, 400, {"code": 400, "message": str(exc)})
            sandbox_path = "/" + target.relative_to(sandbox.root).as_posix()
            written.append({"name": target.name, "type": "file", "path": sandbox_path})
        return _json(start_response, 200, written)


def _edge_handler(standin: E2BStandIn) -> type[BaseHTTPRequestHandler]:
    class EdgeHandler(BaseHTTPRequestHandler):
        """Routes `http://<port>-<id>.<domain>/path` (absolute-form, as sent to a proxy) to the sandbox port."""

        protocol_version = "HTTP/1.0"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _reply(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _forward(self) -> None:
            target = urllib.parse.urlsplit(self.path)
            host = (target.hostname or self.headers.get("Host", "").split(":")[0]).lower()
            match = _EDGE_HOST.match(host)
            if not match or match.group("domain") != standin.domain:
                self._reply(404, {"code": 404, "message": f"unknown host {host!r}"})
                return
            if match.group("id") not in standin.sandboxes:
                self._reply(502, {"code": 502, "message": f"The sandbox {match.group('id')} was not found"})
                return
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            path = target.path or "/"
            if target.query:
                path += "?" + target.query
            conn = http.client.HTTPConnection("127.0.0.1", int(match.group("port")), timeout=30)
            try:
                conn.request(self.command, path, body=body, headers={"Host": host})
                response = conn.getresponse()
                data = response.read()
            except OSError:
                self._reply(502, {"code": 502, "message": f"The sandbox is running but port is not open: {host}"})
                return
            finally:
                conn.close()
            self.send_response(response.status)
            for key, value in response.getheaders():
                if key.lower() not in ("connection", "transfer-encoding", "content-length"):
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _forward

    return EdgeHandler

"""In-process sites: one loopback HTTP server per process, each world's site mounted under a path of its own.

A world's app site is a WSGI application that works on the world through its tools. Worlds fork thousands of times
(RL episodes), so a site per fork must cost a dictionary entry, not a thread and a socket: every mount lives on one
threaded server, at `/w/<token>/`, and holds its world weakly (a world that is gone answers 404, and its mount is
forgotten). The app sees its mount as `SCRIPT_NAME` and the world's tools, as the mount's role, in
`environ["agentenv.tools"]`. Requests to one mount run one at a time, since a world is not made for concurrent calls;
a state-changing request from another site's page is refused (the server has no tokens).
"""

from __future__ import annotations

import os
import secrets
import socketserver
import threading
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from agentenv_runtime import SAFE_METHODS, origin_refusal

TOOLS_KEY = "agentenv.tools"
"""The WSGI environ key under which an app finds the world's `ToolAccess`."""
PREFIX = "/w/"

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


@dataclass
class Mount:
    app: WsgiApp
    world: weakref.ReferenceType[Any]
    role: str
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Server(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class Mounts:
    """The process's site server and its mounts (started on the first mount)."""

    def __init__(self) -> None:
        self._mounts: dict[str, Mount] = {}
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.server_address[1])

    def mount(self, app: WsgiApp, world: Any, role: str) -> str:
        """Mount `app` for `world`; its base URL (no trailing slash)."""
        token = secrets.token_hex(8)
        with self._lock:
            self._start()
            self._mounts[token] = Mount(app, weakref.ref(world, lambda _: self.unmount(token)), role)
        return f"http://127.0.0.1:{self.port}{PREFIX}{token}"

    def unmount(self, token_or_url: str) -> None:
        """Forget a mount. Takes no lock: it also runs as a weakref callback, which the garbage collector may call
        in any thread, even one that holds the lock (a dict's pop is atomic)."""
        self._mounts.pop(token_or_url.rstrip("/").rsplit("/", 1)[-1], None)

    def problem(self, token_or_url: str) -> str | None:
        """Why the mount cannot serve (its world is gone, or lacks the mount's role), or None."""
        mount = self._mounts.get(token_or_url.rstrip("/").rsplit("/", 1)[-1])
        world = mount.world() if mount is not None else None
        if mount is None or world is None:
            return "its world is gone, so its site is too"
        unknown = world.rbac.unknown(mount.role)
        return None if unknown is None else f"settings.role: {unknown}"

    def count(self) -> int:
        return len(self._mounts)

    def _start(self) -> None:
        if self._server is not None:
            return
        server = make_server("127.0.0.1", 0, self._dispatch, server_class=_Server, handler_class=_Quiet)
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="agentenv-website", daemon=True)
        self._thread.start()

    def _dispatch(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path: str = environ.get("PATH_INFO", "")
        token, _, rest = path.removeprefix(PREFIX).partition("/")
        mount = self._mounts.get(token) if path.startswith(PREFIX) else None
        world = mount.world() if mount is not None else None
        if mount is None or world is None:
            return answer(start_response, "404 Not Found", "no site here: each world's site has its own /w/<token>/")
        unknown = world.rbac.unknown(mount.role)
        if unknown is not None:
            return answer(start_response, "500 Internal Server Error", f"env website: settings.role: {unknown}")
        if environ.get("REQUEST_METHOD", "GET").upper() not in SAFE_METHODS:
            headers = {key[5:].replace("_", "-").lower(): value for key, value in environ.items() if key[:5] == "HTTP_"}
            refused = origin_refusal(headers)
            if refused is not None:
                return answer(start_response, "403 Forbidden", refused)
        environ["SCRIPT_NAME"] = environ.get("SCRIPT_NAME", "") + PREFIX + token
        environ["PATH_INFO"] = "/" + rest
        environ[TOOLS_KEY] = world.tool_access(mount.role)
        with mount.lock:  # the whole response is made inside: a world takes one call at a time
            return [b"".join(mount.app(environ, start_response))]

    def forget_after_fork(self) -> None:
        """In a forked child (a process pool's worker): the serving thread stayed in the parent, so the inherited
        server would hand out URLs on the parent's port (answered by the parent, which knows none of the child's
        mounts) and keep the parent's listening socket alive. The child drops it all and starts its own server
        on its first mount; the lock is new too, since another thread may have held it at the fork."""
        server, self._server, self._thread = self._server, None, None
        self._mounts = {}
        self._lock = threading.Lock()
        if server is not None:
            server.socket.close()  # the child's copy only: the parent's server goes on

    def close(self) -> None:
        with self._lock:
            server, self._server = self._server, None
            self._mounts.clear()
        if server is not None:
            server.shutdown()
            server.server_close()


def answer(start_response: Callable[..., Any], status: str, text: str) -> list[bytes]:
    body = text.encode()
    start_response(status, [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))])
    return [body]


MOUNTS = Mounts()
os.register_at_fork(after_in_child=MOUNTS.forget_after_fork)

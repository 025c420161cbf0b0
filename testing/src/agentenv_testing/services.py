"""Real services for tests: start a server process on a free loopback port, wait until it answers, stop it.

Tests that need an emulator (moto, the Firestore emulator, a GCS emulator, a container registry) start it
with `LoopbackService` and stop it themselves, so nothing has to be running before the test suite.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Self


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class ServiceFailed(RuntimeError):
    """The service exited or did not answer in time; the message carries the tail of its output."""


class LoopbackService:
    """A server process on 127.0.0.1:`port`, ready once `ready_path` answers over HTTP (any status below 500), or
    once `ready()` says so for a server that speaks no HTTP (a database's own protocol).

    `argv` may hold `{port}`, replaced by the chosen port. The process runs in its own process group, so
    stopping it also stops what it started (the Firestore emulator forks a Java process). Output goes to
    `log`, whose tail is shown when the service fails to start.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        log: Path,
        ready_path: str = "/",
        port: int | None = None,
        env: dict[str, str] | None = None,
        start_seconds: float = 60.0,
        ready: Callable[[], bool] | None = None,
    ) -> None:
        self.port = port or free_port()
        self.argv = [part.replace("{port}", str(self.port)) for part in argv]
        self.log = log
        self.ready_path = ready_path
        self.env = {**os.environ, **(env or {})}
        self.start_seconds = start_seconds
        self.ready = ready
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> LoopbackService:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                self.argv, stdout=out, stderr=subprocess.STDOUT, env=self.env, start_new_session=True
            )
        deadline = time.monotonic() + self.start_seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServiceFailed(f"{self.argv[0]} exited with {self.process.returncode}: {self.tail()}")
            if self._answers():
                return self
            time.sleep(0.1)
        self.stop()
        raise ServiceFailed(f"{self.argv[0]} did not answer on {self.url} in {self.start_seconds:.0f} s: {self.tail()}")

    def _answers(self) -> bool:
        if self.ready is not None:
            return self.ready()
        try:
            with urllib.request.urlopen(self.url + self.ready_path, timeout=2):
                return True
        except urllib.error.HTTPError as exc:
            return exc.code < 500
        except OSError:
            return False

    def tail(self, lines: int = 20) -> str:
        try:
            return " | ".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no output)"

    def stop(self) -> None:
        """Stop the process group: SIGTERM, then SIGKILL after five seconds."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=5)

    def __enter__(self) -> LoopbackService:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


class ThreadedHttpServer:
    """An HTTP server on a free 127.0.0.1 port, served from a daemon thread: the base of the fault proxy and the
    stand-ins. A subclass sets up its state, then calls `super().__init__()`, and returns its request handler
    class from `_handler()`."""

    def __init__(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError(f"{type(self).__name__} must define _handler()")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


def docker_registry(root: Path) -> LoopbackService | None:
    """Debian's `docker-registry` (the CNCF distribution registry) with its own config and filesystem storage
    under `root`, on a free loopback port (not started yet); None when it is not installed."""
    binary = shutil.which("docker-registry")
    if binary is None:
        return None
    port = free_port()
    config = root / "config.yml"
    root.mkdir(parents=True, exist_ok=True)
    config.write_text(
        "version: 0.1\n"
        "log:\n  level: warn\n"
        f"storage:\n  filesystem:\n    rootdirectory: {root / 'data'}\n  delete:\n    enabled: true\n"
        f"http:\n  addr: 127.0.0.1:{port}\n"
    )
    return LoopbackService([binary, "serve", str(config)], log=root / "registry.log", port=port, ready_path="/v2/")


def docker_engine_problem() -> str | None:
    """Why `docker info` fails here (no engine, no permission), or None when the engine answers."""
    try:
        done = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`docker info` failed: {exc}"
    if done.returncode != 0:
        return f"`docker info` failed: {(done.stderr or done.stdout).strip()[-300:]}"
    return None


@contextlib.contextmanager
def agentenv_serve(args: Sequence[str], env: dict[str, str] | None = None) -> Iterator[str]:
    """Run `agentenv serve ARGS…` (this interpreter's `agentenv`) as a process on a free port (`--port 0`), yield
    its base URL once it says it serves, and stop it. A server that ends before serving fails with its output."""
    agentenv = Path(sys.executable).with_name("agentenv")
    command = [str(agentenv), "serve", *args, "--port", "0"]
    server = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert server.stderr is not None
        seen = []
        for line in server.stderr:
            seen.append(line)
            found = re.match(r"Serving world \S+ at (\S+)", line)
            if found:
                yield found.group(1)
                return
        raise ServiceFailed(f"{' '.join(command)} ended before serving:\n{''.join(seen)}")
    finally:
        server.terminate()
        server.wait(30)

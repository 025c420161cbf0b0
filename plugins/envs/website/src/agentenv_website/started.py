"""Sites the world starts: a command serving HTTP on a loopback port, or a Docker container publishing one.

Each is health-checked before the world goes on: GET `health_path` must answer below 400 within `start_timeout`.
A site that exits first is reported with its exit status and the last lines it printed; one that never answers is
stopped and reported as such. Either way the message names the env, and nothing is left running. Stopping ends the
command's whole process group (or removes the container), so a site's children do not outlive it.
"""

from __future__ import annotations

import collections
import contextlib
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from typing import IO

from agentenv_website.settings import WebsiteSettings

DOCKER_LABEL = "agentenv.website"
"""Label of the containers sites run in (value: the env's name); `agentenv.website.owner` holds the process id."""
OUTPUT_LINES = 40
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))
"""Loopback health checks must not go through a configured HTTP proxy."""


class WebsiteError(RuntimeError):
    """A site that cannot serve the world: it did not start, exited, or never became healthy. Names the env."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class OutputTail:
    """The last lines a started site printed (stdout and stderr together), read by a thread so it never blocks."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.lines: collections.deque[str] = collections.deque(maxlen=OUTPUT_LINES)
        self._thread = threading.Thread(target=self._drain, args=(stream,), name="agentenv-website-out", daemon=True)
        self._thread.start()

    def _drain(self, stream: IO[bytes]) -> None:
        for line in iter(stream.readline, b""):
            self.lines.append(line.decode("utf-8", "replace").rstrip()[:500])
        stream.close()

    def text(self) -> str:
        self._thread.join(0.5)
        return "\n".join(self.lines)


def healthy(url: str) -> bool:
    try:
        with _DIRECT.open(url, timeout=3) as response:
            return int(response.status) < 400
    except urllib.error.HTTPError as exc:
        return exc.code < 400
    except (OSError, ValueError):
        return False


class Started:
    """A site this env started (or, for `url`, only checked): its base URL, whether it still runs, how to stop it."""

    base_url = ""

    def exited(self) -> str | None:
        """None while it runs; else how it ended (exit status)."""
        return None

    def output(self) -> str:
        """The last lines it printed."""
        return ""

    def stop(self) -> None:
        """End it; idempotent."""


class CommandSite(Started):
    def __init__(self, name: str, settings: WebsiteSettings) -> None:
        port = settings.port or free_port()
        self.base_url = f"http://127.0.0.1:{port}"
        argv = settings.argv(port)
        try:
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: stop() ends its children too
                env={**os.environ, **settings.env, "PORT": str(port)},
            )
        except OSError as exc:
            raise WebsiteError(
                f"env {name}: the site command {settings.describe()!r} could not start: {exc}; check `command`"
            ) from None
        assert self.process.stdout is not None
        self.tail = OutputTail(self.process.stdout)

    def exited(self) -> str | None:
        code = self.process.poll()
        return None if code is None else f"exit status {code}"

    def output(self) -> str:
        return self.tail.text()

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, sig)
            try:
                self.process.wait(wait)
                return
            except subprocess.TimeoutExpired:
                continue


class ImageSite(Started):
    def __init__(self, name: str, settings: WebsiteSettings) -> None:
        inner = settings.port or 80
        labels = ["--label", f"{DOCKER_LABEL}={name}", "--label", f"{DOCKER_LABEL}.owner={os.getpid()}"]
        envs = [arg for key, value in settings.env.items() for arg in ("-e", f"{key}={value}")]
        assert settings.image is not None
        argv = ["docker", "run", "-d", *labels, *envs, "-p", f"127.0.0.1::{inner}", settings.image, *settings.args]
        started = docker(argv, 300)
        if started.returncode != 0:
            raise WebsiteError(f"env {name}: `docker run {settings.image}` failed: {started.stderr.strip()[-800:]}")
        self.container = started.stdout.strip()
        published = docker(["docker", "port", self.container, f"{inner}/tcp"], 60)
        address = published.stdout.split()[0] if published.returncode == 0 and published.stdout.split() else ""
        if not address:
            self.stop()
            raise WebsiteError(
                f"env {name}: image {settings.image} publishes no port {inner}/tcp ({published.stderr.strip()}); "
                "set `port` to the port the site listens on inside the container"
            )
        self.base_url = f"http://127.0.0.1:{address.rsplit(':', 1)[1]}"

    def exited(self) -> str | None:
        state = docker(["docker", "inspect", "-f", "{{.State.Running}} {{.State.ExitCode}}", self.container], 60)
        running, _, code = state.stdout.strip().partition(" ")
        return None if running == "true" else f"the container stopped (exit status {code or '?'})"

    def output(self) -> str:
        logs = docker(["docker", "logs", "--tail", str(OUTPUT_LINES), self.container], 60)
        return (logs.stdout + logs.stderr).strip()

    def stop(self) -> None:
        docker(["docker", "rm", "-f", self.container], 120)


def docker(argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return subprocess.CompletedProcess(argv, 1, "", f"{argv[0]} {argv[1]}: {exc}")


class UrlSite(Started):
    def __init__(self, url: str) -> None:
        self.base_url = url.rstrip("/")


def start(name: str, settings: WebsiteSettings) -> Started:
    """Start (or reach) the site and wait until it is healthy; a WebsiteError names the env and what went wrong."""
    site: Started
    if settings.command is not None:
        site = CommandSite(name, settings)
    elif settings.image is not None:
        site = ImageSite(name, settings)
    else:
        assert settings.url is not None
        site = UrlSite(settings.url)
    try:
        wait_healthy(name, site, settings)
    except BaseException:
        site.stop()
        raise
    return site


def wait_healthy(name: str, site: Started, settings: WebsiteSettings) -> None:
    url = site.base_url + settings.health_path
    deadline = time.monotonic() + settings.start_timeout
    pause = 0.02
    while True:
        gone = site.exited()
        if gone is not None:
            said = site.output()
            raise WebsiteError(
                f"env {name}: the site ({settings.describe()}) ended before it answered GET {url}: {gone}"
                + (f"\nits last output:\n{said}" if said else "")
            )
        if healthy(url):
            return
        if time.monotonic() > deadline:
            said = site.output()
            started = "was stopped" if settings.url is None else "runs elsewhere"
            raise WebsiteError(
                f"env {name}: the site ({settings.describe()}) did not answer GET {url} below 400 within "
                f"{settings.start_timeout:g}s (start_timeout) and {started}; check that it listens on that port "
                "and that `health_path` exists" + (f"\nits last output:\n{said}" if said else "")
            )
        time.sleep(pause)
        pause = min(pause * 2, 0.5)

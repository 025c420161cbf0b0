"""Slow clients cannot starve a served world: a request head that does not arrive in time is cut off, the
connections waiting for one are capped (the longest waiter goes first), and 300 slowloris sockets against a
gateway limited to 256 descriptors leave `/health` answering fast with a quiet log."""

from __future__ import annotations

import contextlib
import os
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from agentenv_gateway.app import build_app
from agentenv_gateway.limits import GatewayLimits, LimitsError
from agentenv_gateway.server import serve_in_thread
from agentenv_runtime import HeaderWaits
from agentenv_runtime.world.build import build_world

HALF_HEAD = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n"
AGENTENV = Path(sys.executable).with_name("agentenv")


def _serve(limits: GatewayLimits) -> Iterator[tuple[str, int]]:
    with serve_in_thread(build_app(build_world("helpdesk", artifacts=["acme"]), limits=limits)) as url:
        yield url, int(url.rsplit(":", 1)[1])


@pytest.fixture
def quick_deadline() -> Iterator[tuple[str, int]]:
    yield from _serve(GatewayLimits(header_timeout=0.4, max_waiting_headers=4))


@pytest.fixture
def cap_only() -> Iterator[tuple[str, int]]:
    """A cap of 4 and a deadline no test reaches: only the cap can close a connection."""
    yield from _serve(GatewayLimits(header_timeout=600, max_waiting_headers=4))


def _half_open(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(HALF_HEAD)
    return sock


def _whole_response(sock: socket.socket) -> bytes:
    """One response read to its last body byte (it may arrive in several reads), by its Content-Length."""
    reply = b""
    while b"\r\n\r\n" not in reply:
        reply += sock.recv(65536)
    head, _, body = reply.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
    )
    while len(body) < length:
        body += sock.recv(65536)
    return reply


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closed `sock` (EOF or reset) within `seconds` (a generous limit, not a timing check)."""
    sock.settimeout(seconds)
    try:
        return sock.recv(1024) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def _still_open(sock: socket.socket) -> bool:
    """Whether the server has left `sock` open, asked without waiting."""
    try:
        return sock.recv(1024, socket.MSG_DONTWAIT | socket.MSG_PEEK) != b""
    except (BlockingIOError, TimeoutError):  # nothing to read, and no end: open
        return True
    except ConnectionResetError:
        return False


def test_a_head_that_never_completes_is_cut_off_at_the_deadline(quick_deadline: tuple[str, int]) -> None:
    """A line every 0.1 s for up to a minute: a deadline that restarted with each line would never close it (the
    test then fails at the minute); the one from the first byte closes it however slowly this machine runs."""
    _, port = quick_deadline
    with _half_open(port) as slow:
        deadline = time.monotonic() + 60
        while not _closed_within(slow, 0.1):
            assert time.monotonic() < deadline, "the dribbling connection was never cut off"
            try:
                slow.sendall(b"X-Slow: 1\r\n")  # a dribbled line does not buy more time
            except (BrokenPipeError, ConnectionResetError):
                break


def test_the_longest_waiting_connection_goes_when_the_cap_is_passed(cap_only: tuple[str, int]) -> None:
    url, port = cap_only
    waiting = [_half_open(port) for _ in range(6)]  # accepted in the order they connect (the listen backlog)
    try:
        assert [_closed_within(sock, 30) for sock in waiting[:2]] == [True, True]  # the two oldest
        assert all(_still_open(sock) for sock in waiting[2:])  # the deadline is ten minutes off: the cap alone
        assert httpx.get(f"{url}/health", timeout=30).status_code == 200  # a real client still gets in
    finally:
        for sock in waiting:
            sock.close()


def test_a_kept_alive_connection_dribbling_its_next_request_is_cut_off(quick_deadline: tuple[str, int]) -> None:
    _, port = quick_deadline
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(HALF_HEAD + b"\r\n")
        assert _whole_response(sock).startswith(b"HTTP/1.1 200")
        time.sleep(0.6)  # idle between requests is uvicorn's keep-alive (5 s), not the head deadline
        sock.sendall(HALF_HEAD)
        assert _closed_within(sock, 30)


def test_a_request_sent_at_once_is_served_whatever_the_deadline(quick_deadline: tuple[str, int]) -> None:
    url, _ = quick_deadline
    with httpx.Client(timeout=5) as client:
        for _ in range(5):
            assert client.get(f"{url}/health").status_code == 200
            time.sleep(0.1)


def test_header_bounds_are_settings_that_name_their_field() -> None:
    assert GatewayLimits().header_waits().header_timeout == 10.0
    assert GatewayLimits(max_waiting_headers=7).header_waits().max_waiting == 7
    with pytest.raises(LimitsError, match="header_timeout"):
        GatewayLimits.from_settings({"header_timeout": 0})
    with pytest.raises(ValueError, match="max_waiting"):
        HeaderWaits(max_waiting=0)


def test_300_slowloris_sockets_at_a_256_descriptor_limit_leave_health_fast_and_the_log_quiet(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path / "server.log"

    def lower_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

    with log.open("wb") as sink:
        server = subprocess.Popen(
            [str(AGENTENV), "serve", "helpdesk", "-a", "acme", "--port", str(port)],
            stdout=sink,
            stderr=subprocess.STDOUT,
            preexec_fn=lower_limit,
            env=dict(os.environ),
        )
    attackers: list[socket.socket] = []
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.1)
        for _ in range(300):
            with contextlib.suppress(OSError):
                attackers.append(_half_open(port))
        time.sleep(0.5)
        for _ in range(20):  # before the bounds none was answered at all (accept() had EMFILE); bench/slowloris.py
            assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=30).status_code == 200  # times them
            time.sleep(0.05)
        assert len(log.read_text(errors="replace").splitlines()) < 100
    finally:
        for sock in attackers:
            sock.close()
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def test_a_connection_is_read_64_kib_at_a_time_so_refused_uploads_cannot_pile_up_in_memory() -> None:
    """asyncio reads 256 KiB per call: 300 uploads arriving with their heads held 75 MiB before any was refused."""
    chunks: list[int] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        more = True
        while more:
            message = await receive()
            chunks.append(len(message.get("body", b"")))
            more = message.get("more_body", False)
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    body = b"x" * (1024 * 1024)
    with serve_in_thread(app) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            head = f"POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            sock.sendall(head + body)
            assert sock.recv(200).startswith(b"HTTP/1.1 204")
    assert sum(chunks) == len(body)
    assert max(chunks) <= 64 * 1024, chunks

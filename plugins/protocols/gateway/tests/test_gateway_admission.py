"""The request-limits layer holds per authenticated caller: made-up `mcp-session-id`s do not multiply a token's
limits (300 slow uploads are bounded, the server's memory barely moves), 64 official-SDK clients sharing one token
all get in, a role cannot end another role's MCP session, MCP sessions are bounded and expire, and a body that
never finishes arriving is answered 408 instead of holding its slot forever."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from agentenv_gateway.app import build_app
from agentenv_gateway.limits import GatewayLimits
from agentenv_gateway.server import serve_in_thread
from agentenv_runtime.world.build import build_world

ROLES = {"support": {"tools": ["*"], "deny": ["issue_refund"]}, "billing_lead": {"tools": ["*"]}}
TOKENS = {"support": "tok-support", "billing_lead": "tok-billing", "control": "tok-control"}

MIB = 1024 * 1024


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _start_upload(port: int, token: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    head = (
        f"POST /rest/tools/get_ticket HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nMcp-Session-Id: {uuid.uuid4().hex}\r\nContent-Length: {MIB}\r\n\r\n"
    )
    sock.sendall(head.encode() + b'{"ticket_id": "' + b"x" * (256 * 1024))
    return sock


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the server's RSS from /proc")
def test_300_slow_uploads_with_made_up_session_ids_are_bounded(tmp_path: Path) -> None:
    env = os.environ | {"AGENTENV_TEST_TOKEN": "tok-support"}
    server = subprocess.Popen(
        [sys.executable, "-m", "agentenv", "serve", "helpdesk", "-a", "acme", "--port", "0",
         "--token", "default=env:AGENTENV_TEST_TOKEN"],
        cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True,
    )
    sockets: list[socket.socket] = []
    try:
        assert server.stderr is not None
        url = ""
        while not url:
            line = server.stderr.readline()
            assert line, "the server exited before serving"
            found = re.search(r"at (http://\S+)", line)
            url = found.group(1) if found else ""
        port = int(url.rsplit(":", 1)[1])
        headers = {"authorization": "Bearer tok-support"}
        assert httpx.post(f"{url}/rest/tools/get_ticket", json={"ticket_id": "TCK-9001"}, headers=headers).is_success
        before = _rss(server.pid)
        sockets = [_start_upload(port, "tok-support") for _ in range(300)]
        refused = 0
        for sock in sockets:
            sock.settimeout(10)
            try:
                answer = sock.recv(200)
            except TimeoutError:
                continue  # held: its body is in progress
            refused += answer.startswith(b"HTTP/1.1 429")
        held = 300 - refused
        assert held <= GatewayLimits().max_pending_bytes // MIB, (held, refused)
        growth = _rss(server.pid) - before
        assert growth <= 32 * MIB, f"RSS grew by {growth / MIB:.1f} MiB"
        for sock in sockets:
            sock.close()
        sockets = []
        ok = httpx.post(f"{url}/rest/tools/get_ticket", json={"ticket_id": "TCK-9001"}, headers=headers, timeout=30)
        assert ok.is_success, ok.text  # the budget is free again
    finally:
        for sock in sockets:
            sock.close()
        server.terminate()
        server.wait(30)


def test_64_official_sdk_clients_with_one_token_all_get_in(mcp: Any) -> None:
    world = build_world("helpdesk", artifacts=["acme"], roles=ROLES)

    async def one(url: str) -> str:
        async with mcp(url, TOKENS["support"]) as session:
            result = await session.call_tool("get_ticket", {"ticket_id": "TCK-9001"})
            return "error" if result.is_error else "ok"

    async def all_of_them(url: str) -> list[BaseException | str]:
        return await asyncio.gather(*(one(url) for _ in range(64)), return_exceptions=True)

    with serve_in_thread(build_app(world, tokens=TOKENS)) as url:
        outcomes = asyncio.run(all_of_them(url))
    assert outcomes == ["ok"] * 64, [o for o in outcomes if o != "ok"][:3]


def _initialize(url: str, token: str) -> httpx.Response:
    client = {"name": "t", "version": "1"}
    params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    headers = {"authorization": f"Bearer {token}", "accept": "application/json, text/event-stream"}
    return httpx.post(f"{url}/mcp", json=body, headers=headers, timeout=30)


def _ping(url: str, token: str, session: str) -> httpx.Response:
    headers = {"authorization": f"Bearer {token}", "accept": "application/json, text/event-stream",
               "mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
    return httpx.post(f"{url}/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers=headers, timeout=30)


def test_one_role_cannot_end_another_roles_session() -> None:
    world = build_world("helpdesk", artifacts=["acme"], roles=ROLES)
    with serve_in_thread(build_app(world, tokens=TOKENS)) as url:
        session = _initialize(url, TOKENS["support"]).headers["mcp-session-id"]
        other = {"authorization": f"Bearer {TOKENS['billing_lead']}", "mcp-session-id": session}
        assert httpx.delete(f"{url}/mcp", headers=other).status_code == 404
        assert _ping(url, TOKENS["billing_lead"], session).status_code == 404  # nor use it
        assert _ping(url, TOKENS["support"], session).status_code == 200  # still the opener's
        own = {"authorization": f"Bearer {TOKENS['support']}", "mcp-session-id": session}
        assert httpx.delete(f"{url}/mcp", headers=own).status_code < 300
        assert _ping(url, TOKENS["support"], session).status_code == 404


def test_mcp_sessions_are_bounded_and_expire() -> None:
    world = build_world("helpdesk", artifacts=["acme"], roles=ROLES)
    with serve_in_thread(build_app(world, tokens=TOKENS, limits=GatewayLimits(max_sessions=3))) as url:
        opened = [_initialize(url, TOKENS["support"]) for _ in range(3)]
        assert [r.status_code for r in opened] == [200] * 3
        assert _initialize(url, TOKENS["support"]).status_code == 503
    limits = GatewayLimits(max_sessions=3, session_idle_timeout=0.5)
    with serve_in_thread(build_app(build_world("helpdesk", artifacts=["acme"], roles=ROLES), tokens=TOKENS,
                                   limits=limits)) as url:
        session = _initialize(url, TOKENS["support"]).headers["mcp-session-id"]
        deadline = time.monotonic() + 120
        while True:  # idle sessions are closed: wait longer than the idle timeout before each look (a look is use)
            time.sleep(1.0)
            if _ping(url, TOKENS["support"], session).status_code == 404:
                break
            assert time.monotonic() < deadline, "an idle MCP session was never closed"
        assert _initialize(url, TOKENS["support"]).status_code == 200  # their places are free again


@pytest.mark.parametrize("framing", ["length", "chunked"])
def test_a_body_that_never_arrives_is_answered_408(framing: str) -> None:
    world = build_world("helpdesk", artifacts=["acme"], roles=ROLES)
    limits = GatewayLimits(body_timeout=0.5)
    with serve_in_thread(build_app(world, tokens=TOKENS, limits=limits)) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port)) as sock:
            length = "Content-Length: 100\r\n\r\n{" if framing == "length" else (
                "Transfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFF\r\n{")
            sock.sendall(
                f"POST /rest/tools/get_ticket HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer tok-support\r\n"
                f"Content-Type: application/json\r\n{length}".encode()
            )
            sock.settimeout(30)
            answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 408") or answer.startswith(b"HTTP/1.1 400"), answer[:200]
        assert httpx.get(f"{url}/health", headers={"authorization": "Bearer tok-support"}).status_code == 200


def test_an_invalid_mcp_cursor_is_an_error() -> None:
    world = build_world("helpdesk", artifacts=["acme"], roles=ROLES)
    with serve_in_thread(build_app(world, tokens=TOKENS)) as url:
        session = _initialize(url, TOKENS["support"]).headers["mcp-session-id"]
        headers = {"authorization": f"Bearer {TOKENS['support']}", "accept": "application/json, text/event-stream",
                   "mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
        body = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"cursor": "page-99"}}
        reply = httpx.post(f"{url}/mcp", json=body, headers=headers, timeout=30).json()
        assert reply["error"]["code"] == -32602 and "invalid cursor 'page-99'" in reply["error"]["message"]
        body["params"] = {}
        assert httpx.post(f"{url}/mcp", json=body, headers=headers, timeout=30).json()["result"]["tools"]

"""The OpenEnv wire format of `agentenv openenv serve`: HTTP endpoints, WebSocket sessions isolated by fork, and
OpenEnv's own client (`openenv-core`, installed offline into a separate venv from the CI wheelhouse)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets

SOLVED: list[dict[str, Any]] = json.loads(
    '[{"tool": "issue_refund", "arguments": {"order_id": "ORD-5001", "amount": 89.99, "reason": "damaged"}},'
    ' {"tool": "close_ticket", "arguments": {"ticket_id": "TCK-9001", "resolution": "Refunded 89.99."}},'
    ' {"tool": "send_email", "arguments": {"to": ["dana.kim@example.com"], "subject": "Refund",'
    ' "body": "We refunded 89.99 for the boots."}}, {"answer": "Refunded 89.99, closed TCK-9001, emailed Dana."}]'
)
REFUND = SOLVED[0]


def test_http_endpoints_answer_in_openenv_shapes(serve: Callable[..., str]) -> None:
    url = serve("support-refund")
    with httpx.Client(base_url=url, timeout=30) as http:
        assert http.get("/health").json() == {"status": "healthy"}
        schema = http.get("/schema").json()
        assert set(schema) == {"action", "observation", "state"} and "answer" in schema["action"]["properties"]
        assert http.get("/metadata").json()["name"] == "support-refund:resolve-refund"
        reset = http.post("/reset", json={}).json()
        assert reset["done"] is False and reset["reward"] is None and reset["observation"]["type"] == "prompt"
        for action in SOLVED:
            step = http.post("/step", json={"action": action}).json()
        assert step["done"] is True and step["reward"] == 1.0 and step["observation"]["info"]["passed"]
        assert http.get("/state").json()["step_count"] == len(SOLVED)
        http.post("/reset", json={})
        bad = http.post("/step", json={"action": {"tool": "x", "answer": "y"}})
        assert bad.status_code == 422 and "exactly one of" in bad.json()["detail"]


def test_websocket_sessions_are_isolated_and_capped(serve: Callable[..., str]) -> None:
    url = serve("support-refund", "--max-sessions", "2").replace("http://", "ws://") + "/ws"

    async def exchange(ws: Any, message: dict[str, Any]) -> dict[str, Any]:
        await ws.send(json.dumps(message))
        reply: dict[str, Any] = json.loads(await ws.recv())
        return reply

    async def scenario() -> None:
        async with websockets.connect(url) as left, websockets.connect(url) as right:
            await exchange(left, {"type": "reset", "data": {}})
            await exchange(right, {"type": "reset", "data": {"episode_id": "right-1"}})
            start = (await exchange(left, {"type": "state"}))["data"]["state_digest"]
            stepped = await exchange(left, {"type": "step", "data": REFUND})
            assert stepped["type"] == "observation" and stepped["data"]["observation"]["ok"]
            left_state = (await exchange(left, {"type": "state"}))["data"]
            right_state = (await exchange(right, {"type": "state"}))["data"]
            assert left_state["state_digest"] != start and right_state["state_digest"] == start
            assert right_state["episode_id"] == "right-1" and right_state["step_count"] == 0
            error = await exchange(right, {"type": "step", "data": {"bogus": True}})
            assert error["type"] == "error" and error["data"]["code"] == "VALIDATION_ERROR"
            assert (await exchange(right, {"type": "dance"}))["data"]["code"] == "UNKNOWN_TYPE"
            async with websockets.connect(url) as third:
                refused = json.loads(await third.recv())
                assert refused["type"] == "error" and refused["data"]["code"] == "CAPACITY_REACHED"
            await left.send(json.dumps({"type": "close"}))
        async with websockets.connect(url) as again:  # the closed sessions' slots are free again
            assert (await exchange(again, {"type": "reset", "data": {}}))["type"] == "observation"
            seven = (await exchange(again, {"type": "state"}))["data"]
            assert (await exchange(again, {"type": "reset", "data": {"seed": 3}}))["type"] == "observation"
            three = (await exchange(again, {"type": "state"}))["data"]
            assert seven["seed"] == 7 and three["seed"] == 3 and three["step_count"] == 0

    asyncio.run(scenario())


def test_a_bad_target_is_refused_in_one_line(tmp_path: Path) -> None:
    agentenv = Path(sys.executable).with_name("agentenv")
    proc = subprocess.run(
        [str(agentenv), "openenv", "serve", "no-such-bundle"], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert proc.returncode == 2
    assert (
        proc.stderr.startswith("agentenv openenv serve: no bundle 'no-such-bundle'") and "Traceback" not in proc.stderr
    )


CLIENT = """
import asyncio, json, sys
from openenv.core.generic_client import GenericEnvClient

async def main(url, actions):
    async with GenericEnvClient(base_url=url) as env:
        first = await env.reset()
        for action in actions:
            result = await env.step(action)
        state = await env.state()
    with GenericEnvClient(base_url=url).sync() as env:  # the synchronous wrapper too
        env.reset()
        refused = env.step({"answer": "nothing done"})
    print(json.dumps({"first": first.observation["type"], "reward": result.reward, "done": result.done,
                      "info": result.observation["info"], "state": state, "sync_reward": refused.reward}))

asyncio.run(main(sys.argv[1], json.loads(sys.argv[2])))
"""


@pytest.mark.slow
def test_openenvs_own_client_completes_an_episode_with_the_right_reward(
    serve: Callable[..., str], openenv_python: Path
) -> None:
    url = serve("support-refund")
    proc = subprocess.run(
        [str(openenv_python), "-c", CLIENT, url, json.dumps(SOLVED)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["first"] == "prompt"
    assert seen["done"] is True and seen["reward"] == 1.0 and seen["info"]["passed"] is True
    assert seen["state"]["step_count"] == len(SOLVED) and seen["state"]["done"] is True
    assert seen["sync_reward"] == 0.0  # answering without doing anything scores nothing


def server_rss_mb(url: str) -> float:
    """The RSS of the process listening on `url`'s port (found through /proc, so Linux only)."""
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    inode = None
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":  # LISTEN
                inode = fields[9]
    assert inode is not None, f"nothing listens on port {port}"
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            sockets = {os.readlink(fd) for fd in (proc / "fd").iterdir()}
        except OSError:
            continue
        if f"socket:[{inode}]" in sockets:
            status = (proc / "status").read_text()
            return int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1]) / 1024
    raise AssertionError(f"no process holds the socket of port {port}")


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads the server's memory from Linux's /proc")
def test_closed_sessions_are_freed(serve: Callable[..., str]) -> None:
    """The server ran with the cyclic garbage collector off (it never said its start-up was over), so every
    closed session's forked world stayed in memory: about 0.25 MB a session, for ever."""
    url = serve("support-refund")
    ws_url = url.replace("http://", "ws://") + "/ws"
    look = json.dumps({"type": "step", "data": {"tool": "get_ticket", "arguments": {"ticket_id": "TCK-9001"}}})

    async def sessions(count: int) -> None:
        async def one() -> None:
            async with websockets.connect(ws_url) as ws:
                await ws.send(json.dumps({"type": "reset", "data": {}}))
                await ws.recv()
                await ws.send(look)
                assert json.loads(await ws.recv())["type"] == "observation"

        await asyncio.gather(*(one() for _ in range(count)))

    for _ in range(10):  # warm up: allocator arenas and caches fill
        asyncio.run(sessions(16))
    before = server_rss_mb(url)
    for _ in range(30):
        asyncio.run(sessions(16))
    grown = server_rss_mb(url) - before
    assert grown < 30, f"the server grew {grown:.0f} MB over 480 closed sessions"


def test_a_request_head_that_never_completes_is_cut_off(serve: Callable[..., str]) -> None:
    """Slow clients (slowloris): `--header-timeout` closes a connection whose head has not arrived in time."""
    url = serve("support-refund", "--header-timeout", "0.4")
    port = int(url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as slow:
        slow.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        slow.settimeout(60)  # a generous limit: without the deadline the server never closes it
        with contextlib.suppress(ConnectionResetError):
            assert slow.recv(1024) == b""
    assert httpx.get(f"{url}/health", timeout=5).status_code == 200


def test_a_header_timeout_of_zero_is_refused(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            str(Path(sys.executable).with_name("agentenv")),
            "openenv",
            "serve",
            "support-refund",
            "--header-timeout",
            "0",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "--header-timeout" in done.stderr


AT_CAPACITY = """
import asyncio, json, sys
from openenv.core.generic_client import GenericEnvClient

async def main(url):
    env = GenericEnvClient(base_url=url)
    try:
        await env.reset()
    except Exception as exc:
        print(json.dumps({"error": type(exc).__name__, "message": str(exc)}))
    else:
        print(json.dumps({"error": None}))
    finally:
        await env.close()

asyncio.run(main(sys.argv[1]))
"""


@pytest.mark.slow
def test_openenvs_own_client_is_told_the_server_is_at_capacity(
    serve: Callable[..., str], openenv_python: Path
) -> None:
    """openenv-core's server answers a session over capacity with an error message (code CAPACITY_REACHED, with
    active and max sessions) and then closes (1000); its client raises `Server error: … (code: …)` from the reply
    to its first message. Closing at once made that first send fail: the client saw only a closed connection."""
    url = serve("support-refund", "--max-sessions", "1")

    async def scenario() -> dict[str, Any]:
        async with websockets.connect(url.replace("http://", "ws://") + "/ws") as holder:
            await holder.send(json.dumps({"type": "reset", "data": {}}))
            assert json.loads(await holder.recv())["type"] == "observation"  # the only slot is taken
            proc = await asyncio.create_subprocess_exec(
                str(openenv_python), "-c", AT_CAPACITY, url, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            out, err = await asyncio.wait_for(proc.communicate(), 120)
            assert proc.returncode == 0, err.decode()[-3000:]
            seen: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
            return seen

    seen = asyncio.run(scenario())
    assert seen["error"] == "RuntimeError", seen
    assert "code: CAPACITY_REACHED" in seen["message"] and "--max-sessions" in seen["message"], seen


def test_a_client_gone_mid_body_logs_no_traceback(tmp_path: Path) -> None:
    """A request head announcing a body, part of it, then the connection closed: uvicorn logged a
    `ClientDisconnect` traceback per request; now nothing is logged and the server goes on."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTENV_")}
    agentenv = Path(sys.executable).with_name("agentenv")
    server = subprocess.Popen(
        [str(agentenv), "openenv", "serve", "support-refund", "--port", "0"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        assert server.stdout is not None
        head = server.stdout.readline()
        found = re.search(r"serving on http://([\d.]+):(\d+)", head)
        assert found, head
        host, port = found.group(1), int(found.group(2))
        for path in ("/reset", "/step", "/mcp"):
            with socket.create_connection((host, port), timeout=10) as conn:
                conn.sendall(f"POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                             "content-length: 100000\r\n\r\n".encode() + b'{"action": {"tool": "')
        assert httpx.get(f"http://{host}:{port}/health", timeout=10).json() == {"status": "healthy"}
    finally:
        server.terminate()
        output = server.communicate(timeout=30)[0]
    assert "Traceback" not in output and "ClientDisconnect" not in output, output[-3000:]

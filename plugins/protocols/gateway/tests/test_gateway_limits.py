"""Bounds and hardening of a served world (issue 16): every case failed before its fix.

A tool that blocks on an event stands in for a slow call, so "`/health` answers while a call runs" is
shown by the order of events, never by timing. `bench/served_load.py` measures `/health` during maximal
batches.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from agentenv_gateway import core
from agentenv_gateway.app import build_app
from agentenv_gateway.client import McpToolAccess
from agentenv_gateway.limits import GatewayLimits, LimitsError
from agentenv_gateway.server import serve_in_thread
from agentenv_runtime import Env, World, WorldError, tool

CONTROL = {"authorization": "Bearer tok-control"}
SUPPORT = {"authorization": "Bearer tok-support"}


class Gate(Env):
    """A tool that waits until the test opens the gate: a call that takes as long as the test wants."""

    name = "gate"
    schema = "CREATE TABLE hits (n INTEGER);"
    entered = threading.Event()
    opened = threading.Event()

    @tool
    def wait(self) -> dict[str, Any]:
        """Block until the gate opens."""
        type(self).entered.set()
        type(self).opened.wait(30)
        self.db.execute("INSERT INTO hits VALUES (1)")
        return {"waited": True}

    @tool(read_only=True)
    def ping(self) -> str:
        """Answer at once."""
        return "pong"

    @tool(read_only=True)
    def where(self, pause_ms: int = 0) -> str:
        """The name of the thread the call ran on, after pausing `pause_ms` (a slow call)."""
        if pause_ms:
            self.pause(pause_ms)
        return threading.current_thread().name

    def pause(self, ms: int) -> None:
        """Take `ms` milliseconds (a test may make the gateway's clock take them instead)."""
        time.sleep(ms / 1000)


@pytest.fixture
def gate() -> type[Gate]:
    Gate.entered.clear()
    Gate.opened.clear()
    yield Gate
    Gate.opened.set()


def gate_world() -> World:
    return World([Gate()], roles={"support": {"tools": ["*"]}})


def rpc(url: str, body: Any, headers: dict[str, str]) -> httpx.Response:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(f"{url}/agentenv", content=data, headers=headers, timeout=30)


def call(i: int, name: str = "ping", arguments: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": arguments or {}}}


TOKENS = {"support": "tok-support", "control": "tok-control"}


def test_health_answers_while_a_world_call_runs_on_the_world_thread(gate: type[Gate]) -> None:
    app = build_app(gate_world(), tokens=TOKENS)  # the default: calls on the world thread
    with serve_in_thread(app) as url:
        slow = threading.Thread(
            target=lambda: httpx.post(f"{url}/rest/tools/wait", json={}, headers=SUPPORT, timeout=30)
        )
        slow.start()
        assert gate.entered.wait(10)
        health = httpx.get(f"{url}/health", headers=SUPPORT, timeout=10)  # timed out before the fix
        assert health.status_code == 200 and not gate.opened.is_set()
        gate.opened.set()
        slow.join(30)


class VirtualTimer:
    """The gateway's timer (`core.time.perf_counter`) advanced by the calls themselves: `where` with `pause_ms`
    moves it forward instead of sleeping, so whether a call counts as cheap is decided by the rule, never by how
    busy this machine is (on a loaded machine a real 1 ms call took longer and the test failed)."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now


def test_cheap_tool_calls_run_inline_once_measured_and_slow_ones_stay_on_the_world_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    timer = VirtualTimer()
    monkeypatch.setattr(core, "time", timer)
    monkeypatch.setattr(Gate, "pause", lambda self, ms: setattr(timer, "now", timer.now + ms / 1000), raising=False)
    app = build_app(gate_world(), tokens=TOKENS)

    def threads(url: str, pause_ms: int) -> list[str]:
        replies = [
            httpx.post(f"{url}/rest/tools/where", json={"pause_ms": pause_ms}, headers=SUPPORT, timeout=30)
            for _ in range(8)
        ]
        return [reply.json()["result"] for reply in replies]

    with serve_in_thread(app) as url:
        cheap = threads(url, 0)  # takes no time on the gateway's clock
        assert cheap[0].startswith("agentenv-world"), cheap  # a call's first run is timed on the world thread
        assert not any(name.startswith("agentenv-world") for name in cheap[1:]), cheap  # then inline, no hand-off
        slow = threads(url, 200)  # 200 ms on its clock: over INLINE_BELOW, so the next calls go back to the thread
        assert slow[0] == cheap[-1] and all(name.startswith("agentenv-world") for name in slow[1:]), slow
        jsonrpc = rpc(url, call(1, "where"), SUPPORT).json()["result"]
        assert jsonrpc["ok"] and jsonrpc["result"].startswith("agentenv-world")  # still counted slow (halving)


def test_concurrent_requests_of_one_caller_are_bounded(gate: type[Gate]) -> None:
    app = build_app(gate_world(), tokens=TOKENS, limits=GatewayLimits(max_in_flight_principal=1))
    with serve_in_thread(app) as url:
        slow = threading.Thread(
            target=lambda: httpx.post(f"{url}/rest/tools/wait", json={}, headers=SUPPORT, timeout=30)
        )
        slow.start()
        assert gate.entered.wait(10)
        busy = httpx.post(f"{url}/rest/tools/ping", json={}, headers=SUPPORT, timeout=10)
        assert busy.status_code == 429 and busy.json()["error"]["code"] == "too_many_requests"
        made_up = SUPPORT | {"mcp-session-id": "not-a-session-of-this-caller"}  # counted against the caller itself
        assert httpx.post(f"{url}/rest/tools/ping", json={}, headers=made_up, timeout=10).status_code == 429
        gate.opened.set()
        slow.join(30)
        assert httpx.post(f"{url}/rest/tools/ping", json={}, headers=SUPPORT, timeout=10).status_code == 200


def test_batches_are_bounded_for_non_control_roles() -> None:
    world = gate_world()
    app = build_app(world, tokens=TOKENS, limits=GatewayLimits(max_batch=4, max_batch_control=8))
    with serve_in_thread(app) as url:
        refused = rpc(url, [call(i) for i in range(5)], SUPPORT)
        assert refused.status_code == 200
        assert refused.json()["error"]["code"] == -32600 and "at most 4" in refused.json()["error"]["message"]
        assert world.trajectory.events == []  # refused as a whole: nothing ran
        assert len(rpc(url, [call(i) for i in range(4)], SUPPORT).json()) == 4
        assert len(rpc(url, [call(i) for i in range(8)], CONTROL).json()) == 8
        assert "error" in rpc(url, [call(i) for i in range(9)], CONTROL).json()


def test_deep_nesting_is_an_error_reply_never_a_500() -> None:
    world = gate_world()
    app = build_app(world, tokens=TOKENS)
    deep = b"[" * 50_000 + b"]" * 50_000
    with serve_in_thread(app) as url:
        parse = rpc(url, deep, SUPPORT)
        assert parse.status_code == 200 and parse.json()["error"]["code"] == -32700
        nested: Any = 1
        for _ in range(60):
            nested = [nested]
        moderate = rpc(url, call(1, "ping", {"x": nested}), SUPPORT)
        assert moderate.status_code == 200 and moderate.json()["error"]["code"] == -32600
        rest = httpx.post(f"{url}/rest/tools/ping", content=deep, headers=SUPPORT, timeout=30)
        assert rest.status_code == 400 and rest.json()["error"]["code"] == "invalid_arguments"
        inner: Any = 1
        for _ in range(33):
            inner = {"a": inner}
        too_deep = httpx.post(f"{url}/rest/tools/ping", json={"x": inner}, headers=SUPPORT, timeout=30)
        assert too_deep.status_code == 400 and "nested deeper than 32" in too_deep.json()["error"]["message"]
        long = httpx.post(f"{url}/rest/tools/ping", json={"x": "y" * 70_000}, headers=SUPPORT, timeout=30)
        assert long.status_code == 400 and long.json()["error"]["field"] == "x"


def test_lone_surrogate_leaves_the_served_trajectory_readable_and_the_mcp_session_alive(served, tokens) -> None:
    surrogate = '{"ticket_id": "\\ud800"}'
    rest = httpx.post(
        f"{served.url}/rest/tools/issue_refund", content=surrogate, headers={"authorization": "Bearer tok-support"}
    )
    assert rest.status_code == 403  # the lowest role's refused call...
    rest = httpx.post(
        f"{served.url}/rest/tools/get_ticket", content=surrogate, headers={"authorization": "Bearer tok-billing"}
    )
    assert rest.status_code == 400 and rest.json()["error"]["code"] == "invalid_arguments"
    trajectory = rpc(served.url, {"jsonrpc": "2.0", "id": 1, "method": "trajectory/get"}, CONTROL)
    assert trajectory.status_code == 200, trajectory.text  # was HTTP 500 until a data reset
    assert len(trajectory.json()["result"]["events"]) == 2

    access = McpToolAccess(served.url, tokens["billing_lead"], role="billing_lead")  # a served agent's tools
    try:
        bad = access.call_tool("get_ticket", {"ticket_id": "\ud800"})  # the SDK client cannot even encode it
        assert bad["ok"] is False and bad["error"]["code"] == "invalid_arguments"
        good = access.call_tool("get_ticket", {"ticket_id": "TCK-9001"})
        assert good["ok"] is True and good["result"]["ticket_id"] == "TCK-9001"  # the session still works
    finally:
        access.close()
    calls = [e for e in served.world.trajectory.events if e["kind"] == "tool_call"]
    assert [e.get("error", {}) and e["error"]["code"] for e in calls][-2:] == ["invalid_arguments", None]


def test_role_naming_an_unknown_tool_is_refused() -> None:
    world = World([Gate()], roles={"support": {"tools": ["*"], "deny": ["wiat"]}})
    with pytest.raises(WorldError, match=r"roles.support.deny: no tool 'wiat'.*did you mean 'wait'"):
        build_app(world, tokens=TOKENS)


def test_serve_refuses_a_role_file_deny_typo(tmp_path: Path) -> None:
    roles = tmp_path / "roles.toml"
    roles.write_text('[roles.support]\ntools = ["*"]\ndeny = ["isue_refund"]\ntoken = "x"\n')
    result = subprocess.run(
        [sys.executable, "-m", "agentenv", "serve", "helpdesk", "--role-file", str(roles)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert f"{roles}: roles.support.deny: no tool 'isue_refund'" in result.stderr
    assert "Traceback" not in result.stderr


def test_limits_settings_errors_name_the_field() -> None:
    assert GatewayLimits.from_settings(None) == GatewayLimits()
    assert GatewayLimits.from_settings({"max_batch": 5}).max_batch == 5
    with pytest.raises(LimitsError, match=r"field `max_batch`: Input should be greater than or equal to 1"):
        GatewayLimits.from_settings({"max_batch": 0})
    with pytest.raises(LimitsError, match=r"field `max_bach`: Extra inputs are not permitted"):
        GatewayLimits.from_settings({"max_bach": 5})

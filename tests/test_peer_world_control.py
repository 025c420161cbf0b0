"""The peer framework's world-control steps against our served world, in the peer's own wire shapes (its REST
extension routes and trigger language, as its gateway serves them): a frozen clock (`virtual_seconds_per_real_second:
0`), `triggers/register` answering `{ok, added, all}`, `triggers/state` entries carrying a `status` from the peer's
set, and a due time trigger firing once the clock has passed it, with no tool call in between."""

from __future__ import annotations

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
from agentenv_gateway.server import serve_in_thread
from agentenv_runtime.world.build import build_world

PEER_STATUSES = {"armed", "firing", "queued", "fired", "failed", "cancelled"}
START = "2026-11-24T10:00:00Z"


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    world = build_world("helpdesk", artifacts=["acme"])
    with serve_in_thread(build_app(world)) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client


def test_rate_zero_is_the_peers_frozen_clock(http: httpx.Client) -> None:
    reply = http.put("/clock/set-time", json={"virtual_time": START, "virtual_seconds_per_real_second": 0})
    assert reply.status_code == 200, reply.text
    assert reply.json()["virtual_seconds_per_real_second"] == 0 and reply.json()["mode"] == "frozen"
    first = http.get("/clock/time").json()["virtual_time"]
    assert first == START and http.get("/clock/time").json()["virtual_time"] == first


def test_register_answers_added_and_all_and_state_carries_statuses(http: httpx.Client) -> None:
    http.put("/clock/set-time", json={"virtual_time": START, "virtual_seconds_per_real_second": 0})
    time_trigger = {"id": "reminder", "when": {"type": "time", "at": "2026-11-24T10:05:00Z"},
                    "actions": [{"type": "tool", "tool": "get_ticket", "args": {"ticket_id": "TCK-9001"}}]}
    on_close = {"id": "on-close", "when": {"type": "action", "tool": "close_ticket"}, "actions": []}
    reply = http.post("/triggers/register", json={"triggers": [time_trigger, on_close]})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["ok"] is True and body["added"] == ["reminder", "on-close"] and body["all"] == ["reminder", "on-close"]
    entries = {t["id"]: t for t in http.get("/triggers/state").json()["triggers"]}
    assert {t["status"] for t in entries.values()} <= PEER_STATUSES
    assert entries["reminder"]["status"] == "armed"
    # the peer moves the clock past the trigger and polls the state (its `await_fired`): no tool call between
    http.put("/clock/set-time", json={"virtual_time": "2026-11-24T10:06:00Z", "virtual_seconds_per_real_second": 0})
    entries = {t["id"]: t for t in http.get("/triggers/state").json()["triggers"]}
    assert entries["reminder"]["status"] == "fired" and entries["on-close"]["status"] == "armed"
    calls = [line for line in http.get("/trajectory").text.splitlines() if "get_ticket" in line]
    assert calls, "the due trigger's action did not run"


def test_an_unknown_role_is_refused_not_served_with_no_tools(http: httpx.Client) -> None:
    reply = http.get("/rest/tools", headers={"AgentEnv-Role": "nobody"})
    assert reply.status_code == 403 and "no role 'nobody' in this world (roles: default)" in reply.text
    assert http.get("/rest/tools", headers={"AgentEnv-Role": "default"}).status_code == 200


def test_a_trigger_whose_action_failed_reads_failed_with_the_reason(http: httpx.Client) -> None:
    """The peer's `failed` status: the trigger fired, and its action's tool call was refused."""
    http.put("/clock/set-time", json={"virtual_time": START, "virtual_seconds_per_real_second": 0})
    broken = {"id": "broken", "when": {"type": "time", "at": "2026-11-24T10:01:00Z"},
              "actions": [{"type": "tool", "tool": "get_ticket", "args": {"ticket_id": "TCK-0000"}}]}
    fine = {"id": "fine", "when": {"type": "time", "at": "2026-11-24T10:01:00Z"},
            "actions": [{"type": "tool", "tool": "get_ticket", "args": {"ticket_id": "TCK-9001"}}]}
    assert http.post("/triggers/register", json={"triggers": [broken, fine]}).status_code == 200
    http.put("/clock/set-time", json={"virtual_time": "2026-11-24T10:02:00Z", "virtual_seconds_per_real_second": 0})
    entries = {t["id"]: t for t in http.get("/triggers/state").json()["triggers"]}
    assert entries["fine"]["status"] == "fired" and "error" not in entries["fine"]
    assert entries["broken"]["status"] == "failed"
    assert entries["broken"]["error"]["tool"] == "get_ticket" and "TCK-0000" in entries["broken"]["error"]["message"]


def test_the_peers_load_path_reset_then_add_works_on_a_default_served_world(tmp_path: Path) -> None:
    """`agentenv serve`'s default `data/reset` leaves the world empty, as the peer's load path (`reset_data`, then
    `add_data` of the same rows) expects: with `--reset-to loaded` as the default, that add hit UNIQUE errors."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    agentenv = Path(sys.executable).with_name("agentenv")
    server = subprocess.Popen([str(agentenv), "serve", "helpdesk", "-a", "acme", "--port", str(port)], cwd=tmp_path,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, "agentenv serve did not start"
            time.sleep(0.1)
        with httpx.Client(base_url=url, timeout=30) as client:

            def rpc(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
                body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
                return dict(client.post("/agentenv", json=body).json())

            loaded = rpc("data/get")["result"]
            assert rpc("data/reset")["result"]["to"] == "empty"
            emptied = rpc("data/get")["result"]["parts"]
            assert all(not rows for part in emptied for rows in part["data"].values())
            added = rpc("data/add", {"parts": loaded["parts"]})  # the peer's add_data of the same rows
            assert "error" not in added, added
            assert rpc("data/get")["result"] == loaded
    finally:
        server.terminate()
        server.wait(10)

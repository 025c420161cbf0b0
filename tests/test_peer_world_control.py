"""The peer framework's world-control steps against our served world, in the peer's own wire shapes (its REST
extension routes and trigger language, as its gateway serves them): a frozen clock (`virtual_seconds_per_real_second:
0`), `triggers/register` answering `{ok, added, all}`, `triggers/state` entries carrying a `status` from the peer's
set, and a due time trigger firing once the clock has passed it, with no tool call in between."""

from __future__ import annotations

from collections.abc import Iterator

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

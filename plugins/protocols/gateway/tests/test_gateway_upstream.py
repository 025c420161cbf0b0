"""Fronting a third-party MCP server: its tools join the world's namespace, rules and trajectory."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from pathlib import Path

import httpx
import pytest
from agentenv_gateway.app import build_app
from agentenv_gateway.server import serve_in_thread
from agentenv_gateway.upstream import UpstreamError, parse_upstream
from agentenv_runtime import build_world

SERVER = Path(__file__).with_name("upstream_server.py")
COMMAND = f"{shlex.quote(sys.executable)} {shlex.quote(str(SERVER))}"
ROLES = {"support": {"tools": ["*"], "deny": ["weather_get_ticket"]}, "billing_lead": {"tools": ["*"]}}
TOKENS = {"support": "tok-s", "billing_lead": "tok-b", "control": "tok-c"}


@pytest.fixture
def fronted():
    world = build_world("helpdesk", artifacts=["acme"], roles=ROLES)
    app = build_app(world, tokens=TOKENS, upstreams={"weather": COMMAND})
    with serve_in_thread(app) as url:
        yield url, world
    assert app.upstreams[0].session is None  # closed on shutdown


def test_upstream_tools_beside_the_world(fronted, mcp):
    url, world = fronted

    async def run():
        async with mcp(url, TOKENS["billing_lead"]) as session:
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert {"get_forecast", "weather_get_ticket", "get_ticket", "issue_refund"} <= set(tools)
            assert tools["get_forecast"].input_schema["required"] == ["city"]
            forecast = await session.call_tool("get_forecast", {"city": "Portland", "days": 2})
            assert forecast.is_error is False
            assert forecast.structured_content == {
                "city": "Portland",
                "days": 2,
                "summary": "rain in Portland",
                "calls": 1,
            }
            theirs = await session.call_tool("weather_get_ticket", {"ticket_id": "W-1"})
            ours = await session.call_tool("get_ticket", {"ticket_id": "TCK-9001"})
            assert "umbrella" in json.dumps(theirs.structured_content)
            assert ours.structured_content["ticket_id"] == "TCK-9001"
            bad = await session.call_tool("get_forecast", {"days": "two"})
            assert bad.is_error
            assert {e["field"] for e in bad.structured_content["error"]["errors"]} >= {"city", "days"}
            failed = await session.call_tool("get_forecast", {"city": "Oslo", "days": 9})
            assert failed.is_error and failed.structured_content["error"]["code"] == "upstream_error"
            assert "between 1 and 7" in failed.structured_content["error"]["message"]

    asyncio.run(run())
    calls = [(e["tool"], e["role"], e["error"] is None) for e in world.trajectory.events if e["kind"] == "tool_call"]
    assert calls == [
        ("get_forecast", "billing_lead", True),
        ("weather_get_ticket", "billing_lead", True),
        ("get_ticket", "billing_lead", True),
        ("get_forecast", "billing_lead", False),
        ("get_forecast", "billing_lead", False),
    ]
    card = httpx.get(f"{url}/.well-known/agent-env.json", headers={"authorization": "Bearer tok-b"}).json()
    assert [c["name"] for c in card["children_environments"]] == ["helpdesk", "weather"]
    child_tools = card["children_environments"][1]["capabilities"]["tools"]
    assert sorted(t["name"] for t in child_tools) == ["get_forecast", "weather_get_ticket"]


def test_upstream_tools_follow_rbac_and_triggers(fronted):
    url, world = fronted
    support = {"authorization": "Bearer tok-s"}
    listed = {t["name"] for t in httpx.get(f"{url}/rest/tools", headers=support).json()["tools"]}
    assert "get_forecast" in listed and "weather_get_ticket" not in listed
    refused = httpx.post(f"{url}/rest/tools/weather_get_ticket", json={"ticket_id": "W-1"}, headers=support)
    assert refused.status_code == 403
    trigger = {
        "id": "rainy",
        "kind": "tool_call",
        "when": {"tool": "get_forecast", "result": {"summary": {"contains": "rain"}}},
        "actions": [
            {
                "call_tool": {
                    "tool": "add_ticket_comment",
                    "args": {"ticket_id": "TCK-9001", "body": "Courier delayed by rain", "public": False},
                }
            }
        ],
    }
    reply = httpx.post(
        f"{url}/agentenv",
        json={"jsonrpc": "2.0", "id": 1, "method": "triggers/register", "params": {"triggers": [trigger]}},
        headers={"authorization": "Bearer tok-c"},
    ).json()
    assert reply["result"] == {"registered": ["rainy"], "added": ["rainy"], "all": ["rainy"]}
    called = httpx.post(f"{url}/rest/tools/get_forecast", json={"city": "Bend"}, headers=support)
    assert called.status_code == 200 and called.json()["result"]["city"] == "Bend"
    events = world.trajectory.events
    fired = [e for e in events if e["kind"] == "tool_call" and e.get("trigger") == "rainy"]
    assert fired and fired[0]["tool"] == "add_ticket_comment" and fired[0]["error"] is None


def test_bad_upstreams_fail_clearly():
    with pytest.raises(UpstreamError, match="expected NAME=COMMAND"):
        parse_upstream("weather")
    world = build_world("helpdesk", artifacts=["acme"])
    with pytest.raises(UpstreamError, match="upstream broken: cannot connect"):
        build_app(world, upstreams={"broken": f"{shlex.quote(sys.executable)} -c 'import sys; sys.exit(3)'"})
    with pytest.raises(ValueError, match="already has an env named 'helpdesk'"):
        build_app(world, upstreams={"helpdesk": COMMAND})
    assert list(world.envs) == ["helpdesk"]

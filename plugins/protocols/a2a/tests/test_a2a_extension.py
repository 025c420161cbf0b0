"""The agent-config extension of served agents: card entry, config, role, state, trajectory, file parts."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from a2a_testkit import EchoAgent
from agentenv_a2a.agent import A2aAgent
from agentenv_a2a.server import build_a2a_app, serve_a2a
from agentenv_runtime import World

URI = "urn:agentenv:agent-config/v1"


def rpc(url: str, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
    reply: dict[str, Any] = httpx.post(f"{url}/agentenv", json=body, timeout=10).json()
    return reply


def card(url: str) -> dict[str, Any]:
    data: dict[str, Any] = httpx.get(f"{url}/.well-known/agent-card.json", timeout=10).json()
    return data


def ask(url: str, text: str) -> str:
    return asyncio.run(A2aAgent(A2aAgent.Settings(url=url)).respond(text, None)).text  # type: ignore[arg-type]


def test_card_declares_the_extension_with_endpoint_and_install(served):
    extension = next(e for e in card(served.url)["capabilities"]["extensions"] if e["uri"] == URI)
    params = extension["params"]
    assert params["endpoint"] == "/agentenv"  # a path under the agent's base URL, as the reference's cards carry
    assert "config/set" in params["rpc"] and "trajectory/get" in params["rpc"]
    assert params["methods"]["set"]["request"]["supported"] == ["description", "name", "role", "system_prompt"]
    assert "agentenv-agent.json" in params["install"]["files"] and params["install"]["commands"]


def test_config_changes_the_card_and_is_read_back(served):
    result = rpc(
        served.url,
        "config/set",
        {
            "name": "Renamed",
            "description": "New words.",
            "skills": [{"name": "greet", "description": "Greets", "text": "Say hi."}],
        },
    )
    assert result["result"]["name"] == "Renamed"
    shown = card(served.url)
    assert shown["name"] == "Renamed" and shown["description"] == "New words."
    assert "greet" in [s["name"] for s in shown["skills"]]
    got = rpc(served.url, "config/get")["result"]
    assert got["skills"][0]["text"] == "Say hi." and got["roles"] == ["default"] and got["kind"] == "echo-test"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"role": "nobody"}, "has no role 'nobody'"),
        ({"colour": "red"}, "colour: Extra inputs are not permitted"),
        ({"peers": [{"name": "a", "url": "http://x"}, {"name": "a", "url": "http://y"}]}, "'a' is given twice"),
        ({"mcp_servers": [{"name": "m", "url": "http://127.0.0.1:9/mcp"}]}, "cannot reach MCP server 'm'"),
    ],
)
def test_bad_config_is_refused_and_changes_nothing(served, params, message):
    before = rpc(served.url, "config/get")["result"]
    reply = rpc(served.url, "config/set", params)
    assert reply["error"]["code"] == -32602 and message in reply["error"]["message"], reply
    assert rpc(served.url, "config/get")["result"] == before


def test_unknown_method_and_bad_json():
    world = World([], name="empty")
    app = build_a2a_app(EchoAgent(), world.tool_access(), name="E", description="d")
    with serve_a2a(app) as url:
        assert rpc(url, "config/explode")["error"]["code"] == -32601
        json_type = {"content-type": "application/json"}
        bad = httpx.post(f"{url}/agentenv", content=b"{", headers=json_type, timeout=10)
        assert bad.status_code == 400 and bad.json()["error"]["code"] == -32700
        # no token here: what a browser page on another site can send is refused before any handler runs
        assert httpx.post(f"{url}/agentenv", content=b"{}", timeout=10).status_code == 415
        foreign = json_type | {"origin": "https://evil.example"}
        assert httpx.post(f"{url}/agentenv", content=b"{}", headers=foreign, timeout=10).status_code == 403
        big = httpx.post(url, content=b'"' + b"x" * (2 * 1024 * 1024) + b'"', headers=json_type, timeout=30)
        assert big.status_code == 413  # the body limit


def test_role_switches_the_tools_the_agent_sees():
    from a2a_testkit import NotesEnv

    world = World([NotesEnv()], roles={"reader": {"tools": ["count_notes"]}})
    app = build_a2a_app(EchoAgent(), world.tool_access(), name="E", description="d")
    with serve_a2a(app) as url:
        assert rpc(url, "config/set", {"role": "reader"})["result"]["role"] == "reader"
        with pytest.raises(Exception, match="failed"):  # the echo agent needs add_note, which readers lack
            ask(url, "hello")
    calls = [(e["tool"], e["role"]) for e in world.trajectory.events if e["kind"] == "tool_call"]
    assert calls == [("count_notes", "reader")]  # add_note was refused before it reached the world
    record = app.state.served.records[-1]
    assert record["state"] == "failed" and record["role"] == "reader"
    assert [(c["tool"], c["ok"]) for c in record["tool_calls"]] == [("add_note", False), ("count_notes", True)]


def test_state_moves_between_instances_and_trajectory_lists_calls(served):
    ask(served.url, "first")
    ask(served.url, "second")
    state = rpc(served.url, "state/save")["result"]["state"]
    assert state["kind"] == "echo-test" and state["agent"]["turns"] == 2
    assert rpc(served.url, "state/reset")["result"] == {"reset": True}
    assert served.url and app_agent(served).turns == 0
    assert rpc(served.url, "state/load", {"state": state})["result"]["loaded"] is True
    assert app_agent(served).turns == 2
    tasks = rpc(served.url, "trajectory/get")["result"]["tasks"]
    assert [t["prompt"] for t in tasks] == ["first", "second"]
    assert [c["tool"] for c in tasks[0]["tool_calls"]] == ["add_note", "count_notes"]
    one = rpc(served.url, "trajectory/get", {"task_id": tasks[1]["task_id"]})["result"]["tasks"]
    assert len(one) == 1 and one[0]["response"]["text"] == "echo: second"
    assert "no task" in rpc(served.url, "trajectory/get", {"task_id": "nope"})["error"]["message"]
    bad = rpc(served.url, "state/load", {"state": {**state, "kind": "llm"}})
    assert "saved by a 'llm' agent" in bad["error"]["message"]


def app_agent(served: Any) -> Any:
    """The agent instance the server runs now (state/load and state/reset replace it)."""
    return _served[served.url].agent


_served: dict[str, Any] = {}


@pytest.fixture
def served():
    from types import SimpleNamespace

    from a2a_testkit import notes_world

    world, tools = notes_world()
    app = build_a2a_app(EchoAgent(), tools, name="Echo", description="Echoes prompts into a notes world.")
    with serve_a2a(app) as url:
        _served[url] = app.state.served
        yield SimpleNamespace(world=world, url=url)
        _served.pop(url, None)


def test_file_parts_reach_the_agent_as_described_lines(served):
    from a2a.client import create_client
    from a2a.helpers import new_message, new_raw_part, new_text_part
    from a2a.types.a2a_pb2 import Role, SendMessageRequest

    async def send() -> None:
        client = await create_client(served.url)
        try:
            parts = [new_text_part("look"), new_raw_part(b"\x89PNG", media_type="image/png", filename="a.png")]
            async for _event in client.send_message(
                SendMessageRequest(message=new_message(parts, role=Role.ROLE_USER))
            ):
                pass
        finally:
            await client.close()

    asyncio.run(send())
    notes = [e["args"]["text"] for e in served.world.trajectory.events if e.get("tool") == "add_note"]
    assert notes == ["look\n[attached file a.png (image/png, 4 bytes)]"]

"""`world = "mcp"`: the `a2a` kind serves the world behind `tools` over MCP for the agent's role and sends the
endpoint with each message (`urn:agentenv:world/v1`); a plain a2a-sdk agent connects with an MCP client and acts."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import pytest
from a2a_testkit import NotesEnv, world_app
from agentenv_a2a.agent import A2aAgent, A2aError
from agentenv_a2a.server import serve_a2a
from agentenv_runtime import World, WorldToolAccess

ROLES = {"writer": {"tools": ["*"]}, "reader": {"tools": ["*"], "deny": ["add_note"]}}


@contextmanager
def world_agent(*, declare: bool = True) -> Iterator[str]:
    app, card = world_app(declare=declare)
    with serve_a2a(app) as url:
        card.supported_interfaces[0].url = f"{url}/"
        yield url


def ask(agent: A2aAgent, world: World, role: str, *prompts: str) -> list[Any]:
    async def talk() -> list[Any]:
        return [json.loads((await agent.respond(p, WorldToolAccess(world, role))).text) for p in prompts]

    return asyncio.run(talk())


def test_the_agent_acts_in_the_world_over_mcp_as_its_role() -> None:
    world = World([NotesEnv()], roles=ROLES)
    with world_agent() as url:
        agent = A2aAgent(A2aAgent.Settings.model_validate({"url": url, "world": "mcp"}))
        try:
            first, second = ask(agent, world, "writer", "remember the milk", "and the eggs")
            served = agent._world.endpoint(WorldToolAccess(world, "writer"))
        finally:
            agent.close()
    assert first["role"] == "writer" and first["tools"] == ["add_note", "count_notes"]
    assert first["note"] == {"ok": True, "result": {"id": 1, "text": "remember the milk"}}
    assert second["note"]["result"]["id"] == 2  # the same world, served once for the agent's life
    calls = [(e["tool"], e["role"]) for e in world.trajectory.events if e["kind"] == "tool_call"]
    assert calls == [("add_note", "writer"), ("add_note", "writer")]
    port = urlsplit(served.url).port
    assert port is not None
    with pytest.raises(OSError):  # close() stopped the world's server
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_a_role_without_a_tool_cannot_use_it_through_the_agent() -> None:
    world = World([NotesEnv()], roles=ROLES)
    with world_agent() as url:
        agent = A2aAgent(A2aAgent.Settings.model_validate({"url": url, "world": "mcp"}))
        try:
            (seen,) = ask(agent, world, "reader", "sneak a note in")
        finally:
            agent.close()
    assert seen["role"] == "reader" and seen["tools"] == ["count_notes"]  # RBAC: not even listed
    assert seen["note"]["ok"] is False
    assert world.env("notes").export()["notes"] == []


def test_an_agent_whose_card_lacks_the_extension_is_refused_with_the_fix() -> None:
    world = World([NotesEnv()], roles=ROLES)
    with world_agent(declare=False) as url:
        agent = A2aAgent(A2aAgent.Settings.model_validate({"url": url, "world": "mcp"}))
        try:
            with pytest.raises(
                A2aError, match=r"does not declare the extension urn:agentenv:world/v1 .*world = \"none\""
            ):
                ask(agent, world, "writer", "hello")
        finally:
            agent.close()
    assert world.env("notes").export()["notes"] == []


def test_by_default_no_world_is_sent() -> None:
    world = World([NotesEnv()], roles=ROLES)
    with world_agent() as url:
        agent = A2aAgent(A2aAgent.Settings.model_validate({"url": url}))
        (seen,) = ask(agent, world, "writer", "hello")
    assert seen == {"world": None} and agent._world is None


def test_tools_that_are_no_world_are_a_clear_error() -> None:
    class Bare:
        def list_tools(self) -> list[dict[str, Any]]:
            return []

        def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            return {}

    agent = A2aAgent(A2aAgent.Settings.model_validate({"url": "http://127.0.0.1:9", "world": "mcp"}))
    with pytest.raises(A2aError, match=r'settings.world = "mcp": the world cannot be served .*Bare'):
        asyncio.run(agent.respond("x", Bare()))

"""The `a2a` agent kind against a real loopback A2A server (our own served echo agent)."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest
from a2a_testkit import EchoAgent, notes_world
from agentenv.contracts import AgentResponse
from agentenv_a2a.agent import A2aAgent, A2aError, A2aSettings
from agentenv_a2a.parts import parts_from_response, response_from_parts
from agentenv_a2a.server import build_a2a_app, serve_a2a
from pydantic import ValidationError


class NoTools:
    """A remote agent is never handed tools; any use would be a bug."""

    def list_tools(self) -> list[dict[str, Any]]:
        raise AssertionError("the a2a agent kind must not use the local tools")

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("the a2a agent kind must not use the local tools")


def make(url: str, **settings: Any) -> A2aAgent:
    return A2aAgent(A2aAgent.Settings.model_validate({"url": url, **settings}))


async def list_context_tasks(url: str, context_id: str) -> list[Any]:
    from a2a.client import create_client
    from a2a.types.a2a_pb2 import ListTasksRequest

    client = await create_client(url)
    try:
        page = await client.list_tasks(ListTasksRequest(context_id=context_id))
        return list(page.tasks)
    finally:
        await client.close()


def test_two_turns_in_one_conversation(served):
    agent = make(served.url)

    async def talk() -> tuple[AgentResponse, str | None, AgentResponse, str | None]:
        first = await agent.respond("remember the milk", NoTools())
        context_after_first = agent.context_id
        second = await agent.respond("and the eggs", NoTools())
        return first, context_after_first, second, agent.context_id

    first, context_1, second, context_2 = asyncio.run(talk())
    assert first.text == "echo: remember the milk"
    assert first.structured == {"turn": 1, "note": {"id": 1, "text": "remember the milk"}, "notes": 1}
    assert second.text == "echo: and the eggs"
    assert second.structured == {"turn": 2, "note": {"id": 2, "text": "and the eggs"}, "notes": 2}
    assert context_1 and context_1 == context_2
    # Both tasks belong to the one context on the server.
    tasks = asyncio.run(list_context_tasks(served.url, context_1))
    assert len(tasks) == 2 and {t.context_id for t in tasks} == {context_1}
    # The world really changed: the trajectory holds the served agent's tool calls, in order.
    calls = [(e["tool"], e["args"]) for e in served.world.trajectory.events if e["kind"] == "tool_call"]
    assert calls == [
        ("add_note", {"text": "remember the milk"}),
        ("count_notes", {}),
        ("add_note", {"text": "and the eggs"}),
        ("count_notes", {}),
    ]
    assert served.world.env("notes").export()["notes"] == [
        {"id": 1, "text": "remember the milk"},
        {"id": 2, "text": "and the eggs"},
    ]


def test_each_agent_instance_is_its_own_conversation(served):
    one, two = make(served.url), make(served.url)

    async def talk() -> None:
        await one.respond("a", NoTools())
        await two.respond("b", NoTools())

    asyncio.run(talk())
    assert one.context_id and two.context_id and one.context_id != two.context_id


def test_a_failed_remote_task_raises_naming_url_and_state(served):
    agent = make(served.url)
    with pytest.raises(A2aError) as caught:
        asyncio.run(agent.respond("fail please", NoTools()))
    message = str(caught.value)
    assert served.url in message
    assert "failed" in message
    assert "the echo agent was told to fail" in message


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_unreachable_url_gives_a_clear_error():
    url = f"http://127.0.0.1:{free_port()}"
    agent = make(url, timeout=5)
    with pytest.raises(A2aError) as caught:
        asyncio.run(agent.respond("hello?", NoTools()))
    message = str(caught.value)
    assert "cannot reach the A2A agent" in message
    assert f"{url}/.well-known/agent-card.json" in message


def test_a_url_without_a_card_gives_a_clear_error(served):
    agent = make(f"{served.url}/not-an-agent", timeout=5)
    with pytest.raises(A2aError, match="404"):
        asyncio.run(agent.respond("hello?", NoTools()))


def test_timeout_names_the_url_and_the_setting():
    _world, tools = notes_world()
    app = build_a2a_app(EchoAgent(), tools, name="Slow", description="sleeps")
    with serve_a2a(app) as url:
        agent = make(url, timeout=0.3)
        with pytest.raises(A2aError, match=r"within 0.3 s \(settings.timeout\)") as caught:
            asyncio.run(agent.respond("sleep a while", NoTools()))
    assert url in str(caught.value)


def test_headers_are_sent_with_every_request():
    seen: list[dict[str, str]] = []
    _world, tools = notes_world()
    inner = build_a2a_app(EchoAgent(), tools, name="Echo", description="d")

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            seen.append({k.decode(): v.decode() for k, v in scope["headers"]})
        await inner(scope, receive, send)

    with serve_a2a(recording) as url:
        response = asyncio.run(make(url, headers={"Authorization": "Bearer t0k"}).respond("hi", NoTools()))
    assert response.text == "echo: hi"
    assert len(seen) >= 2  # the card, then the message (and any task reads)
    assert all(h.get("authorization") == "Bearer t0k" for h in seen)


def test_settings_are_checked():
    with pytest.raises(ValidationError, match="url"):
        A2aSettings.model_validate({})
    with pytest.raises(ValidationError, match="timeout"):
        A2aSettings.model_validate({"url": "http://127.0.0.1:1", "timeout": 0})
    with pytest.raises(ValidationError, match="extra"):
        A2aSettings.model_validate({"url": "http://127.0.0.1:1", "tokn": "x"})
    settings = A2aSettings.model_validate({"url": "http://127.0.0.1:1"})
    assert (settings.timeout, settings.headers) == (60.0, {})


def test_parts_round_trip():
    answer = AgentResponse(text="done", structured={"refund": 89.99, "items": 2, "ok": True, "ids": [1, 2]})
    back = response_from_parts(parts_from_response(answer))
    assert back.text == "done"
    assert back.structured == {"refund": 89.99, "items": 2, "ok": True, "ids": [1, 2]}
    assert isinstance(back.structured["items"], int)
    assert response_from_parts(parts_from_response(AgentResponse(text="plain"))) == AgentResponse(text="plain")
    only_data = parts_from_response(AgentResponse(structured={"a": 1}))
    assert len(only_data) == 1 and response_from_parts(only_data).structured == {"a": 1}


def test_input_required_is_a_turn_and_the_next_prompt_continues_the_task():
    from a2a_testkit import interview_app

    app, card = interview_app()
    with serve_a2a(app) as url:
        card.supported_interfaces[0].url = f"{url}/"
        agent = make(url)

        async def talk() -> tuple[AgentResponse, str | None, AgentResponse]:
            question = await agent.respond("greet me", NoTools())
            waiting_on = agent.pending_task_id
            answer = await agent.respond("Dana", NoTools())
            return question, waiting_on, answer

        question, waiting_on, answer = asyncio.run(talk())
    assert question.text == "what is your name?"
    assert waiting_on  # the task waits for input; the next prompt is sent into it
    assert answer.text == "hello, Dana"
    assert agent.pending_task_id is None


def test_a_bare_message_answer_is_returned():
    from a2a_testkit import interview_app

    app, card = interview_app()
    with serve_a2a(app) as url:
        card.supported_interfaces[0].url = f"{url}/"
        response = asyncio.run(make(url).respond("direct question", NoTools()))
    assert response.text == "direct answer to direct question"


def test_a_protocol_error_names_the_url_and_resets_the_pending_task(served):
    agent = make(served.url)
    agent.pending_task_id = "no-such-task"  # e.g. the remote forgot the task it was waiting on
    with pytest.raises(A2aError, match="failed the request: TaskNotFoundError") as caught:
        asyncio.run(agent.respond("continue", NoTools()))
    assert served.url in str(caught.value)
    assert agent.pending_task_id is None
    assert asyncio.run(agent.respond("fresh start", NoTools())).text == "echo: fresh start"

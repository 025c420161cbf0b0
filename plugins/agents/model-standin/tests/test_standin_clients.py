"""The stand-in against the official `anthropic` and `openai` SDKs: real clients parse every wire format.

(The real Claude Code and Codex binaries are checked in the `agentenv-claude-code` and `agentenv-codex` tests.)
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
import pytest
from agentenv_model_standin.api import EXHAUSTED, StandInModel

TICKET = {"tool": "get_ticket", "arguments": {"ticket_id": "T-1"}}
SCRIPT = [{"tool_calls": [TICKET]}, {"text": "Done."}]
TICKET_TOOL = {"name": "mcp__world__get_ticket", "description": "d", "input_schema": {"type": "object"}}
CHAT_TOOL = {"type": "function", "function": {"name": "get_ticket", "parameters": {"type": "object"}}}


def _anthropic(model: StandInModel) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=model.url, api_key="sk-stand-in", max_retries=0)


def _openai(model: StandInModel) -> openai.OpenAI:
    return openai.OpenAI(base_url=model.openai_url, api_key="sk-stand-in", max_retries=0)


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_messages_tool_use_then_text(stream: bool) -> None:
    with StandInModel(SCRIPT) as model:
        client = _anthropic(model)
        ask: dict[str, Any] = {
            "model": "claude-x",
            "max_tokens": 100,
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [TICKET_TOOL],
        }
        if stream:
            with client.messages.stream(**ask) as events:
                first = events.get_final_message()
        else:
            first = client.messages.create(**ask)
        (block,) = first.content
        assert block.type == "tool_use"
        assert (block.name, block.input) == ("mcp__world__get_ticket", {"ticket_id": "T-1"})
        assert first.stop_reason == "tool_use"
        second = client.messages.create(**ask)
        assert [b.type for b in second.content] == ["text"]
        assert second.content[0].text == "Done."  # type: ignore[union-attr]
        assert second.stop_reason == "end_turn"
        assert [r.turn for r in model.requests] == [0, 1]
        headers = model.requests[0].headers  # the SDK's 2.x line sends the key as a bearer token
        assert "sk-stand-in" in headers.get("x-api-key", headers.get("authorization", ""))
        assert model.requests[0].tool_names == ["mcp__world__get_ticket"]


@pytest.mark.parametrize("stream", [False, True])
def test_openai_chat_tool_call_then_text(stream: bool) -> None:
    with StandInModel(SCRIPT) as model:
        client = _openai(model)
        ask: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [CHAT_TOOL]}
        if stream:
            with client.chat.completions.stream(**ask) as events:
                first = events.get_final_completion()
        else:
            first = client.chat.completions.create(**ask)
        (call,) = first.choices[0].message.tool_calls or []
        assert call.function.name == "get_ticket"  # type: ignore[union-attr]
        assert json.loads(call.function.arguments) == {"ticket_id": "T-1"}  # type: ignore[union-attr]
        assert first.choices[0].finish_reason == "tool_calls"
        second = client.chat.completions.create(**ask)
        assert second.choices[0].message.content == "Done."
        assert second.usage is not None and second.usage.prompt_tokens > 0


@pytest.mark.parametrize("stream", [False, True])
def test_openai_responses_tool_call_then_text(stream: bool) -> None:
    tool = {"type": "function", "name": "get_ticket", "parameters": {"type": "object"}, "strict": False}
    with StandInModel(SCRIPT) as model:
        client = _openai(model)
        ask: dict[str, Any] = {"model": "m", "input": "hi", "tools": [tool]}
        if stream:
            with client.responses.stream(**ask) as events:
                kinds = [event.type for event in events]
                first = events.get_final_response()
            assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
        else:
            first = client.responses.create(**ask)
        (item,) = first.output
        assert item.type == "function_call"
        assert (item.name, json.loads(item.arguments)) == ("get_ticket", {"ticket_id": "T-1"})
        second = client.responses.create(**ask)
        assert second.output_text == "Done."


def test_codex_namespace_is_matched_and_named_back() -> None:
    namespace = {"type": "namespace", "name": "mcp__world", "tools": [{"type": "function", "name": "get_ticket"}]}
    with StandInModel(SCRIPT) as model:
        reply = _openai(model).responses.create(model="m", input="hi", tools=[namespace])  # type: ignore[list-item]
        item = reply.output[0].model_dump()
        assert (item["name"], item["namespace"]) == ("get_ticket", "mcp__world")
        assert model.requests[0].tool_names == ["mcp__world__get_ticket"]


def test_claude_tool_search_comes_first_and_keeps_the_turn() -> None:
    search_tool = {"name": "ToolSearch", "input_schema": {"type": "object"}}
    listing = "deferred tools: mcp__world__get_ticket, mcp__world__issue_refund"
    with StandInModel(SCRIPT) as model:
        client = _anthropic(model)
        messages: Any = [{"role": "user", "content": listing}]
        first = client.messages.create(model="c", max_tokens=10, messages=messages, tools=[search_tool])  # type: ignore[list-item]
        block = first.content[0]
        assert block.type == "tool_use" and block.name == "ToolSearch"
        assert block.input == {"query": "select:mcp__world__get_ticket"}
        loaded: Any = [search_tool, TICKET_TOOL]
        second = client.messages.create(model="c", max_tokens=10, messages=messages, tools=loaded)
        assert second.content[0].type == "tool_use" and second.content[0].name == "mcp__world__get_ticket"
        assert [r.turn for r in model.requests] == [None, 0]


def test_codex_tool_search_comes_first() -> None:
    with StandInModel(SCRIPT) as model:
        reply = _openai(model).responses.create(model="m", input="hi", tools=[{"type": "tool_search"}])  # type: ignore[list-item]
        item = reply.output[0].model_dump()
        assert item["type"] == "tool_search_call"
        assert item["arguments"] == {"query": "get_ticket", "limit": 8}
        assert model.turns_served == 0


def test_unmatched_tool_is_a_400_naming_turn_and_offered_tools() -> None:
    other = {"type": "function", "function": {"name": "list_orders", "parameters": {"type": "object"}}}
    with StandInModel(SCRIPT) as model:
        with pytest.raises(openai.BadRequestError) as caught:
            _openai(model).chat.completions.create(
                model="m", messages=[{"role": "user", "content": "x"}], tools=[other]
            )  # type: ignore[list-item]
        message = str(caught.value)
        assert "turn 1" in message and "'get_ticket'" in message and "offered: list_orders" in message
        assert model.requests[0].status == 400 and model.turns_served == 0


def test_ambiguous_suffix_is_refused() -> None:
    tools = [
        {"type": "function", "function": {"name": f"{server}__get_ticket", "parameters": {"type": "object"}}}
        for server in ("a", "b")
    ]
    with StandInModel(SCRIPT) as model, pytest.raises(openai.BadRequestError, match="no single offered tool"):
        _openai(model).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}], tools=tools)  # type: ignore[arg-type]


def test_exhausted_script_answers_text_and_logs_it() -> None:
    with StandInModel([{"text": "only"}]) as model:
        client = _openai(model)
        ask: Any = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
        assert client.chat.completions.create(**ask).choices[0].message.content == "only"
        assert client.chat.completions.create(**ask).choices[0].message.content == EXHAUSTED
        assert model.requests[-1].error == "script exhausted"


def test_use_restarts_from_the_first_turn_and_keeps_the_log() -> None:
    with StandInModel([{"text": "one"}]) as model:
        client = _openai(model)
        ask: Any = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
        client.chat.completions.create(**ask)
        model.use([{"text": "two"}])
        assert client.chat.completions.create(**ask).choices[0].message.content == "two"
        assert len(model.requests) == 2


def test_a_call_marked_not_offered_is_sent_as_named() -> None:
    script = [{"tool_calls": [{"tool": "issue_refund", "arguments": {"amount": 1}, "offered": False}]}]
    with StandInModel(script) as model:
        reply = _openai(model).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        (call,) = reply.choices[0].message.tool_calls or []
        assert call.function.name == "issue_refund"  # type: ignore[union-attr]

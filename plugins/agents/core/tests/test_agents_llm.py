"""The `llm` agent against a stand-in OpenAI-compatible server on loopback (see conftest.StandIn)."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import pytest
from agentenv_agents.llm import LlmAgent, LlmAgentError
from agentenv_runtime import World, WorldToolAccess
from pydantic import ValidationError

KEY = "sk-test-secret-123"


def make_agent(url: str, **extra: Any) -> LlmAgent:
    return LlmAgent({"base_url": url, "api_key": KEY, "model": "stand-in-1", **extra})


def run(agent: LlmAgent, prompt: str, access: WorldToolAccess) -> Any:
    return asyncio.run(agent.respond(prompt, access))


def test_tool_calls_run_in_the_world_and_results_go_back(standin: Any, world: World, access: WorldToolAccess) -> None:
    standin.call(("call_a", "lookup_account", {"email": "dana.kim@example.com"}))
    standin.call(
        ("call_b", "list_orders", {"account_id": "ACC-1001"}),
        ("call_c", "issue_refund", {"order_id": "ORD-5001", "amount": 89.99, "reason": "Damaged boots"}),
    )
    standin.say("I refunded 89.99 for the boots.")
    agent = make_agent(standin.url + "/", system_prompt="You are Acme support.", seed=3, temperature=0.2)

    response = run(agent, "My boots arrived damaged", access)

    assert response.text == "I refunded 89.99 for the boots."
    assert world.export()["shop"]["refunds"] == [
        {"refund_id": 1, "order_id": "ORD-5001", "amount": 89.99, "reason": "Damaged boots"}
    ]
    assert [event["tool"] for event in world.trajectory.events] == ["lookup_account", "list_orders", "issue_refund"]
    assert len(standin.requests) == 3

    first = standin.requests[0]
    assert first["path"] == "/v1/chat/completions"
    assert first["headers"]["Authorization"] == f"Bearer {KEY}"
    body = first["body"]
    assert body["model"] == "stand-in-1"
    assert body["seed"] == 3 and body["temperature"] == 0.2
    assert body["messages"] == [
        {"role": "system", "content": "You are Acme support."},
        {"role": "user", "content": "My boots arrived damaged"},
    ]
    tools = {tool["function"]["name"]: tool for tool in body["tools"]}
    assert set(tools) == {"lookup_account", "list_orders", "issue_refund"}
    refund = tools["issue_refund"]
    assert refund["type"] == "function"
    assert refund["function"]["description"] == "Refund part or all of an order."
    schema = refund["function"]["parameters"]
    assert schema == world.tools["issue_refund"][1].input_schema
    assert schema["properties"]["amount"]["exclusiveMinimum"] == 0
    assert schema["required"] == ["order_id", "amount"]

    third = standin.requests[2]["body"]["messages"]
    assert [m["role"] for m in third] == ["system", "user", "assistant", "tool", "assistant", "tool", "tool"]
    assert third[2]["tool_calls"][0]["id"] == "call_a"
    tool_messages = [m for m in third if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_a", "call_b", "call_c"]
    looked_up = json.loads(tool_messages[0]["content"])
    assert looked_up == {
        "ok": True,
        "result": {"account_id": "ACC-1001", "email": "dana.kim@example.com", "name": "Dana Kim"},
    }
    refunded = json.loads(tool_messages[2]["content"])
    assert refunded["ok"] is True and refunded["result"]["refund_id"] == "R-1"
    assert agent.usage == {"prompt_tokens": 20, "completion_tokens": 10, "requests": 3}


def test_conversation_continues_across_prompts(standin: Any, access: WorldToolAccess) -> None:
    standin.call(("c1", "list_orders", {"account_id": "ACC-1001"}))
    standin.say("You have two orders.")
    standin.say("You're welcome.")
    agent = make_agent(standin.url)
    assert run(agent, "What did I order?", access).text == "You have two orders."
    assert run(agent, "Thanks", access).text == "You're welcome."
    last = standin.requests[-1]["body"]["messages"]
    assert [m["role"] for m in last] == ["user", "assistant", "tool", "assistant", "user"]
    assert last[-1] == {"role": "user", "content": "Thanks"}
    assert agent.messages[-1] == {"role": "assistant", "content": "You're welcome."}


def test_tool_errors_and_bad_arguments_are_reported_to_the_model(
    standin: Any, world: World, access: WorldToolAccess
) -> None:
    standin.call(
        ("bad", "issue_refund", '{"order_id": "ORD-5001", amount: 5}'),
        ("list", "issue_refund", "[1, 2]"),
        ("over", "issue_refund", {"order_id": "ORD-5002", "amount": 999}),
        ("schema", "issue_refund", {"order_id": "ORD-5002", "amount": -1}),
        ("ghost", "delete_everything", {}),
    )
    standin.say("Sorry, I could not do that.")
    before = world.export()
    response = run(make_agent(standin.url), "refund", access)
    assert response.text == "Sorry, I could not do that."
    assert world.export() == before
    sent = {m["tool_call_id"]: json.loads(m["content"]) for m in standin.requests[1]["body"]["messages"][2:]}
    assert sent["bad"]["ok"] is False
    assert "arguments of issue_refund are not valid JSON" in sent["bad"]["error"]["message"]
    assert "must be a JSON object, not list" in sent["list"]["error"]["message"]
    assert sent["over"]["error"]["field"] == "amount"
    assert sent["schema"]["error"]["code"] == "invalid_arguments"
    assert sent["ghost"]["error"]["code"] == "unknown_tool"
    # bad JSON never reached the world
    assert len(world.trajectory.events) == 3


def test_max_turns_stops_the_loop(standin: Any, access: WorldToolAccess) -> None:
    for index in range(3):
        standin.call((f"c{index}", "list_orders", {"account_id": "ACC-1001"}))
    response = run(make_agent(standin.url, max_turns=2), "loop", access)
    assert response.text.startswith("Stopped after 2 tool-calling round trips without a final answer")
    assert response.structured == {"stopped": "max_turns", "max_turns": 2}
    assert len(standin.requests) == 2


def test_missing_ids_object_arguments_and_content_parts(standin: Any, access: WorldToolAccess) -> None:
    standin.reply(
        {
            "choices": [
                {
                    "message": {
                        "role": "assistant",
                        "tool_calls": [{"function": {"name": "list_orders", "arguments": {"account_id": "ACC-1001"}}}],
                    }
                }
            ]
        }
    )
    standin.reply(
        {"choices": [{"message": {"content": [{"type": "text", "text": "Two "}, {"type": "text", "text": "orders."}]}}]}
    )
    agent = make_agent(standin.url, api_key=None)
    assert run(agent, "orders?", access).text == "Two orders."
    assert "Authorization" not in standin.requests[0]["headers"]
    messages = standin.requests[1]["body"]["messages"]
    call = messages[1]["tool_calls"][0]
    assert call["function"]["arguments"] == '{"account_id": "ACC-1001"}'
    assert messages[2]["tool_call_id"] == call["id"]
    assert json.loads(messages[2]["content"])["ok"] is True


def test_no_tools_means_no_tools_field(standin: Any) -> None:
    class NoTools:
        def list_tools(self) -> list[dict[str, Any]]:
            return []

        def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            raise AssertionError("not called")

    standin.say("hello")
    assert asyncio.run(make_agent(standin.url).respond("hi", NoTools())).text == "hello"
    assert "tools" not in standin.requests[0]["body"]


# ---- failures ------------------------------------------------------------------------------------------


def _failure(agent: LlmAgent, access: WorldToolAccess) -> str:
    with pytest.raises(LlmAgentError) as caught:
        run(agent, "hi", access)
    message = str(caught.value)
    assert KEY not in message
    return message


def test_http_500_names_url_and_status(standin: Any, access: WorldToolAccess) -> None:
    standin.reply({"error": {"message": f"upstream exploded (key {KEY})"}}, status=500)
    message = _failure(make_agent(standin.url), access)
    assert (
        message == f"POST {standin.url}/chat/completions: HTTP 500 Internal Server Error: upstream exploded (key ***)"
    )


def test_http_401_hints_at_the_api_key(standin: Any, access: WorldToolAccess) -> None:
    standin.reply("denied", status=401)
    message = _failure(make_agent(standin.url), access)
    assert message.startswith(f"POST {standin.url}/chat/completions: HTTP 401 Unauthorized: denied (check `api_key`")


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("this is not json", "the body is not JSON: 'this is not json'"),
        ({"choices": []}, "no `choices` list with a first choice"),
        ({"result": "hi"}, "no `choices` list with a first choice"),
        ({"choices": [{"text": "hi"}]}, "choices[0] has no `message` object"),
        ({"choices": [{"message": {"tool_calls": "x"}}]}, "choices[0].message.tool_calls is not a list"),
        (
            {"choices": [{"message": {"tool_calls": [{"id": "a", "function": {"arguments": "{}"}}]}}]},
            "choices[0].message.tool_calls[0] has no `function` with a `name`",
        ),
    ],
)
def test_malformed_responses_are_clear_errors(standin: Any, access: WorldToolAccess, body: Any, problem: str) -> None:
    standin.reply(body)
    message = _failure(make_agent(standin.url), access)
    assert message.startswith(f"POST {standin.url}/chat/completions: malformed chat-completions response: ")
    assert problem in message


def test_unreachable_endpoint_names_the_url(access: WorldToolAccess) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    message = _failure(make_agent(url, timeout=5), access)
    assert message.startswith(f"POST {url}/chat/completions: request failed: ConnectError")


def test_settings_are_checked_and_the_key_stays_out_of_repr() -> None:
    with pytest.raises(ValidationError, match="model"):
        LlmAgent({"base_url": "http://x"})
    with pytest.raises(ValidationError, match="max_turns"):
        LlmAgent({"base_url": "http://x", "model": "m", "max_turns": 0})
    with pytest.raises(ValidationError, match="Extra inputs"):
        LlmAgent({"base_url": "http://x", "model": "m", "policy": "p.toml"})
    agent = make_agent("http://x")
    assert KEY not in repr(agent.options)
    assert agent.options.timeout == 60 and agent.options.max_turns == 20 and agent.options.temperature == 0.0


def test_a_key_cut_by_the_snippet_does_not_leak_in_part(standin: Any, access: WorldToolAccess) -> None:
    """Issue 16: the snippet was cut before redaction, so a key straddling the cut leaked its first half."""
    standin.reply("x" * 290 + KEY + " and more", status=500)
    message = _failure(make_agent(standin.url), access)
    assert KEY[:8] not in message and "***" in message
    standin.reply("y" * 295 + KEY)  # not JSON: the malformed-body snippet
    message = _failure(make_agent(standin.url), access)
    assert KEY[:5] not in message


def test_url_credentials_stay_out_of_error_messages(standin: Any, access: WorldToolAccess) -> None:
    standin.reply("boom", status=500)
    with_userinfo = standin.url.replace("http://", "http://alice:hunter2@")
    message = _failure(make_agent(with_userinfo), access)
    assert "hunter2" not in message and "alice" not in message and "****@" in message

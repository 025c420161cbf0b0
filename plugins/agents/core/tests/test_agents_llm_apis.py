"""The `llm` kind on each of its three APIs (`api` = openai-chat | openai-responses | anthropic), against the
stand-in model of `agentenv-model-standin`, which answers each on its own path in its own shapes."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from agentenv_agents.llm import LlmAgent, LlmAgentError
from agentenv_model_standin.api import StandInModel
from agentenv_runtime import World, WorldToolAccess
from pydantic import ValidationError

KEY = "sk-test-api-key"
REFUND = [
    {"tool_calls": [{"tool": "lookup_account", "arguments": {"email": "dana.kim@example.com"}}]},
    {"tool_calls": [{"tool": "issue_refund", "arguments": {"order_id": "ORD-5001", "amount": 89.99}},
                    {"tool": "issue_refund", "arguments": {"order_id": "ORD-404", "amount": 1}}]},
    {"text": "Refunded 89.99 for the boots."},
    {"text": "You're welcome."},
]  # fmt: skip
APIS = ["openai-chat", "openai-responses", "anthropic"]
PATHS = {"openai-chat": "/v1/chat/completions", "openai-responses": "/v1/responses", "anthropic": "/v1/messages"}


def agent_for(api: str, model: StandInModel, **extra: Any) -> LlmAgent:
    base = model.url if api == "anthropic" else model.openai_url
    return LlmAgent({"base_url": base, "api_key": KEY, "model": "stand-in", "api": api, **extra})


def ask(agent: LlmAgent, prompt: str, access: WorldToolAccess) -> Any:
    return asyncio.run(agent.respond(prompt, access))


def sent_results(api: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool outcomes the request carries back to the model, in the API's own shape, parsed."""
    if api == "openai-chat":
        return [json.loads(m["content"]) for m in body["messages"] if m["role"] == "tool"]
    if api == "openai-responses":
        return [json.loads(i["output"]) for i in body["input"] if i.get("type") == "function_call_output"]
    blocks = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]
    return [json.loads(b["content"]) for b in blocks if b["type"] == "tool_result"]


@pytest.mark.parametrize("api", APIS)
def test_each_api_runs_the_tools_in_the_world_and_continues_the_conversation(
    api: str, world: World, access: WorldToolAccess
) -> None:
    with StandInModel(REFUND) as model:
        agent = agent_for(api, model, system_prompt="You are Acme support.")
        first = ask(agent, "My boots arrived damaged", access)
        second = ask(agent, "Thanks!", access)
    assert (first.text, second.text) == ("Refunded 89.99 for the boots.", "You're welcome.")
    assert world.export()["shop"]["refunds"] == [{"refund_id": 1, "order_id": "ORD-5001", "amount": 89.99,
                                                  "reason": ""}]  # fmt: skip
    assert [(c["tool"], c["ok"]) for c in agent.calls] == [
        ("lookup_account", True), ("issue_refund", True), ("issue_refund", False)]  # fmt: skip
    requests = model.model_requests
    assert [(r.api, r.path, r.status) for r in requests] == [(api, PATHS[api], 200)] * 4
    assert set(requests[0].tool_names) == {"lookup_account", "list_orders", "issue_refund"}

    results = sent_results(api, requests[2].body)  # the third request carries all three outcomes back
    assert results[0]["result"]["account_id"] == "ACC-1001"
    assert results[1]["ok"] is True and results[2]["error"]["code"] == "not_found"
    if api == "anthropic":  # a failed call is marked as such
        blocks = requests[2].body["messages"][-1]["content"]
        assert [b.get("is_error", False) for b in blocks] == [False, True]
    later = json.dumps(requests[3].body)  # the second prompt continues the same conversation
    assert "My boots arrived damaged" in later and "Refunded 89.99 for the boots." in later and "Thanks!" in later
    assert agent.usage["requests"] == 4 and agent.usage["prompt_tokens"] > 0 and agent.usage["completion_tokens"] > 0


@pytest.mark.parametrize("api", APIS)
def test_each_api_has_its_own_auth_system_prompt_and_fields(api: str, access: WorldToolAccess) -> None:
    with StandInModel([{"text": "hi"}]) as model:
        ask(agent_for(api, model, system_prompt="Be brief.", seed=3, max_tokens=99), "hello", access)
    (request,) = model.model_requests
    body, headers = request.body, request.headers
    if api == "anthropic":
        assert headers["x-api-key"] == KEY and headers["anthropic-version"] == "2023-06-01"
        assert "authorization" not in headers
        assert body["system"] == "Be brief." and body["messages"] == [{"role": "user", "content": "hello"}]
        assert body["max_tokens"] == 99 and "seed" not in body
        refund = {t["name"]: t for t in body["tools"]}["issue_refund"]
        assert refund["input_schema"]["required"] == ["order_id", "amount"]
    else:
        assert headers["authorization"] == f"Bearer {KEY}"
    if api == "openai-responses":
        assert body["instructions"] == "Be brief." and body["input"] == [{"role": "user", "content": "hello"}]
        assert body["max_output_tokens"] == 99 and "seed" not in body
        assert {t["name"]: t for t in body["tools"]}["issue_refund"]["type"] == "function"
    if api == "openai-chat":
        assert body["messages"][0] == {"role": "system", "content": "Be brief."}
        assert body["max_tokens"] == 99 and body["seed"] == 3


def test_anthropic_takes_the_root_or_a_v1_base_url(access: WorldToolAccess) -> None:
    with StandInModel([{"text": "a"}, {"text": "b"}]) as model:
        ask(agent_for("anthropic", model), "x", access)
        ask(LlmAgent({"base_url": model.openai_url, "model": "m", "api": "anthropic"}), "y", access)
    assert [r.path for r in model.model_requests] == ["/v1/messages", "/v1/messages"]
    assert "max_tokens" in model.model_requests[0].body  # Anthropic requires it; 4096 when unset
    assert model.model_requests[0].body["max_tokens"] == 4096


@pytest.mark.parametrize(("api", "shape"), [("openai-responses", "/responses"), ("anthropic", "the root")])
def test_a_404_names_the_base_url_the_api_wants(api: str, shape: str, standin: Any, access: WorldToolAccess) -> None:
    standin.reply({"error": {"message": "no such route"}}, 404)
    agent = LlmAgent({"base_url": standin.url, "model": "m", "api": api})
    with pytest.raises(
        LlmAgentError, match=rf"HTTP 404 .*no such route .*check `base_url` \(.*{shape}.*`api` \(now {api}\)"
    ):
        ask(agent, "x", access)


@pytest.mark.parametrize(
    ("api", "body", "problem"),
    [
        ("openai-responses", {"id": "r"}, "malformed responses response: no `output` list"),
        ("openai-responses", {"output": [{"type": "function_call", "call_id": "c"}]}, "function_call without a `name`"),
        ("openai-responses", {"status": "failed", "error": {"message": "model overloaded"}}, "model overloaded"),
        ("anthropic", {"type": "message"}, "malformed messages response: no `content` list"),
        ("anthropic", {"content": [{"type": "tool_use", "id": "t"}]}, "tool_use block without a `name`"),
    ],
)
def test_malformed_bodies_of_each_api_are_clear_errors(
    api: str, body: Any, problem: str, standin: Any, access: WorldToolAccess
) -> None:
    standin.reply(body)
    with pytest.raises(LlmAgentError, match=problem):
        ask(LlmAgent({"base_url": standin.url, "model": "m", "api": api}), "x", access)


def test_an_unknown_api_is_refused_naming_the_field_and_the_fix() -> None:
    with pytest.raises(ValidationError) as caught:
        LlmAgent({"base_url": "http://127.0.0.1:1/v1", "model": "m", "api": "responses"})
    text = str(caught.value)
    assert "api" in text and "'responses' is not an API the llm agent speaks" in text
    assert "openai-chat" in text and "openai-responses" in text and "anthropic" in text and "[model]" in text

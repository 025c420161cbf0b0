"""The trainer adapters, each driven by a scripted chat policy (no model can be downloaded here)."""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any

import pytest
from agentenv_rl.api import (
    TaskReward,
    Trajectory,
    assistant_message,
    rollout,
    tools_prompt,
    trl_environment,
    trl_rows,
)

SCRIPT = [
    ("issue_refund", {"order_id": "ORD-5001", "amount": 89.99, "reason": "damaged boots"}),
    ("close_ticket", {"ticket_id": "TCK-9001", "resolution": "Refunded 89.99."}),
    ("send_email", {"to": ["dana.kim@example.com"], "subject": "Refund", "body": "We refunded 89.99."}),
]


def call(index: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {"id": f"c{index}", "type": "function", "function": function}


def scripted(steps: list[tuple[str, dict[str, Any]]], answer: str, *, batch: bool = False) -> list[dict[str, Any]]:
    """Assistant messages: each call in its own message (or all in one), then the answer."""
    if batch:
        calls = [call(i, name, args) for i, (name, args) in enumerate(steps)]
        return [{"role": "assistant", "content": None, "tool_calls": calls}, {"role": "assistant", "content": answer}]
    messages = [
        {"role": "assistant", "content": None, "tool_calls": [call(i, name, args)]}
        for i, (name, args) in enumerate(steps)
    ]
    return [*messages, {"role": "assistant", "content": answer}]


class ChatPolicy:
    """Replays assistant messages, checking it sees the tool results it is owed (a model would read them)."""

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.messages, self.seen_tools = list(messages), 0

    async def __call__(self, history: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        assert {t["function"]["name"] for t in tools} >= {"issue_refund", "send_email"}
        self.seen_tools = sum(1 for m in history if m["role"] == "tool")
        return self.messages.pop(0)


def test_the_rollout_function_returns_the_conversation_and_the_score() -> None:
    policy = ChatPolicy(scripted(SCRIPT, "Refunded, closed and emailed."))
    trajectory = asyncio.run(rollout(policy, "support-refund", seed=7))
    assert isinstance(trajectory, Trajectory)
    assert trajectory.terminated and trajectory.reward == pytest.approx(1.0) == trajectory.score
    roles = [m["role"] for m in trajectory.messages]
    assert roles == ["user"] + ["assistant", "tool"] * 3 + ["assistant"]
    assert policy.seen_tools == 3
    assert all(json.loads(m["content"])["ok"] for m in trajectory.messages if m["role"] == "tool")


def test_concurrent_rollouts_are_independent() -> None:
    async def both() -> list[Trajectory]:
        good = ChatPolicy(scripted(SCRIPT, "done"))
        partial = ChatPolicy(scripted(SCRIPT[:1], "refunded only"))
        return list(await asyncio.gather(rollout(good, "support-refund"), rollout(partial, "support-refund")))

    good, partial = asyncio.run(both())
    assert good.reward == pytest.approx(1.0) and 0 < partial.reward < 1
    assert good.trajectory_digest != partial.trajectory_digest


def test_a_rollout_out_of_turns_is_truncated_and_graded() -> None:
    looping = ChatPolicy(scripted([("get_ticket", {"ticket_id": "TCK-9001"})] * 5, "never said"))
    trajectory = asyncio.run(rollout(looping, "support-refund", max_turns=3))
    assert trajectory.truncated and not trajectory.terminated and trajectory.reward == 0.0


def test_the_trl_reward_replays_completions_into_fresh_forks() -> None:
    reward = TaskReward("support-refund")
    assert reward.__name__ == "agentenv_resolve-refund"
    bad_json = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "x", "function": {"name": "get_ticket", "arguments": "{oops"}}],
        },
        {"role": "assistant", "content": "gave up"},
    ]
    completions = [
        scripted(SCRIPT, "all done"),
        scripted(SCRIPT[:1], "refunded"),
        bad_json,
        scripted(SCRIPT, "all done again"),  # the same again: a fork of the start, not of the first completion
    ]
    scores = reward(completions=completions, prompts=["p"] * 4)
    assert scores[0] == pytest.approx(1.0) == scores[3]
    assert 0 < scores[1] < 1 and scores[2] == 0.0


def test_generated_text_reads_as_hermes_or_openai_tool_calls() -> None:
    hermes = assistant_message(
        '<think>plan</think>Let me look.\n<tool_call>\n{"name": "get_ticket", "arguments": {"ticket_id": "T"}}\n'
        '</tool_call>\n<tool_call>{"name": "list_orders", "arguments": "{}"}</tool_call>'
    )
    assert hermes["content"] == "Let me look." and [c["function"]["name"] for c in hermes["tool_calls"]] == [
        "get_ticket",
        "list_orders",
    ]
    assert json.loads(hermes["tool_calls"][0]["function"]["arguments"]) == {"ticket_id": "T"}
    fenced = assistant_message('```json\n{"name": "get_ticket", "arguments": {"ticket_id": "T"}}\n```')
    assert fenced["tool_calls"][0]["function"]["name"] == "get_ticket"
    message = {"tool_calls": [{"type": "function", "function": {"name": "a", "arguments": "{}"}}]}
    assert assistant_message(json.dumps(message))["tool_calls"][0]["function"]["name"] == "a"
    assert assistant_message("<think>hm</think> All done.") == {"role": "assistant", "content": "All done."}
    assert assistant_message('{"answer": 42}') == {"role": "assistant", "content": '{"answer": 42}'}
    unread = assistant_message("<tool_call>{oops</tool_call>")["tool_calls"][0]
    assert unread["function"]["name"] is None and unread["function"]["arguments"] == "{oops"
    assert "<tool_call>" in tools_prompt([{"type": "function", "function": {"name": "x"}}])


def test_the_trl_environment_class_types_its_tools_from_their_schemas() -> None:
    environment = trl_environment("support-refund")
    refund = environment.issue_refund  # type: ignore[attr-defined]
    parameters = inspect.signature(refund).parameters
    assert list(parameters)[:4] == ["self", "order_id", "amount", "reason"]
    assert parameters["amount"].annotation is float and parameters["order_id"].default is inspect.Parameter.empty
    assert "Args:" in (refund.__doc__ or "") and "order_id:" in (refund.__doc__ or "")
    send = inspect.signature(environment.send_email).parameters  # type: ignore[attr-defined]
    assert send["to"].annotation == list[str]
    instance = environment()
    assert instance.reset(**trl_rows("support-refund")[0]) is None
    for name, arguments in SCRIPT:
        assert json.loads(getattr(instance, name)(**arguments))["ok"]
    assert instance.get_reward() == pytest.approx(1.0)
    wrong = environment()
    wrong.reset()
    bad = json.loads(wrong.issue_refund(order_id="ORD-5001", amount="lots", reason="x"))  # type: ignore[attr-defined]
    assert bad["ok"] is False and bad["error"]["code"] == "invalid_arguments"
    assert wrong.get_reward() < 1.0


def test_tool_trimming_offers_only_the_chosen_tools_and_refuses_the_rest() -> None:
    from agentenv_rl.api import EpisodeError, make

    episode = make("support-refund", tools=["get_ticket", "issue_refund"], short_descriptions=True)
    observation, _ = episode.reset()
    assert sorted(t["name"] for t in observation["tools"]) == ["get_ticket", "issue_refund"]  # in the world's order
    assert all(". " not in t["description"] for t in observation["tools"])
    before = episode.state()["state_digest"]
    refused = episode.step({"tool": "send_email", "arguments": {"to": ["x@example.com"], "subject": "s", "body": "b"}})
    assert refused.observation["ok"] is False and refused.observation["error"]["code"] == "forbidden"
    assert episode.state()["state_digest"] == before  # nothing changed
    episode.close()
    with pytest.raises(EpisodeError, match=r"tools=\['no_such_tool'\] are not tools of role"):
        make("support-refund", tools=["get_ticket", "no_such_tool"])

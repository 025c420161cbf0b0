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


# ---- tasks with a simulated user (τ²'s scripted customer) ----------------------------------------------------
ASK = "Could I have your name and zip code, please?"
WRAP_UP = "Both items are exchanged. Is there anything else I can help you with?"


def tau2_gold() -> list[tuple[str, dict[str, Any]]]:
    from agentenv_tau2.api import retail_task

    return [(action.name, dict(action.arguments)) for action in retail_task("0").gold_actions]


def talk(calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Ask for identity, make the calls, wrap up: τ²'s scripted customer stops after the wrap-up."""
    said = [{"role": "assistant", "content": ASK}]
    return [*said, *scripted(calls, WRAP_UP)]


def test_a_rollout_talks_to_the_simulated_user_until_it_stops() -> None:
    gold = tau2_gold()
    played = asyncio.run(rollout(lambda messages, tools: talk(gold)[sum(m["role"] == "assistant" for m in messages)],
                                 "tau2-retail:0"))  # fmt: skip
    assert played.reward == 1.0 and played.terminated
    system, opening, _, reply = played.messages[:4]
    assert system["role"] == "system" and "Retail agent policy" in system["content"]
    assert opening["role"] == "user" and "#W2378156" in opening["content"]
    assert reply == {"role": "user", "content": "You are Yusuf Rossi in zip code 19122."}
    assert played.messages[-1] == {"role": "user", "content": "###STOP###"}
    cut = asyncio.run(rollout(lambda messages, tools: talk(gold[:2])[sum(m["role"] == "assistant" for m in messages)],
                              "tau2-retail:0"))  # fmt: skip
    assert cut.reward == 0.0


def test_trl_class_talks_to_the_user_with_message_user() -> None:
    Customer = trl_environment("tau2-retail:0")
    (row,) = trl_rows("tau2-retail:0")
    assert row["prompt"][0]["role"] == "system" and row["prompt"][-1] == {"role": "user", "content": ""}
    environment = Customer()
    assert "#W2378156" in str(environment.reset(**row))  # the opening, appended by TRL to the empty user message
    assert environment.message_user(message=ASK) == "You are Yusuf Rossi in zip code 19122."
    for name, arguments in tau2_gold():
        getattr(environment, name)(**arguments)
    assert environment.message_user(message=WRAP_UP) == "###STOP###" and environment.get_reward() == 1.0
    assert "message_user" not in dir(trl_environment("support-refund"))  # only where there is a user


# ---- Agent Lightning's agent class, with a stand-in model and a loopback event sink ---------------------------
def test_agent_lightning_agent_plays_through_the_proxy_and_posts_its_reward(tmp_path: Any) -> None:
    import http.server
    import threading

    from agentenv_model_standin.api import StandInModel
    from agentenv_rl.api import AgentLightningAgent, EpisodeError

    events: list[dict[str, Any]] = []

    class Sink(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            events.append({"auth": self.headers.get("authorization"),
                           **json.loads(self.rfile.read(int(self.headers["content-length"])))})  # fmt: skip
            self.send_response(200)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    turns = [{"tool_calls": [{"tool": name, "arguments": args}]} for name, args in SCRIPT] + [{"text": "Done."}]
    try:
        with StandInModel(turns) as model:
            environ = {
                "AGL_OPENAI_BASE_URL": model.openai_url,
                "AGL_EVENT_URL": f"http://127.0.0.1:{server.server_address[1]}/events",
                "AGL_KEY": "k",
                "AGENTENV_TASK": "support-refund",
                "AGENTENV_SEED": "null",
                "AGENTENV_TOOLS": json.dumps(["issue_refund", "close_ticket", "send_email"]),
            }
            played = asyncio.run(AgentLightningAgent(environ).run())
            assert len(model.requests[0].body["tools"]) == 3  # trimmed as AGENTENV_TOOLS says
    finally:
        server.shutdown()
    assert played.reward == 1.0
    (reward,) = events
    assert reward["event_type"] == "reward" and reward["data"]["value"] == 1.0 and reward["auth"] == "Bearer k"
    assert reward["data"]["agentenv"]["passed"] is True and reward["data"]["agentenv"]["turns"] == 4
    with pytest.raises(EpisodeError, match="no task: set `task`"):
        AgentLightningAgent({}).chosen_task()
    with pytest.raises(EpisodeError, match="AGENTENV_SEED: 'x' is not an integer"):
        AgentLightningAgent({"AGENTENV_TASK": "support-refund", "AGENTENV_SEED": "x"}).chosen_task()
    with pytest.raises(EpisodeError, match="AGL_EVENT_URL is not set"):
        asyncio.run(AgentLightningAgent({"AGENTENV_TASK": "support-refund"}).run())

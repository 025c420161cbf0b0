"""The `scripted` agent: templated tool calls, saves, turns, `expect`, policy validation and determinism."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agentenv_agents.scripted import PolicyError, ScriptedAgent
from agentenv_runtime import World, WorldToolAccess
from pydantic import ValidationError

DANA_POLICY = """
description = "Resolves Dana's refund"

[[turn]]
actions = [
  { call = "lookup_account", args = { email = "dana.kim@example.com" }, save = "account" },
  { call = "list_orders", args = { account_id = "{{ account.account_id }}" }, save = "orders" },
  { call = "issue_refund", args = { order_id = "{{ orders.0.order_id }}", amount = 89.99, reason = "Damaged boots" }, expect = "ok", save = "refund" },
  { say = "I refunded {{ refund.amount }} to your card, {{ account.name }}." },
]

[[turn]]
actions = [
  { say = "You said: {{ prompt }} (turn {{ turn }}, seed {{ seed }})" },
  { call = "issue_refund", args = { order_id = "{{ orders.1.order_id }}", amount = "{{ orders.1.total }}" } },
]
"""  # noqa: E501


def run(agent: ScriptedAgent, prompt: str, access: WorldToolAccess) -> Any:
    return asyncio.run(agent.respond(prompt, access))


@pytest.fixture
def dana_file(tmp_path: Path) -> Path:
    path = tmp_path / "dana.toml"
    path.write_text(DANA_POLICY)
    return path


def test_policy_runs_templated_calls_and_says(dana_file: Path, world: World, access: WorldToolAccess) -> None:
    agent = ScriptedAgent({"policy": str(dana_file), "seed": 7})
    assert agent.policy.description == "Resolves Dana's refund"

    first = run(agent, "My boots arrived damaged", access)
    assert first.text == "I refunded 89.99 to your card, Dana Kim."
    assert first.structured is None
    assert [c["tool"] for c in agent.calls] == ["lookup_account", "list_orders", "issue_refund"]
    assert agent.calls[1]["args"] == {"account_id": "ACC-1001"}
    assert agent.calls[2]["args"] == {"order_id": "ORD-5001", "amount": 89.99, "reason": "Damaged boots"}
    assert world.export()["shop"]["refunds"] == [
        {"refund_id": 1, "order_id": "ORD-5001", "amount": 89.99, "reason": "Damaged boots"}
    ]
    assert agent.saved["refund"] == {"refund_id": "R-1", "order_id": "ORD-5001", "amount": 89.99}

    second = run(agent, "thanks!", access)
    assert second.text == "You said: thanks! (turn 1, seed 7)"
    # a whole-value template keeps the number's type: the tool got 20.0, not "20.0"
    assert agent.calls[3]["args"] == {"order_id": "ORD-5002", "amount": 20.0}
    assert world.export()["shop"]["refunds"][1]["amount"] == 20.0

    extra = run(agent, "anything else?", access)
    assert extra.text == "" and extra.structured is None
    assert len(agent.calls) == 4
    assert agent.conversation == [
        {"role": "user", "content": "My boots arrived damaged"},
        {"role": "assistant", "content": first.text},
        {"role": "user", "content": "thanks!"},
        {"role": "assistant", "content": second.text},
        {"role": "user", "content": "anything else?"},
        {"role": "assistant", "content": ""},
    ]
    # every call went through the world (RBAC, trajectory), not straight to the env
    assert [event["tool"] for event in world.trajectory.events] == [
        "lookup_account",
        "list_orders",
        "issue_refund",
        "issue_refund",
    ]


def test_expect_ok_stops_the_turn_with_the_error(access: WorldToolAccess, world: World) -> None:
    policy = {
        "turn": [
            {
                "actions": [
                    {"say": "Looking into it."},
                    {"call": "issue_refund", "args": {"order_id": "ORD-5002", "amount": 500}, "expect": "ok"},
                    {"say": "never said"},
                    {"call": "lookup_account", "args": {"email": "dana.kim@example.com"}},
                ]
            },
            {"actions": [{"say": "second turn still runs"}]},
        ]
    }
    before = world.export()
    agent = ScriptedAgent({"policy_data": policy})
    response = run(agent, "refund 500", access)
    lines = response.text.split("\n")
    assert lines[0] == "Looking into it."
    assert lines[1].startswith('Stopped: issue_refund failed at turn[0].actions[1] (expect = "ok"): rule_violation: ')
    assert "exceeds the order total" in lines[1]
    assert response.structured is not None
    assert response.structured["error"]["action"] == "turn[0].actions[1]"
    assert response.structured["error"]["error"]["field"] == "amount"
    assert [c["tool"] for c in agent.calls] == ["issue_refund"]
    assert world.export() == before  # the refused refund rolled back
    assert run(agent, "and?", access).text == "second turn still runs"


def test_failed_call_without_expect_continues(access: WorldToolAccess) -> None:
    policy = {
        "turn": [
            {
                "actions": [
                    {"call": "lookup_account", "args": {"email": "nobody@example.com"}, "save": "account"},
                    {"call": "lookup_account", "args": {"email": "dana.kim@example.com"}, "save": "dana"},
                    {"say": "found {{ dana.account_id }}"},
                ]
            }
        ]
    }
    agent = ScriptedAgent({"policy_data": policy})
    assert run(agent, "hi", access).text == "found ACC-1001"
    assert agent.calls[0]["ok"] is False and agent.calls[0]["error"]["code"] == "not_found"
    assert "account" not in agent.saved


def test_using_a_value_whose_call_failed_says_so(access: WorldToolAccess) -> None:
    policy = {
        "turn": [
            {
                "actions": [
                    {"call": "lookup_account", "args": {"email": "nobody@example.com"}, "save": "account"},
                    {"call": "list_orders", "args": {"account_id": "{{ account.account_id }}"}},
                ]
            }
        ]
    }
    agent = ScriptedAgent({"policy_data": policy})
    with pytest.raises(PolicyError) as caught:
        run(agent, "hi", access)
    message = str(caught.value)
    assert message.startswith("policy_data: turn[0].actions[1].args.account_id: template '{{ account.account_id }}'")
    assert "unknown name 'account' (available: prompt, seed, turn)" in message
    assert "not saved because their call failed: account (turn[0].actions[0])" in message


def test_unknown_path_at_run_time_names_action_template_and_names(access: WorldToolAccess) -> None:
    policy = {
        "turn": [
            {
                "actions": [
                    {"call": "lookup_account", "args": {"email": "dana.kim@example.com"}, "save": "account"},
                    {"say": "Hello {{ account.full_name }}"},
                ]
            }
        ]
    }
    agent = ScriptedAgent({"policy_data": policy})
    with pytest.raises(PolicyError) as caught:
        run(agent, "hi", access)
    assert str(caught.value) == (
        "policy_data: turn[0].actions[1].say: template '{{ account.full_name }}': "
        "account has no key 'full_name' (keys: account_id, email, name)"
    )


def test_json_policy_file_and_saves_across_turns(tmp_path: Path, access: WorldToolAccess) -> None:
    path = tmp_path / "p.json"
    path.write_text(
        json.dumps(
            {
                "turn": [
                    {"actions": [{"call": "list_orders", "args": {"account_id": "ACC-1001"}, "save": "orders"}]},
                    {"actions": [{"say": "{{ orders }}"}]},
                ]
            }
        )
    )
    agent = ScriptedAgent({"policy": str(path)})
    assert run(agent, "a", access).text == ""
    text = run(agent, "b", access).text
    assert json.loads(text)[0]["order_id"] == "ORD-5001"


def test_same_policy_twice_gives_the_same_world(dana_file: Path, new_world: Callable[[], World]) -> None:
    exports = []
    for _ in range(2):
        world = new_world()
        agent = ScriptedAgent({"policy": str(dana_file)})
        access = WorldToolAccess(world)
        texts = [run(agent, prompt, access).text for prompt in ("one", "two", "three")]
        tools = [(e["tool"], e["args"], e["result"], e["error"]) for e in world.trajectory.events]
        exports.append((world.export(), texts, agent.calls, tools))
    assert exports[0] == exports[1]
    assert exports[0][0]["shop"]["refunds"]  # something happened


# ---- policy validation --------------------------------------------------------------------------------


def _error(policy: dict[str, Any]) -> str:
    with pytest.raises(PolicyError) as caught:
        ScriptedAgent({"policy_data": policy})
    return str(caught.value)


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ({"turns": []}, "policy_data: turns: unknown field (allowed: description, turn); did you mean 'turn'?"),
        (
            {"turn": [{"acts": []}]},
            "policy_data: turn[0].acts: unknown field (allowed: actions); did you mean 'actions'?",
        ),
        (
            {"turn": [{"actions": [{"say": "a"}, {"call": "x", "arg": {}}]}]},
            "policy_data: turn[0].actions[1].arg: unknown field (allowed: call, args, save, expect, say, write, text); "
            "did you mean 'args'?",
        ),
        (
            {"turn": [{"actions": [{"call": "x", "expect": "error"}]}]},
            "policy_data: turn[0].actions[0].expect: Input should be 'ok'",
        ),
        (
            {"turn": [{"actions": [{"call": "x", "say": "y"}]}]},
            "policy_data: turn[0].actions[0]: an action has exactly one of `call` (a tool call), `say`",
        ),
        ({"turn": [{"actions": [{}]}]}, "policy_data: turn[0].actions[0]: an action has exactly one of `call`"),
        (
            {"turn": [{"actions": [{"say": "y", "save": "s"}]}]},
            "policy_data: turn[0].actions[0]: a `say` or `write` action takes no save",
        ),
        (
            {"turn": [{"actions": [{"write": "report.md"}]}]},
            "policy_data: turn[0].actions[0]: `write` (the file name) and `text` (its content) go together",
        ),
        (
            {"turn": [{"actions": [{"call": "x", "save": "prompt"}]}]},
            "policy_data: turn[0].actions[0].save: 'prompt' is reserved",
        ),
        (
            {"turn": [{"actions": [{"call": "x", "save": "my.name"}]}]},
            "policy_data: turn[0].actions[0].save: 'my.name' is not a usable name",
        ),
        ({"turn": [{"actions": [{"call": " "}]}]}, "policy_data: turn[0].actions[0].call: give the name of the tool"),
        ({"turn": [{"actions": [{"call": "x", "args": []}]}]}, "policy_data: turn[0].actions[0].args: Input should be"),
        ({"turn": {"actions": []}}, "policy_data: turn: Input should be a valid list"),
        (
            {"turn": [{"actions": []}, {"actions": [{"call": "x", "args": {"a": "{{ orders.0 }}"}}]}]},
            "policy_data: turn[1].actions[0].args.a: template '{{ orders.0 }}' uses 'orders', which no earlier "
            "action saves (available here: prompt, seed, turn)",
        ),
        (
            {"turn": [{"actions": [{"say": "hi {{ name"}]}]},
            "policy_data: turn[0].actions[0].say: '{{' without a closing '}}'",
        ),
        (
            {"turn": [{"actions": [{"call": "x", "args": {"a": ["{{ 1bad }}"]}}]}]},
            "policy_data: turn[0].actions[0].args.a[0]: template '{{ 1bad }}' is not a dotted path",
        ),
    ],
)
def test_bad_policies_name_the_turn_action_and_field(policy: dict[str, Any], expected: str) -> None:
    assert _error(policy).startswith(expected)


def test_a_save_is_usable_only_after_it(access: WorldToolAccess) -> None:
    late = {
        "turn": [
            {
                "actions": [
                    {"say": "{{ later }}"},
                    {"call": "list_orders", "args": {"account_id": "ACC-1001"}, "save": "later"},
                ]
            }
        ]
    }
    assert "uses 'later', which no earlier action saves" in _error(late)


def test_every_problem_is_reported_at_once() -> None:
    message = _error({"turn": [{"actions": [{"say": "{{ a }}"}, {"say": "{{ b }}"}]}]})
    assert message.count("\n") == 1
    assert "turn[0].actions[0].say" in message and "turn[0].actions[1].say" in message


def test_file_errors_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.toml"
    with pytest.raises(PolicyError, match=f"^{missing}: policy file not found"):
        ScriptedAgent({"policy": str(missing)})
    bad = tmp_path / "bad.toml"
    bad.write_text("[[turn]\n")
    with pytest.raises(PolicyError, match=f"^{bad}: not valid TOML"):
        ScriptedAgent({"policy": str(bad)})
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("[1, 2]")
    with pytest.raises(PolicyError, match=f"^{bad_json}: a policy is a table/object"):
        ScriptedAgent({"policy": str(bad_json)})
    yaml = tmp_path / "p.yaml"
    yaml.write_text("turn: []")
    with pytest.raises(PolicyError, match=r"must be \.toml or \.json"):
        ScriptedAgent({"policy": str(yaml)})
    wrong = tmp_path / "wrong.toml"
    wrong.write_text('[[turn]]\nactions = [{ call = "x", sve = "a" }]\n')
    with pytest.raises(PolicyError) as caught:
        ScriptedAgent({"policy": str(wrong)})
    assert str(caught.value).startswith(f"{wrong}: turn[0].actions[0].sve: unknown field")


def test_settings_need_exactly_one_policy_source() -> None:
    with pytest.raises(ValidationError, match="exactly one of `policy`"):
        ScriptedAgent({})
    with pytest.raises(ValidationError, match="exactly one of `policy`"):
        ScriptedAgent({"policy": "a.toml", "policy_data": {}})
    with pytest.raises(ValidationError, match="Extra inputs"):
        ScriptedAgent({"policy_data": {}, "model": "x"})
    agent = ScriptedAgent(ScriptedAgent.Settings(policy_data={}, name="bot"))
    assert agent.options.name == "bot" and agent.policy.turn == []


def test_write_actions_become_output_files(access: WorldToolAccess) -> None:
    policy = {
        "turn": [
            {
                "actions": [
                    {"call": "lookup_account", "args": {"email": "dana.kim@example.com"}, "save": "account"},
                    {"write": "report.md", "text": "# Report\nAccount {{ account.account_id }}"},
                    {"say": "written"},
                ]
            }
        ]
    }
    response = asyncio.run(ScriptedAgent({"policy_data": policy}).respond("go", access))
    assert response.files == {
        "report.md": "# Report\nAccount "
        + access.call_tool("lookup_account", {"email": "dana.kim@example.com"})["result"]["account_id"]
    }
    assert response.text == "written"

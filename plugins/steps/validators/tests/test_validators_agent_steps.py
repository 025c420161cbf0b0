"""Agent validators 38–49 inside real tasks: agents served by agentenv-a2a pass, broken ones fail by name."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from agent_validators_testkit import policy, serve_llm_agent, serve_model, serve_plain
from agentenv_runtime import TaskError

ALL = (
    "verify_a2a_agent_card",
    "verify_a2a_agent_config_identity",
    "verify_a2a_agent_mcp",
    "verify_a2a_core_protocol",
    "verify_a2a_modalities",
    "verify_a2a_peer_agents",
    "verify_a2a_install",
    "verify_a2a_skill_config",
    "verify_a2a_snapshot",
    "verify_a2a_trajectory",
    "verify_a2a_role",
    "verify_a2a_system_prompt",
)
EXTENSION = ALL[1:3] + ALL[5:]
"""The checks that need the agent-config extension."""

# Which scripted policy honestly does what each validator asks of the agent.
SCRIPTED = {
    "verify_a2a_agent_card": "pong",
    "verify_a2a_agent_config_identity": "pong",
    "verify_a2a_agent_mcp": "mcp",
    "verify_a2a_core_protocol": "pong",
    "verify_a2a_modalities": "pong",
    "verify_a2a_peer_agents": "peer",
    "verify_a2a_install": "pong",
    "verify_a2a_skill_config": "skill",
    "verify_a2a_snapshot": "memo",
    "verify_a2a_trajectory": "mcp",
    "verify_a2a_role": "pong",
    "verify_a2a_system_prompt": "system_prompt",
}


def rows_of(record: dict[str, Any], step_id: str) -> dict[str, dict[str, Any]]:
    return {r["criterion"]: r for r in record["by_id"][step_id]["output"]["rows"]}


def failed(record: dict[str, Any], step_id: str) -> list[str]:
    return [r["criterion"] for r in record["by_id"][step_id]["output"]["rows"] if not r["passed"] and r["weight"] > 0]


WORLD = {
    "id": "world",
    "type": "deploy_env",
    "envs": ["helpdesk"],
    "artifacts": ["acme"],
    "roles": {"clerk": {"tools": ["*"]}},
}


@pytest.fixture(scope="module")
def model() -> Iterator[str]:
    with serve_model() as url:
        yield url


def test_scripted_agents_pass_every_validator_in_a_task(run: Any) -> None:
    agents = [
        {
            "id": f"agent_{name}",
            "type": "deploy_agent",
            "env": "world",
            "kind": "scripted",
            "settings": {"policy_data": policy(name)},
        }
        for name in sorted(set(SCRIPTED.values()))
    ]
    checks = [{"id": kind, "type": kind, "agent": f"agent_{SCRIPTED[kind]}", "timeout": 30} for kind in ALL]
    record = run([WORLD, *agents, *checks])
    assert record["status"] == "succeeded", record
    for kind in ALL:
        out = record["by_id"][kind]["output"]
        assert out["passed"] is True and out["score"] == 1.0, (kind, failed(record, kind), out["rows"])
    assert rows_of(record, "verify_a2a_role")["role reported back"]["detail"] == "role 'clerk'"
    assert rows_of(record, "verify_a2a_snapshot")["value recalled"]["passed"]
    assert "probe_ping" in rows_of(record, "verify_a2a_trajectory")["tool calls listed"]["detail"]
    assert record["passed"] is True and sorted(record["verifiers"]) == sorted(ALL)


def test_checking_a_deployed_agent_leaves_it_and_its_world_untouched(run: Any) -> None:
    """A fresh instance in a fork of the world is checked: the deployed agent's first turn is still turn 0."""
    steps = [
        WORLD,
        {
            "id": "agent",
            "type": "deploy_agent",
            "env": "world",
            "kind": "scripted",
            "settings": {"policy_data": policy("memo")},
        },
        {"id": "snap", "type": "verify_a2a_snapshot", "agent": "agent"},
        {"id": "ask", "type": "prompt_agent", "agent": "agent", "prompt": "Remember this code for later: X-1."},
    ]
    record = run(steps)
    assert record["status"] == "succeeded", record
    assert record["by_id"]["snap"]["output"]["passed"]
    assert record["by_id"]["ask"]["output"]["response"] == "OK"  # turn 0 of the memo policy, not turn 1


def test_llm_agent_served_over_a2a_passes_every_validator_by_url(run: Any, model: str) -> None:
    with serve_llm_agent(model) as (url, app):
        record = run([{"id": kind, "type": kind, "url": url, "timeout": 30} for kind in ALL])
        served = app.state.served
        assert served.config.name == "Memo clerk" and served.config.skills == []  # restored after the checks
        assert served.config.system_prompt == "" and served.config.mcp_servers == []
    assert record["status"] == "succeeded", record
    for kind in ALL:
        assert record["by_id"][kind]["output"]["passed"], (kind, failed(record, kind))
    honoured = rows_of(record, "verify_a2a_system_prompt")["system prompt honoured"]
    assert "SYSPROMPT-" in honoured["detail"]


def test_plain_sdk_agent_fails_the_extension_checks_by_name(run: Any) -> None:
    with serve_plain() as url:
        record = run([{"id": kind, "type": kind, "url": url, "timeout": 30} for kind in ALL])
    assert record["status"] == "succeeded", record  # failed verdicts, not failed steps
    for kind in ("verify_a2a_agent_card", "verify_a2a_core_protocol", "verify_a2a_modalities"):
        assert record["by_id"][kind]["output"]["passed"], (kind, failed(record, kind))
    for kind in EXTENSION:
        assert failed(record, kind) == ["agent-config extension"], kind
        assert record["by_id"][kind]["output"]["score"] == 0.0
    assert record["passed"] is False


def test_card_lacking_fields_fails_the_card_check_naming_them(run: Any) -> None:
    with serve_plain(lacking=True) as url:
        record = run([{"id": "card", "type": "verify_a2a_agent_card", "url": url}])
    assert failed(record, "card") == ["description", "skills", "defaultOutputModes"]
    assert 0 < record["by_id"]["card"]["output"]["score"] < 1


def test_declared_image_mode_that_fails_is_a_failed_row(run: Any) -> None:
    with serve_plain(images=True) as url:
        record = run([{"id": "modes", "type": "verify_a2a_modalities", "url": url}])
    assert failed(record, "modes") == ["image accepted"]
    rows = rows_of(record, "modes")
    assert rows["text accepted"]["passed"] and rows["audio accepted"]["weight"] == 0


def test_unreachable_url_is_a_failed_row_not_a_crash(run: Any) -> None:
    record = run([{"id": "card", "type": "verify_a2a_agent_card", "url": "http://127.0.0.1:9", "timeout": 5}])
    assert record["by_id"]["card"]["status"] == "succeeded"
    assert failed(record, "card") == ["card served"]


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({}, "agent", "name the deploy_agent step"),
        ({"agent": "nope"}, "agent", "no step 'nope'"),
        ({"url": "ftp://x"}, "url", "not an http(s) URL"),
        ({"agent": "world", "url": "http://x"}, "agent", "not both"),
        ({"agent": "world", "headers": {"a": "b"}}, "headers", "only sent to a `url`"),
    ],
)
def test_preflight_names_the_step_and_field(run: Any, fields: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(TaskError) as caught:
        run([WORLD, {"id": "check", "type": "verify_a2a_role", **fields}])
    text = str(caught.value)
    assert "check" in text and field in text and message in text


def test_step_that_is_not_an_agent_fails_clearly(run: Any) -> None:
    record = run([WORLD, {"id": "check", "type": "verify_a2a_role", "agent": "world"}])
    step = record["by_id"]["check"]
    assert step["status"] == "failed" and "did not deploy an agent" in step["error"]

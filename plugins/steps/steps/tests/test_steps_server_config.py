"""apply_server_config inside real tasks: generic fault injection and directives for apps that opt in."""

from __future__ import annotations

from typing import Any

import pytest
from agentenv_runtime import TaskError
from steps_taskkit import calls, deploy, prompt, scripted, task

POST = {"call": "post_message", "args": {"channel": "#general", "text": "attempt"}, "save": "posted"}


def config(**directives: Any) -> dict[str, Any]:
    return {"id": "cfg", "type": "apply_server_config", "env": "world", "directives": directives}


def test_fault_makes_the_next_calls_fail_then_recovers(runs, step):
    fault = {"tool": "post_message", "error": "timeout", "times": 2}
    agent = scripted("agent", "world", [POST, POST, POST, {"say": "done"}])
    record = runs(task(deploy(), config(fault=fault), agent, prompt("go", "agent")))
    assert record["status"] == "succeeded", record["steps"]
    assert step(record, "cfg")["output"]["faults"] == [{**fault, "message": None}]
    posts = calls(runs.trajectory(record), "post_message")
    assert [p["error"]["code"] if p["error"] else "ok" for p in posts] == ["timeout", "timeout", "ok"]
    assert posts[0]["error"]["injected"] is True and "injected fault 'timeout'" in posts[0]["error"]["message"]
    [event] = [e for e in runs.trajectory(record) if e["kind"] == "server_config"]
    assert event["by"] == "cfg" and event["directives"] == {"fault": fault}


def test_a_failed_call_changes_nothing_and_faults_can_be_cleared(runs, step):
    count = {"call": "list_messages", "args": {"channel": "#general"}, "save": "before"}
    agent = scripted("agent", "world", [POST, count, {"say": "{{ before.messages.-1.text }}"}])
    steps = (
        deploy(),
        config(fault=[{"tool": "post_message"}, {"tool": "list_messages", "error": "unavailable"}]),
        {**config(fault=[]), "id": "clear"},
        agent,
        prompt("go", "agent"),
    )
    record = runs(task(*steps))
    assert record["status"] == "succeeded", record["steps"]
    assert step(record, "clear")["output"]["faults"] == []
    assert step(record, "go")["output"]["response"] == "attempt"


def test_directives_go_to_apps_that_define_configure(runs, step, monkeypatch):
    from agentenv_slack.env import SlackEnv

    seen = []

    def configure(self, directives: dict[str, Any]) -> dict[str, Any]:
        seen.append(directives)
        return {"persona": directives["persona"]}

    monkeypatch.setattr(SlackEnv, "configure", configure, raising=False)
    record = runs(task(deploy(envs="slack,email"), config(persona="Sam Rivera")))
    assert record["status"] == "succeeded", record["steps"]
    assert step(record, "cfg")["output"] == {"configured": {"slack": {"persona": "Sam Rivera"}}}
    assert seen == [{"persona": "Sam Rivera"}]
    named = {**config(persona="x"), "envs": ["email"]}
    record = runs(task(deploy(envs="slack,email"), named))
    assert record["status"] == "failed"
    assert "app 'email' takes no directives (it has no `configure(directives)`" in step(record, "cfg")["error"]


def test_no_app_takes_directives(runs, step):
    record = runs(task(deploy(), config(persona="x")))
    assert record["status"] == "failed"
    assert "field `directives`: no app of world 'slack' takes directives (persona)" in step(record, "cfg")["error"]


def test_unknown_fault_tool_fails_at_run_and_bad_fault_at_preflight(runs, step):
    record = runs(task(deploy(), config(fault={"tool": "launch_rocket"})))
    assert "field `directives.fault`: no tool 'launch_rocket'" in step(record, "cfg")["error"]
    with pytest.raises(TaskError) as err:
        runs(task(deploy(), config(fault={"tool": "post_message", "times": 0})))
    assert "step 'cfg' (apply_server_config): field `directives`: Value error, fault: times:" in str(err.value)
    with pytest.raises(TaskError) as err:
        runs(task(deploy(), {**config(x=1), "env": "ghost"}))
    assert "field `env`: no step 'ghost'" in str(err.value)

"""A plain `agentenv run` refuses, before anything starts, every mistake it can see in a task: exit 2, one line
naming the task file, the step and the field (and the fix), and no run record, because no run began.

Each case is the hello bundle (a scripted agent greets #general in Slack) with one mistake, run for real through
the CLI entry with the installed plugins. Most of these used to start the run and record it `failed`; the clock
cases ran to the end of the calendar, a policy calling a missing tool or an access change naming one passed
silently, and a start outside the calendar after conversion to UTC ended in a traceback. The cases marked
`before` were already refused this way and are kept here so they stay so.
"""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from agentenv_testing.installs import CliResult
from engine_helpers import store_config

Cli = Callable[..., CliResult]

HELLO: dict[str, Any] = {
    "name": "hello",
    "seed": 7,
    "steps": [
        {"id": "world", "type": "deploy_env", "envs": ["slack"], "artifacts": ["acme"]},
        {"id": "clock", "type": "sync_env_clock", "env": "world", "start": "2026-12-01T09:00:00Z", "mode": "frozen"},
        {"id": "greeter", "type": "deploy_agent", "env": "world", "settings": {"policy": "agents/greeter.toml"}},
        {"id": "say_hello", "type": "prompt_agent", "agent": "greeter", "prompt": "Please say hello in #general."},
    ],
}
TIME_TRIGGER = {"id": "ten", "kind": "time", "when": {"at": "10:00"}}


@dataclass
class Case:
    where: str
    """What the error line names after `error: FILE: ` (or after `error: ` for a command-line option)."""
    says: str
    """A part of the message (what is wrong, or the fix)."""
    changes: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Step id → fields to set (None removes one)."""
    added: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    """(position, step) to insert."""
    order: list[str] | None = None
    """The step ids in a new order."""
    greeter: str | None = None
    """Another agents/greeter.toml."""
    args: list[str] = field(default_factory=list)
    before: bool = False
    """Already refused before anything started, before the install checks joined every run's preflight."""

    def task(self) -> dict[str, Any]:
        task = copy.deepcopy(HELLO)
        steps = {step["id"]: step for step in task["steps"]}
        for step_id, fields in self.changes.items():
            for key, value in fields.items():
                if value is None:
                    steps[step_id].pop(key, None)
                else:
                    steps[step_id][key] = value
        if self.order is not None:
            task["steps"] = [steps[step_id] for step_id in self.order]
        for position, step in self.added:
            task["steps"].insert(position, step)
        return task


def triggers(*actions: dict[str, Any], kind: str = "time") -> tuple[int, dict[str, Any]]:
    trigger = {**TIME_TRIGGER, "kind": kind, "actions": list(actions)}
    return 2, {"id": "rules", "type": "register_env_triggers", "env": "world", "triggers": [trigger]}


POST = {"call_tool": {"tool": "post_message", "args": {"channel": "#general", "text": "ten o'clock"}}}
CASES = {
    # ---- worlds -----------------------------------------------------------------------------------------------
    "unknown-env": Case("step 'world' (deploy_env): field `envs`", "no env 'slackk'", {"world": {"envs": ["slackk"]}}),
    "env-refuses-settings": Case(
        "step 'world' (deploy_env): field `settings.slack.colour`",
        "Extra inputs are not permitted; fix: give settings slack takes",
        {"world": {"settings": {"slack": {"colour": "red"}}}},
    ),
    "unknown-artifact": Case(
        "step 'world' (deploy_env): field `artifacts[0]`",
        "'acmee': no env of the world ships it",
        {"world": {"artifacts": ["acmee"]}},
    ),
    "artifact-file-missing": Case(
        "step 'world' (deploy_env): field `artifacts[0]`",
        "slack ships no artifact 'data/acme.json' (packaged: acme, globex) and there is no file",
        {"world": {"artifacts": ["slack=data/acme.json"]}},
    ),
    "role-allows-unknown-tool": Case(
        "step 'world' (deploy_env): field `roles.poster.tools`",
        "no tool 'post_mesage' in world 'slack'; did you mean 'post_message'?",
        {"world": {"roles": {"poster": {"tools": ["post_mesage"]}}}},
    ),
    "role-denies-unknown-tool": Case(
        "step 'world' (deploy_env): field `roles.default.deny`",
        "no tool 'delete_mesage' in world 'slack'",
        {"world": {"roles": {"default": {"tools": ["*"], "deny": ["delete_mesage"]}}}},
    ),
    "unknown-sandbox-field": Case(
        "step 'world' (deploy_env): field `sandbox`",
        "no sandbox provider 'nowhere'",
        {"world": {"sandbox": "docker,nowhere"}},
    ),
    "load-unknown-artifact": Case(
        "step 'more' (load_artifact): field `artifacts[0]`",
        "'initech': no env of the world ships it",
        added=[(1, {"id": "more", "type": "load_artifact", "env": "world", "artifacts": ["initech"]})],
    ),
    # ---- order --------------------------------------------------------------------------------------------------
    "env-declared-later": Case(
        "step 'clock' (sync_env_clock): field `env`",
        "fix: declare step 'world' before step 'clock'",
        order=["clock", "world", "greeter", "say_hello"],
    ),
    "agent-declared-later": Case(
        "step 'say_hello' (prompt_agent): field `agent`",
        "step 'greeter' is declared after this one",
        order=["world", "clock", "say_hello", "greeter"],
    ),
    "agent-not-depended-on": Case(
        "step 'say_hello' (prompt_agent): field `agent`",
        "fix: add 'greeter' to `depends_on`",
        {"say_hello": {"depends_on": ["world"]}},
    ),
    # ---- time ---------------------------------------------------------------------------------------------------
    "advance-inf": Case(
        "step 'clock' (sync_env_clock): field `advance_seconds`",
        "finite number",
        {"clock": {"advance_seconds": float("inf")}},
        before=True,
    ),
    "advance-nan": Case(
        "step 'clock' (sync_env_clock): field `advance_seconds`",
        "finite number",
        {"clock": {"advance_seconds": float("nan")}},
        before=True,
    ),
    "rate-too-high": Case(
        "step 'clock' (sync_env_clock): field `rate`",
        "less than or equal to",
        {"clock": {"mode": "scaled", "rate": 1e300}},
        before=True,
    ),
    "advance-longer-than-calendar": Case(
        "step 'clock' (sync_env_clock): field `advance_seconds`",
        "longer than years 1 to 9999",
        {"clock": {"advance_seconds": 1e300}},
    ),
    "advance-past-year-9999": Case(
        "step 'clock' (sync_env_clock): field `advance_seconds`",
        "past the end of year 9999",
        {"clock": {"start": "9999-12-31T23:00:00Z", "advance_seconds": 7200}},
    ),
    "start-outside-calendar-in-utc": Case(
        "step 'clock' (sync_env_clock): field `start`",
        "falls outside years 1 to 9999 once converted to UTC",
        {"clock": {"start": "0001-01-01T00:30:00+01:00"}},
    ),
    # ---- rules --------------------------------------------------------------------------------------------------
    "unknown-trigger-kind": Case(
        "step 'rules' (register_env_triggers): field `triggers[0].kind`",
        "no trigger kind 'hourly'",
        added=[triggers(POST, kind="hourly")],
    ),
    "trigger-calls-unknown-tool": Case(
        "step 'rules' (register_env_triggers): field `triggers[0].actions[0].call_tool.tool`",
        "no tool 'post_mesage' in world 'slack'; did you mean post_message",
        added=[triggers({"call_tool": {"tool": "post_mesage", "args": {}}})],
    ),
    "trigger-disables-unknown-tool": Case(
        "step 'rules' (register_env_triggers): field `triggers[0].actions[0].set_tool_access.disable`",
        "no tool 'post_mesage'",
        added=[triggers({"set_tool_access": {"role": "default", "disable": ["post_mesage"]}})],
    ),
    "access-enables-unknown-tool": Case(
        "step 'access' (modify_env_tool_access): field `enable`",
        "no tool 'serch_messages'",
        added=[(2, {"id": "access", "type": "modify_env_tool_access", "env": "world", "enable": ["serch_messages"]})],
    ),
    # ---- agents -------------------------------------------------------------------------------------------------
    "unknown-agent-kind": Case(
        "step 'greeter' (deploy_agent): field `kind`", "no agent kind 'robot'", {"greeter": {"kind": "robot"}}
    ),
    "agent-role-undefined": Case(
        "step 'greeter' (deploy_agent): field `role`",
        "world 'slack' has no role 'poster' (roles: default); fix: define it in the `roles` of step 'world'",
        {"greeter": {"role": "poster"}},
    ),
    "policy-file-missing": Case(
        "step 'greeter' (deploy_agent): field `settings.policy`",
        "agents/greter.toml",
        {"greeter": {"settings": {"policy": "agents/greter.toml"}}},
    ),
    "policy-calls-unknown-tool": Case(
        "step 'greeter' (deploy_agent): greeter.toml turn[0].actions[0].call",
        "no tool 'post_mesage' in world 'slack'; did you mean post_message",
        greeter='[[turn]]\nactions = [{ call = "post_mesage", args = { channel = "#general", text = "Hi" } }]\n',
    ),
    "agent-option-policy-calls-unknown-tool": Case(
        "step 'greeter' (deploy_agent): typo.toml turn[0].actions[0].call",
        "no tool 'list_chanels'",
        args=["--agent", "typo"],
    ),
    "agent-option-names-nothing": Case(
        "--agent ghost", "neither an installed agent kind", args=["--agent", "ghost"], before=True
    ),
    "sandbox-option-names-nothing": Case(
        "--sandbox nowhere", "no sandbox provider 'nowhere'", args=["--sandbox", "nowhere"], before=True
    ),
}


@pytest.fixture
def hello_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The installed hello bundle copied to tmp_path, its task as JSON; run records go to stores under tmp_path."""
    import agentenv_hello

    bundle = tmp_path / "hello"
    shutil.copytree(Path(agentenv_hello.__file__).parent / "hello", bundle)
    (bundle / "tasks" / "hello.toml").unlink()
    (bundle / "agents" / "typo.toml").write_text('[[turn]]\nactions = [{ call = "list_chanels" }]\n')
    monkeypatch.setenv("AGENTENV_CONFIG", str(store_config(tmp_path)))
    return bundle


def write(bundle: Path, case: Case) -> Path:
    path = bundle / "tasks" / "hello.json"
    path.write_text(json.dumps(case.task()))
    if case.greeter is not None:
        (bundle / "agents" / "greeter.toml").write_text(case.greeter)
    return path


def test_the_unchanged_copy_runs(hello_copy: Path, agentenv_cli: Cli) -> None:
    """The cases below differ from a task that runs and passes only by their one mistake."""
    write(hello_copy, Case("", ""))
    result = agentenv_cli("run", str(hello_copy), "--json")
    assert result.returncode == 0, result
    assert len(agentenv_cli("runs", "list", "--json").json()) == 1


@pytest.mark.parametrize("name", list(CASES))
def test_a_mistake_is_refused_before_anything_starts(name: str, hello_copy: Path, agentenv_cli: Cli) -> None:
    case = CASES[name]
    path = write(hello_copy, case)
    result = agentenv_cli("run", str(hello_copy), *case.args)
    assert result.returncode == 2, result
    prefix = "error: " if case.where.startswith("--") else f"error: {path}: "
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"{prefix}{case.where}: "), result
    assert case.says in first, result
    assert "Traceback" not in result.stderr
    assert agentenv_cli("runs", "list", "--json").json() == [], "a run was recorded: it started"
    dry = agentenv_cli("run", str(hello_copy), "--dry-run", *case.args)
    assert dry.returncode == 2 and dry.stderr == result.stderr, dry  # --dry-run and a run refuse alike


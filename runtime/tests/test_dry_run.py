"""`agentenv run --dry-run` checks a task against the install: env names, artifacts, agent kinds, trigger kinds
and the tools each scripted policy calls (as the composed world names them). Each mistake is one line naming the
task file, the step and the field; a correct task still says "steps ok". An env whose module fails to import is
reported as broken, with its distribution and reason, by `env list`, `env card` and `run`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agentenv_testing.installs import KERNEL_RANGE, RUNTIME_RANGE, CliResult, install_fixture_plugin

Cli = Callable[..., CliResult]


def task_with(tmp_path: Path, *steps: dict[str, Any], policy: dict[str, Any] | None = None) -> Path:
    """A task file (and `agents/policy.json`) in a folder of its own."""
    folder = tmp_path / "task"
    (folder / "agents").mkdir(parents=True, exist_ok=True)
    if policy is not None:
        (folder / "agents" / "policy.json").write_text(json.dumps(policy))
    path = folder / "t.json"
    path.write_text(json.dumps({"name": "t", "steps": list(steps)}))
    return path


def desk(**fields: Any) -> dict[str, Any]:
    return {"id": "desk", "type": "deploy_env", "envs": ["slack", "email"], "artifacts": ["acme"], **fields}


def agent(**fields: Any) -> dict[str, Any]:
    policy = {"policy": "agents/policy.json"}
    return {"id": "agent", "type": "deploy_agent", "env": "desk", "settings": policy, **fields}


def calls(*tools: str) -> dict[str, Any]:
    return {"turn": [{"actions": [{"call": tool, "args": {}} for tool in tools]}]}


def dry_run(cli: Cli, path: Path, *extra: str) -> CliResult:
    return cli("run", str(path), "--dry-run", *extra)


def test_a_correct_task_is_ok(agentenv_cli: Cli, tmp_path: Path) -> None:
    path = task_with(tmp_path, desk(), agent(), policy=calls("list_channels", "slack_get_thread", "get_time"))
    result = dry_run(agentenv_cli, path)
    assert result.returncode == 0, result
    assert result.stdout.startswith("t: 2 steps ok (deploy_env, deploy_agent)")


@pytest.mark.parametrize(
    ("step", "where", "message"),
    [
        (desk(envs=["slak"]), "field `envs`", "no env 'slak' (installed: "),
        (desk(artifacts=["initech"]), "field `artifacts[0]`", "'initech': no env of the world ships it"),
        (desk(artifacts=["slack=nowhere.json"]), "field `artifacts[0]`", "slack ships no artifact 'nowhere.json'"),
        (desk(settings={"slack": {"user": "U_SAM"}}), "field `settings.slack.user`", "Extra inputs are not permitted"),
    ],
)
def test_world_mistakes(agentenv_cli: Cli, tmp_path: Path, step: dict[str, Any], where: str, message: str) -> None:
    result = dry_run(agentenv_cli, task_with(tmp_path, step))
    assert result.returncode == 2, result
    assert f"t.json: step 'desk' (deploy_env): {where}: " in result.stderr and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_trigger_kinds_and_trigger_tools(agentenv_cli: Cli, tmp_path: Path) -> None:
    rules = {
        "id": "rules",
        "type": "register_env_triggers",
        "env": "desk",
        "triggers": [
            {"id": "a", "kind": "sometimes", "actions": [{"call_tool": {"tool": "list_channels"}}]},
            {"id": "b", "kind": "time", "when": {"at": "10:00"}, "actions": [{"call_tool": {"tool": "get_thread"}}]},
        ],
    }
    result = dry_run(agentenv_cli, task_with(tmp_path, desk(), rules))
    assert result.returncode == 2, result
    lines = result.stderr.removeprefix("error: ").splitlines()
    assert len(lines) == 2, lines
    step = "step 'rules' (register_env_triggers)"
    assert f"{step}: field `triggers[0].kind`: no trigger kind 'sometimes' (installed: " in lines[0]
    assert "field `triggers[1].actions[0].call_tool.tool`: no tool 'get_thread'" in lines[1]
    assert "did you mean slack_get_thread, email_get_thread?" in lines[1]


def test_every_bad_trigger_is_reported_in_one_pass(agentenv_cli: Cli, tmp_path: Path) -> None:
    """A `when` a step type refuses, an unknown kind, a watched tool and an action tool the world lacks: one line
    each, whichever check finds it (the install check used to wait until the step types' checks passed)."""
    rules = {
        "id": "rules",
        "type": "register_env_triggers",
        "env": "desk",
        "triggers": [
            {"id": "a", "kind": "time", "when": {"att": "10:00"}, "actions": [{"call_tool": {"tool": "get_time"}}]},
            {"id": "b", "kind": "tool_call", "when": {"tool": "post_mesage"}, "actions": []},
            {"id": "c", "kind": "sometimes", "actions": []},
            {"id": "d", "kind": "time", "when": {"at": "10:00"}, "actions": [{"call_tool": {"tool": "nope"}}]},
        ],
    }
    result = dry_run(agentenv_cli, task_with(tmp_path, desk(), rules))
    assert result.returncode == 2, result
    lines = result.stderr.removeprefix("error: ").splitlines()
    fields = [line.split(": field ")[1].split(":")[0] for line in lines]
    assert fields == [
        "`triggers[0].when`",
        "`triggers[1].when.tool`",
        "`triggers[2].kind`",
        "`triggers[3].actions[0].call_tool.tool`",
    ], lines
    assert "no tool 'post_mesage'" in lines[1] and "post_message" in lines[1]


def test_agent_kinds_and_the_tools_a_policy_calls(agentenv_cli: Cli, tmp_path: Path) -> None:
    unknown_kind = dry_run(agentenv_cli, task_with(tmp_path, desk(), agent(kind="robot"), policy=calls()))
    assert unknown_kind.returncode == 2
    assert "step 'agent' (deploy_agent): field `kind`: no agent kind 'robot'" in unknown_kind.stderr
    path = task_with(tmp_path, desk(), agent(), policy=calls("post_mesage", "get_thread", "list_channels"))
    result = dry_run(agentenv_cli, path)
    lines = result.stderr.removeprefix("error: ").splitlines()
    assert result.returncode == 2 and len(lines) == 2, result
    assert "policy.json turn[0].actions[0].call: no tool 'post_mesage'" in lines[0] and "post_message" in lines[0]
    assert "turn[0].actions[1].call: no tool 'get_thread'" in lines[1] and "slack_get_thread" in lines[1]


def test_an_inline_policy_is_checked_as_a_policy_file_is(agentenv_cli: Cli, tmp_path: Path) -> None:
    """`settings.policy_data` is the same policy written in the task: its calls are checked the same way."""
    inline = agent(settings={"policy_data": calls("list_channels", "post_mesage")})
    result = dry_run(agentenv_cli, task_with(tmp_path, desk(), inline))
    lines = result.stderr.removeprefix("error: ").splitlines()
    assert result.returncode == 2 and len(lines) == 1, result
    where = "step 'agent' (deploy_agent): settings.policy_data turn[0].actions[1].call"
    assert f"{where}: no tool 'post_mesage'" in lines[0] and "post_message" in lines[0]


def test_a_policy_of_an_agent_other_steps_give_tools_is_left_to_the_run(agentenv_cli: Cli, tmp_path: Path) -> None:
    """`peer_agents` gives an agent `message_peer` (validators and skills give tools too): not a world tool."""
    helper = agent(id="helper", settings={"policy_data": calls("list_channels")})
    asker = agent(id="asker", settings={"policy_data": calls("message_peer")})
    peers = {"id": "peers", "type": "peer_agents", "peers": {"asker": ["helper"]}}
    result = dry_run(agentenv_cli, task_with(tmp_path, desk(), helper, asker, peers))
    assert result.returncode == 0, result
    alone = dry_run(agentenv_cli, task_with(tmp_path, desk(), helper, asker))
    assert alone.returncode == 2 and "no tool 'message_peer'" in alone.stderr


def test_a_model_agent_without_an_endpoint_is_refused_before_the_run(
    agentenv_cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--agent llm --model M` with no `base_url` anywhere (step settings, --model-url, [agents.llm], [model]):
    the dry run said "ok" and the run failed at deploy_agent."""
    monkeypatch.chdir(tmp_path)
    path = task_with(tmp_path, desk(), agent(), policy=calls("list_channels"))
    result = dry_run(agentenv_cli, path, "--agent", "llm", "--model", "gpt-test")
    assert result.returncode == 2, result
    assert "step 'agent' (deploy_agent): field `settings.base_url`: the llm agent needs `base_url`" in result.stderr
    assert "--model-url" in result.stderr and "[model] base_url" in result.stderr
    given = dry_run(agentenv_cli, path, "--agent", "llm", "--model", "gpt-test", "--model-url", "http://127.0.0.1:9/v1")
    assert given.returncode == 0, given
    config = tmp_path / ".agentenv" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_text('[model]\nbase_url = "http://127.0.0.1:9/v1"\n')
    assert dry_run(agentenv_cli, path, "--agent", "llm", "--model", "gpt-test").returncode == 0


def test_the_agent_override_is_checked_too(agentenv_cli: Cli, tmp_path: Path) -> None:
    path = task_with(tmp_path, desk(), agent(), policy=calls("list_channels"))
    (path.parent / "agents" / "typo.toml").write_text('[[turn]]\nactions = [{ call = "list_chanels" }]\n')
    wrong = dry_run(agentenv_cli, path, "--agent", "typo")
    assert wrong.returncode == 2 and "typo.toml turn[0].actions[0].call: no tool 'list_chanels'" in wrong.stderr
    missing = dry_run(agentenv_cli, path, "--agent", "nobody")
    assert missing.returncode == 2 and "--agent nobody: neither an installed agent kind" in missing.stderr


def test_the_agent_override_per_role(agentenv_cli: Cli, tmp_path: Path) -> None:
    roles = {"red": {"tools": ["*"]}, "yellow": {"tools": ["*"]}}
    red, yellow = agent(id="red", role="red"), agent(id="yellow", role="yellow")
    path = task_with(tmp_path, desk(roles=roles), red, yellow, policy=calls("list_channels"))
    (path.parent / "agents" / "typo.toml").write_text('[[turn]]\nactions = [{ call = "list_chanels" }]\n')
    one = dry_run(agentenv_cli, path, "--agent", "yellow=typo")
    lines = one.stderr.removeprefix("error: ").splitlines()
    assert one.returncode == 2 and len(lines) == 1, one  # red keeps its own policy
    assert "step 'yellow' (deploy_agent): typo.toml turn[0].actions[0].call: no tool 'list_chanels'" in lines[0]
    assert dry_run(agentenv_cli, path, "--agent", "typo", "--agent", "yellow=policy").returncode == 2  # red: typo
    assert dry_run(agentenv_cli, path, "--agent", "red=policy", "--agent", "yellow=scripted").returncode == 0
    blue = dry_run(agentenv_cli, path, "--agent", "blue=policy")
    assert blue.returncode == 2 and "--agent blue=policy: no deploy_agent step acts as role 'blue'" in blue.stderr
    assert "(the task's agents act as: red, yellow)" in blue.stderr
    twice = dry_run(agentenv_cli, path, "--agent", "red=policy", "--agent", "red=typo")
    assert twice.returncode == 2 and "two choices for role 'red'" in twice.stderr
    nobody = dry_run(agentenv_cli, path, "--agent", "red=nobody")
    assert nobody.returncode == 2 and "--agent red=nobody: neither an installed agent kind" in nobody.stderr


BROKEN_ENV = "import nonexistent_sdk_for_the_test\n"
BROKEN_PLUGIN = """
    from agentenv.contracts import ClassRef
    from agentenv.hookspecs import hookimpl


    @hookimpl
    def agentenv_register_envs():
        return [ClassRef("fixture_broken", "fixture_broken_env:BrokenEnv")]
"""


def test_an_env_that_fails_to_import_is_shown_as_broken_with_its_reason(
    plugin_site: Path, agentenv_cli: Cli, tmp_path: Path
) -> None:
    install_fixture_plugin(
        plugin_site, "agentenv-fixture-broken", "1.0.0", "fixture-broken", "fixture_broken_plugin", BROKEN_PLUGIN,
        [KERNEL_RANGE, RUNTIME_RANGE], extra_modules={"fixture_broken_env": BROKEN_ENV},
    )  # fmt: skip
    expected = (
        "env 'fixture_broken' comes from agentenv-fixture-broken, skipped: importing fixture_broken_env:BrokenEnv "
        "failed: ModuleNotFoundError: No module named 'nonexistent_sdk_for_the_test'; see `agentenv plugin check`"
    )
    listed = {row["name"]: row for row in agentenv_cli("env", "list", "--json").json()}
    assert listed["fixture_broken"]["status"] == "broken" and listed["fixture_broken"]["problem"] == expected
    assert listed["slack"]["status"] == "ok"
    table = agentenv_cli("env", "list")
    assert "fixture_broken  agentenv-fixture-broken  1.0.0    broken" in table.stdout and expected in table.stdout
    card = agentenv_cli("env", "card", "fixture_broken")
    assert card.returncode == 1 and card.stderr == f"error: {expected}\n"
    run = dry_run(agentenv_cli, task_with(tmp_path, desk(envs=["fixture_broken"])))
    assert run.returncode == 2 and f"step 'desk' (deploy_env): field `envs`: {expected}" in run.stderr


def test_plugin_list_shows_the_plugin_of_a_broken_env_as_broken(plugin_site: Path, agentenv_cli: Cli) -> None:
    install_fixture_plugin(
        plugin_site, "agentenv-fixture-broken", "1.0.0", "fixture-broken", "fixture_broken_plugin", BROKEN_PLUGIN,
        [KERNEL_RANGE, RUNTIME_RANGE], extra_modules={"fixture_broken_env": BROKEN_ENV},
    )  # fmt: skip
    plugins = {p["name"]: p for p in agentenv_cli("plugin", "list", "--json").json()}
    assert plugins["fixture-broken"]["status"] == "broken"
    assert "nonexistent_sdk_for_the_test" in plugins["fixture-broken"]["problems"][0]["message"]
    assert plugins["slack"]["status"] == "ok"
    table = agentenv_cli("plugin", "list")
    assert any(line.startswith("fixture-broken") and " broken " in line for line in table.stdout.splitlines())

"""deploy_agent and prompt_agent inside real tasks (scripted agents; an llm agent against a local stand-in)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agentenv_runtime import TaskError
from agentenv_testing.tasks import temporary_config
from steps_taskkit import calls, clock, deploy, prompt, scripted, task

POST = {
    "call": "post_message",
    "args": {"channel": "#general", "text": "Seed {{ seed }}: {{ prompt }}"},
    "save": "posted",
    "expect": "ok",
}


def test_scripted_agent_acts_through_the_world(runs, step):
    record = runs(
        task(
            deploy(),
            clock(),
            scripted("agent", "world", [POST, {"say": "posted {{ posted.id }}"}]),
            prompt("ask", "agent", "hello from run {run_id} seed {seed}"),
        ),
        seed=42,
    )
    assert record["status"] == "succeeded", record["steps"]
    assert step(record, "agent")["output"] == {"kind": "scripted", "role": "default", "env": "world", "tools": 19}
    output = step(record, "ask")["output"]
    [post] = calls(runs.trajectory(record), "post_message")
    assert post["args"]["text"] == f"Seed 42: hello from run {record['id']} seed 42"
    assert output["response"] == f"posted {post['result']['id']}"
    assert output["turns"] == [{"user": f"hello from run {record['id']} seed 42", "agent": output["response"]}]
    assert output["structured"] is None and output["files"] == {}
    turns = [e for e in runs.trajectory(record) if e["kind"] == "agent_turn"]
    assert [(t["role"], t["agent"]) for t in turns] == [("default", output["response"])]


def test_the_agent_override_can_name_one_role_of_a_multi_agent_task(runs, step, tmp_path):
    """`--agent ROLE=NAME` replaces the agent of that role only; a bare NAME still replaces every agent, and a
    role-specific choice wins over it."""
    bundle = tmp_path / "bundle"
    (bundle / "agents").mkdir(parents=True)
    for name in ("red", "yellow", "lazy", "eager"):
        (bundle / "agents" / f"{name}.json").write_text(json.dumps({"turn": [{"actions": [{"say": name}]}]}))
    roles = {"red": {"tools": ["*"]}, "yellow": {"tools": ["*"]}}

    def player(role: str) -> dict[str, Any]:
        return {"id": role, "type": "deploy_agent", "env": "world", "role": role,
                "settings": {"policy": f"agents/{role}.json"}}  # fmt: skip

    steps = (deploy(roles=roles), player("red"), player("yellow"), prompt("r", "red"), prompt("y", "yellow"))

    def answers(agent: str | None) -> tuple[str, str]:
        record = runs(task(*steps), bundle_dir=bundle, overrides={"agent": agent} if agent else {})
        assert record["status"] == "succeeded", record["steps"]
        return step(record, "r")["output"]["response"], step(record, "y")["output"]["response"]

    assert answers(None) == ("red", "yellow")
    assert answers("yellow=lazy") == ("red", "lazy")
    assert answers("lazy") == ("lazy", "lazy")
    assert answers("eager,yellow=lazy") == ("eager", "lazy")
    with pytest.raises(TaskError, match="--agent blue=lazy: no deploy_agent step acts as role 'blue'"):
        runs(task(*steps), bundle_dir=bundle, overrides={"agent": "blue=lazy"})


def test_simulated_user_turns_until_stop_when(runs, step):
    turns = [[{"say": "first answer"}], [{"say": "second answer"}], [{"say": "DONE now"}], [{"say": "never"}]]
    agent = scripted("agent", "world", *turns)
    user = {"persona": "Dana Kim", "turns": ["more", "even more", "and more"], "stop_when": "done"}
    record = runs(task(deploy(), agent, prompt("chat", "agent", "start", user=user)))
    assert record["status"] == "succeeded", record["steps"]
    output = step(record, "chat")["output"]
    assert output["turns"] == [
        {"user": "start", "agent": "first answer"},
        {"user": "more", "agent": "second answer"},
        {"user": "even more", "agent": "DONE now"},
    ]
    assert output["response"] == "DONE now"


def test_max_turns_bounds_the_conversation(runs, step):
    agent = scripted("agent", "world", [{"say": "a"}], [{"say": "b"}], [{"say": "c"}])
    record = runs(task(deploy(), agent, prompt("chat", "agent", "x", user={"turns": ["y", "z"]}, max_turns=2)))
    assert [t["agent"] for t in step(record, "chat")["output"]["turns"]] == ["a", "b"]


def test_policy_path_is_relative_to_the_bundle_and_agent_override(runs, step, tmp_path):
    bundle = tmp_path / "bundle"
    (bundle / "agents").mkdir(parents=True)
    (bundle / "agents" / "polite.toml").write_text('[[turn]]\nactions = [{ say = "polite" }]\n')
    (bundle / "agents" / "blunt.json").write_text(json.dumps({"turn": [{"actions": [{"say": "blunt"}]}]}))
    steps = (
        deploy(),
        {"id": "agent", "type": "deploy_agent", "env": "world", "settings": {"policy": "agents/polite.toml"}},
        prompt("ask", "agent"),
    )
    record = runs(task(*steps), bundle_dir=bundle)
    assert step(record, "agent")["output"]["kind"] == "scripted"
    assert step(record, "ask")["output"]["response"] == "polite"
    overridden = runs(task(*steps), bundle_dir=bundle, overrides={"agent": "blunt"})
    assert step(overridden, "ask")["output"]["response"] == "blunt"


def test_unknown_agent_override_is_refused_before_the_run(runs):
    with pytest.raises(TaskError, match="step 'agent' \\(deploy_agent\\): --agent: 'nobody' is neither an agent kind"):
        runs(task(deploy(), scripted("agent", "world", [])), overrides={"agent": "nobody"})


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"settings": {"policy_data": {"turn": []}, "colour": 1}}, "settings.colour: Extra inputs are not permitted"),
        ({"settings": {}}, "give exactly one of `policy`"),
        (  # a call and a say in one action (the tool exists: the install check passes it)
            {"settings": {"policy_data": {"turn": [{"actions": [{"call": "get_time", "say": "y"}]}]}}},
            "turn[0].actions[0]",
        ),
    ],
)
def test_bad_agent_settings_fail_naming_the_field(runs, step, fields, message):
    record = runs(task(deploy(), {"id": "agent", "type": "deploy_agent", "env": "world", **fields}))
    assert record["status"] == "failed"
    assert message in step(record, "agent")["error"]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"role": "auditor", "settings": {"policy_data": {}}}, "field `role`: world 'slack' has no role 'auditor'"),
        ({"kind": "telepathic", "settings": {}}, "field `kind`: no agent kind 'telepathic'"),
    ],
)
def test_what_the_install_lacks_is_refused_before_the_run(runs, fields, message):
    with pytest.raises(TaskError) as caught:
        runs(task(deploy(), {"id": "agent", "type": "deploy_agent", "env": "world", **fields}))
    assert "step 'agent' (deploy_agent): " + message in str(caught.value)


def test_model_override_chooses_llm_and_names_the_missing_endpoint(runs, step):
    """Refused before the run (it used to fail at deploy_agent, after the world was up)."""
    steps = (deploy(), {"id": "agent", "type": "deploy_agent", "env": "world", "settings": {"policy": "agents/x.toml"}})
    with pytest.raises(TaskError) as caught:
        runs(task(*steps), overrides={"model": "gpt-test"})
    error = str(caught.value)
    assert "llm agent" in error and "settings.base_url" in error and "[model] base_url" in error


def test_llm_agent_gets_model_settings_from_config(runs, step, tmp_path: Path, chat_stub, chat_requests, monkeypatch):
    monkeypatch.setenv("STEPS_TEST_KEY", "sk-test")
    config = temporary_config(tmp_path)
    config.values["model"] = {"base_url": chat_stub, "api_key": "env:STEPS_TEST_KEY", "model": "from-config"}
    steps = (
        deploy(),
        {
            "id": "agent",
            "type": "deploy_agent",
            "env": "world",
            "system_prompt": "Be brief.",
        },
        prompt("ask", "agent", "hi"),
    )
    record = runs(task(*steps), config=config)  # the step gives no agent of its own: the configured model's
    assert record["status"] == "succeeded", record["steps"]
    assert step(record, "agent")["output"]["kind"] == "llm"
    assert step(record, "ask")["output"]["response"] == "model from-config says hi"
    [request] = chat_requests
    assert request["auth"] == "Bearer sk-test"
    assert request["body"]["messages"][0] == {"role": "system", "content": "Be brief."}
    overridden = runs(task(*steps), config=config, overrides={"model": "from-cli"})
    assert step(overridden, "ask")["output"]["response"] == "model from-cli says hi"


def test_a_configured_model_keeps_the_steps_own_policy(runs, step, tmp_path: Path, chat_stub, monkeypatch):
    """Config `[model]` is for kinds and judges that use it: the task's scripted policy stays its agent."""
    config = temporary_config(tmp_path)
    config.values["model"] = {"base_url": chat_stub, "api_key": "env:STEPS_UNSET_KEY", "model": "from-config"}
    policy = {"turn": [{"actions": [{"say": "scripted says hi"}]}]}
    steps = (deploy(), {"id": "agent", "type": "deploy_agent", "env": "world", "settings": {"policy_data": policy}})
    record = runs(task(*steps, prompt("ask", "agent", "hi")), config=config)
    assert record["status"] == "succeeded", record["steps"]
    assert step(record, "agent")["output"]["kind"] == "scripted"


def test_agent_failure_fails_the_prompt(runs, step):
    record = runs(
        task(
            deploy(),
            {
                "id": "agent",
                "type": "deploy_agent",
                "env": "world",
                "kind": "llm",
                "settings": {"base_url": "http://127.0.0.1:9/v1", "model": "m", "timeout": 2},
            },
            prompt("ask", "agent"),
        )
    )
    assert record["status"] == "failed"
    assert "the llm agent failed on turn 1" in step(record, "ask")["error"]


def test_a_kind_table_and_model_url_override_the_model_table(runs, step, tmp_path: Path, chat_stub, chat_requests):
    config = temporary_config(tmp_path)
    config.values["model"] = {"base_url": "http://127.0.0.1:9/v1", "model": "from-model-table"}
    config.values["agents"] = {"llm": {"base_url": chat_stub, "model": "from-kind-table"}}
    steps = (
        deploy(),
        {"id": "agent", "type": "deploy_agent", "env": "world", "kind": "llm"},
        prompt("ask", "agent", "hi"),
    )
    record = runs(task(*steps), config=config)
    assert step(record, "ask")["output"]["response"] == "model from-kind-table says hi"
    config.values["agents"] = {"llm": {"base_url": "http://127.0.0.1:9/v1"}}
    overridden = runs(task(*steps), config=config, overrides={"model_url": chat_stub})
    assert step(overridden, "ask")["output"]["response"] == "model from-model-table says hi"
    assert len(chat_requests) == 2


def test_a_kind_table_gives_any_setting_of_its_kind(runs, step, tmp_path: Path, chat_stub, chat_requests):
    config = temporary_config(tmp_path)
    config.values["model"] = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    config.values["agents"] = {"llm": {"base_url": chat_stub, "system_prompt": "From the kind table."}}
    steps = (deploy(), {"id": "agent", "type": "deploy_agent", "env": "world", "kind": "llm"}, prompt("ask", "agent"))
    record = runs(task(*steps), config=config)
    assert record["status"] == "succeeded", record["steps"]
    [request] = chat_requests
    assert request["body"]["messages"][0] == {"role": "system", "content": "From the kind table."}
    no_url = runs(task(deploy(), {"id": "agent", "type": "deploy_agent", "env": "world", "kind": "a2a"}))
    assert (
        "settings.url: Field required (give `url` in the step's settings, or set [agents.a2a] url in "
        in step(no_url, "agent")["error"]
    )


def test_a_wrong_api_in_the_config_names_the_table_the_file_and_the_fix(runs, step, tmp_path: Path, chat_stub):
    config = temporary_config(tmp_path)
    config.values["model"] = {"base_url": chat_stub, "model": "m", "api": "responses"}
    steps = (deploy(), {"id": "agent", "type": "deploy_agent", "env": "world", "kind": "llm"})
    record = runs(task(*steps), config=config)
    error = step(record, "agent")["error"]
    assert "settings.api: Value error, 'responses' is not an API the llm agent speaks" in error
    assert "openai-chat" in error and "openai-responses" in error and "anthropic" in error
    assert "(`api` comes from [model] api, set in .agentenv/config.toml: fix it there)" in error
    config.sources["model.api"] = "env AGENTENV_MODEL__API"
    again = step(runs(task(*steps), config=config), "agent")["error"]
    assert "(`api` comes from [model] api, set in env AGENTENV_MODEL__API: fix it there)" in again


@pytest.mark.parametrize(
    ("bad", "where"),
    [
        ({"id": "s", "type": "deploy_agent", "env": "nope"}, "field `env`"),
        ({"id": "s", "type": "deploy_agent", "env": "world", "policy": "x"}, "field `policy`"),
        ({"id": "s", "type": "prompt_agent", "agent": "nope", "prompt": "x"}, "field `agent`"),
        ({"id": "s", "type": "prompt_agent", "agent": "world", "prompt": ""}, "field `prompt`"),
        (
            {"id": "s", "type": "prompt_agent", "agent": "world", "prompt": "x", "user": {"stop_when": "("}},
            "field `user.stop_when`",
        ),
        ({"id": "s", "type": "prompt_agent", "agent": "world", "prompt": "x", "max_turns": 0}, "field `max_turns`"),
    ],
)
def test_agent_preflight_names_step_and_field(runs, bad, where):
    with pytest.raises(TaskError) as caught:
        runs(task(deploy(), bad))
    assert f"step 's' ({bad['type']})" in str(caught.value)
    assert where in str(caught.value)


def test_prompting_a_world_is_refused(runs, step):
    record = runs(task(deploy(), prompt("ask", "world")))
    assert "field `agent`: step 'world' did not deploy an agent" in step(record, "ask")["error"]


def _persona_task(llm: bool) -> dict[str, Any]:
    trigger = {
        "id": "dana",
        "kind": "persona",
        "when": {"persona": "dana.kim@example.com", "match": "store credit"},
        "actions": [{"reply": {"text": "Insist on a refund.", "llm": llm}}],
    }
    return task(
        deploy(envs="email"),
        {"id": "rules", "type": "register_env_triggers", "env": "world", "triggers": [trigger]},
        scripted(
            "agent",
            "world",
            [
                {
                    "call": "send_email",
                    "args": {"to": ["dana.kim@example.com"], "subject": "Offer", "body": "Would store credit work?"},
                }
            ],
        ),
        prompt("ask", "agent"),
    )


def test_persona_replies_are_written_by_the_configured_model(runs, tmp_path: Path, chat_stub, chat_requests):
    config = temporary_config(tmp_path)
    config.values["model"] = {"base_url": chat_stub, "model": "persona-model"}
    record = runs(_persona_task(llm=True), config=config)
    assert record["status"] == "succeeded", record["steps"]
    replies = [e for e in runs.trajectory(record) if e["kind"] == "reply"]
    assert [r["text"] for r in replies] == ["model persona-model says hi"]
    [request] = chat_requests
    prompt_text = request["body"]["messages"][0]["content"]
    assert "dana.kim@example.com" in prompt_text and "Insist on a refund." in prompt_text
    assert "Would store credit work?" in prompt_text


def test_persona_replies_on_another_api_are_refused_naming_it(runs, tmp_path: Path, chat_stub, chat_requests):
    config = temporary_config(tmp_path)
    config.values["model"] = {"base_url": chat_stub, "model": "persona-model", "api": "anthropic"}
    record = runs(_persona_task(llm=True), config=config)
    assert chat_requests == []
    assert "openai-chat (<base_url>/chat/completions) only, and api is 'anthropic'" in json.dumps(
        runs.trajectory(record)
    )


def test_without_a_model_the_scripted_reply_text_is_sent(runs, tmp_path: Path, chat_stub, chat_requests):
    record = runs(_persona_task(llm=True), config=temporary_config(tmp_path))
    replies = [e for e in runs.trajectory(record) if e["kind"] == "reply"]
    assert [r["text"] for r in replies] == ["Insist on a refund."] and chat_requests == []


def test_an_llm_agent_without_a_model_is_refused_before_the_task_starts(runs, tmp_path: Path):
    from agentenv_runtime import TaskError

    steps = (deploy(), {"id": "agent", "type": "deploy_agent", "env": "world", "kind": "llm"}, prompt("ask", "agent"))
    with pytest.raises(TaskError, match=r"step 'agent' \(deploy_agent\): field `kind`: an `llm` agent needs a model"):
        runs(task(*steps), config=temporary_config(tmp_path))
    config = temporary_config(tmp_path)
    config.values["model"] = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    record = runs(task(*steps), config=config)  # passes preflight; the unreachable endpoint fails the step
    assert record["status"] == "failed" and "agent" in record["steps"][2]["error"]


def test_per_prompt_options_on_a_kind_without_them_name_the_field(runs, step):
    asked = {**prompt("ask", "agent"), "output_format": {"type": "object"}, "context_id": "a"}
    record = runs(task(deploy(), scripted("agent", "world", [{"say": "hi"}]), asked))
    assert record["status"] == "failed"
    error = step(record, "ask")["error"]
    assert "field `output_format`: the scripted agent takes no per-prompt options (output_format, context_id)" in error


def test_a_missing_attached_file_names_the_field(runs, step):
    asked = {**prompt("ask", "agent"), "files": ["notes/missing.txt"]}
    record = runs(task(deploy(), scripted("agent", "world", [{"say": "hi"}]), asked))
    assert "field `files[0]`: cannot attach 'notes/missing.txt'" in step(record, "ask")["error"]


class _Ctx:
    """What `harness_sandbox` reads of a step context: the run's overrides and its config."""

    def __init__(self, overrides: dict[str, Any], config: dict[str, Any]) -> None:
        self.overrides, self.tables, self.config = overrides, config, self

    def raw(self, key: str) -> Any:
        table, _, name = key.rpartition(".")
        return self.tables.get(table, {}).get(name)

    setting = raw


@pytest.mark.parametrize(
    ("overrides", "config", "chosen"),
    [
        ({"sandbox": "docker,process"}, {"agents.claude-code": {"sandbox": "process"}}, "docker"),
        ({}, {"agents.claude-code": {"sandbox": "docker"}, "sandbox": {"default": "process"}}, "docker"),
        ({}, {"agents.codex": {"sandbox": "docker"}, "sandbox": {"default": "inline,process"}}, "inline"),
        ({}, {}, None),
    ],
)
def test_an_agents_sandbox_comes_from_the_flag_then_its_table_then_the_default(
    overrides: dict[str, Any], config: dict[str, Any], chosen: str | None
) -> None:
    from agentenv_steps.agents import harness_sandbox

    assert harness_sandbox("claude-code", _Ctx(overrides, config)) == chosen  # type: ignore[arg-type]

"""deploy_env inside real tasks: worlds, artifacts, pins, roles, the template cache, preflight."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentenv_runtime import Env, TaskError
from agentenv_steps import deploy as deploy_module
from steps_taskkit import calls, clock, deploy, prompt, scripted, task

POST = {"call": "post_message", "args": {"channel": "#general", "text": "only in A"}, "expect": "ok"}


def test_deploys_three_apps_with_acme(runs, step):
    record = runs(task(deploy(envs="slack, email,helpdesk")))
    assert record["status"] == "succeeded", record["steps"]
    output = step(record, "world")["output"]
    assert output["envs"] == ["slack", "email", "helpdesk"]
    assert output["sandbox"] == "inline"
    assert sorted(ref.split("/")[0] for ref in output["artifacts"]) == ["email", "helpdesk", "slack"]
    assert all("/acme@" in ref for ref in output["artifacts"])
    assert output["tools"] > 30


def test_two_deploys_are_independent_worlds(runs, step):
    record = runs(
        task(
            deploy("a"),
            deploy("b"),
            clock("a"),
            clock("b"),
            scripted("agent", "a", [POST]),
            prompt("p", "agent"),
            {"id": "snap_a", "type": "snapshot_env", "env": "a", "name": "indep-a"},
            {"id": "snap_b", "type": "snapshot_env", "env": "b", "name": "indep-b"},
        )
    )
    assert record["status"] == "succeeded", record["steps"]
    texts = {}
    for name in ("indep-a", "indep-b"):
        data = json.loads(runs.object(f"artifacts/{name}/slack.json"))["data"]
        texts[name] = [m["text"] for m in data["messages"]]
    assert "only in A" in texts["indep-a"]
    assert "only in A" not in texts["indep-b"]
    assert len(texts["indep-a"]) == len(texts["indep-b"]) + 1
    assert calls(runs.trajectory(record, "b"), "post_message") == []


def test_second_deploy_forks_the_cached_template(runs, monkeypatch):
    deploy_module.clear_templates()
    loads = []
    original = Env.load
    monkeypatch.setattr(Env, "load", lambda self, artifact: (loads.append(artifact.ref), original(self, artifact))[1])
    first = runs(task(deploy(envs="slack,email")))
    assert first["status"] == "succeeded"
    assert len(loads) == 2
    second = runs(task(deploy("again", envs=["slack", "email"])))
    assert second["status"] == "succeeded"
    assert len(loads) == 2  # no artifact loaded again: forked from the template
    runs(task(deploy(envs="slack,email", roles={"reader": {"tools": ["list_channels"]}})))
    assert len(loads) == 4  # different roles: a different template


def test_pinned_artifact_mismatch_fails_the_step(runs, step):
    record = runs(task(deploy(), pins={"artifacts": {"slack/acme": "deadbeef"}}))
    assert record["status"] == "failed"
    assert "pins deadbeef" in step(record, "world")["error"]


def test_pinned_artifact_prefix_passes(runs, step):
    first = runs(task(deploy()))
    sha_prefix = step(first, "world")["output"]["artifacts"][0].split("#")[1]
    record = runs(task(deploy(), pins={"artifacts": {"slack/acme": sha_prefix}}))
    assert record["status"] == "succeeded"


def test_artifact_path_is_relative_to_the_bundle(runs, step, tmp_path):
    bundle = tmp_path / "bundle"
    (bundle / "data").mkdir(parents=True)
    document = {
        "name": "tiny",
        "env": "slack",
        "version": "0.0.1",
        "data": {
            "users": [
                {"id": "U_SUPPORT", "name": "support", "real_name": "Support Bot", "email": "support@acme.example"}
            ]
        },
    }
    (bundle / "data" / "tiny.json").write_text(json.dumps(document))
    record = runs(task(deploy(artifacts=["slack=data/tiny.json"])), bundle_dir=bundle)
    assert record["status"] == "succeeded", step(record, "world")["error"]
    assert step(record, "world")["output"]["artifacts"][0].startswith("slack/tiny@0.0.1#")


def test_roles_limit_what_an_agent_sees(runs, step):
    record = runs(
        task(
            deploy(roles={"reader": {"tools": ["list_channels", "post_message"], "deny": ["post_message"]}}),
            scripted("agent", "world", [{"call": "list_channels"}], role="reader"),
        )
    )
    assert record["status"] == "succeeded", record["steps"]
    assert step(record, "agent")["output"]["tools"] == 1


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"envs": "slack,nosuchapp"}, "field `envs`: no env 'nosuchapp'"),
        ({"roles": {"r": {"tools": ["no_such_tool"]}}}, "field `roles.r.tools`: no tool 'no_such_tool'"),
        ({"sandbox": "moonbase"}, "field `sandbox`: no sandbox provider 'moonbase'"),
        ({"artifacts": ["nosuch"]}, "field `artifacts[0]`: 'nosuch': no env of the world ships it"),
        ({"settings": {"slack": {"user_id": 5, "bogus": 1}}}, "field `settings.slack.user_id`"),
    ],
)
def test_what_the_install_lacks_is_refused_before_the_run(runs, fields, message):
    """The engine's install checks see these before anything starts (the step's own checks stay as a backstop)."""
    with pytest.raises(TaskError) as caught:
        runs(task(deploy(**fields)))
    assert "step 'world' (deploy_env): " + message in str(caught.value)


def test_a_stored_artifact_is_looked_for_at_run_time(runs, step):
    record = runs(task(deploy(artifacts=["slack=store:artifacts/missing/slack.json"])))
    assert record["status"] == "failed"
    assert "no object 'artifacts/missing/slack.json'" in step(record, "world")["error"]


# ---- served worlds ---------------------------------------------------------------------------------------
@pytest.fixture
def state_dir(tmp_path, monkeypatch):
    """Sandbox state files of this test only."""
    monkeypatch.setenv("AGENTENV_STATE_DIR", str(tmp_path / "sandbox-state"))
    return tmp_path / "sandbox-state" / "process-sandboxes"


def _gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2] == "Z"


def test_process_sandbox_serves_the_world_with_roles_settings_and_clock(runs, step, state_dir):
    post = {"call": "post_message", "args": {"channel": "#general", "text": "served"}, "expect": "ok"}
    forbidden = {"call": "list_channels", "args": {}, "save": "refused"}
    record = runs(
        task(
            deploy(
                sandbox="process",
                roles={"poster": {"tools": ["post_message", "get_time"]}},
                settings={"slack": {"user_id": "U_SAM"}},
                start="2026-12-01T08:00:00Z",
            ),
            clock(start="2026-12-01T09:30:00Z"),
            scripted("agent", "world", [post, forbidden], role="poster"),
            prompt("go", "agent"),
            {
                "id": "check",
                "type": "env_outcome_verifier",
                "env": "world",
                "checks": [
                    {
                        "sql": "SELECT user_id FROM messages WHERE text = 'served'",
                        "env": "slack",
                        "equals": "U_SAM",
                    }
                ],
            },
        )
    )
    assert record["status"] == "succeeded", [s.get("error") for s in record["steps"]]
    output = step(record, "world")["output"]
    assert output["sandbox"] == "process" and output["url"].startswith("http://127.0.0.1:")
    assert output["envs"] == ["slack"] and output["tools"] > 5
    assert record["score"] == 1.0
    events = runs.trajectory(record)
    posted = calls(events, "post_message")
    assert posted[0]["role"] == "poster" and posted[0]["virtual_time"].startswith("2026-12-01T09:30:00")
    assert calls(events, "list_channels")[0]["error"]["code"] == "forbidden"
    assert [e["kind"] for e in events][-1] == "agent_turn"
    assert _gone(output["pid"]) and not list(state_dir.glob("*.json"))


def test_run_override_picks_the_sandbox_and_a_non_default_field_wins(runs, step, state_dir):
    record = runs(task(deploy()), overrides={"sandbox": "process"})
    assert step(record, "world")["output"]["sandbox"] == "process"
    record = runs(task(deploy(sandbox="process")), overrides={"sandbox": "moonbase"})
    assert step(record, "world")["output"]["sandbox"] == "process"
    record = runs(task(deploy()), overrides={"sandbox": "moonbase"})
    assert "field `sandbox (from --sandbox)`: no sandbox provider 'moonbase'" in step(record, "world")["error"]


def test_config_sandbox_default_chain_is_used_when_the_step_leaves_the_default(runs, step, state_dir, tmp_path):
    from agentenv_testing.tasks import temporary_config

    config = temporary_config(tmp_path)
    config.values["sandbox"]["default"] = "modal,process"  # no Modal credentials here: modal passes
    record = runs(task(deploy()), config=config)
    assert record["status"] == "succeeded", step(record, "world")["error"]
    output = step(record, "world")["output"]
    assert output["sandbox"] == "process"
    assert _gone(output["pid"])


def test_a_server_that_does_not_come_up_fails_with_its_output_and_is_removed(runs, step, state_dir):
    record = runs(task(deploy(sandbox="process", ready_timeout=0.001)))
    error = step(record, "world")["error"]
    assert "the world did not start in the process sandbox" in error
    assert "last output:" in error and "agentenv serve" in error.replace("-m agentenv serve", "agentenv serve")
    assert "AGENTENV_WORLD_TOKEN" not in error.split("command:")[0]
    assert not list(state_dir.glob("*.json"))


def test_served_worlds_keep_the_control_role(runs, step, state_dir):
    record = runs(task(deploy(sandbox="process", roles={"control": {}})))
    assert "field `roles.control`" in step(record, "world")["error"]


def test_served_world_needs_the_gateway(runs, step, state_dir, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_gateway(name, *args, **kwargs):
        if name.startswith("agentenv_gateway"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_gateway)
    record = runs(task(deploy(sandbox="process")))
    assert "agentenv plugin add agentenv-gateway" in step(record, "world")["error"]


def test_serve_plan_keeps_tokens_off_the_command_line():
    settings = deploy_module.DeployEnvSettings(envs=["slack"], roles={"r": {"tools": ["*"]}})
    plan = deploy_module.ServePlan(settings, {"slack": Env}, [], seed=3)
    command = plan.command("python3", "0.0.0.0", "8000")
    assert set(plan.tokens) == {"default", "control", "r"}
    assert not any(token in " ".join(command) for token in plan.tokens.values())
    assert sorted(plan.env.values()) == sorted(plan.tokens.values())
    role_file = plan.files["world/roles.toml"].decode()
    assert '[roles."r"]' in role_file and 'token = "env:AGENTENV_WORLD_TOKEN_2"' in role_file
    assert command[command.index("--seed") + 1] == "3"


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"artifacts": ["=acme"]}, "field `artifacts[0]`"),
        ({"artifacts": ["email=acme"]}, "field `artifacts[0]`"),
        ({"settings": {"email": {}}}, "field `settings.email`"),
        ({"envs": []}, "field `envs`"),
        ({"envs": "slack,slack"}, "field `envs`"),
        ({"roles": {"system": {}}}, "field `roles.system`"),
        ({"roles": {"r": {"tool": ["x"]}}}, "field `roles.r.tool`"),
        ({"colour": "red"}, "field `colour`"),
    ],
)
def test_preflight_names_step_and_field(runs, fields, where):
    with pytest.raises(TaskError) as caught:
        runs(task(deploy(**fields)))
    assert "step 'world' (deploy_env)" in str(caught.value)
    assert where in str(caught.value)


def test_teardown_forgets_the_world(runs, monkeypatch):
    from agentenv_runtime import RunContext

    seen = {}
    original = RunContext.teardown_all

    def spy(self):
        errors = original(self)
        seen["resources"] = dict(self.resources)
        return errors

    monkeypatch.setattr(RunContext, "teardown_all", spy)
    record = runs(task(deploy()))
    assert record["status"] == "succeeded"
    assert seen["resources"] == {}


def test_deploy_env_settings_accept_a_comma_string(tmp_path: Path):
    settings = deploy_module.DeployEnvSettings.model_validate({"envs": "slack, email", "artifacts": "acme"})
    assert settings.envs == ["slack", "email"]
    assert settings.artifacts == ["acme"]

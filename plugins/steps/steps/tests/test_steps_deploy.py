"""deploy_env inside real tasks: worlds, artifacts, pins, roles, the template cache, preflight."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentenv.engine.task import TaskError
from agentenv.env import Env
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
        ({"envs": "slack,nosuchapp"}, "field `envs`: no env named 'nosuchapp'"),
        ({"roles": {"r": {"tools": ["no_such_tool"]}}}, "field `roles.r.tools`: no tool 'no_such_tool'"),
        ({"sandbox": "moonbase"}, "no sandbox provider 'moonbase'"),
        ({"artifacts": ["nosuch"]}, "no env in the world ships an artifact 'nosuch'"),
        ({"artifacts": ["slack=store:artifacts/missing/slack.json"]}, "no object 'artifacts/missing/slack.json'"),
        ({"settings": {"slack": {"user_id": 5, "bogus": 1}}}, "field `settings.slack`"),
    ],
)
def test_execute_errors_name_the_field(runs, step, fields, message):
    record = runs(task(deploy(**fields)))
    assert record["status"] == "failed"
    assert message in step(record, "world")["error"]


def test_served_sandbox_is_refused_when_the_provider_exists(runs, step):
    from agentenv.plugins.host import get_host

    providers = [name for name in get_host().registry("sandbox_providers") if name != "inline"]
    if not providers:
        pytest.skip("no non-inline sandbox provider installed")
    record = runs(task(deploy(sandbox=providers[0])))
    assert "served worlds are not supported by this version of deploy_env" in step(record, "world")["error"]


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
    from agentenv.engine.context import RunContext

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

"""deploy_sandbox inside real tasks, with the `inline` provider when it is installed."""

from __future__ import annotations

import pytest
from agentenv import get_host
from agentenv.contracts import kinds
from agentenv_runtime import TaskError
from agentenv_testing.tasks import temporary_config
from steps_taskkit import task


def sandbox(**fields):
    return {"id": "box", "type": "deploy_sandbox", **fields}


@pytest.fixture
def inline_config(tmp_path):
    if "inline" not in get_host().registry(kinds.SANDBOX_PROVIDERS):
        pytest.skip("no sandbox provider installed")
    config = temporary_config(tmp_path)
    entry = get_host().registry(kinds.SANDBOX_PROVIDERS)["inline"]
    config.values["plugins"][entry.dist] = {
        "inline": {"state_dir": str(tmp_path / "state"), "root": str(tmp_path / "boxes")}
    }
    return config


def test_inline_sandbox_is_created_labelled_and_torn_down(runs, step, tmp_path, inline_config, monkeypatch):
    from agentenv_runtime import RunContext

    made = {}
    original = RunContext.add_resource

    def spy(self, step_id, obj, teardown=None):
        made[step_id] = obj
        return original(self, step_id, obj, teardown)

    monkeypatch.setattr(RunContext, "add_resource", spy)
    record = runs(task(sandbox(spec={"env": {"GREETING": "hi"}, "labels": {"team": "steps"}})), config=inline_config)
    assert record["status"] == "succeeded", record["steps"]
    output = step(record, "box")["output"]
    assert output["provider"] == "inline"  # config sandbox.default
    assert output["labels"] == {"team": "steps", "agentenv.run": record["id"]}
    box = made["box"]
    assert box.id == output["id"]
    assert box.status() != "running"  # torn down with the run


def test_provider_refusing_the_spec_names_the_field(runs, step, inline_config):
    record = runs(task(sandbox(provider="inline", spec={"image": "python:3.11"})), config=inline_config)
    assert record["status"] == "failed"
    error = step(record, "box")["error"]
    assert "field `provider`: no provider in 'inline' could create the sandbox: inline: refused the spec" in error


def test_unknown_provider_fails_naming_the_field(runs, step):
    record = runs(task(sandbox(provider="moon")))
    assert record["status"] == "failed"
    assert "moon: no sandbox provider 'moon' (installed:" in step(record, "box")["error"]


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"spec": {"memory": 512}}, "field `spec`"),
        ({"spec": {"mode": "pod"}}, "field `spec.mode`"),
        ({"spec": {"ports": ["http"]}}, "field `spec.ports.0`"),
        ({"size": "large"}, "field `size`"),
    ],
)
def test_sandbox_preflight_names_step_and_field(runs, fields, where):
    with pytest.raises(TaskError) as caught:
        runs(task(sandbox(**fields)))
    assert "step 'box' (deploy_sandbox)" in str(caught.value)
    assert where in str(caught.value)


def test_a_fallback_chain_passes_over_providers_that_cannot_serve(runs, step, inline_config):
    record = runs(task(sandbox(provider="moon,inline", spec={"labels": {"team": "steps"}})), config=inline_config)
    assert record["status"] == "succeeded", record["steps"]
    output = step(record, "box")["output"]
    assert output["provider"] == "inline"
    assert output["passed_over"][0].startswith("moon: no sandbox provider 'moon'")

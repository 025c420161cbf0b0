"""The `hello` bundle: registered by the plugin, runs offline and passes."""

from __future__ import annotations

import tomllib

from agentenv.engine.bundle import find_bundle
from agentenv.plugins.host import get_host
from steps_taskkit import calls


def hello_bundle():
    return find_bundle("hello", get_host())


def test_the_plugin_registers_the_bundle_and_every_step_type():
    bundle = hello_bundle()
    assert bundle.name == "hello"
    assert set(bundle.task_files()) == {"hello"}
    assert bundle.requirement_problems() == []
    assert bundle.requires["agentenv-steps"] == ">=0.1,<0.2"
    steps = get_host().registry("steps")
    names = {
        "deploy_env",
        "load_artifact",
        "sync_env_clock",
        "register_env_triggers",
        "modify_env_tool_access",
        "snapshot_env",
        "reset_env",
        "deploy_agent",
        "prompt_agent",
        "deploy_sandbox",
    }
    assert names <= set(steps)
    assert {steps[n].dist for n in names} == {"agentenv-steps"}


def test_hello_runs_and_passes(runs, step):
    bundle = hello_bundle()
    record = runs(bundle.task_files()["hello"], bundle_dir=bundle.path, seed=7)
    assert record["status"] == "succeeded", record["steps"]
    assert record["passed"] is True and record["score"] is None
    [post] = calls(runs.trajectory(record), "post_message")
    assert post["error"] is None
    assert post["args"] == {"channel": "#general", "text": "Hello, world!"}
    assert post["virtual_time"] == "2026-12-01T09:00:00+00:00"
    assert (
        step(record, "say_hello")["output"]["response"] == f"I said hello in #general (message {post['result']['id']})."
    )


def test_hello_is_reproducible(runs):
    bundle = hello_bundle()
    path = bundle.task_files()["hello"]
    first = runs(path, bundle_dir=bundle.path, seed=7)
    second = runs(path, bundle_dir=bundle.path, seed=7)
    assert first["trajectory_digest"] == second["trajectory_digest"]


def test_hello_uses_only_its_declared_plugins():
    bundle = hello_bundle()
    task = tomllib.loads(bundle.task_files()["hello"].read_text())
    types = {s["type"] for s in task["steps"]}
    assert types <= {"deploy_env", "sync_env_clock", "deploy_agent", "prompt_agent"}
    assert set(bundle.requires) == {"agentenv-steps", "agentenv-slack", "agentenv-agents"}

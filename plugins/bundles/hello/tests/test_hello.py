"""The `hello` bundle: registered by the plugin, declares what it needs, runs offline and reproducibly."""

from __future__ import annotations

import tomllib
from typing import Any

from agentenv import get_host
from agentenv.contracts import kinds
from agentenv_runtime import find_bundle
from agentenv_testing.tasks import TaskRuns

DECLARED = {"agentenv-runtime", "agentenv-store-local", "agentenv-steps", "agentenv-slack", "agentenv-agents"}


def hello_bundle() -> Any:
    return find_bundle("hello", get_host())


def test_the_plugin_registers_the_bundle_with_its_requirements_met() -> None:
    bundle = hello_bundle()
    assert bundle.name == "hello" and set(bundle.task_files()) == {"hello"}
    assert bundle.requirement_problems() == []
    assert get_host().registry(kinds.BUNDLES)["hello"].dist == "agentenv-hello"


def test_hello_runs_offline(agentenv_runs: TaskRuns) -> None:
    bundle = hello_bundle()
    record = agentenv_runs(bundle.task_files()["hello"], bundle_dir=bundle.path, seed=7)
    assert record["status"] == "succeeded", record["steps"]
    assert record["passed"] is True and record["score"] is None
    [post] = [e for e in agentenv_runs.trajectory(record) if e.get("tool") == "post_message"]
    assert post["error"] is None
    assert post["args"] == {"channel": "#general", "text": "Hello, world!"}
    assert post["virtual_time"] == "2026-12-01T09:00:00+00:00"
    say = next(s for s in record["steps"] if s["id"] == "say_hello")
    assert say["output"]["response"] == f"I said hello in #general (message {post['result']['id']})."


def test_hello_is_reproducible(agentenv_runs: TaskRuns) -> None:
    bundle = hello_bundle()
    path = bundle.task_files()["hello"]
    first = agentenv_runs(path, bundle_dir=bundle.path, seed=7)
    second = agentenv_runs(path, bundle_dir=bundle.path, seed=7)
    assert first["trajectory_digest"] == second["trajectory_digest"]


def test_every_plugin_the_bundle_uses_is_declared_in_both_places() -> None:
    bundle = hello_bundle()
    task = tomllib.loads(bundle.task_files()["hello"].read_text())
    steps = get_host().registry(kinds.STEPS)
    used = {steps[s["type"]].dist for s in task["steps"]}
    used |= {get_host().registry(kinds.ENVS)["slack"].dist, get_host().registry(kinds.AGENT_KINDS)["scripted"].dist}
    assert used <= DECLARED and set(bundle.requires) == DECLARED
    from importlib.metadata import requires

    declared = {r.split(">")[0].split("<")[0].split("=")[0].strip() for r in requires("agentenv-hello") or []}
    assert declared >= DECLARED

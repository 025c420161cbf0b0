"""Leftovers of a crashed run: a process that made a sandbox is SIGKILLed; prune (API and CLI) cleans up. While
that process still runs, its sandbox is a live run's world and prune keeps it, saying why."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import textwrap

import pytest
from agentenv_docker.cli import app
from agentenv_docker.provider import DockerProvider
from typer.testing import CliRunner

pytestmark = pytest.mark.usefixtures("base_image")

CRASHING_RUN = textwrap.dedent(
    """
    import sys, time
    from agentenv.contracts.sandbox import SandboxSpec
    from agentenv_docker.provider import DockerProvider

    labels = {"agentenv.run": sys.argv[1], "agentenv.test": sys.argv[2]}
    sandbox = DockerProvider({}).create(SandboxSpec(labels=labels))
    print(sandbox.id, flush=True)
    time.sleep(600)  # the run is "busy" when it is killed
    """
)


MINE = {"agentenv.test": f"docker-{os.getpid()}"}
"""Every sandbox this test session's runs made: what `prune --all` means, kept to this session's objects, since
the engine may be shared with other sessions (the `provider` fixture prunes the same way)."""


def start_a_run(run: str) -> tuple[subprocess.Popen[str], str]:
    """Start a process that creates a sandbox labelled `run` and keeps running; (the process, the sandbox id)."""
    argv = [sys.executable, "-c", CRASHING_RUN, run, f"docker-{os.getpid()}"]
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        sandbox_id = child.stdout.readline().strip()
    except BaseException:
        kill(child)
        raise
    assert sandbox_id.startswith("agentenv-"), sandbox_id
    return child, sandbox_id


def kill(child: subprocess.Popen[str]) -> None:
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL


def crash_a_run(run: str) -> str:
    """Start a process that creates a sandbox labelled `run`, SIGKILL it, return the sandbox id."""
    child, sandbox_id = start_a_run(run)
    kill(child)
    return sandbox_id


def test_prune_removes_what_a_killed_run_left(provider: DockerProvider) -> None:
    run = f"crash-{secrets.token_hex(5)}"
    sandbox_id = crash_a_run(run)
    left = provider.list({"agentenv.run": run})
    assert [s.id for s in left] == [sandbox_id] and left[0].status() == "running"
    assert provider.client.networks.list(names=[sandbox_id])
    removed = provider.prune_objects({"agentenv.run": run})
    assert removed["containers"] == [sandbox_id] and removed["networks"] == [sandbox_id]
    assert provider.list({"agentenv.run": run}) == []
    assert [n for n in provider.client.networks.list(names=[sandbox_id]) if n.name == sandbox_id] == []
    assert provider.prune_objects({"agentenv.run": run}) == {"containers": [], "networks": [], "volumes": []}


def test_contract_prune_returns_the_sandbox_ids(provider: DockerProvider) -> None:
    """`agentenv sandbox prune` prints what the contract's `prune` returns: sandbox ids, not object kinds."""
    run = f"crash-{secrets.token_hex(5)}"
    sandbox_id = crash_a_run(run)
    assert provider.prune({"agentenv.run": run}) == [sandbox_id]
    assert provider.list({"agentenv.run": run}) == []


def test_cli_lists_and_prunes_a_run(provider: DockerProvider) -> None:
    run = f"crash-{secrets.token_hex(5)}"
    sandbox_id = crash_a_run(run)
    runner = CliRunner()
    listed = runner.invoke(app, ["list", "--run", run, "--json"])
    assert listed.exit_code == 0, listed.output
    assert [row["id"] for row in json.loads(listed.output)] == [sandbox_id]
    refused = runner.invoke(app, ["prune"])
    assert refused.exit_code == 2 and "--run" in refused.output
    pruned = runner.invoke(app, ["prune", "--run", run])
    assert pruned.exit_code == 0, pruned.output
    assert f"removed 1 containers: {sandbox_id}" in pruned.output
    assert provider.list({"agentenv.run": run}) == []


def test_a_live_runs_sandbox_survives_prune_until_its_owner_is_killed(provider: DockerProvider) -> None:
    run = f"live-{secrets.token_hex(5)}"
    child, sandbox_id = start_a_run(run)
    try:
        removed = provider.prune_objects(MINE)
        assert sandbox_id not in removed["containers"] and sandbox_id not in removed["networks"], removed
        why = provider.kept_objects(MINE)[sandbox_id]
        assert why.startswith(f"its owner, process {child.pid}, still runs"), why
        assert provider.prune({"agentenv.run": run}) == []
        pruned = CliRunner().invoke(app, ["prune", "--label", f"agentenv.test=docker-{os.getpid()}"])
        assert pruned.exit_code == 0, pruned.output
        assert f"kept {sandbox_id} (its container and network): its owner, process {child.pid}" in pruned.output
        runtime = subprocess.run(
            [sys.executable, "-m", "agentenv", "sandbox", "prune", "--run", run],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert runtime.returncode == 0, runtime.stderr
        assert f"kept docker sandbox {sandbox_id}: its run is still going" in runtime.stdout, runtime.stdout
        [left] = provider.list({"agentenv.run": run})
        assert left.status() == "running" and left.exec(["echo", "alive"]).stdout == "alive\n"
        assert [n.name for n in provider.client.networks.list(names=[sandbox_id])] == [sandbox_id]
    finally:
        kill(child)
    assert provider.kept_objects(MINE) == {}
    removed = provider.prune_objects(MINE)
    assert sandbox_id in removed["containers"] and sandbox_id in removed["networks"]
    assert provider.list({"agentenv.run": run}) == []

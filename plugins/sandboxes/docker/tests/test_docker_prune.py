"""Leftovers of a crashed run: a process that made a sandbox is SIGKILLed; prune (API and CLI) cleans up."""

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


def crash_a_run(run: str) -> str:
    """Start a process that creates a sandbox labelled `run`, SIGKILL it, return the sandbox id."""
    argv = [sys.executable, "-c", CRASHING_RUN, run, f"docker-{os.getpid()}"]
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        sandbox_id = child.stdout.readline().strip()
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    assert sandbox_id.startswith("agentenv-"), sandbox_id
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

"""A runner killed outright (SIGKILL) cannot tear anything down; `agentenv sandbox prune --run ID` must then
find and remove everything it started: the served world's process, or its container and network."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_served_worlds import alive, serve_processes


def environment(tmp_path: Path) -> dict[str, str]:
    config = tmp_path / "config.toml"
    config.write_text(
        f'[plugins.agentenv-store-local.document]\npath = "{tmp_path / "records.sqlite3"}"\n'
        f'[plugins.agentenv-store-local.object]\nroot = "{tmp_path / "objects"}"\n'
    )
    return {**os.environ, "AGENTENV_CONFIG": str(config), "AGENTENV_STATE_DIR": str(tmp_path / "state")}


def agentenv(env: dict[str, str], *args: str) -> Any:
    done = subprocess.run(
        [sys.executable, "-m", "agentenv", *args], capture_output=True, text=True, env=env, timeout=180
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if "--json" in args else done.stdout


def kill_mid_run(env: dict[str, str], sandbox: str, provider: str, timeout: float) -> str:
    """Start a run, SIGKILL it once its sandbox exists; return the run id read from the sandbox's label."""
    runner = subprocess.Popen(
        [sys.executable, "-m", "agentenv", "run", "support-refund", "--sandbox", sandbox],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            rows = [r for r in agentenv(env, "sandbox", "list", "--json") if r["provider"] == provider and r["run"]]
            if rows:
                runner.send_signal(signal.SIGKILL)
                runner.wait(timeout=10)
                return str(rows[0]["run"])
            assert runner.poll() is None, "the run ended before its sandbox was seen"
            time.sleep(0.1)
        raise AssertionError(f"no {provider} sandbox appeared within {timeout}s")
    finally:
        if runner.poll() is None:
            runner.kill()


def test_sigkill_then_prune_leaves_no_served_world_process(tmp_path: Path) -> None:
    env = environment(tmp_path)
    before = set(serve_processes())
    run_id = kill_mid_run(env, "process", "process", timeout=60)
    deadline = time.monotonic() + 20  # the killed runner's server outlives it: that is what prune is for
    while not (set(serve_processes()) - before) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = set(serve_processes()) - before
    assert left, "expected the killed run's `agentenv serve` to be orphaned"
    removed = agentenv(env, "sandbox", "prune", "--run", run_id, "--json")
    assert len(removed["process"]) == 1
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in left) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(pid) for pid in left)
    assert [r for r in agentenv(env, "sandbox", "list", "--run", run_id, "--json") if r["id"]] == []


def owners(containers: list[str]) -> list[str]:
    """Each container's recorded owner and what that pid is now (why prune may have judged it alive)."""
    found = []
    for container in containers:
        labels = json.loads(subprocess.run(["docker", "inspect", "-f", "{{json .Config.Labels}}", container],
                                           capture_output=True, text=True).stdout or "{}")  # fmt: skip
        pid = labels.get("agentenv.owner.pid", "")
        now = subprocess.run(["ps", "-o", "pid,ppid,stat,lstart,args", "-p", pid or "0"], capture_output=True,
                             text=True).stdout  # fmt: skip
        found.append(f"{container}: owner {pid} started {labels.get('agentenv.owner.started')}; ps: {now!r}")
    return found


def docker_ok() -> bool:
    return subprocess.run(["docker", "info"], capture_output=True).returncode == 0


@pytest.mark.slow
@pytest.mark.skipif(not docker_ok(), reason="no reachable Docker engine (`docker info` failed)")
def test_sigkill_then_prune_leaves_no_container_or_network(tmp_path: Path) -> None:
    env = environment(tmp_path)
    run_id = kill_mid_run(env, "docker", "docker", timeout=600)
    label = f"label=agentenv.run={run_id}"
    containers = subprocess.run(["docker", "ps", "-aq", "--filter", label], capture_output=True, text=True).stdout
    assert containers.strip(), "expected the killed run's container to be left behind"
    removed = agentenv(env, "sandbox", "prune", "--run", run_id, "--json")
    assert removed["docker"], f"prune kept the killed run's containers: {owners(containers.split())}"
    for kind in (["ps", "-aq"], ["network", "ls", "-q"], ["volume", "ls", "-q"]):
        left = subprocess.run(["docker", *kind, "--filter", label], capture_output=True, text=True).stdout
        assert not left.strip(), f"docker {' '.join(kind)} still lists {left.split()}"

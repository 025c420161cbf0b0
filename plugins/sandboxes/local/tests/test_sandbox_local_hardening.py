"""Issue 16: state files holding tokens are owner-only, and prune leaves a live run's sandboxes alone."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

from agentenv.contracts import SandboxSpec
from agentenv_sandbox_local.inline import InlineProvider

OWNER = (
    "import json, os, sys\n"
    "from agentenv.contracts.sandbox import SandboxSpec\n"
    "from agentenv_sandbox_local.inline import InlineProvider\n"
    "box = InlineProvider(json.loads(sys.argv[1])).create(SandboxSpec(labels={'agentenv.run': 'live'}))\n"
    "print(box.id, flush=True)\n"
    "sys.stdin.read()\n"  # the run goes on until the test closes stdin
    "os._exit(0)\n"  # then it dies without teardown
)


def settings(tmp_path: Path) -> dict[str, str]:
    return {"root": str(tmp_path / "work"), "state_dir": str(tmp_path / "state")}


def test_state_files_holding_tokens_are_owner_only(tmp_path: Path) -> None:
    provider = InlineProvider(settings(tmp_path))
    sandbox = provider.create(SandboxSpec(env={"AGENTENV_WORLD_TOKEN_0": "secret-token"}, labels={"r": "1"}))
    try:
        assert "secret-token" in sandbox.state_path.read_text()
        assert stat.S_IMODE(sandbox.state_path.stat().st_mode) == 0o600
        sandbox.start(["true"])  # a rewrite of the state file keeps the mode
        assert stat.S_IMODE(sandbox.state_path.stat().st_mode) == 0o600
        assert stat.S_IMODE((tmp_path / "state").stat().st_mode) == 0o700
    finally:
        sandbox.teardown()


def test_prune_keeps_a_live_runs_sandbox_and_removes_it_once_the_owner_is_gone(tmp_path: Path) -> None:
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, json.dumps(settings(tmp_path))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert owner.stdout is not None
        sandbox_id = owner.stdout.readline().strip()
        provider = InlineProvider(settings(tmp_path))
        assert [s.id for s in provider.list({"agentenv.run": "live"})] == [sandbox_id]
        assert provider.prune({"agentenv.run": "live"}) == []  # the owner still runs: not a leftover
        assert [s.id for s in provider.list({"agentenv.run": "live"})] == [sandbox_id]
    finally:
        assert owner.stdin is not None
        owner.stdin.close()
        owner.wait(30)
    assert provider.prune({"agentenv.run": "live"}) == [sandbox_id]
    assert provider.list({"agentenv.run": "live"}) == []

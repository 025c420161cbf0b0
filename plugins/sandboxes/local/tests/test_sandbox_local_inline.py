"""Behaviour of `inline` beyond the shared kit: process groups, the crash registry, paths, refusals."""

from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentenv.contracts import NetworkPolicy, SandboxSpec, SpecRefused
from agentenv_sandbox_local.inline import InlineProvider, InlineSandbox, default_state_dir
from pydantic import ValidationError

RUN = {"agentenv.run": "run-inline-test"}


def alive(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie waiting to be reaped counts as dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat[stat.rindex(")") + 2] != "Z"


def wait_dead(pid: int, seconds: float = 10.0) -> bool:
    """True once `pid` is gone (a SIGKILL is delivered asynchronously, so allow it a moment)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def wait_file(sandbox: InlineSandbox, path: str, seconds: float = 10.0) -> bytes:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        target = sandbox.workdir / path
        if target.exists() and target.read_bytes().endswith(b"\n"):
            return target.read_bytes()
        time.sleep(0.05)
    raise AssertionError(f"{path} never appeared in {sandbox.workdir}")


@pytest.fixture
def settings(tmp_path: Path) -> dict[str, str]:
    return {"root": str(tmp_path / "work"), "state_dir": str(tmp_path / "state")}


@pytest.fixture
def provider(settings: dict[str, str]) -> InlineProvider:
    return InlineProvider(settings)


@pytest.fixture
def sandbox(provider: InlineProvider) -> Iterator[InlineSandbox]:
    made = provider.create(SandboxSpec(labels=RUN))
    yield made
    made.teardown()


# -- processes ---------------------------------------------------------------------------------------


def test_timeout_kills_the_whole_process_group(sandbox: InlineSandbox) -> None:
    script = "echo $$ > sh.pid; sleep 300 & echo $! > child.pid; echo started; wait"
    result = sandbox.exec(["sh", "-c", script], timeout=1)
    assert result.exit_code == 124
    assert result.stdout == "started\n"
    assert "timed out after 1s" in result.stderr and "killed process group" in result.stderr
    shell, child = (int(sandbox.get_file(name)) for name in ("sh.pid", "child.pid"))
    assert wait_dead(shell) and wait_dead(child), "a process of the timed-out command survived"
    assert sandbox.pids == [], "nothing is left to record once the group is killed"


def test_teardown_kills_started_servers_and_their_children(provider: InlineProvider) -> None:
    sandbox = provider.create(SandboxSpec(labels=RUN))
    server = sandbox.start(["sh", "-c", "sleep 300 & echo $! > kid.pid; exec sleep 301"])
    kid = int(wait_file(sandbox, "kid.pid"))
    left = sandbox.exec(["sh", "-c", "sleep 302 >/dev/null 2>&1 & echo $!"])
    background = int(left.stdout)
    assert sandbox.pids[0] == server and sandbox.pids[1] == os.getpgid(background)
    assert [p["command"][0] for p in sandbox.processes] == ["sh", "sh"]
    assert all(alive(pid) for pid in (server, kid, background))
    sandbox.teardown()
    assert all(wait_dead(pid) for pid in (server, kid, background)), "teardown left a process running"
    assert not sandbox.workdir.exists() and not sandbox.state_path.exists()
    assert sandbox.status() == "missing"
    sandbox.teardown()  # harmless


def test_start_logs_output_and_spec_command_is_started(provider: InlineProvider) -> None:
    sandbox = provider.create(SandboxSpec(labels=RUN, command=["sh", "-c", "echo booted; exec sleep 300"]))
    try:
        [entry] = sandbox.processes
        assert entry["log"].endswith("start-1.log") and alive(entry["pid"])
        assert wait_file(sandbox, ".agentenv/start-1.log") == b"booted\n"
    finally:
        sandbox.teardown()
    assert wait_dead(entry["pid"])


def test_exec_details(sandbox: InlineSandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = sandbox.exec(["agentenv-no-such-command-xyz"])
    assert missing.exit_code == 127 and "agentenv-no-such-command-xyz" in missing.stderr
    assert sandbox.exec(["sh", "-c", "kill -TERM $$"]).exit_code == 128 + 15
    assert sandbox.exec(["pwd"]).stdout.strip() == str(sandbox.workdir.resolve())
    monkeypatch.setenv("AGENTENV_INLINE_HOST_VAR", "from-host")
    out = sandbox.exec(["sh", "-c", 'printf "%s|%s" "$HOME" "$AGENTENV_INLINE_HOST_VAR"']).stdout
    assert out == f"{sandbox.workdir}|from-host"
    with pytest.raises(ValueError, match="non-empty list"):
        sandbox.exec([])


def test_spec_env_overrides_the_host(provider: InlineProvider, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTENV_INLINE_HOST_VAR", "from-host")
    sandbox = provider.create(SandboxSpec(labels=RUN, env={"AGENTENV_INLINE_HOST_VAR": "from-spec"}))
    try:
        assert sandbox.exec(["sh", "-c", 'printf %s "$AGENTENV_INLINE_HOST_VAR"']).stdout == "from-spec"
    finally:
        sandbox.teardown()


# -- the registry: a crashed run's leftovers ---------------------------------------------------------


def test_dropped_sandbox_is_found_by_a_new_provider_and_pruned(settings: dict[str, str]) -> None:
    first = InlineProvider(settings)
    sandbox = first.create(SandboxSpec(labels={**RUN, "role": "env"}))
    other = first.create(SandboxSpec(labels={"agentenv.run": "someone-else"}))
    sandbox_id, workdir = sandbox.id, sandbox.workdir
    server = sandbox.start(["sleep", "300"])
    del sandbox, first  # the run "crashes": no teardown
    gc.collect()

    fresh = InlineProvider(settings)
    [found] = fresh.list(RUN)
    assert isinstance(found, InlineSandbox)
    assert (found.id, found.workdir, found.pids, found.labels["role"]) == (sandbox_id, workdir, [server], "env")
    assert found.status() == "running" and alive(server)
    assert [s.id for s in fresh.list({"agentenv.run": "someone-else"})] == [other.id]

    assert fresh.prune(RUN) == [sandbox_id]
    assert wait_dead(server) and not workdir.exists()
    assert fresh.list(RUN) == [] and fresh.prune(RUN) == []
    assert other.status() == "running", "prune must leave other runs alone"
    other.teardown()


def test_sandbox_of_a_crashed_process_is_pruned(settings: dict[str, str]) -> None:
    code = (
        "import json, os, sys\n"
        "from agentenv.contracts.sandbox import SandboxSpec\n"
        "from agentenv_sandbox_local.inline import InlineProvider\n"
        "box = InlineProvider(json.loads(sys.argv[1])).create(SandboxSpec(labels={'agentenv.run': 'crashed'}))\n"
        "pid = box.start(['sleep', '300'])\n"
        "print(box.id, pid, flush=True)\n"
        "os._exit(3)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, json.dumps(settings)], capture_output=True, text=True)
    assert proc.returncode == 3, proc.stderr
    sandbox_id, pid = proc.stdout.split()
    provider = InlineProvider(settings)
    [found] = provider.list({"agentenv.run": "crashed"})
    assert isinstance(found, InlineSandbox)
    assert found.id == sandbox_id and found.pids == [int(pid)] and alive(int(pid))
    assert provider.prune({"agentenv.run": "crashed"}) == [sandbox_id]
    assert wait_dead(int(pid)) and not found.workdir.exists()


def test_prune_spares_a_reused_pid(provider: InlineProvider) -> None:
    sandbox = provider.create(SandboxSpec(labels=RUN))
    bystander = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        state = json.loads(sandbox.state_path.read_text())
        state["processes"] = [{"pid": bystander.pid, "started": 1, "command": ["gone"]}]  # not its start time
        sandbox.state_path.write_text(json.dumps(state))
        if not Path("/proc").is_dir():
            pytest.skip("start times come from /proc")
        assert provider.prune(RUN) == [sandbox.id]
        assert alive(bystander.pid), "a pid recorded long ago and reused since must not be killed"
    finally:
        bystander.kill()
        bystander.wait()


def test_list_skips_unreadable_state_files(provider: InlineProvider, sandbox: InlineSandbox) -> None:
    (provider.state_dir / "inline-garbage.json").write_text("{not json")
    (provider.state_dir / "inline-other.json").write_text(json.dumps({"provider": "process", "labels": RUN}))
    assert [s.id for s in provider.list(RUN)] == [sandbox.id]
    assert [s.id for s in provider.list({})] == [sandbox.id]


# -- ttl ---------------------------------------------------------------------------------------------


def test_ttl_records_a_deadline_and_expired_sandboxes_stay_listed(provider: InlineProvider) -> None:
    long = provider.create(SandboxSpec(labels=RUN, ttl_seconds=3600))
    assert long.deadline == long.created + 3600 and not long.expired and long.status() == "running"
    expired = provider.create(SandboxSpec(labels=RUN, ttl_seconds=0))
    assert expired.expired and expired.status() == "stopped"
    listed = {s.id: s for s in provider.list(RUN)}
    assert listed.keys() == {long.id, expired.id}
    assert listed[expired.id].status() == "stopped" and listed[long.id].status() == "running"
    with pytest.raises(RuntimeError, match="ttl_seconds=0"):
        expired.exec(["true"])
    assert sorted(provider.prune(RUN)) == sorted([long.id, expired.id])
    assert not expired.workdir.exists() and long.status() == "missing"


def test_no_command_runs_past_the_time_to_live(provider: InlineProvider) -> None:
    short = provider.create(SandboxSpec(labels=RUN, ttl_seconds=2))
    done = short.exec(["sleep", "30"], timeout=60)  # asks for a minute; the sandbox has two seconds left
    assert done.exit_code == 124 and "timed out" in done.stderr
    short.teardown()


# -- files -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["../outside", "a/../../outside", "/../outside", "..", "a/..", "x/../y"])
def test_path_escape_is_refused(sandbox: InlineSandbox, path: str) -> None:
    with pytest.raises(ValueError, match="escapes") as put:
        sandbox.put_file(path, b"x")
    assert repr(path) in str(put.value)
    with pytest.raises(ValueError, match="escapes"):
        sandbox.get_file(path)
    assert not (sandbox.workdir.parent / "outside").exists()


def test_absolute_paths_map_into_the_work_folder(sandbox: InlineSandbox) -> None:
    sandbox.put_file("/etc/agentenv-inline-test.conf", b"inside")
    assert (sandbox.workdir / "etc" / "agentenv-inline-test.conf").read_bytes() == b"inside"
    assert sandbox.get_file("etc/agentenv-inline-test.conf") == b"inside"
    assert not Path("/etc/agentenv-inline-test.conf").exists()
    for bad in ("", "/", "."):
        with pytest.raises(ValueError, match="work folder itself"):
            sandbox.put_file(bad, b"x")


def test_symlink_out_of_the_work_folder_is_refused(sandbox: InlineSandbox, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    assert sandbox.exec(["ln", "-s", str(outside), "link"]).exit_code == 0
    with pytest.raises(ValueError, match="symbolic link"):
        sandbox.put_file("link/secret.txt", b"x")
    assert list(outside.iterdir()) == []


def test_missing_file_and_dead_sandbox(sandbox: InlineSandbox) -> None:
    with pytest.raises(FileNotFoundError):
        sandbox.get_file("nope.txt")
    sandbox.teardown()
    with pytest.raises(RuntimeError, match="torn down"):
        sandbox.exec(["true"])
    with pytest.raises(RuntimeError, match="torn down"):
        sandbox.put_file("a.txt", b"")


def test_teardown_removes_read_only_folders(sandbox: InlineSandbox) -> None:
    script = "mkdir -p ro/sub && echo x > ro/sub/f && chmod 500 ro/sub ro"
    assert sandbox.exec(["sh", "-c", script]).exit_code == 0
    sandbox.teardown()
    assert not sandbox.workdir.exists() and sandbox.status() == "missing"


def test_folder_removed_behind_its_back_is_missing(sandbox: InlineSandbox) -> None:
    shutil.rmtree(sandbox.workdir)
    assert sandbox.status() == "missing"
    sandbox.teardown()
    assert not sandbox.state_path.exists()


# -- refusals and settings ---------------------------------------------------------------------------

REFUSED = [
    ({"mode": "vm"}, "mode='vm'"),
    ({"image": "python:3.11-slim"}, "image='python:3.11-slim'"),
    ({"network": NetworkPolicy(mode="allowlist", allow=["api.example.com"])}, "network.mode='allowlist'"),
    ({"network": NetworkPolicy(mode="allowlist")}, "network.mode='allowlist'"),
    ({"cpu": 0.5}, "cpu=0.5"),
    ({"memory_mb": 512}, "memory_mb=512"),
    ({"disk_mb": 2048}, "disk_mb=2048"),
]


@pytest.mark.parametrize(("fields", "named"), REFUSED, ids=[named for _, named in REFUSED])
def test_each_refused_field_is_named(provider: InlineProvider, fields: dict[str, Any], named: str) -> None:
    with pytest.raises(SpecRefused) as refused:
        provider.create(SandboxSpec(labels=RUN, **fields))
    assert named in str(refused.value)
    assert provider.list({}) == []
    root = provider.root
    assert root is not None and (not root.exists() or not any(root.iterdir())), "nothing may be left"


def test_every_refused_field_is_named_at_once(provider: InlineProvider) -> None:
    spec = SandboxSpec(mode="vm", image="img:1", cpu=1, network=NetworkPolicy(mode="allowlist"))
    with pytest.raises(SpecRefused) as refused:
        provider.create(spec)
    for named in ("mode='vm'", "image='img:1'", "network.mode", "cpu=1.0", "ignore_limits"):
        assert named in str(refused.value)


def test_ignore_limits_accepts_unenforced_limits(settings: dict[str, str]) -> None:
    provider = InlineProvider({**settings, "ignore_limits": True})
    sandbox = provider.create(SandboxSpec(labels=RUN, cpu=2, memory_mb=512, disk_mb=1024))
    assert sandbox.exec(["true"]).exit_code == 0
    sandbox.teardown()
    with pytest.raises(SpecRefused, match="mode='vm'"):
        provider.create(SandboxSpec(mode="vm"))


def test_settings_and_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValidationError, match="bogus"):
        InlineProvider({"bogus": 1})
    assert default_state_dir({"AGENTENV_STATE_DIR": str(tmp_path)}) == tmp_path / "inline-sandboxes"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_state_dir({}) == tmp_path / "home" / ".cache" / "agentenv" / "inline-sandboxes"
    env_provider = InlineProvider(environ={"AGENTENV_STATE_DIR": str(tmp_path / "s")})
    assert env_provider.state_dir == tmp_path / "s" / "inline-sandboxes"
    assert env_provider.available() == (True, "")
    # root=None: the work folder goes to the system temp folder
    sandbox = InlineProvider({"state_dir": str(tmp_path / "state")}).create(SandboxSpec(labels=RUN))
    try:
        assert sandbox.workdir.parent == Path(tempfile.gettempdir())
        assert sandbox.workdir.name.startswith(f"agentenv-{sandbox.id}-")
    finally:
        sandbox.teardown()

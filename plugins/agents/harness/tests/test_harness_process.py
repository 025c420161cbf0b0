"""The process tree runner: a timeout or a cancellation leaves no process behind, even one that left the group."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from agentenv_harness.api import HarnessSettings, kill_tree, run_tree

# The shell starts a grandchild in a new session (out of the harness's process group) and records its pid.
ESCAPER = "setsid sleep 300 & echo $! > escaped.pid; sleep 300"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _escaped(tmp_path: Path) -> int:
    return int((tmp_path / "escaped.pid").read_text())


def test_timeout_kills_the_group_and_an_escaped_grandchild(tmp_path: Path) -> None:
    finished = asyncio.run(run_tree(["sh", "-c", ESCAPER], env={"PATH": os.environ["PATH"]}, cwd=tmp_path, timeout=1))
    assert finished.timed_out and finished.returncode is None
    assert not _alive(_escaped(tmp_path))


def test_cancellation_kills_the_tree(tmp_path: Path) -> None:
    async def cancel() -> None:
        task = asyncio.create_task(
            run_tree(["sh", "-c", ESCAPER], env={"PATH": os.environ["PATH"]}, cwd=tmp_path, timeout=60)
        )
        while not (tmp_path / "escaped.pid").exists() or not (tmp_path / "escaped.pid").read_text().strip():
            await asyncio.sleep(0.02)
        assert _alive(_escaped(tmp_path))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel())
    assert not _alive(_escaped(tmp_path))


@pytest.mark.parametrize("delay", [0, 0.001, 0.005, 0.02, 0.05])
def test_a_cancellation_while_starting_leaves_nothing_and_returns(tmp_path: Path, delay: float) -> None:
    """Cancelled while asyncio still connects the pipes: the shell may already have started its children, which
    hold the pipes; the tree is killed before the cancellation goes on (asyncio alone would wait for them)."""

    async def cancel_at_once() -> None:
        task = asyncio.create_task(
            run_tree(["sh", "-c", ESCAPER], env={"PATH": os.environ["PATH"]}, cwd=tmp_path, timeout=60)
        )
        await asyncio.sleep(delay)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 30)

    asyncio.run(cancel_at_once())
    marker = tmp_path / "escaped.pid"
    if marker.exists() and marker.read_text().strip():
        assert not _alive(_escaped(tmp_path))


def test_a_normal_exit_reports_status_and_output(tmp_path: Path) -> None:
    finished = asyncio.run(run_tree(["sh", "-c", "echo out; echo err >&2; exit 3"], env={}, cwd=tmp_path, timeout=10))
    assert (finished.returncode, finished.stdout, finished.stderr, finished.timed_out) == (3, "out\n", "err\n", False)


def test_stdin_is_closed(tmp_path: Path) -> None:
    finished = asyncio.run(run_tree(["sh", "-c", "cat; echo done"], env={}, cwd=tmp_path, timeout=10))
    assert finished.stdout == "done\n"


def test_own_tools_run_only_in_a_sandbox() -> None:
    with pytest.raises(ValueError, match=r"tools \['shell', 'web'\]: .*only inside a sandbox; set sandbox = \"docker"):
        HarnessSettings(tools=["mcp", "shell", "web"])
    with pytest.raises(ValueError, match=r"tools \['edit'\]"):
        HarnessSettings(tools=["edit"], sandbox="process")
    assert HarnessSettings(tools=["shell"], sandbox="docker").tools == ["shell"]
    assert HarnessSettings(sandbox="inline").sandbox == "process"  # `--sandbox inline`: the CLI is a process anyway
    assert HarnessSettings().tools == ["mcp"]


def test_a_watch_stops_the_tree_and_says_why(tmp_path: Path) -> None:
    seen: list[str] = []

    def watch(line: str) -> str | None:
        seen.append(line)
        return "seen enough" if line.startswith("2") else None

    command = "for i in 1 2 3; do echo $i; sleep 1; done; sleep 300"
    finished = asyncio.run(run_tree(["sh", "-c", command], env={}, cwd=tmp_path, timeout=60, watch=watch))
    assert (finished.stopped, finished.returncode, finished.timed_out) == ("seen enough", None, False)
    assert seen == ["1\n", "2\n"] and finished.stdout == "1\n2\n"


@pytest.mark.parametrize("attempt", range(5))
def test_kill_tree_catches_children_that_leave_the_group_while_it_kills(tmp_path: Path, attempt: int) -> None:
    """A shell forking group-leaving children as fast as it can: a child born between one look at the tree and the
    kill would survive the group kill, orphaned; the tree is frozen and looked at again until no one new appears.
    (The race is one of timing, so it is tried several times: a single look at the tree loses it about one in three.)"""
    shell = subprocess.Popen(
        ["sh", "-c", "while :; do setsid sleep 300 & echo $! >> children; done"], cwd=tmp_path, start_new_session=True
    )
    while len(_children(tmp_path)) < 20:
        time.sleep(0.01)
    kill_tree(shell.pid)
    shell.wait(10)
    deadline = time.monotonic() + 5  # SIGKILL is delivered asynchronously: give the dying a moment
    while (survivors := [pid for pid in _children(tmp_path) if _alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    assert survivors == []


def _children(tmp_path: Path) -> list[int]:
    listing = tmp_path / "children"
    return [int(line) for line in listing.read_text().split()] if listing.exists() else []

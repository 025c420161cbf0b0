"""Run a harness binary as its own process tree, and leave nothing behind.

The binary starts in a new session (its own process group), with stdin closed: both CLIs wait for stdin
otherwise. When it finishes, times out, or the run is cancelled or interrupted (Ctrl-C arrives as
`KeyboardInterrupt` or task cancellation), every process of the tree is killed: the group, and any
descendant that left the group (found through /proc), so a shell the harness spawned cannot outlive it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

GRACE_SECONDS = 2.0


@dataclass(frozen=True)
class Finished:
    """How a harness process ended: exit status (None when killed on timeout), output, duration."""

    returncode: int | None
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False


def descendants(pid: int) -> list[int]:
    """Every live descendant of `pid`, read from /proc (empty where there is no /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: list[int] = []
    pending = [pid]
    while pending:
        for child in children.get(pending.pop(), []):
            found.append(child)
            pending.append(child)
    return found


def kill_tree(pid: int) -> None:
    """SIGKILL the process group led by `pid` and every descendant of `pid`, wherever it moved to."""
    members = [pid, *descendants(pid)]
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    for member in members:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(member, signal.SIGKILL)


async def run_tree(argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, timeout: float) -> Finished:
    """Run `argv` to completion or `timeout` seconds; the tree is gone when this returns or raises."""
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=str(cwd),
        env=dict(env),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        try:
            stdout, stderr = await asyncio.wait_for(process.communicate(), timeout)
        except TimeoutError:
            kill_tree(process.pid)
            stdout, stderr = await process.communicate()
            return Finished(
                None,
                stdout.decode(errors="replace"),
                stderr.decode(errors="replace"),
                time.monotonic() - started,
                timed_out=True,
            )
        return Finished(
            process.returncode,
            stdout.decode(errors="replace"),
            stderr.decode(errors="replace"),
            time.monotonic() - started,
        )
    finally:
        kill_tree(process.pid)  # also after a normal exit: a child the harness left running
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            with contextlib.suppress(Exception):
                await asyncio.shield(process.wait())

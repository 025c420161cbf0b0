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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

LINE_LIMIT = 64 * 1024 * 1024
"""Longest stdout line read (Claude Code's stream-json puts a whole tool result on one line)."""


Watch = Callable[[str], str | None]
"""Called with each line the CLI prints on stdout, as it comes; a returned reason stops the CLI there."""


@dataclass(frozen=True)
class Finished:
    """How a harness process ended: exit status (None when killed), output, duration, and why it was stopped."""

    returncode: int | None
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    stopped: str | None = None
    """The reason a `Watch` gave for stopping the CLI early (it was then killed, like on a timeout)."""


def _stat_fields(entry: Path) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state, parent pid, …), or None once it is gone."""
    try:
        return (entry / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def descendants(pid: int) -> list[int]:
    """Every live descendant of `pid`, read from /proc (empty where there is no /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        fields = _stat_fields(entry)
        if fields is not None:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: list[int] = []
    pending = [pid]
    while pending:
        for child in children.get(pending.pop(), []):
            found.append(child)
            pending.append(child)
    return found


def _state(pid: int) -> str | None:
    """The one-letter state of `pid` (`T` stopped, `Z` zombie), or None once it is gone."""
    fields = _stat_fields(Path(f"/proc/{pid}"))
    return fields[0] if fields else None


def _signal(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signum)


def _stop_all(members: set[int], patience: float = 1.0) -> None:
    """SIGSTOP `members` and wait (at most `patience` seconds) until each really is stopped or gone: a signal is
    delivered asynchronously, and a process still finishing a fork would add a child after the next look."""
    for member in members:
        _signal(member, signal.SIGSTOP)
    deadline = time.monotonic() + patience
    pending = set(members)
    while pending and time.monotonic() < deadline:
        pending = {member for member in pending if _state(member) not in (None, "T", "t", "Z", "X")}
        if pending:
            time.sleep(0.001)


def kill_tree(pid: int) -> None:
    """SIGKILL the process group led by `pid` and every descendant of `pid`, wherever it moved to.

    The tree is frozen first: every member is stopped, then looked for again, until a look finds no one new. Killing
    from a single look races with a fork: a child born just after the look that then leaves the group (`setsid`)
    survives the group kill, orphaned, and keeps the pipes open, so waiting for the harness never ends."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGSTOP)
    members: set[int] = set()
    while True:
        found = {pid, *descendants(pid)}
        if found <= members:
            break
        _stop_all(found - members)
        members |= found
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    for member in members:
        _signal(member, signal.SIGKILL)


async def run_tree(
    argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, timeout: float, watch: Watch | None = None
) -> Finished:
    """Run `argv` to completion, `timeout` seconds, or until `watch` says stop; the tree is gone when this
    returns or raises."""
    started = time.monotonic()
    creating = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv,
            cwd=str(cwd),
            env=dict(env),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            limit=LINE_LIMIT,
        )
    )
    try:
        process = await asyncio.shield(creating)
    except asyncio.CancelledError:
        # Cancelled while asyncio was still connecting the pipes: the process already runs and may have started
        # children. Left alone, asyncio would kill only the process and then wait forever for pipes its
        # children hold; so let the creation finish and kill the whole tree first.
        process = await creating
        kill_tree(process.pid)
        with contextlib.suppress(Exception):
            await process.wait()
        raise
    assert process.stdout is not None and process.stderr is not None
    lines: list[str] = []
    stopped: list[str] = []

    async def read_stdout(stream: asyncio.StreamReader) -> None:
        while raw := await stream.readline():
            line = raw.decode(errors="replace")
            lines.append(line)
            reason = watch(line) if watch is not None and not stopped else None
            if reason:
                stopped.append(reason)
                kill_tree(process.pid)

    everything = asyncio.gather(read_stdout(process.stdout), process.stderr.read(), process.wait())
    timed_out = False
    try:
        try:
            _, stderr, _ = await asyncio.wait_for(asyncio.shield(everything), timeout)
        except TimeoutError:
            timed_out = True
            kill_tree(process.pid)
            _, stderr, _ = await everything
        return Finished(
            None if timed_out or stopped else process.returncode,
            "".join(lines),
            stderr.decode(errors="replace"),
            time.monotonic() - started,
            timed_out=timed_out,
            stopped=stopped[0] if stopped else None,
        )
    finally:
        kill_tree(process.pid)  # also after a normal exit: a child the harness left running
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            with contextlib.suppress(Exception):
                await asyncio.shield(process.wait())
        if not everything.done():
            everything.cancel()

"""Process groups: every command runs as the leader of its own group, so one signal reaches all it spawned.

A group is recorded by its leader's pid together with the leader's start time (Linux `/proc`). Before a
recorded group is killed — possibly by another process, long after the run that started it crashed — the
start time tells whether that pid now belongs to an unrelated process, which is then left alone.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path


def start_time(pid: int) -> int | None:
    """When process `pid` started (clock ticks since boot), or None when unknown (gone, or no `/proc`)."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    # Field 2 (the command name) may hold spaces and parentheses; the fields after its last ")" do not.
    fields = raw[raw.rindex(")") + 2 :].split()
    try:
        return int(fields[19])  # field 22 of proc(5); this list starts at field 3
    except (IndexError, ValueError):
        return None


def group_alive(pgid: int) -> bool:
    """Whether any process of group `pgid` is left (zombies count until reaped)."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def still_ours(pgid: int, started: int | None) -> bool:
    """Whether recorded group `pgid` may be signalled: its leader's pid was not reused by another process.

    Linux never hands out a pid that is still some group's id, so while any member of our group lives
    the pid is either our leader (same start time) or unused. A different start time means our group
    is gone and the number was reused.
    """
    if started is None:
        return True
    now = start_time(pgid)
    return now is None or now == started


def kill_group(pgid: int, started: int | None) -> bool:
    """SIGKILL every process of recorded group `pgid`; False when there was nothing (of ours) to kill."""
    if not still_ours(pgid, started):
        return False
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def process_alive(pid: int, started: int | None) -> bool:
    """Whether process `pid` (recorded with start time `started`) still runs: not gone, not reused, not a zombie."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        try:
            os.kill(pid, 0)  # no /proc (macOS): all we can tell is whether the pid exists
        except (ProcessLookupError, PermissionError):
            return False
        return True
    if raw[raw.rindex(")") + 2 :].split()[0] == "Z":
        return False
    return started is None or start_time(pid) == started

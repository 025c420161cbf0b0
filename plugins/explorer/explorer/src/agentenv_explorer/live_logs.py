"""Live events of runs this explorer did not start, from the project's live folder (`agentenv_runtime.live`).

While the explorer serves, it keeps a marker in `.agentenv/live/`; runs started in the project meanwhile (another
terminal, a batch) write their event log there, one file per process. The stream of such a run replays its file
from the run's `run_started` line and follows it until its `run_finished`, keeping only the run's own lines: one
process may run several runs at once, and a tool call answered on a served world's thread names no run, so it is
kept only while this run is the only one open in that file.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

POLL_S = 0.1
STALE_S = 24 * 3600.0
"""A log whose process is gone is removed when the explorer starts, once it is this old."""


async def follow_log(path: Path, alive: Callable[[], bool]) -> AsyncIterator[dict[str, Any]]:
    """Every event of a JSON-lines log from its start, then as lines are appended, until the writer is gone and
    nothing is left to read. A line still being written is read only once it is whole."""
    with path.open("rb") as source:
        partial = b""
        while True:
            chunk = source.readline()
            if chunk:
                partial += chunk
                if partial.endswith(b"\n"):
                    line, partial = partial, b""
                    yield json.loads(line)
                continue
            if not alive():
                rest = source.read()
                if not rest:
                    return
                partial += rest
                continue
            await asyncio.sleep(POLL_S)


def run_of(event: dict[str, Any]) -> str | None:
    """The run an event line names (tool calls answered off the run's own thread name none)."""
    run = event.get("run")
    if isinstance(run, dict):
        return str(run.get("id"))
    named = event.get("run_id")
    return str(named) if named else None


class LiveLogs:
    """The project's live folder, as the explorer serving it sees it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.marker: Path | None = None

    def publish(self) -> None:
        """Mark the folder as served by this process, and drop old logs of processes that are gone."""
        from agentenv_runtime import LIVE_MARKER, pid_alive

        self.folder.mkdir(parents=True, exist_ok=True)
        self.marker = self.folder / LIVE_MARKER.format(pid=os.getpid())
        self.marker.write_text(json.dumps({"pid": os.getpid(), "started": time.time()}), encoding="utf-8")
        for log in self.folder.glob("*.jsonl"):
            with contextlib.suppress(ValueError, OSError):
                if not pid_alive(int(log.stem)) and time.time() - log.stat().st_mtime > STALE_S:
                    log.unlink()

    def close(self) -> None:
        """Remove this explorer's marker (other explorers of the project keep theirs)."""
        if self.marker is not None:
            self.marker.unlink(missing_ok=True)
            self.marker = None

    def find(self, run_id: str) -> Path | None:
        """The log whose process started `run_id` (its id appears on a `run_started` line), or None."""
        needle = run_id.encode()
        for log in sorted(self.folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True):
            with contextlib.suppress(OSError), log.open("rb") as source:
                for line in source:
                    if needle in line and b'"run_started"' in line:
                        return log
        return None

    async def follow(self, log: Path, run_id: str) -> AsyncIterator[dict[str, Any]]:
        """The run's own events from its `run_started`, until its `run_finished` or its process ends."""
        from agentenv_runtime import pid_alive

        pid = int(log.stem)
        open_runs: set[str] = set()
        started = False
        async for event in follow_log(log, lambda: pid_alive(pid)):
            named = run_of(event)
            kind = event.get("event")
            if kind == "run_started" and named:
                open_runs.add(named)
                started = started or named == run_id
            if started and (named == run_id or (named is None and open_runs == {run_id})):
                yield event
            if kind == "run_finished" and named:
                open_runs.discard(named)
                if named == run_id:
                    return
        yield {"event": "process_exited", "pid": pid}

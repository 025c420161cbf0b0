"""The run event log: run, step and tool-call events as JSON lines, for tracing a run while it happens.

`AGENTENV_EVENTS=/path/events.jsonl agentenv run …` appends one line per event (`tail -f` it, or feed a
dashboard). The observer hooks below are registered only when the variable is set (see `plugin.py`; `live.py`
sets it while `agentenv up` serves the project), so a run without it pays nothing per tool call. Each line is
written and flushed whole, with the process id, so worker processes may share one file.
"""

from __future__ import annotations

import json
import os
import time
from contextvars import ContextVar
from typing import Any

from agentenv.hookspecs import hookimpl

EVENTS_VAR = "AGENTENV_EVENTS"
RUN_ID: ContextVar[str | None] = ContextVar("agentenv_run_id", default=None)
"""The run whose steps are executing (set by the runner), so a tool call's line names its run: one process may run
several at once. A call answered on another thread (a served world) has none."""


def write_event(kind: str, **fields: Any) -> None:
    path = os.environ.get(EVENTS_VAR)
    if not path:
        return
    line = json.dumps({"event": kind, "time": time.time(), "pid": os.getpid(), **fields}, default=str)
    with open(path, "a", encoding="utf-8") as sink:  # one write per line: lines from processes never interleave
        sink.write(line + "\n")


@hookimpl
def agentenv_run_started(run: dict[str, Any]) -> None:
    write_event("run_started", run=run)


@hookimpl
def agentenv_run_finished(run: dict[str, Any]) -> None:
    write_event("run_finished", run=run)


@hookimpl
def agentenv_step_started(run_id: str, step: dict[str, Any]) -> None:
    write_event("step_started", run_id=run_id, step=step)


@hookimpl
def agentenv_step_finished(run_id: str, step: dict[str, Any]) -> None:
    write_event("step_finished", run_id=run_id, step=step)


@hookimpl
def agentenv_tool_called(event: dict[str, Any]) -> None:
    write_event("tool_called", call=event, run_id=RUN_ID.get())

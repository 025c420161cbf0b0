"""Live event logs: while `agentenv up` serves a project, every run in that project writes its event log there.

The explorer streams the events of the runs it starts from their `AGENTENV_EVENTS` file. A run started anywhere
else (another terminal, a batch, a CI job) is as interesting to watch, so `agentenv up` leaves a marker in the
project's `.agentenv/live/` folder; a process of the same project that starts running tasks while a marker names
a live explorer writes the run event log (`events.py`) to `.agentenv/live/PID.jsonl`. Without a marker nothing is
written and no observer is registered: a runner pays one walk up the folders for the config and one glob.

The project is the folder holding `.agentenv/config.toml` (found as the config is: `AGENTENV_CONFIG`, else walking
up), or the working directory when there is no config file: the same folder the local stores' relative paths
are taken against (`agentenv_store_local.api.project_root`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

LIVE_FOLDER = Path(".agentenv") / "live"
LIVE_MARKER = "explorer-{pid}.json"
"""The file each `agentenv up` keeps in the live folder while it serves (one per explorer: several may serve one
project, and one stopping must not blind the others)."""


def live_folder(cwd: Path | None = None, environ: Mapping[str, str] | None = None) -> Path:
    from agentenv_store_local.api import project_root  # the stores' project is the live log's

    return project_root(cwd, environ) / LIVE_FOLDER


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists (signal 0 checks without sending anything)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, owned by someone else
    return True


def explorer_pid(folder: Path) -> int | None:
    """The pid of an explorer serving this live folder, or None (no marker, or none whose process is alive)."""
    try:
        markers = list(folder.glob(LIVE_MARKER.format(pid="*")))
    except OSError:
        return None
    for marker in markers:
        pid = marker.stem.removeprefix("explorer-")
        if pid.isdigit() and int(pid) > 0 and pid_alive(int(pid)):
            return int(pid)
    return None


def join_live_log(host: Any) -> bool:
    """Write this process's run event log into the project's live folder when an explorer serves it (True then).

    Called when a process starts running tasks, not at plugin import: finding the project costs a config walk
    (and `pathlib`), which `agentenv --help` must not pay. An `AGENTENV_EVENTS` already set wins (the explorer's
    own launches, a user's `tail -f`, a worker of a batch): the runtime's plugin registered the observers then."""
    from agentenv_runtime import events

    if os.environ.get(events.EVENTS_VAR):
        return True
    folder = live_folder()
    pid = explorer_pid(folder)
    if pid is None or pid == os.getpid():
        return False
    os.environ[events.EVENTS_VAR] = str(folder / f"{os.getpid()}.jsonl")  # inherited by worker processes
    if not host.pm.is_registered(events):
        host.pm.register(events)
    return True

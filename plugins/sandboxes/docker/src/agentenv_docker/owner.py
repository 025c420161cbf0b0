"""Which process a docker sandbox belongs to, so prune removes a crashed run's leftovers but not a live run's world.

Labels are the docker provider's only record, so the creating process is written there: `agentenv.owner.host`,
`agentenv.owner.pid` and `agentenv.owner.started` (the pid's start time, so a reused pid is not taken for the
owner). Whether that process still runs is asked the way the inline and process sandboxes ask it
(`agentenv_sandbox_local.api`). A pid means something only on the host (and in the pid namespace, which the
host name stands for) that recorded it: an object made elsewhere is kept, since nothing here can tell.
"""

from __future__ import annotations

import os
import socket

from agentenv_sandbox_local.api import process_alive, start_time

from agentenv_docker.settings import MANAGED, SANDBOX

OWNER_HOST = "agentenv.owner.host"
OWNER_PID = "agentenv.owner.pid"
OWNER_STARTED = "agentenv.owner.started"


def owner_labels() -> dict[str, str]:
    """This process as the owner of what it creates now."""
    pid = os.getpid()
    started = start_time(pid)
    labels = {OWNER_HOST: socket.gethostname(), OWNER_PID: str(pid)}
    if started is not None:
        labels[OWNER_STARTED] = str(started)
    return labels


def sandbox_labels(name: str) -> dict[str, str]:
    """The labels that make `name` one of this plugin's sandboxes (a container and the network of it): managed,
    named, owned by this process. `prune` then finds them, and removes them once this process is gone."""
    return {MANAGED: "true", SANDBOX: name, **owner_labels()}


def live_owner(labels: dict[str, str]) -> str | None:
    """Why prune must leave an object alone (its owner still runs, or runs where this host cannot look); None
    when it may go: no owner recorded (made before owners were), the owner gone, or this very process."""
    pid, host = labels.get(OWNER_PID, ""), labels.get(OWNER_HOST)
    if not pid.isdigit():
        return None
    if host is not None and host != socket.gethostname():
        return f"made by process {pid} on host {host!r}, which cannot be checked from here; prune it there"
    if int(pid) == os.getpid():
        return None
    started = labels.get(OWNER_STARTED, "")
    if not process_alive(int(pid), int(started) if started.isdigit() else None):
        return None
    return f"its owner, process {pid}, still runs (a live run's sandbox); stop that run first"

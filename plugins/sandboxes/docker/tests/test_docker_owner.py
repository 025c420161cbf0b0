"""Whose sandbox it is: the owner labels a docker sandbox gets, and when prune must leave it alone (no engine)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from agentenv_docker.owner import OWNER_HOST, OWNER_PID, OWNER_STARTED, live_owner, owner_labels
from agentenv_sandbox_local.api import start_time


def test_this_process_owns_what_it_creates_and_may_prune_it() -> None:
    labels = owner_labels()
    assert labels[OWNER_HOST] == socket.gethostname() and labels[OWNER_PID] == str(os.getpid())
    assert labels[OWNER_STARTED].isdigit()
    assert live_owner(labels) is None  # the caller is the owner


def test_a_running_owner_keeps_it_a_gone_or_reused_one_does_not() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        started = str(start_time(child.pid))
        labels = {OWNER_HOST: socket.gethostname(), OWNER_PID: str(child.pid), OWNER_STARTED: started}
        assert (
            live_owner(labels)
            == f"its owner, process {child.pid}, still runs (a live run's sandbox); stop that run first"
        )
        assert live_owner({**labels, OWNER_STARTED: str(int(started) + 1)}) is None  # the pid now runs another process
    finally:
        child.kill()
        child.wait()
    assert live_owner(labels) is None


def test_an_owner_elsewhere_cannot_be_checked_so_it_is_kept() -> None:
    why = live_owner({OWNER_HOST: "another-machine", OWNER_PID: "1", OWNER_STARTED: "5"})
    assert why is not None and "host 'another-machine'" in why and "prune it there" in why


def test_objects_made_before_owners_were_recorded_may_go() -> None:
    assert live_owner({"agentenv.run": "old"}) is None

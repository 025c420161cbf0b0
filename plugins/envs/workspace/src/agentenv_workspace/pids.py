"""A process limit that binds root too: each command of the process sandbox in a cgroup of its own.

RLIMIT_NPROC counts the processes of the command's *user*, and Linux does not apply it to root (nor to a
process with CAP_SYS_ADMIN or CAP_SYS_RESOURCE). Bubblewrap cannot change that: its user namespace maps the
command to another uid inside, but the kernel counts and exempts by the uid outside, which stays root. The
`pids` cgroup controller counts every task (process or thread) in a group whatever its user, and makes `fork`
fail with EAGAIN past `pids.max`. So, where this process may create cgroups of that controller (a cgroup v1
`pids` hierarchy, or cgroup v2 with `pids` enabled from the root down), each command starts in
`<hierarchy>/agentenv-workspace/<pid>-<start time>/<id>`, which allows the workspace's `processes` tasks; the
group goes when the command ends, taking with it (killed) what the command left running outside its session.
The folder of a process that died is removed by `prune` (run whenever a workspace store opens); a process
removes its own at exit. Without such a hierarchy (no permission, a container without its own cgroups)
commands run with the rlimits only, as before.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
import uuid
from pathlib import Path

BASE_NAME = "agentenv-workspace"
_lock = threading.Lock()
_owned: Path | None = None
_checked = False


def hierarchy() -> tuple[Path, int] | None:
    """Where the `pids` controller is mounted, and the cgroup version: a v1 hierarchy of its own, else the
    v2 hierarchy if it offers `pids`."""
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return None
    unified = None
    for line in lines:
        fields = line.split()
        if len(fields) < 4:
            continue
        point, kind, options = Path(fields[1]), fields[2], fields[3].split(",")
        if kind == "cgroup" and "pids" in options:
            return point, 1
        if kind == "cgroup2" and unified is None:
            unified = point
    if unified is not None:
        with contextlib.suppress(OSError):
            if "pids" in (unified / "cgroup.controllers").read_text().split():
                return unified, 2
    return None


def _enable(folder: Path, version: int) -> None:
    """cgroup v2: let the groups below `folder` have a `pids.max`."""
    if version == 2 and "pids" not in (folder / "cgroup.subtree_control").read_text().split():
        (folder / "cgroup.subtree_control").write_text("+pids")


def _owner_folder() -> Path | None:
    """This process's folder of command groups, made (and checked once, with a real process) on first use."""
    global _owned, _checked
    with _lock:
        if _checked:
            return _owned
        _checked = True
        found = hierarchy()
        if found is None or os.environ.get("AGENTENV_WORKSPACE_PIDS_CGROUP") == "0":
            return None
        root, version = found
        from agentenv_sandbox_local.api import start_time

        pid = os.getpid()
        owned = root / BASE_NAME / f"{pid}-{start_time(pid) or 0}"
        try:
            _enable(root, version)
            (root / BASE_NAME).mkdir(exist_ok=True)
            _enable(root / BASE_NAME, version)
            owned.mkdir(exist_ok=True)
            _enable(owned, version)
            if not _works(owned):
                remove_folder(owned)
                return None
        except OSError:
            remove_folder(owned)
            return None
        from agentenv_workspace.shutdown import at_shutdown

        at_shutdown(lambda: remove_folder(owned))
        _owned = owned
        return owned


def _works(owned: Path) -> bool:
    """Whether a process moved into a group of `owned` is counted there (the whole chain, tried once)."""
    import subprocess

    group = new_group(owned, 4)
    if group is None:
        return False
    try:
        probe = subprocess.run(
            ["/bin/sh", "-c", "cat /proc/self/cgroup"], capture_output=True, text=True, preexec_fn=lambda: join(group)
        )
        return f"/{BASE_NAME}/{owned.name}/{group.name}" in probe.stdout
    finally:
        release(group)


def new_group(owned: Path, limit: int) -> Path | None:
    group = owned / uuid.uuid4().hex[:12]
    try:
        group.mkdir()
        (group / "pids.max").write_text(str(limit))
    except OSError:
        release(group)
        return None
    return group


def available() -> bool:
    """Whether commands here get a pids cgroup of their own."""
    return _owner_folder() is not None


def command_group(limit: int) -> Path | None:
    """A fresh group allowing `limit` tasks for one command, or None where pids cgroups cannot be used."""
    owned = _owner_folder()
    return None if owned is None else new_group(owned, limit)


def join(group: Path) -> None:
    """Runs in the command's child before exec: move it into `group` (its descendants are born there)."""
    with contextlib.suppress(OSError):
        descriptor = os.open(group / "cgroup.procs", os.O_WRONLY)
        try:
            os.write(descriptor, str(os.getpid()).encode())
        finally:
            os.close(descriptor)


def release(group: Path, patience: float = 2.0) -> None:
    """Kill what is left in `group` (processes that left the command's session) and remove it; a group that
    will not empty in time stays for the process's exit, or `prune`."""
    deadline = time.monotonic() + patience
    pause = 0.001
    while True:
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            pass
        try:
            left = (group / "cgroup.procs").read_text().split()
        except OSError:
            return
        for pid in left:
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), signal.SIGKILL)
        if time.monotonic() > deadline:
            return
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def remove_folder(owned: Path) -> None:
    """Remove an owner's folder and the command groups in it."""
    if not owned.is_dir():
        return
    for group in owned.iterdir():
        if group.is_dir():
            release(group)
    with contextlib.suppress(OSError):
        owned.rmdir()


def prune() -> list[Path]:
    """Remove the folders of processes that no longer run; the folders removed."""
    from agentenv_sandbox_local.api import process_alive

    found = hierarchy()
    base = found[0] / BASE_NAME if found else None
    if base is None or not base.is_dir():
        return []
    removed = []
    for owned in base.iterdir():
        pid, _, started = owned.name.partition("-")
        if owned.is_dir() and pid.isdigit() and started.isdigit() and not process_alive(int(pid), int(started)):
            remove_folder(owned)
            removed.append(owned)
    return removed

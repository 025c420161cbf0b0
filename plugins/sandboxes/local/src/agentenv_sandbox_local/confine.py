"""What the `process` provider enforces on a sandbox's commands: resource limits and the network.

- `cpu` (whole CPUs): the command and its children may run only on that many of this machine's CPUs
  (`sched_setaffinity`). A fraction of a CPU cannot be expressed that way and is refused.
- `memory_mb`: each process's address space (`RLIMIT_AS`, soft = hard so it cannot be raised). A runtime that
  reserves far more address space than it uses may fail to start under a tight limit.
- `network`: `loopback` runs every command in a network namespace of its own (bubblewrap, `--unshare-net`):
  it has its own loopback and nothing else, so neither this machine nor anything beyond it can be reached, and
  nothing reaches in. `none` runs it in a network namespace whose loopback is down (`unshare --net`): no
  network at all. The host's filesystem view is unchanged in both.

Nothing here limits disk use: a process has no quota of its own, so the provider refuses `disk_mb`.
"""

from __future__ import annotations

import functools
import os
import resource
import shutil
import subprocess
from collections.abc import Callable
from typing import Literal

NetworkMode = Literal["allow_all", "allowlist", "loopback", "none"]


def limits(cpu: float | None, memory_mb: int | None) -> Callable[[], None] | None:
    """A function run in the child before it execs (None when there is nothing to limit)."""
    if cpu is None and memory_mb is None:
        return None
    allowed = sorted(os.sched_getaffinity(0))[: int(cpu)] if cpu is not None else None

    def apply() -> None:
        if allowed is not None:
            os.sched_setaffinity(0, allowed)
        if memory_mb is not None:
            size = memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (size, size))

    return apply


def cpu_problem(cpu: float) -> str | None:
    """Why `cpu` cannot be enforced by affinity here (None when it can)."""
    have = len(os.sched_getaffinity(0))
    if cpu != int(cpu) or cpu < 1:
        return f"cpu={cpu!r}: the process provider limits whole CPUs (affinity); give 1, 2, … or use docker"
    if cpu > have:
        return f"cpu={cpu!r}: this machine lets agentenv use {have} CPU(s); ask for at most that many"
    return None


def network_prefix(mode: NetworkMode) -> list[str]:
    """The argv that goes before a command to confine its network (empty for `allow_all`)."""
    if mode == "loopback":
        return [shutil.which("bwrap") or "bwrap", "--dev-bind", "/", "/", "--unshare-net", "--"]
    if mode == "none":
        return ["unshare", "--net", *([] if os.geteuid() == 0 else ["--map-root-user"]), "--"]
    return []


@functools.cache
def network_problem(mode: NetworkMode) -> str | None:
    """Why `mode` cannot be enforced on this machine (None when it can): the tool is missing or the kernel
    does not let this user make a network namespace. Probed once per process."""
    if mode == "allow_all":
        return None
    if mode == "allowlist":
        return (
            "network.mode='allowlist': a process cannot be limited to named hosts; use 'loopback' or 'none', or "
            "a provider that enforces allowlists (modal, e2b)"
        )
    tool = "bwrap" if mode == "loopback" else "unshare"
    if shutil.which(tool) is None:
        package = "bubblewrap" if tool == "bwrap" else "util-linux"
        return f"network.mode={mode!r} needs `{tool}` (Debian package {package}), which is not installed"
    try:
        done = subprocess.run([*network_prefix(mode), "true"], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"network.mode={mode!r}: `{tool}` could not run: {exc}"
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip()[-300:]
        return f"network.mode={mode!r}: this machine does not let `{tool}` make a network namespace ({why})"
    return None

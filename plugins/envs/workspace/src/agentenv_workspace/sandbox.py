"""Running a command in a workspace: the process sandbox.

A command runs as `sh -c` with resource limits set in the child (CPU seconds, address space, file size, and
the process count, which Linux enforces for non-root users only; where pids cgroups can be made, a cgroup of
its own limits its tasks for root too, see `pids`), in its own session so a timeout kills it and everything it
spawned. With bubblewrap (`bwrap`) installed it also runs in fresh namespaces: the workspace is
the only writable path (mounted at `/workspace`), the system's `/usr` is read-only, `/tmp` is private, and
the network is off unless the workspace's settings allow it; nothing else of the host, the bundle's hidden
tests included, can be reached by path. Without bubblewrap (`isolation = "none"`) the file tools still refuse
paths outside the workspace, but a command can read the host: use it only for trusted agents.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shlex
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentenv_workspace import pids
from agentenv_workspace.shutdown import at_shutdown

MOUNT_POINT = "/workspace"
LOGS_POINT = "/logs"
"""Harbor's tests write `/logs/verifier/reward.txt`; the sandbox gives every command such a folder."""
SYSTEM_DIRS = ("/usr", "/etc/alternatives", "/etc/ssl", "/etc/ld.so.cache", "/etc/localtime")
SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass(frozen=True)
class Limits:
    cpu_seconds: int
    memory_mb: int
    processes: int
    file_size_mb: int


@dataclass(frozen=True)
class Outcome:
    exit_code: int
    output: str
    truncated: bool
    timed_out: bool
    seconds: float

    def as_dict(self) -> dict[str, object]:
        return {
            "exit_code": self.exit_code,
            "output": self.output,
            "truncated": self.truncated,
            "timed_out": self.timed_out,
            "seconds": round(self.seconds, 3),
        }


_running: set[subprocess.Popen[bytes]] = set()
_running_lock = threading.Lock()


def kill_running() -> None:
    """Kill every command still running (a run interrupted while a tool call waits on one)."""
    with _running_lock:
        for process in list(_running):
            _kill(process)


at_shutdown(kill_running)


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def _limit(limits: Limits, group: Path | None) -> None:
    """Runs in the child before exec: into its pids cgroup, then the rlimits (soft = hard, so the command cannot
    raise them)."""
    if group is not None:
        pids.join(group)
    for which, value in (
        (resource.RLIMIT_CPU, limits.cpu_seconds),
        (resource.RLIMIT_AS, limits.memory_mb * 1024 * 1024),
        (resource.RLIMIT_FSIZE, limits.file_size_mb * 1024 * 1024),
        (resource.RLIMIT_NPROC, limits.processes),
        (resource.RLIMIT_CORE, 0),
    ):
        resource.setrlimit(which, (value, value))


def sandboxed_argv(
    command: str,
    tree: Path,
    logs: Path,
    cwd: str,
    *,
    network: bool,
    isolated: bool,
    mount_point: str = MOUNT_POINT,
    binds: dict[str, Path] | None = None,
) -> list[str]:
    """The argv that runs `command` in `tree` (bubblewrap when `isolated`, the tree at `mount_point`), starting
    in `cwd` (relative); `binds` are host folders shown read-only at the given paths (a grading run's tests)."""
    if not isolated:
        return ["/bin/sh", "-c", command]
    argv = [bwrap_path() or "bwrap", "--die-with-parent", "--unshare-all", "--new-session"]
    if network:
        argv.append("--share-net")
    for system in SYSTEM_DIRS:
        if os.path.exists(system):
            argv += ["--ro-bind", system, system]
    for name in ("bin", "sbin", "lib", "lib64", "lib32"):
        path = Path("/") / name
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            argv += ["--ro-bind", str(path), str(path)]
    for target, source in (binds or {}).items():
        argv += ["--ro-bind", str(source), target]
    workdir = f"{mount_point}/{cwd}".rstrip("/") if cwd not in ("", ".") else mount_point
    argv += [
        "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
        "--bind", str(tree), mount_point, "--bind", str(logs), LOGS_POINT,
        "--chdir", workdir, "--clearenv",
        "--setenv", "PATH", SAFE_PATH, "--setenv", "HOME", mount_point, "--setenv", "LANG", "C.UTF-8",
        "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
        "/bin/sh", "-c", command,
    ]  # fmt: skip
    return argv


def run(
    command: str,
    tree: Path,
    logs: Path,
    *,
    cwd: str = ".",
    timeout: float,
    output_limit: int,
    limits: Limits,
    network: bool,
    isolated: bool,
    mount_point: str = MOUNT_POINT,
    binds: dict[str, Path] | None = None,
    environment: dict[str, str] | None = None,
) -> Outcome:
    """Run `command`; its output (stdout and stderr interleaved) capped at `output_limit` bytes."""
    for name, value in (environment or {}).items():
        command = f"export {name}={shlex.quote(value)}; {command}"
    argv = sandboxed_argv(
        command, tree, logs, cwd, network=network, isolated=isolated, mount_point=mount_point, binds=binds
    )
    env = (
        None if isolated else {"PATH": SAFE_PATH, "HOME": str(tree), "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
    )
    group = pids.command_group(limits.processes)
    started = time.perf_counter()
    try:
        process = subprocess.Popen(
            argv,
            cwd=tree if isolated else tree / cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
            preexec_fn=lambda: _limit(limits, group),
        )
    except BaseException:
        if group is not None:
            pids.release(group)
        raise
    timed_out = False
    with _running_lock:
        _running.add(process)
    restore = _kill_on_signal(process)
    try:
        raw, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill(process)
        raw, _ = process.communicate()
    except BaseException:
        _kill(process)
        process.wait()
        raise
    finally:
        restore()
        with _running_lock:
            _running.discard(process)
        if group is not None:
            pids.release(group)  # what the command left running ends with it
    truncated = len(raw) > output_limit
    text = raw[:output_limit].decode("utf-8", errors="replace")
    code = process.returncode if not timed_out else 124
    return Outcome(code, text, truncated, timed_out, time.perf_counter() - started)


def _kill_on_signal(process: subprocess.Popen[bytes]) -> Callable[[], None]:
    """While `process` runs in the main thread, Ctrl-C and SIGTERM kill it first, then do what they did before.

    `agentenv run` cancels a run from its event loop's signal handler, which cannot run while a tool call holds
    the loop; killing the command lets the call return, and the loop then sees the signal and cancels."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous: dict[int, Any] = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}

    def handler(signum: int, frame: object) -> None:
        _kill(process)
        before = previous[signum]
        if callable(before):
            before(signum, frame)

    for signum in previous:
        signal.signal(signum, handler)

    def restore() -> None:
        for signum, before in previous.items():
            signal.signal(signum, before)

    return restore


def _kill(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)

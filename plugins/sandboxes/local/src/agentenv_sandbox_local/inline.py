"""The `inline` sandbox provider: a private work folder on this host, with process groups for cleanup.

This is NOT isolation. Commands run on the host as the current user and can read and write anything that
user can; the network is the host's. What `inline` gives is bookkeeping: a fresh work folder (cwd and HOME
of every command), one process group per command so a timeout or a teardown kills everything the command
spawned, and a state file per sandbox in a registry folder, so that sandboxes left by a crashed run — their
folders and process ids — are found by `list(labels)` from any later process and removed by `prune`.

Specs that ask for more than this (a VM, an image, a network allowlist, resource limits) are refused with
`SpecRefused`, so a fallback chain moves on to a provider that can honour them.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath
from typing import IO, Any, Literal

from agentenv.contracts import ExecResult, Sandbox, SandboxProvider, SandboxSpec, SpecRefused
from pydantic import BaseModel, ConfigDict, Field

from agentenv_sandbox_local.procs import group_alive, kill_group, process_alive, start_time

TIMEOUT_EXIT_CODE = 124
"""Exit code of a command killed for running past its timeout (as coreutils `timeout` reports it)."""

_SETTINGS_TABLE = "[plugins.agentenv-sandbox-local.{}]"


class InlineSettings(BaseModel):
    """Settings of the `inline` provider."""

    model_config = ConfigDict(extra="forbid")

    root: str | None = Field(None, description="Folder for the work folders; None = the system temp folder.")
    state_dir: str | None = Field(
        None,
        description="Registry of state files; None = $AGENTENV_STATE_DIR/inline-sandboxes, "
        "else ~/.cache/agentenv/inline-sandboxes.",
    )
    ignore_limits: bool = Field(
        False, description="Accept cpu/memory_mb/disk_mb limits without enforcing them instead of refusing."
    )


def default_state_dir(environ: Mapping[str, str], folder: str = "inline-sandboxes") -> Path:
    base = environ.get("AGENTENV_STATE_DIR")
    if base:
        return Path(base).expanduser() / folder
    return Path.home() / ".cache" / "agentenv" / folder


def _write_json(path: Path, data: dict[str, Any]) -> None:
    """Replace `path` atomically, so a crash never leaves a half-written state file. Owner-only (0600): a
    state file holds the spec's environment, which carries a served world's role tokens."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        os.fchmod(handle.fileno(), 0o600)  # an older file of the same name may have had a wider mode
        handle.write(json.dumps(data, indent=2, sort_keys=True))
    os.replace(tmp, path)


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _exit_code(returncode: int) -> int:
    """Shell convention: a command killed by signal N exits 128 + N."""
    return 128 - returncode if returncode < 0 else returncode


def _remove_tree(path: Path) -> None:
    """Remove `path`, first making folders writable (a command may have made one read-only)."""
    if not path.exists():
        return
    with contextlib.suppress(OSError):
        path.chmod(0o700)
    for dirpath, dirnames, _ in os.walk(path):
        for name in dirnames:
            child = os.path.join(dirpath, name)
            if not os.path.islink(child):  # never chmod through a link to outside the folder
                with contextlib.suppress(OSError):
                    os.chmod(child, 0o700)
    shutil.rmtree(path, ignore_errors=True)


class InlineSandbox(Sandbox):
    """One work folder plus the process groups started in it, mirrored in a JSON state file."""

    kind = "inline"

    def owner_alive(self) -> bool:
        """Whether the process that created this sandbox still runs (and is not this one)."""
        owner = self._state.get("owner_pid")
        if not isinstance(owner, int) or owner == os.getpid():
            return False
        return process_alive(owner, self._state.get("owner_started"))

    def __init__(self, state_path: Path, state: dict[str, Any]) -> None:
        self.id: str = state["id"]
        self.labels: dict[str, str] = dict(state["labels"])
        self.workdir = Path(state["workdir"])
        self.spec = SandboxSpec.model_validate(state["spec"])
        self.created: float = state["created"]
        self.deadline: float | None = state["deadline"]
        self.state_path = state_path
        self._state = state
        self._lock = threading.RLock()
        self._children: list[subprocess.Popen[bytes]] = []  # started here; reaped on teardown

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.id} {self.workdir}>"

    # -- bookkeeping ------------------------------------------------------------------------------

    @property
    def expired(self) -> bool:
        """Whether `ttl_seconds` has passed. Nothing kills an expired sandbox by itself: `prune` does."""
        return self.deadline is not None and time.time() >= self.deadline

    @property
    def processes(self) -> list[dict[str, Any]]:
        """Recorded process groups: `pid` (= group id), `started`, `command`, and `log` for `start`ed ones."""
        state = _read_json(self.state_path) or self._state
        return [dict(p) for p in state.get("processes", [])]

    @property
    def pids(self) -> list[int]:
        return [int(p["pid"]) for p in self.processes]

    def _record(self, entry: dict[str, Any]) -> None:
        with self._lock:
            state = _read_json(self.state_path) or self._state
            state.setdefault("processes", []).append(entry)
            self._state = state
            if self.state_path.exists():
                _write_json(self.state_path, state)

    def _require_running(self) -> None:
        status = self.status()
        if status == "running":
            return
        why = f"expired: ttl_seconds={self.spec.ttl_seconds} has passed" if self.expired else "torn down"
        raise RuntimeError(f"{self.kind} sandbox {self.id} is {status} ({why}); create a new sandbox")

    def _environ(self) -> dict[str, str]:
        return {**os.environ, "HOME": str(self.workdir), **self.spec.env}

    def _confined(self, command: list[str]) -> tuple[list[str], Callable[[], None] | None]:
        """The argv that runs `command` as the spec asks, and what the child does before it execs (`inline`
        enforces nothing: the command as given)."""
        return command, None

    def _spawn(self, command: list[str], stdout: int | IO[bytes], stderr: int | IO[bytes]) -> subprocess.Popen[bytes]:
        if not command or not all(isinstance(part, str) for part in command):
            raise ValueError(f"command must be a non-empty list of strings, got {command!r}")
        argv, before_exec = self._confined(command)
        return subprocess.Popen(
            argv,
            cwd=self.workdir,
            env=self._environ(),
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,  # own session and process group: pgid == pid
            preexec_fn=before_exec,
        )

    def _path(self, path: str) -> Path:
        """`path` inside the work folder; absolute paths are taken as relative to it, `..` is refused."""
        parts = PurePosixPath(path.replace("\\", "/")).parts
        rel = [p for p in parts if p != "/"]
        if ".." in rel:
            raise ValueError(f"path {path!r} escapes the sandbox work folder ({self.workdir}); remove '..'")
        if not rel or rel == ["."]:
            raise ValueError(f"path {path!r} names the work folder itself; name a file inside it")
        target = self.workdir.joinpath(*rel)
        if not target.resolve().is_relative_to(self.workdir.resolve()):
            raise ValueError(f"path {path!r} leads out of the sandbox work folder through a symbolic link")
        return target

    # -- the Sandbox contract ---------------------------------------------------------------------

    def exec(self, command: list[str], *, timeout: float | None = None) -> ExecResult:
        """Run `command` to completion in the work folder; on timeout kill its whole group (exit 124). A sandbox
        with a time to live gives no command longer than what is left of it."""
        self._require_running()
        if self.deadline is not None:
            left = max(self.deadline - time.time(), 0.001)
            timeout = left if timeout is None else min(timeout, left)
        try:
            proc = self._spawn(command, subprocess.PIPE, subprocess.PIPE)
        except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
            code = 127 if isinstance(exc, FileNotFoundError) else 126
            return ExecResult(exit_code=code, stderr=f"{command[0]}: {exc.strerror or exc}\n")
        started = start_time(proc.pid)
        note = ""
        try:
            out, err = proc.communicate(timeout=timeout)
            code = _exit_code(proc.returncode)
        except subprocess.TimeoutExpired:
            kill_group(proc.pid, None)  # our unreaped child: the pid cannot have been reused
            try:
                out, err = proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:  # a descendant left the group and holds the pipes open
                proc.kill()
                out, err = b"", b""
            code = TIMEOUT_EXIT_CODE
            note = f"\n[{self.kind}] timed out after {timeout}s; killed process group {proc.pid}\n"
        except BaseException:
            kill_group(proc.pid, None)
            proc.wait()
            raise
        if not note and group_alive(proc.pid):  # it left processes running (`server &`): teardown must kill them
            self._record({"pid": proc.pid, "started": started, "command": command})
        return ExecResult(
            exit_code=code,
            stdout=out.decode("utf-8", errors="replace"),
            stderr=err.decode("utf-8", errors="replace") + note,
        )

    def start(self, command: list[str]) -> int:
        """Start a long-running `command` (a server) in its own group; returns its pid (= group id).

        Output goes to `.agentenv/start-<n>.log` in the work folder. The group is killed by `teardown`.
        """
        self._require_running()
        with self._lock:
            logs = self.workdir / ".agentenv"
            logs.mkdir(exist_ok=True)
            log = logs / f"start-{len(self.processes) + 1}.log"
            with log.open("ab") as sink:
                proc = self._spawn(command, sink, subprocess.STDOUT)
            self._children.append(proc)
            self._record({"pid": proc.pid, "started": start_time(proc.pid), "command": command, "log": str(log)})
        return proc.pid

    def _launch(self, command: list[str]) -> int:
        """Start the spec's own command (called once, by the provider's `create`)."""
        return self.start(command)

    def put_file(self, path: str, data: bytes) -> None:
        self._require_running()
        target = self._path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    def get_file(self, path: str) -> bytes:
        self._require_running()
        return self._path(path).read_bytes()

    def url(self, port: int) -> str:
        """Processes listen on the host itself, so every port is reachable on loopback."""
        return f"http://127.0.0.1:{port}"

    def status(self) -> Literal["running", "stopped", "missing"]:
        """`missing` once torn down (or its folder is gone); `stopped` once its ttl has passed."""
        if not self.state_path.exists() or not self.workdir.is_dir():
            return "missing"
        return "stopped" if self.expired else "running"

    def teardown(self) -> None:
        """Kill every recorded process group, then remove the folder and the state file. Idempotent."""
        with self._lock:
            for entry in self.processes:
                kill_group(int(entry["pid"]), entry.get("started"))
            for child in self._children:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    child.wait(timeout=10)  # reap, so no zombie is left behind
            self._children.clear()
            self._state["processes"] = []
            _remove_tree(self.workdir)
            if self.workdir.exists():
                raise OSError(f"could not remove {self.workdir}; its state file is kept so `prune` can retry")
            self.state_path.unlink(missing_ok=True)


class InlineProvider(SandboxProvider[InlineSettings]):
    """Sandboxes that are work folders on this host. Not isolation: processes run as the current user."""

    name = "inline"
    description = "A private work folder on this host; processes run as the current user (not isolation)."
    modes = frozenset({"container"})
    Settings = InlineSettings

    sandbox_class: type[InlineSandbox] = InlineSandbox

    def __init__(
        self, settings: BaseModel | dict[str, Any] | None = None, *, environ: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(settings)
        settings = self.settings
        environ = os.environ if environ is None else environ
        self.state_dir = (
            Path(settings.state_dir).expanduser()
            if settings.state_dir
            else default_state_dir(environ, f"{self.name}-sandboxes")
        )
        self.root = Path(settings.root).expanduser() if settings.root else None

    def available(self) -> tuple[bool, str]:
        if sys.platform == "win32" or not hasattr(os, "killpg"):
            return False, f"{self.name} needs POSIX process groups (Linux or macOS)"
        return True, ""

    def refusals(self, spec: SandboxSpec) -> list[str]:
        """Why `spec` cannot be honoured, one reason per field (empty when it can)."""
        reasons = []
        if spec.mode not in self.modes:
            reasons.append(
                f"mode={spec.mode!r}: {self.name} runs processes on this host and has no VM; "
                "use a provider whose modes include 'vm'"
            )
        if spec.image is not None:
            reasons.append(
                f"image={spec.image!r}: {self.name} runs commands on the host and cannot use an image; "
                "drop `image` or use a container provider such as docker"
            )
        if spec.network.mode != "allow_all":
            reasons.append(
                f"network.mode={spec.network.mode!r}: {self.name} cannot restrict the network of host processes; "
                "use network.mode='allow_all', the process provider (loopback, none) or one that enforces "
                "allowlists"
            )
        if not self.settings.ignore_limits:
            for field in ("cpu", "memory_mb", "disk_mb"):
                value = getattr(spec, field)
                if value is not None:
                    reasons.append(
                        f"{field}={value!r}: {self.name} does not enforce resource limits; drop the field, or set "
                        f"ignore_limits = true under {_SETTINGS_TABLE.format(self.name)} to accept it unenforced"
                    )
        return reasons

    def create(self, spec: SandboxSpec) -> InlineSandbox:
        reasons = self.refusals(spec)
        if reasons:
            raise SpecRefused(f"{self.name} sandbox cannot honour the spec: " + "; ".join(reasons))
        self.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        if self.root is not None:
            self.root.mkdir(parents=True, exist_ok=True)
        while True:  # claim a fresh id: creating its state file exclusively makes the id ours
            sandbox_id = f"{self.name}-{secrets.token_hex(6)}"
            state_path = self.state_dir / f"{sandbox_id}.json"
            try:
                os.close(os.open(state_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
                break
            except FileExistsError:
                continue
        workdir: Path | None = None
        try:
            workdir = Path(tempfile.mkdtemp(prefix=f"agentenv-{sandbox_id}-", dir=self.root))
            now = time.time()
            state: dict[str, Any] = {
                "id": sandbox_id,
                "provider": self.name,
                "labels": dict(spec.labels),
                "spec": spec.model_dump(mode="json"),
                "workdir": str(workdir),
                "created": now,
                "deadline": None if spec.ttl_seconds is None else now + spec.ttl_seconds,
                "owner_pid": os.getpid(),
                "owner_started": start_time(os.getpid()),
                "processes": [],
                **self._extra_state(spec),
            }
            _write_json(state_path, state)
        except BaseException:
            if workdir is not None:
                _remove_tree(workdir)
            state_path.unlink(missing_ok=True)
            raise
        sandbox = self.sandbox_class(state_path, state)
        if spec.command:
            try:
                sandbox._launch(spec.command)
            except BaseException:
                sandbox.teardown()
                raise
        return sandbox

    def _extra_state(self, spec: SandboxSpec) -> dict[str, Any]:
        """Provider-specific fields of a new sandbox's state file (none for `inline`)."""
        return {}

    def list(self, labels: dict[str, str]) -> list[Sandbox]:
        """Every sandbox in the registry carrying all of `labels`, oldest first, expired ones included."""
        found: list[InlineSandbox] = []
        if not self.state_dir.is_dir():
            return []
        for path in self.state_dir.glob(f"{self.name}-*.json"):
            state = _read_json(path)
            if state is None or state.get("provider") != self.name:
                continue  # being written, or not ours
            have = state.get("labels") or {}
            if all(have.get(key) == value for key, value in labels.items()):
                found.append(self.sandbox_class(path, state))
        found.sort(key=lambda s: (s.created, s.id))
        return list[Sandbox](found)

    def prune(self, labels: dict[str, str]) -> builtins.list[str]:
        """Tear down every sandbox carrying all of `labels` (a crashed run's leftovers); their ids.

        A sandbox whose owner (the process that created it) still runs is a live run's, not a leftover: it
        is kept, unless this process is the owner."""
        removed = []
        for sandbox in self.list(labels):
            if isinstance(sandbox, InlineSandbox) and sandbox.owner_alive():
                continue
            sandbox.teardown()
            removed.append(sandbox.id)
        return removed

"""The `process` sandbox provider: the spec's command as a local subprocess, its ports on free loopback ports.

A `process` sandbox is an `inline` sandbox (same work folder, process groups, state files — and the same lack
of file isolation) whose `spec.command` is its main process, whose commands run under the spec's network mode
(`loopback`, `none`) and cpu and memory limits (`confine`), with the ports remapped: each port
of `spec.ports` gets a free loopback port chosen here, so two sandboxes asking for port 8000 never
collide. The command learns its ports through

- environment variables `AGENTENV_PORT_<port>` (in every command run in the sandbox), and
- placeholders in its arguments: `{port:<port>}`, or `{port}` for the first port of the spec;

and `url(port)` is `http://127.0.0.1:<mapped>`. `status()` is `stopped` once the main process has exited.
"""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Callable
from typing import Any, Literal

from agentenv.contracts import NetworkPolicy, SandboxSpec
from pydantic import Field

from agentenv_sandbox_local.confine import cpu_problem, limits, network_prefix, network_problem
from agentenv_sandbox_local.inline import InlineProvider, InlineSandbox, InlineSettings, _write_json
from agentenv_sandbox_local.procs import process_alive

PORT_ENV = "AGENTENV_PORT_{}"
LOG_TAIL_BYTES = 64 * 1024


class ProcessSettings(InlineSettings):
    """Settings of the `process` provider (those of `inline`)."""

    state_dir: str | None = Field(
        None,
        description="Registry of state files; None = $AGENTENV_STATE_DIR/process-sandboxes, "
        "else ~/.cache/agentenv/process-sandboxes.",
    )


def free_port(host: str = "127.0.0.1") -> int:
    """A port nobody listens on right now (the OS picks it; a race with another binder is possible but rare)."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


class ProcessSandbox(InlineSandbox):
    """An inline sandbox whose spec command is the main process and whose ports are mapped to free ones."""

    kind = "process"

    def __init__(self, state_path: Any, state: dict[str, Any]) -> None:
        super().__init__(state_path, state)
        self.ports: dict[int, int] = {int(k): int(v) for k, v in (state.get("ports") or {}).items()}
        self._main: subprocess.Popen[bytes] | None = None

    def _environ(self) -> dict[str, str]:
        mapped = {PORT_ENV.format(port): str(host_port) for port, host_port in self.ports.items()}
        return {**super()._environ(), **mapped}

    def expand(self, command: list[str]) -> list[str]:
        """`{port:<port>}` → that port's mapped port, `{port}` → the first port's, in every argument."""
        expanded = []
        for arg in command:
            for port, host_port in self.ports.items():
                arg = arg.replace(f"{{port:{port}}}", str(host_port))
            if self.spec.ports:
                arg = arg.replace("{port}", str(self.ports[self.spec.ports[0]]))
            expanded.append(arg)
        return expanded

    def start(self, command: list[str]) -> int:
        return super().start(self.expand(command))

    def _confined(self, command: list[str]) -> tuple[list[str], Callable[[], None] | None]:
        """The spec's network mode as a namespace around the command, its cpu and memory as child limits."""
        spec = self.spec
        return [*network_prefix(spec.network.mode), *command], limits(spec.cpu, spec.memory_mb)

    def _launch(self, command: list[str]) -> int:
        pid = self.start(command)
        self._main = self._children[-1]
        entry = self.processes[-1]
        with self._lock:
            self._state["main"] = {"pid": entry["pid"], "started": entry["started"], "log": entry["log"]}
            if self.state_path.exists():
                _write_json(self.state_path, self._state)
        return pid

    @property
    def main(self) -> dict[str, Any] | None:
        """The main process (`pid`, `started`, `log`), when the spec had a command."""
        main = self._state.get("main")
        return dict(main) if main else None

    def main_alive(self) -> bool:
        if self._main is not None:
            return self._main.poll() is None
        main = self.main
        return main is not None and process_alive(int(main["pid"]), main.get("started"))

    def url(self, port: int) -> str:
        if port not in self.ports:
            known = ", ".join(map(str, self.ports)) or "none"
            raise ValueError(f"port {port} is not in the sandbox's spec.ports ({known}); add it to `ports`")
        return f"http://127.0.0.1:{self.ports[port]}"

    def status(self) -> Literal["running", "stopped", "missing"]:
        """As `inline`, and `stopped` once the main process (the spec's command) has exited."""
        status = super().status()
        if status == "running" and self.main is not None and not self.main_alive():
            return "stopped"
        return status

    def logs(self, tail: int = 50) -> str:
        """The last `tail` lines of the main process's output (stdout and stderr)."""
        main = self.main
        if main is None or not main.get("log"):
            return ""
        try:
            with open(main["log"], "rb") as handle:
                handle.seek(0, 2)
                size = handle.tell()
                handle.seek(max(0, size - LOG_TAIL_BYTES))
                text = handle.read().decode("utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-tail:])

    def _require_running(self) -> None:
        if self.status() == "stopped" and not self.expired:
            return  # the server died: its files and logs are still worth reading
        super()._require_running()


class ProcessProvider(InlineProvider):
    """The spec's command as a subprocess on this host, ports mapped to free loopback ports. Not isolation of
    files; the network (`loopback`, `none`) and cpu and memory limits are enforced (see `confine`)."""

    name = "process"
    description = (
        "The spec's command as a local subprocess in a work folder, its ports mapped to free loopback ports; "
        "network loopback/none, whole-CPU and memory limits enforced (files are not isolated)."
    )
    Settings = ProcessSettings
    sandbox_class = ProcessSandbox

    def refusals(self, spec: SandboxSpec) -> list[str]:
        """As `inline`, except what this provider enforces: cpu, memory_mb and the `loopback`/`none` network."""
        kept = spec.model_copy(update={"cpu": None, "memory_mb": None, "network": NetworkPolicy()})
        reasons = super().refusals(kept)
        if spec.cpu is not None and (problem := cpu_problem(spec.cpu)):
            reasons.append(problem)
        if spec.memory_mb is not None and spec.memory_mb <= 0:
            reasons.append(f"memory_mb={spec.memory_mb!r}: give a positive number of megabytes")
        if problem := network_problem(spec.network.mode):
            reasons.append(problem)
        if spec.network.mode in ("loopback", "none") and spec.ports:
            reasons.append(
                f"ports={spec.ports!r}: with network.mode={spec.network.mode!r} nothing outside the sandbox reaches "
                "its ports; drop `ports` or allow the network"
            )
        return reasons

    def _extra_state(self, spec: SandboxSpec) -> dict[str, Any]:
        ports: dict[str, int] = {}
        taken: set[int] = set()
        for port in spec.ports:
            host_port = free_port()
            while host_port in taken:
                host_port = free_port()
            taken.add(host_port)
            ports[str(port)] = host_port
        return {"ports": ports}

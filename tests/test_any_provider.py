"""A sandbox provider written only against the public contract (`agentenv.contracts`), registered through the
hook, serves a task's world and holds its agent: deploy_env knows no provider by name."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Any, Literal

from agentenv import PluginHost, PluginInfo, get_host
from agentenv.contracts import ExecResult, Sandbox, SandboxProvider, SandboxSpec, SpecRefused, kinds
from agentenv.hookspecs import hookimpl
from agentenv_testing.tasks import run_task

MADE: list[HostShellSandbox] = []


class HostShellSandbox(Sandbox):
    """A folder on this host; the spec's command runs in it, ports are this host's own (no mapping)."""

    def __init__(self, spec: SandboxSpec) -> None:
        self.id = f"hostshell-{uuid.uuid4().hex[:8]}"
        self.labels = dict(spec.labels)
        self.env = {**os.environ, **spec.env}
        self.folder = Path(tempfile.mkdtemp(prefix="hostshell-"))
        self.ports = list(spec.ports)
        self.main = None
        self.gone = False
        if spec.command:
            self.main_process = subprocess.Popen(
                spec.command, cwd=self.folder, env=self.env, start_new_session=True,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
        else:
            self.main_process = None

    def exec(self, command: list[str], *, timeout: float | None = None) -> ExecResult:
        try:
            done = subprocess.run(command, cwd=self.folder, env=self.env, capture_output=True, text=True,
                                  timeout=timeout)  # fmt: skip
        except FileNotFoundError as exc:
            return ExecResult(exit_code=127, stderr=str(exc))
        return ExecResult(exit_code=done.returncode, stdout=done.stdout, stderr=done.stderr)

    def put_file(self, path: str, data: bytes) -> None:
        target = self.folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    def get_file(self, path: str) -> bytes:
        return (self.folder / path).read_bytes()

    def url(self, port: int) -> str:
        return f"http://127.0.0.1:{port}"

    def status(self) -> Literal["running", "stopped", "missing"]:
        if self.gone:
            return "missing"
        if self.main_process is not None and self.main_process.poll() is not None:
            return "stopped"
        return "running"

    def teardown(self) -> None:
        if self.main_process is not None and self.main_process.poll() is None:
            os.killpg(self.main_process.pid, signal.SIGKILL)
            self.main_process.wait()
        self.gone = True


class HostShellProvider(SandboxProvider):
    name = "hostshell"
    description = "Test provider: commands in a folder on this host, written against the public contract only."

    def create(self, spec: SandboxSpec) -> Sandbox:
        if spec.image is not None:
            raise SpecRefused("image: hostshell runs on this host")
        sandbox = HostShellSandbox(spec)
        MADE.append(sandbox)
        return sandbox

    def list(self, labels: dict[str, str]) -> list[Sandbox]:
        return [s for s in MADE if not s.gone and all(s.labels.get(k) == v for k, v in labels.items())]


class HostShellPlugin:
    @hookimpl
    def agentenv_register_sandbox_providers(self) -> list[Any]:
        return [HostShellProvider]


def host_with_hostshell() -> PluginHost:
    info = PluginInfo("hostshell_plugin", "hostshell-plugin", "0", "hostshell_plugin", [], requirement_problems=[])
    return PluginHost(infos=[*get_host().infos, info], given={"hostshell_plugin": HostShellPlugin()})


def test_a_third_party_provider_serves_the_world_and_holds_the_agent(tmp_path: Path) -> None:
    host = host_with_hostshell()
    bundle = Path(host.registry(kinds.BUNDLES)["support-refund"].obj.path)
    text = (bundle / "tasks" / "resolve-refund.toml").read_text()
    # the agent's own sandbox, from the same provider, with its policy installed in it
    text += (
        '\n[[steps]]\nid = "agent_box"\ntype = "deploy_sandbox"\nprovider = "hostshell"\n'
        '\n[[steps]]\nid = "install"\ntype = "install_agent"\nsandbox = "agent_box"\n'
        'install = { files = { "policy/README" = "scripted policy" }, commands = ["test -f policy/README"] }\n'
    )
    task = tmp_path / "task.toml"
    task.write_text(text)
    MADE.clear()
    record = run_task(task, tmp_path, seed=7, bundle_dir=bundle, overrides={"sandbox": "hostshell"}, host=host)
    assert record["status"] == "succeeded", [s.get("error") for s in record["steps"]]
    assert record["score"] == 1.0
    desk = next(s for s in record["steps"] if s["id"] == "desk")["output"]
    assert desk["sandbox"] == "hostshell" and desk["url"].startswith("http://127.0.0.1:")
    box = next(s for s in record["steps"] if s["id"] == "agent_box")["output"]
    assert box["provider"] == "hostshell"
    assert len(MADE) == 2 and all(s.status() == "missing" for s in MADE), "the run left a sandbox running"

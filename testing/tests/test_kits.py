"""The kits check what they promise: a good env and step pass, and each broken one fails the check it should."""

from __future__ import annotations

from typing import Any

import pytest
from agentenv import PluginHost
from agentenv.contracts import Step, StepContext
from agentenv.hookspecs import hookimpl
from agentenv_runtime import Env, ToolError, tool
from agentenv_testing.envs import EnvConformance
from agentenv_testing.steps import StepConformance
from pydantic import BaseModel, ConfigDict

pytest_plugins = ["pytester"]


class Counter(Env):
    """A counter that only goes up."""

    name = "kit_counter"
    schema = "CREATE TABLE n (value INTEGER NOT NULL); INSERT INTO n VALUES (0);"

    @tool
    def add(self, amount: int) -> dict[str, int]:
        """Add to the counter.

        Args:
            amount: How much (at least 1).
        """
        if amount < 1:
            raise ToolError("add at least 1", field="amount")
        self.db.execute("UPDATE n SET value = value + ?", (amount,))
        return {"value": self.db.execute("SELECT value FROM n").fetchone()[0]}


class TestCounterEnv(EnvConformance):
    env_class = Counter


class AddSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    amount: int = 1


class AddStep(Step[AddSettings]):
    name = "kit_add"
    description = "Add to the counter."
    Settings = AddSettings

    async def execute(self, settings: AddSettings, ctx: StepContext) -> dict[str, Any]:
        return {"amount": settings.amount}


class TestAddStep(StepConformance):
    step_class = AddStep
    example = {"amount": 2}


class LaxSettings(BaseModel):
    amount: int = 1


class LaxStep(Step[LaxSettings]):
    name = "kit_lax"
    description = "Accepts anything."
    Settings = LaxSettings

    async def execute(self, settings: LaxSettings, ctx: StepContext) -> dict[str, Any]:
        return {}


class Undescribed(Env):
    name = "kit_undescribed"

    @tool
    def poke(self, x: int) -> None:
        pass


class Leaky(Env):
    """Its tool ignores its argument schema (a hand-made spec that accepts anything)."""

    name = "kit_leaky"
    schema = "CREATE TABLE t (x INTEGER);"

    @tool
    def put(self, x: int) -> None:
        """Put a number."""
        self.db.execute("INSERT INTO t VALUES (?)", (x,))


def test_a_step_that_accepts_unknown_fields_fails_the_kit() -> None:
    class Check(StepConformance):
        step_class = LaxStep

    with pytest.raises(AssertionError, match="accepts unknown fields"):
        Check().test_unknown_fields_are_refused()


def test_an_undescribed_tool_fails_the_kit() -> None:
    class Check(EnvConformance):
        env_class = Undescribed

    Undescribed._tool_specs = None
    spec = Undescribed.tool_specs()["poke"]
    spec._description = ""
    with pytest.raises(AssertionError, match="has no description"):
        Check().test_every_tool_describes_itself()
    Undescribed._tool_specs = None


def test_a_tool_that_runs_without_its_arguments_fails_the_kit(monkeypatch: pytest.MonkeyPatch) -> None:
    class Check(EnvConformance):
        env_class = Leaky

    def lenient_call(self: Env, tool_name: str, arguments: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        self.db.execute("INSERT INTO t VALUES (1)")
        return None, None

    monkeypatch.setattr(Leaky, "call", lenient_call)
    with pytest.raises(AssertionError, match="ran without its required arguments"):
        Check().test_bad_arguments_are_refused_and_change_nothing()


class StepsPlugin:
    """A plugin object (no entry point): its hook hands the kernel one step type."""

    @hookimpl
    def agentenv_register_steps(self) -> list[type[Step[Any]]]:
        return [AddStep]


def test_a_host_of_given_plugin_objects(plugin_host_of: Any) -> None:
    from agentenv.contracts import kinds

    host: PluginHost = plugin_host_of(StepsPlugin())
    assert host.get(kinds.STEPS, "kit_add") is AddStep
    assert [info.name for info in host.infos] == ["StepsPlugin"] and host.problems() == []


def test_the_temporary_config_keeps_stores_in_the_test_folder(agentenv_config: Any, tmp_path: Any) -> None:
    assert str(agentenv_config.file).startswith(str(tmp_path))
    document = agentenv_config.plugin_settings("agentenv-store-local")["document"]["path"]
    assert document.startswith(str(tmp_path))


def test_the_cli_fixture_runs_the_dispatcher(agentenv_cli: Any) -> None:
    result = agentenv_cli("--version")
    assert result.returncode == 0 and result.stdout.startswith("agentenv ")


# ---- the sandbox kit's port test says what is wrong -------------------------------------------------------------


class _FolderSandbox:
    """A work folder on this host; each exec runs in a session of its own, killed at teardown (the server too)."""

    def __init__(self, labels: dict[str, str], *, url_port: int | None = None, reap: bool = False) -> None:
        import tempfile
        from pathlib import Path

        self.root = Path(tempfile.mkdtemp(prefix="kit-sandbox-"))
        self.id, self.labels, self.url_port, self.reap = self.root.name, labels, url_port, reap
        self.sessions: list[int] = []

    def exec(self, command: list[str], *, timeout: float | None = None) -> Any:
        import subprocess

        from agentenv.contracts import ExecResult

        proc = subprocess.Popen(command, cwd=self.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)  # fmt: skip
        out, err = proc.communicate(timeout=timeout)
        self.sessions.append(proc.pid)
        if self.reap:  # a sandbox that ends what a command left running as soon as the command returns
            self._kill(proc.pid)
        return ExecResult(exit_code=proc.returncode, stdout=out, stderr=err)

    @staticmethod
    def _kill(session: int) -> None:
        import contextlib
        import os
        import signal

        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(session, signal.SIGKILL)

    def put_file(self, path: str, data: bytes) -> None:
        (self.root / path).write_bytes(data)

    def get_file(self, path: str) -> bytes:
        return (self.root / path).read_bytes()

    def url(self, port: int) -> str:
        return f"http://127.0.0.1:{self.url_port or port}"

    def status(self) -> str:
        return "running" if self.root.exists() else "missing"

    def teardown(self) -> None:
        import shutil

        for session in self.sessions:
            self._kill(session)
        shutil.rmtree(self.root, ignore_errors=True)


def _kit(**sandbox: Any) -> Any:
    from agentenv.contracts import Sandbox, SandboxProvider, SandboxSpec
    from agentenv_testing.sandboxes import SandboxProviderConformance

    class Provider(SandboxProvider):
        name = "kit_folder"

        def create(self, spec: SandboxSpec) -> Sandbox:
            return _FolderSandbox(dict(spec.labels), **sandbox)  # type: ignore[return-value]

        def list(self, labels: dict[str, str]) -> list[Sandbox]:
            return []

    class Kit(SandboxProviderConformance):
        ready_seconds = 3.0  # a local server answers at once; this bounds the failing cases

        def make_provider(self, tmp_path: Any) -> SandboxProvider:
            return Provider()

    return Kit()


def _port_test(kit: Any, tmp_path: Any) -> None:
    try:
        kit.test_port_is_reachable_until_teardown(tmp_path)
    finally:
        kit.teardown_method(None)


def test_the_sandbox_kit_port_test_passes_a_provider_that_serves(tmp_path: Any) -> None:
    _port_test(_kit(), tmp_path)


def test_the_sandbox_kit_says_when_url_does_not_reach_the_port(tmp_path: Any) -> None:
    from agentenv_testing.services import free_port

    with pytest.raises(AssertionError) as caught:
        _port_test(_kit(url_port=free_port()), tmp_path)
    message = str(caught.value)
    assert "but the server answers inside the sandbox at http://127.0.0.1:" in message
    assert "what `Sandbox.url(" in message and "ready_seconds=3.0" in message
    assert "publish the spec's `ports` to the host" in message


def test_the_sandbox_kit_says_when_the_server_does_not_outlive_its_command(tmp_path: Any) -> None:
    with pytest.raises(AssertionError) as caught:
        _port_test(_kit(reap=True), tmp_path)
    message = str(caught.value)
    assert "did not answer inside the sandbox" in message
    assert "must keep what a command starts in the background running until teardown" in message


def test_the_registry_fixture_skips_without_docker_registry_and_fails_under_ci(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """17 image-store tests skipped for want of a registry CI installs: under `.ci/run` (AGENTENV_CI=1) they fail."""
    pytester.makepyfile("def test_push(docker_registry):\n    assert docker_registry.url\n")
    monkeypatch.setenv("PATH", str(pytester.path))  # no docker-registry on it
    monkeypatch.delenv("AGENTENV_CI", raising=False)
    pytester.runpytest_inprocess().assert_outcomes(skipped=1)  # the plugin is active wherever it is installed
    monkeypatch.setenv("AGENTENV_CI", "1")
    failed = pytester.runpytest_inprocess()
    failed.assert_outcomes(errors=1)
    assert "AGENTENV_CI is set, so the tests that need it fail instead of skipping" in failed.stdout.str()

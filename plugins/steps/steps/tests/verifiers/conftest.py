"""Test-only steps and a plugin host that has them, so the verifiers run inside real tasks.

The verifiers read what earlier steps made: a deployed world, a prompt's response, a sandbox. These
helper steps make those things for real (a world built with the kernel's `build_world` and driven by
real tool calls; a sandbox that runs commands with subprocess in a temporary folder) without depending
on other step plugins. They register their resource under `key`, which the tests set to the step's id
(the kernel does not tell a step its own id).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Literal

import pytest
from agentenv.contracts import ExecResult, Sandbox, Step, StepFailed, kinds
from agentenv.plugins.host import Entry, PluginHost
from agentenv_runtime import build_world
from agentenv_testing.tasks import run_task
from pydantic import BaseModel, ConfigDict, Field


class Call(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    role: str = "default"


class WorldSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    key: str
    envs: list[str]
    artifacts: list[str] = Field(default_factory=list)
    calls: list[Call] = Field(default_factory=list)


class WorldStepForTests(Step):
    """Build a world and make tool calls in it, as an agent would (each call recorded in the trajectory)."""

    name = "test_world"
    Settings = WorldSettings
    creates_resources = True

    async def execute(self, settings: BaseModel, ctx: Any) -> dict[str, Any]:
        s: WorldSettings = settings  # type: ignore[assignment]
        world = build_world(s.envs, artifacts=s.artifacts, host=ctx.host)
        errors = []
        for call in s.calls:
            outcome = world.call(call.tool, call.args, role=call.role)
            if outcome.error:
                errors.append(outcome.error)
        ctx.add_resource(s.key, world)
        return {"envs": s.envs, "call_errors": errors}


class ResponseSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    response: str | None
    prompt: str = "Please help."


class ResponseStepForTests(Step):
    """Record a response string as a prompt step would (the verifiers only read `response`)."""

    name = "test_response"
    Settings = ResponseSettings

    async def execute(self, settings: BaseModel, ctx: Any) -> dict[str, Any]:
        s: ResponseSettings = settings  # type: ignore[assignment]
        return {"prompt": s.prompt, "response": s.response}


class FailStepForTests(Step):
    """Always fails (to test verifiers whose inputs are missing)."""

    name = "test_fail"

    async def execute(self, settings: BaseModel, ctx: Any) -> dict[str, Any]:
        raise StepFailed("failed on purpose")


class FolderSandbox(Sandbox):
    """A real local sandbox for tests: a temporary folder; commands run there with subprocess."""

    def __init__(self, files: dict[str, str]) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="agentenv-verifiers-test-"))
        self.id, self.labels = self.root.name, {}
        for path, text in files.items():
            self.put_file(path, text.encode())

    def _path(self, path: str) -> Path:
        return self.root / path.lstrip("/")

    def exec(self, command: list[str], *, timeout: float | None = None) -> ExecResult:
        done = subprocess.run(command, cwd=self.root, capture_output=True, text=True, timeout=timeout, check=False)
        return ExecResult(exit_code=done.returncode, stdout=done.stdout, stderr=done.stderr)

    def put_file(self, path: str, data: bytes) -> None:
        target = self._path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    def get_file(self, path: str) -> bytes:
        return self._path(path).read_bytes()

    def url(self, port: int) -> str:
        return f"http://127.0.0.1:{port}"

    def status(self) -> Literal["running", "stopped", "missing"]:
        return "running" if self.root.exists() else "missing"

    def teardown(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


class SandboxSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    key: str
    files: dict[str, str] = Field(default_factory=dict)


class SandboxStepForTests(Step):
    """Create a FolderSandbox holding `files`; torn down when the run ends."""

    name = "test_sandbox"
    Settings = SandboxSettings
    creates_resources = True

    async def execute(self, settings: BaseModel, ctx: Any) -> dict[str, Any]:
        s: SandboxSettings = settings  # type: ignore[assignment]
        box = FolderSandbox(s.files)
        ctx.add_resource(s.key, box, box.teardown)
        return {"root": str(box.root)}


class PutFilesSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sandbox: str
    files: dict[str, str]


class PutFilesStepForTests(Step):
    """Write files into an earlier step's sandbox through its own `put_file` (as an agent's work would)."""

    name = "test_put_files"
    Settings = PutFilesSettings

    async def execute(self, settings: BaseModel, ctx: Any) -> dict[str, Any]:
        s: PutFilesSettings = settings  # type: ignore[assignment]
        box = ctx.resource(s.sandbox, object)
        for path, text in s.files.items():
            box.put_file(path, text.encode())
        return {"written": sorted(s.files)}


TEST_STEPS: tuple[type[Step], ...] = (
    WorldStepForTests,
    ResponseStepForTests,
    FailStepForTests,
    SandboxStepForTests,
    PutFilesStepForTests,
)


@pytest.fixture
def host() -> PluginHost:
    """The installed plugins, plus the test-only steps above."""
    fresh = PluginHost()
    steps = fresh.registry(kinds.STEPS)
    for cls in TEST_STEPS:
        steps[cls.name] = Entry(cls.name, cls, "verifiers-tests", "agentenv-verifiers-tests")
    return fresh


@pytest.fixture
def run(host: PluginHost, tmp_path: Path) -> Any:
    """`run(steps, **task_fields)` runs a task with the test host and returns the run record, plus
    `by_id` (step id → step record) for convenience."""
    counter = iter(range(1000))

    def _run(
        steps: list[dict[str, Any]], *, overrides: dict[str, Any] | None = None, config: Any = None, **fields: Any
    ) -> dict[str, Any]:
        task = {"name": f"t{next(counter)}", "steps": steps, **fields}
        record = run_task(task, tmp_path, host=host, overrides=overrides, config=config)
        record["by_id"] = {s["id"]: s for s in record["steps"]}
        return record

    return _run

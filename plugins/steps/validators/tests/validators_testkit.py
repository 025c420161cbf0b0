"""Test helpers: test-only steps and envs, so the validators run inside real tasks with real worlds.

`test_world` builds a world with the kernel's `build_world` (installed envs plus the broken test env
below) and registers it under its own step id, as deploy_env does; `test_output` records a given output,
as a prompt step or a verifier would.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from agentenv.contracts import Step, StepFailed
from agentenv_runtime import Env, World, build_world, tool
from pydantic import BaseModel, ConfigDict, Field

ACME = ["acme"]
ALL = ["helpdesk", "email", "slack"]


class BrokenNotesEnv(Env):
    """A notes app whose `find` tool has no description and an untyped parameter."""

    name = "broken_notes"
    description = "Notes, badly described."
    schema = "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL);"

    @tool
    def add_note(self, text: str) -> dict[str, Any]:
        """Add a note.

        Args:
            text: What to write.
        """
        cursor = self.db.execute("INSERT INTO notes (text) VALUES (?)", (text,))
        return {"id": cursor.lastrowid}

    @tool(read_only=True)
    def find(self, query) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
        return self.query("SELECT * FROM notes WHERE text LIKE ?", (f"%{query}%",))


class WorldSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    envs: list[str]
    artifacts: list[str] = Field(default_factory=list)
    calls: list[dict[str, Any]] = Field(default_factory=list)


class WorldStepForTests(Step):
    """Build a world (and make tool calls in it), registered under this step's id."""

    name = "test_world"
    Settings = WorldSettings
    creates_resources = True

    async def execute(self, settings: BaseModel, ctx: Any) -> dict[str, Any]:
        s: WorldSettings = settings  # type: ignore[assignment]
        world = build_world(s.envs, artifacts=s.artifacts, host=ctx.host)
        for call in s.calls:
            outcome = world.call(call["tool"], call.get("args", {}))
            if outcome.error:
                raise StepFailed(str(outcome.error))
        ctx.add_resource(ctx.step_id, world)
        return {"envs": s.envs, "export": world.export()}


class OutputSettings(BaseModel):
    model_config = ConfigDict(extra="allow")


class OutputStepForTests(Step):
    """Record its own fields as its output (a prompt step's `structured`, a verifier's score and rows)."""

    name = "test_output"
    Settings = OutputSettings

    async def execute(self, settings: BaseModel, ctx: Any) -> dict[str, Any]:
        return dict(settings.model_extra or {})


class ExportSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    world: str


class ExportStepForTests(Step):
    """Record the export and trajectory length of an earlier step's world (to see what a step changed)."""

    name = "test_export"
    Settings = ExportSettings

    async def execute(self, settings: BaseModel, ctx: Any) -> dict[str, Any]:
        world = ctx.resource(settings.world, World)
        return {"export": world.export(), "events": len(world.trajectory.events)}


class FailStepForTests(Step):
    name = "test_fail"

    async def execute(self, settings: BaseModel, ctx: Any) -> dict[str, Any]:
        raise StepFailed("failed on purpose")


def world_step(step_id: str = "world", envs: list[str] | None = None, artifacts: list[str] | None = None) -> dict:
    return {
        "id": step_id,
        "type": "test_world",
        "envs": envs or ALL,
        "artifacts": ACME if artifacts is None else artifacts,
    }


@contextmanager
def served(envs: list[str], artifacts: list[str] | None = None, **app_kwargs: Any) -> Iterator[tuple[str, Any]]:
    """A world served by the gateway on loopback: (base URL, world)."""
    from agentenv_gateway.app import build_app
    from agentenv_gateway.server import serve_in_thread

    world = build_world(envs, artifacts=ACME if artifacts is None else artifacts)
    with serve_in_thread(build_app(world, **app_kwargs)) as url:
        yield url, world

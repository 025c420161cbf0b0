"""Helpers of the DAG-engine tests: test-only step types, a plugin host that holds them, a tiny world.

In-process tests build step classes with `make_step` (each runs an async function the test writes) and
register them into a fresh `PluginHost` that has loaded only the real `agentenv-store-local` plugin.
CLI tests install `FIXTURE_PLUGIN` (a throw-away distribution with real step types) with
`install_engine_fixture` and point `AGENTENV_CONFIG` at stores under the test's `tmp_path`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from agentenv import validate_contribution
from agentenv.config import Config
from agentenv.contracts import NoSettings, Step, kinds
from agentenv.plugins.discovery import discover
from agentenv.plugins.host import Entry, PluginHost
from agentenv_runtime import Env, tool
from agentenv_runtime.engine.runner import TaskRunner
from agentenv_runtime.engine.task import TaskFile, read_task
from agentenv_runtime.world.world import World
from agentenv_testing.installs import KERNEL_RANGE, RUNTIME_RANGE, install_fixture_plugin
from agentenv_testing.tasks import temporary_config, write_task
from pydantic import BaseModel

TEST_PLUGIN = "engine-tests"
TEST_DIST = "agentenv-engine-tests"
STORE_DIST = "agentenv-store-local"

Run = Callable[[Any, Any], Awaitable[dict[str, Any] | None]]


# ---- test-only step types ----------------------------------------------------------------------------


def make_step(
    name: str,
    run: Run,
    *,
    settings: type[BaseModel] = NoSettings,
    verifier: bool = False,
    creates_resources: bool = False,
) -> type[Step]:
    """A Step subclass named `name` whose `execute(settings, ctx)` awaits `run(settings, ctx)`."""

    async def execute(self: Step, step_settings: BaseModel, ctx: Any) -> dict[str, Any]:
        return await run(step_settings, ctx) or {}

    attrs = {
        "name": name,
        "description": f"test step {name}",
        "Settings": settings,
        "verifier": verifier,
        "creates_resources": creates_resources,
        "execute": execute,
    }
    return type(f"TestStep_{name}", (Step,), attrs)


class TallyEnv(Env):
    """A one-table app: `mark` adds a row, so the number of rows counts the calls that stuck."""

    name = "tally"
    description = "Counts marks (engine tests)."
    schema = "CREATE TABLE marks (id INTEGER PRIMARY KEY, label TEXT NOT NULL);"

    @tool
    def mark(self, label: str) -> dict[str, Any]:
        """Add a mark.

        Args:
            label: What the mark says.
        """
        cur = self.db.execute("INSERT INTO marks (label) VALUES (?)", (label,))
        return {"id": cur.lastrowid}


def marks(world: World) -> list[str]:
    return [row["label"] for row in world.env("tally").query("SELECT label FROM marks ORDER BY id")]


def deploy_tally_step(name: str = "deploy_tally", deployed: list[World] | None = None) -> type[Step]:
    """A deploy step (creates_resources) that puts a fresh tally world under its own step id."""

    async def run(settings: Any, ctx: Any) -> dict[str, Any]:
        world = World([TallyEnv()], seed=ctx.seed)
        ctx.add_resource(ctx.step_id, world)
        if deployed is not None:
            deployed.append(world)
        return {"tools": len(world.tools)}

    return make_step(name, run, creates_resources=True)


# ---- hosts and runs ----------------------------------------------------------------------------------

_STORE_INFOS = [info for info in discover({"AGENTENV_PLUGINS": STORE_DIST}) if info.dist == STORE_DIST]


def register(host: PluginHost, kind_name: str, obj: Any) -> None:
    """Put a contribution into a host's registry after the same validation the kernel gives plugins'."""
    kind = kinds.BY_NAME[kind_name]
    key, problem = validate_contribution(kind, obj)
    assert problem is None, problem
    assert key not in host.registry(kind), f"{kind_name} {key!r} is already registered"
    host.registries[kind.name][key] = Entry(key, obj, TEST_PLUGIN, TEST_DIST)


def engine_host(*steps: type[Step]) -> PluginHost:
    """A fresh host: the real local store plugin loaded the ordinary way, plus the given step types."""
    assert _STORE_INFOS, f"{STORE_DIST} must be installed for the engine tests"
    infos = [dataclasses.replace(info, problems=[], contributes={}) for info in _STORE_INFOS]
    host = PluginHost(environ={}, infos=infos)
    host.load()
    assert "document:sqlite" in host.registries[kinds.STORES.name], host.problems()
    for step in steps:
        register(host, "steps", step)
    return host


def task_file(tmp_path: Path, steps: list[dict[str, Any]], **fields: Any) -> TaskFile:
    """Write a task (JSON) under tmp_path and read it back the way the CLI does."""
    data = {"name": fields.pop("name", "t"), **fields, "steps": steps}
    return read_task(write_task(data, tmp_path / "tasks"))


def runner_for(host: PluginHost, tmp_path: Path, config: Config | None = None) -> TaskRunner:
    return TaskRunner(host, config or temporary_config(tmp_path))


def run_task(runner: TaskRunner, task: TaskFile, *, seed: int = 0, **kwargs: Any) -> dict[str, Any]:
    return asyncio.run(runner.run(task, seed=seed, **kwargs))


def steps_by_id(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {step["id"]: step for step in record["steps"]}


def brief(record: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    """(id, status, error) per step: an assertion message that says what went wrong."""
    return [(step["id"], step["status"], step["error"]) for step in record["steps"]]


def statuses(record: dict[str, Any]) -> dict[str, str]:
    return {step["id"]: step["status"] for step in record["steps"]}


# ---- a fixture distribution for CLI tests ----------------------------------------------------------------

FIXTURE_DIST = "agentenv-engine-fixture"
FIXTURE_VERSION = "1.0.0"
FIXTURE_BUNDLE = "engine-fixture-bundle"
ONLY_FIXTURE_PLUGINS = "engine-fixture,store-local"
"""`AGENTENV_PLUGINS` for CLI tests: the fixture, the local stores and the runtime (which the fixture requires),
whatever else is installed."""

FIXTURE_STEPS = '''
    """Step types for the engine's CLI tests: a tally world, a mark, a fixed score, a child process."""

    from __future__ import annotations

    import asyncio
    import subprocess
    from pathlib import Path
    from typing import Any

    from pydantic import BaseModel, ConfigDict, Field

    from agentenv.contracts import Step, StepFailed
    from agentenv_runtime import Env, tool
    from agentenv_runtime.world.world import World


    class Strict(BaseModel):
        model_config = ConfigDict(extra="forbid")


    class TallyEnv(Env):
        name = "tally"
        schema = "CREATE TABLE marks (id INTEGER PRIMARY KEY, label TEXT NOT NULL);"

        @tool
        def mark(self, label: str) -> dict:
            """Add a mark.

            Args:
                label: What the mark says.
            """
            cur = self.db.execute("INSERT INTO marks (label) VALUES (?)", (label,))
            return {"id": cur.lastrowid}


    class DeployTally(Step):
        """Deploy a one-app tally world."""

        name = "fixture_deploy"
        Settings = Strict
        creates_resources = True

        async def execute(self, settings, ctx):
            world = World([TallyEnv()], seed=ctx.seed)
            world.clock.set("2026-01-05T09:00:00Z", mode="frozen")  # virtual time: same calls, same digest
            ctx.add_resource(ctx.step_id, world)
            return {"envs": ["tally"]}


    class MarkSettings(Strict):
        world: str = Field(description="The deploy step whose world to mark.")
        label: str = "x"
        times: int = Field(1, ge=1)


    class Mark(Step):
        """Call the tally world's `mark` tool."""

        name = "fixture_mark"
        Settings = MarkSettings

        async def execute(self, settings, ctx):
            world = ctx.resource(settings.world, World)
            for _ in range(settings.times):
                outcome = world.call("mark", {"label": settings.label})
                if not outcome.ok:
                    raise StepFailed(str(outcome.error))
            return {"marked": settings.times}


    class ScoreSettings(Strict):
        score: float = Field(ge=0, le=1, description="The score to report.")
        graded: bool = Field(True, description="False: report the result as not graded (a judge with no model).")


    class FixedScore(Step):
        """A verifier that reports a fixed score."""

        name = "fixture_score"
        Settings = ScoreSettings
        verifier = True

        async def execute(self, settings, ctx):
            out = {"score": settings.score, "rows": [{"check": "fixed", "score": settings.score}]}
            return out if settings.graded else {**out, "graded": False, "passed": False, "not_graded": ["fixed"]}


    class SpawnSettings(Strict):
        pid_file: str
        teardown_file: str


    class SpawnChild(Step):
        """Start `sleep 60` as a resource of the run, then block until cancelled."""

        name = "fixture_spawn"
        Settings = SpawnSettings

        async def execute(self, settings, ctx):
            child = subprocess.Popen(["sleep", "60"])

            def teardown():
                child.terminate()
                child.wait(timeout=10)
                Path(settings.teardown_file).write_text(str(child.returncode))

            ctx.add_resource(ctx.step_id, child, teardown)
            Path(settings.pid_file + ".tmp").write_text(str(child.pid))
            Path(settings.pid_file + ".tmp").rename(settings.pid_file)
            await asyncio.Event().wait()
            return {}


    class MeetSettings(Strict):
        group: str
        parties: int = Field(2, ge=1)


    ARRIVED: dict[str, int] = {}


    class Meet(Step):
        """Wait until `parties` runs are in this step at once (a batch's concurrency, shown without timing)."""

        name = "fixture_meet"
        Settings = MeetSettings

        async def execute(self, settings, ctx):
            ARRIVED[settings.group] = ARRIVED.get(settings.group, 0) + 1
            for _ in range(3000):  # 30 s for the other runs to arrive: they only can if they run at the same time
                if ARRIVED[settings.group] >= settings.parties:
                    return {"met": ARRIVED[settings.group]}
                await asyncio.sleep(0.01)
            raise StepFailed(f"only {ARRIVED[settings.group]} of {settings.parties} runs arrived")


    STEPS = [DeployTally, Mark, FixedScore, SpawnChild, Meet]
'''

FIXTURE_PLUGIN = """
    from pathlib import Path

    from agentenv.hookspecs import hookimpl


    @hookimpl
    def agentenv_register_steps():
        from engine_fixture_steps import STEPS

        return STEPS


    @hookimpl
    def agentenv_register_bundles():
        from agentenv.contracts import BundleRef

        folder = Path(__file__).parent / "engine_fixture_bundle"
        return [BundleRef("engine-fixture-bundle", folder, "Two tiny tasks (engine tests).")]
"""

BUNDLE_TASKS = {
    "first": {
        "name": "first",
        "steps": [
            {"id": "deploy", "type": "fixture_deploy"},
            {"id": "mark", "type": "fixture_mark", "world": "deploy"},
        ],
    },
    "second": {
        "name": "second",
        "steps": [{"id": "score", "type": "fixture_score", "score": 1.0}],
    },
}


def write_bundle(
    folder: Path,
    requires: dict[str, str] | None = None,
    tasks: dict[str, Any] | None = None,
    name: str | None = None,
) -> Path:
    """A bundle folder: bundle.toml (name, requires) and tasks/*.json."""
    (folder / "tasks").mkdir(parents=True, exist_ok=True)
    lines = [f'name = "{name or folder.name}"', 'description = "engine test bundle"', "", "[requires]"]
    lines += [f'"{dist}" = "{spec}"' for dist, spec in (requires or {}).items()]
    (folder / "bundle.toml").write_text("\n".join(lines) + "\n")
    for stem, task in (BUNDLE_TASKS if tasks is None else tasks).items():
        (folder / "tasks" / f"{stem}.json").write_text(json.dumps(task))
    return folder


def install_engine_fixture(root: Path) -> Path:
    """Install `agentenv-engine-fixture` (its step types and a bundle) into `root`; returns `root`."""
    install_fixture_plugin(
        root,
        FIXTURE_DIST,
        FIXTURE_VERSION,
        "engine-fixture",
        "engine_fixture_plugin",
        FIXTURE_PLUGIN,
        [KERNEL_RANGE, RUNTIME_RANGE],
        extra_modules={"engine_fixture_steps": FIXTURE_STEPS},
    )
    write_bundle(root / "engine_fixture_bundle", {FIXTURE_DIST: ">=1.0,<2"}, name=FIXTURE_BUNDLE)
    return root


def store_config(tmp_path: Path) -> Path:
    """A config file that keeps every local store under tmp_path (for `AGENTENV_CONFIG`)."""
    path = tmp_path / "config.toml"
    path.write_text(
        f'[plugins.{STORE_DIST}.document]\npath = "{tmp_path / "records.sqlite3"}"\n\n'
        f'[plugins.{STORE_DIST}.object]\nroot = "{tmp_path / "objects"}"\n'
    )
    return path


def setup_cli(site: Path, tmp_path: Path, monkeypatch: Any) -> Path:
    """For in-process CLI tests: the fixture plugin on `site` (the `on_path` fixture), stores under tmp_path,
    and only the kernel, the fixture and the local stores enabled. Returns the config file."""
    install_engine_fixture(site)
    config = store_config(tmp_path)
    monkeypatch.setenv("AGENTENV_CONFIG", str(config))
    monkeypatch.setenv("AGENTENV_PLUGINS", ONLY_FIXTURE_PLUGINS)
    return config

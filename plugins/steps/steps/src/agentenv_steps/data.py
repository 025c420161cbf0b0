"""Data in a deployed world: load artifacts, snapshot the world as artifacts, reset it."""

from __future__ import annotations

import asyncio
import hashlib
import posixpath
import re
from pathlib import Path
from typing import Any

from agentenv.contracts import StepContext, StepFailed
from agentenv_runtime import Artifact, World, WorldError
from pydantic import Field, field_validator

from agentenv_steps import _artifacts
from agentenv_steps._common import CoreStep, StepSettings, StrList, deployed_world, missing_step
from agentenv_steps._produced import choose, fetch, file_contents, produced, split_step_ref
from agentenv_steps._refs import deployed_agent, sandbox_of

SNAPSHOT_PREFIX = "artifacts"
SNAPSHOT_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


def artifact_key(name: str, env: str) -> str:
    """Where snapshot_env saves one env's artifact (load it back with `store:<key>`)."""
    return f"{SNAPSHOT_PREFIX}/{name}/{env}.json"


def world_key(name: str) -> str:
    return f"{SNAPSHOT_PREFIX}/{name}/world.snapshot"


# ---- load_artifact ----------------------------------------------------------------------------------
class LoadArtifactSettings(StepSettings):
    env: str | None = Field(None, description="The deploy_env step whose world loads the artifacts.")
    sandbox: str | None = Field(
        None,
        description="Instead, a step whose sandbox gets the artifacts as files: deploy_sandbox, "
        "run_docker_container, or an agent that install_agent put in a sandbox.",
    )
    agent: str | None = Field(
        None, description="Instead, a deploy_agent step whose sandbox (from install_agent) gets them as files."
    )
    path: str = Field(
        "artifacts", min_length=1, description="The folder in the sandbox the files go to (relative: its work folder)."
    )
    artifacts: StrList = Field(
        min_length=1,
        description="Into a world: NAME, ENV=NAME_OR_PATH, store:KEY, step:ID[/NAME] (what an earlier step stored), "
        "ENV=store:KEY or ENV=step:ID. Into a sandbox: a bundle file or folder (PATH or file:PATH), store:KEY, "
        "step:ID[/NAME].",
    )
    snapshot_after_load: bool | str = Field(
        False,
        description="Then save the loaded world as snapshot_env does (true: named after this step; a text: that "
        "name), so reset_env `snapshot` or a later load may name this step.",
    )

    @field_validator("path")
    @classmethod
    def _inside(cls, value: str) -> str:
        if ".." in value.replace("\\", "/").split("/"):
            raise ValueError(f"{value!r}: `..` is not allowed; name a folder inside the sandbox")
        return value

    @field_validator("snapshot_after_load")
    @classmethod
    def _name(cls, value: bool | str) -> bool | str:
        if isinstance(value, str) and not SNAPSHOT_NAME.fullmatch(value):
            raise ValueError(f"{value!r}: a snapshot name is letters, digits, '_', '.' and '-'")
        return value

    def target(self) -> tuple[str, str] | None:
        """(field, step id) of the one target given, or None when not exactly one is."""
        given = [(field, getattr(self, field)) for field in ("env", "sandbox", "agent") if getattr(self, field)]
        return given[0] if len(given) == 1 else None


class LoadArtifact(CoreStep[LoadArtifactSettings]):
    name = "load_artifact"
    description = (
        "Load artifacts into a deployed world (packaged, files, stored, or an earlier step's), or write them as "
        "files into a sandbox or an agent's sandbox; optionally snapshot the world after loading."
    )
    Settings = LoadArtifactSettings

    def check(self, settings: LoadArtifactSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        target = settings.target()
        if target is None:
            return [("env", "give exactly one target: `env` (a world), `sandbox` or `agent` (files in its sandbox)")]
        field, step_id = target
        what = {"env": "deploy_env", "sandbox": "deploy_sandbox", "agent": "deploy_agent"}[field]
        problems = missing_step(field, step_id, step_ids, what)
        if field == "env":
            problems += _artifacts.spec_problems("artifacts", settings.artifacts)
        else:
            if settings.snapshot_after_load:
                problems.append(("snapshot_after_load", "only a world is snapshotted; load into `env` to use it"))
            for index, text in enumerate(settings.artifacts):
                if _artifacts.parse_spec_or_none(text) is None or "=" in text.split(":", 1)[0]:
                    problems.append(
                        (
                            f"artifacts[{index}]",
                            f"{text!r}: a sandbox takes files: a bundle PATH (or file:PATH), store:KEY or "
                            "step:ID[/NAME]; ENV=… and packaged names load into a world (`env`)",
                        )
                    )
        for index, text in enumerate(settings.artifacts):
            spec = _artifacts.parse_spec_or_none(text)
            if spec is not None and spec.from_step:
                problems += missing_step(f"artifacts[{index}]", split_step_ref(spec.value)[0], step_ids, "earlier")
        return problems

    async def execute(self, settings: LoadArtifactSettings, ctx: StepContext) -> dict[str, Any]:
        if settings.env is None:
            return await self._into_sandbox(settings, ctx)
        world: World = deployed_world(ctx, settings.env)
        classes = {name: type(env) for name, env in world.envs.items()}
        try:
            pairs = _artifacts.resolve_all(settings.artifacts, classes, ctx)
        except StepFailed as exc:
            raise StepFailed(f"field `artifacts`: {str(exc).removeprefix('field `artifacts`: ')}") from None
        saved = {name: (env.snapshot(), env._initial, list(env.loaded)) for name, env in world.envs.items()}
        try:
            for env_name, artifact in pairs:
                world.env(env_name).load(artifact)
        except (ValueError, WorldError) as exc:
            for name, (state, initial, loaded) in saved.items():  # all or nothing
                env = world.envs[name]
                env.restore(state)
                env._initial, env.loaded = initial, loaded
            raise StepFailed(f"field `artifacts`: {exc}") from None
        output: dict[str, Any] = {"artifacts": [artifact.ref for _, artifact in pairs]}
        if settings.snapshot_after_load:
            name = settings.snapshot_after_load if isinstance(settings.snapshot_after_load, str) else ctx.step_id
            snapshot = save_world(world, str(name), ctx)
            output |= {"snapshot": snapshot, "world": snapshot["world"]}
        return output

    async def _into_sandbox(self, settings: LoadArtifactSettings, ctx: StepContext) -> dict[str, Any]:
        if settings.agent is not None:
            box = deployed_agent(ctx, settings.agent).sandbox
            if box is None:
                raise StepFailed(
                    f"field `agent`: agent {settings.agent!r} runs in no sandbox; put it in one with install_agent "
                    "(`agent` field) first, or load into the world (`env`)"
                )
        else:
            box = sandbox_of(ctx, str(settings.sandbox), "sandbox")
        files: list[tuple[str, bytes]] = []
        for index, text in enumerate(settings.artifacts):
            files += sandbox_files(text, ctx, f"artifacts[{index}]")
        written = []
        for name, data in files:
            target = posixpath.join(settings.path, name)
            try:
                await asyncio.to_thread(box.put_file, target, data)
            except (OSError, ValueError, RuntimeError) as exc:
                raise StepFailed(f"field `path`: could not write {target} in the sandbox: {exc}") from None
            written.append({"path": target, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()})
        return {"sandbox": getattr(box, "id", None), "files": written}


def sandbox_files(text: str, ctx: StepContext, field: str) -> list[tuple[str, bytes]]:
    """(name under the target folder, bytes) of one spec written into a sandbox."""
    spec = _artifacts.parse_spec(text)
    if spec.stored:
        try:
            return [(posixpath.basename(spec.value), bytes(ctx.objects.get(spec.value)))]
        except KeyError:
            raise StepFailed(f"field `{field}`: no object {spec.value!r} in the object store") from None
    if spec.from_step:
        step_id, name = split_step_ref(spec.value)
        return [
            (item.name, fetch(ctx, item, field)) for item in choose(produced(ctx, step_id, field), step_id, name, field)
        ]
    relative = spec.value.removeprefix("file:")
    return file_contents(Path(relative).name, f"file:{relative}", ctx, field)


# ---- snapshot_env -----------------------------------------------------------------------------------
class SnapshotEnvSettings(StepSettings):
    env: str = Field(description="The deploy_env step whose world to save.")
    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$", description="Artifact name; objects go under artifacts/<name>/.")


class SnapshotEnv(CoreStep[SnapshotEnvSettings]):
    name = "snapshot_env"
    description = "Save every env of a world as an artifact (plus the whole-world snapshot) in the object store."
    Settings = SnapshotEnvSettings

    def check(self, settings: SnapshotEnvSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        return missing_step("env", settings.env, step_ids, "deploy_env")

    async def execute(self, settings: SnapshotEnvSettings, ctx: StepContext) -> dict[str, Any]:
        return save_world(deployed_world(ctx, settings.env), settings.name, ctx)


def save_world(world: World, name: str, ctx: StepContext) -> dict[str, Any]:
    """Each env of `world` as artifact `name` and the whole world's snapshot, in the object store."""
    artifacts = {}
    for env_name, env in world.envs.items():
        artifact = Artifact.build(
            name=name,
            env=env_name,
            version=ctx.run_id,
            data=env.export(),
            description=f"Snapshot of {env_name} in world {world.name} (run {ctx.run_id}, task {ctx.task_name}).",
        )
        key = artifact_key(name, env_name)
        ctx.objects.put(key, artifact.to_bytes())
        artifacts[env_name] = {"key": key, "sha256": artifact.sha256, "ref": artifact.ref}
    blob = world.snapshot()
    key = world_key(name)
    ctx.objects.put(key, blob)
    return {"name": name, "artifacts": artifacts, "world": {"key": key, "sha256": hashlib.sha256(blob).hexdigest()}}


# ---- reset_env --------------------------------------------------------------------------------------
class ResetEnvSettings(StepSettings):
    env: str = Field(description="The deploy_env step whose world to reset.")
    snapshot: str | None = Field(
        None,
        description="A snapshot_env step id (or a load_artifact with snapshot_after_load): restore that world "
        "snapshot; absent = back to the loaded state.",
    )


class ResetEnv(CoreStep[ResetEnvSettings]):
    name = "reset_env"
    description = "Return a world to its loaded state, or restore a snapshot_env snapshot."
    Settings = ResetEnvSettings

    def check(self, settings: ResetEnvSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        return missing_step("env", settings.env, step_ids, "deploy_env") + missing_step(
            "snapshot", settings.snapshot, step_ids, "snapshot_env"
        )

    async def execute(self, settings: ResetEnvSettings, ctx: StepContext) -> dict[str, Any]:
        world: World = deployed_world(ctx, settings.env)
        if settings.snapshot is None:
            world.reset()
            return {"restored": "initial"}
        saved = (ctx.outputs.get(settings.snapshot) or {}).get("world")
        if not isinstance(saved, dict) or "key" not in saved:
            raise StepFailed(
                f"field `snapshot`: step {settings.snapshot!r} has not saved a world snapshot; name a "
                "snapshot_env step (or a load_artifact with snapshot_after_load) that ran before this one (add it "
                "to depends_on)"
            )
        try:
            blob = ctx.objects.get(saved["key"])
        except KeyError:
            raise StepFailed(f"field `snapshot`: object {saved['key']!r} is gone from the object store") from None
        if saved.get("sha256") and hashlib.sha256(blob).hexdigest() != saved["sha256"]:
            raise StepFailed(
                f"field `snapshot`: object {saved['key']!r} changed since {settings.snapshot!r} saved it "
                "(another run wrote the same snapshot name); give snapshot_env a unique `name`"
            )
        try:
            world.restore(blob)
        except WorldError as exc:
            raise StepFailed(f"field `snapshot`: {exc}") from None
        return {"restored": "snapshot", "key": saved["key"]}


# ---- rewind_env -------------------------------------------------------------------------------------
class RewindEnvSettings(StepSettings):
    env: str = Field(description="The deploy_env step (with `rewindable = true`) whose world to rewind.")
    to_event: int = Field(
        ge=0,
        description="A tool call's position in the world's trajectory (its `seq`): the world goes back to right "
        "after that call and what it set off.",
    )


class RewindEnv(CoreStep[RewindEnvSettings]):
    name = "rewind_env"
    description = "Put a world back to right after one of its tool calls (a trajectory position; needs rewindable)."
    Settings = RewindEnvSettings

    def check(self, settings: RewindEnvSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        return missing_step("env", settings.env, step_ids, "deploy_env")

    async def execute(self, settings: RewindEnvSettings, ctx: StepContext) -> dict[str, Any]:
        world: World = deployed_world(ctx, settings.env)
        try:
            dropped = world.rewind(settings.to_event)
        except WorldError as exc:
            fix = f"; set `rewindable = true` on deploy_env {settings.env!r}" if world.rewind_points is None else ""
            raise StepFailed(f"field `to_event`: {exc}{fix}") from None
        return {"to_event": settings.to_event, "now": world.clock.now().isoformat(), "dropped": dropped}

"""Data in a deployed world: load artifacts, snapshot the world as artifacts, reset it."""

from __future__ import annotations

import hashlib
from typing import Any

from agentenv.contracts import StepContext, StepFailed
from agentenv_runtime import Artifact, World, WorldError
from pydantic import Field

from agentenv_steps import _artifacts
from agentenv_steps._common import CoreStep, StepSettings, StrList, deployed_world, missing_step

SNAPSHOT_PREFIX = "artifacts"


def artifact_key(name: str, env: str) -> str:
    """Where snapshot_env saves one env's artifact (load it back with `store:<key>`)."""
    return f"{SNAPSHOT_PREFIX}/{name}/{env}.json"


def world_key(name: str) -> str:
    return f"{SNAPSHOT_PREFIX}/{name}/world.snapshot"


# ---- load_artifact ----------------------------------------------------------------------------------
class LoadArtifactSettings(StepSettings):
    env: str = Field(description="The deploy_env step whose world loads the artifacts.")
    artifacts: StrList = Field(
        min_length=1, description="Artifact specs: NAME, ENV=NAME_OR_PATH, store:KEY, ENV=store:KEY."
    )


class LoadArtifact(CoreStep[LoadArtifactSettings]):
    name = "load_artifact"
    description = "Load artifacts (packaged, files, or stored by snapshot_env) into a deployed world."
    Settings = LoadArtifactSettings

    def check(self, settings: LoadArtifactSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        return missing_step("env", settings.env, step_ids, "deploy_env") + _artifacts.spec_problems(
            "artifacts", settings.artifacts
        )

    async def execute(self, settings: LoadArtifactSettings, ctx: StepContext) -> dict[str, Any]:
        world: World = deployed_world(ctx, settings.env)
        classes = {name: type(env) for name, env in world.envs.items()}
        try:
            pairs = _artifacts.resolve_all(settings.artifacts, classes, ctx)
        except StepFailed as exc:
            raise StepFailed(f"field `artifacts`: {exc}") from None
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
        return {"artifacts": [artifact.ref for _, artifact in pairs]}


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
        world: World = deployed_world(ctx, settings.env)
        artifacts = {}
        for env_name, env in world.envs.items():
            artifact = Artifact.build(
                name=settings.name,
                env=env_name,
                version=ctx.run_id,
                data=env.export(),
                description=f"Snapshot of {env_name} in world {world.name} (run {ctx.run_id}, task {ctx.task_name}).",
            )
            key = artifact_key(settings.name, env_name)
            ctx.objects.put(key, artifact.to_bytes())
            artifacts[env_name] = {"key": key, "sha256": artifact.sha256, "ref": artifact.ref}
        blob = world.snapshot()
        key = world_key(settings.name)
        ctx.objects.put(key, blob)
        return {
            "name": settings.name,
            "artifacts": artifacts,
            "world": {"key": key, "sha256": hashlib.sha256(blob).hexdigest()},
        }


# ---- reset_env --------------------------------------------------------------------------------------
class ResetEnvSettings(StepSettings):
    env: str = Field(description="The deploy_env step whose world to reset.")
    snapshot: str | None = Field(
        None, description="A snapshot_env step id: restore that world snapshot; absent = back to the loaded state."
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
                "snapshot_env step that ran before this one (add it to depends_on)"
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

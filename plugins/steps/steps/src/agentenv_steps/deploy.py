"""`deploy_env`: a world of installed envs with artifacts, roles and settings, in process.

Rollouts deploy the same world thousands of times, and loading artifacts is the slow part. So the
first deploy of a given world (envs, artifacts by content hash, roles, settings) builds a template and
keeps it for the process; every deploy, first included, is a `fork()` of that template: a memory copy
of each env's database. Deployed worlds never share state.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

from agentenv.contracts import StepFailed
from agentenv.env import Env
from agentenv.world.build import split_names
from agentenv.world.clock import parse_time
from agentenv.world.rbac import SYSTEM_ROLE
from agentenv.world.world import GET_TIME, World, WorldError
from pydantic import Field, ValidationError, field_validator

from agentenv_steps import _artifacts
from agentenv_steps._common import CoreStep, StepSettings, validation_message
from agentenv_steps.persona import llm_responder, model_settings

INLINE = "inline"
TEMPLATE_CACHE_SIZE = 16
_templates: OrderedDict[tuple[Any, ...], World] = OrderedDict()


class RoleSpec(StepSettings):
    tools: list[str] = Field(default_factory=lambda: ["*"], description='Tool names the role may call; ["*"] = all.')
    deny: list[str] = Field(default_factory=list, description="Tool names refused even when `tools` allows them.")


DEFAULT_START = "2026-01-01T09:00:00Z"


class DeployEnvSettings(StepSettings):
    envs: list[str] = Field(description='Env names, as a list or a comma-separated string ("slack,email").')
    artifacts: list[str] = Field(
        default_factory=list,
        description="Artifact specs: NAME, ENV=NAME_OR_PATH (paths relative to the bundle), store:KEY, ENV=store:KEY.",
    )
    roles: dict[str, RoleSpec] = Field(
        default_factory=dict, description="Role → {tools, deny}; the `default` role sees every tool unless redefined."
    )
    settings: dict[str, dict[str, Any]] = Field(default_factory=dict, description="Env name → that env's settings.")
    sandbox: str = Field(INLINE, min_length=1, description="Where the world runs; this version runs `inline` only.")
    start: str = Field(
        DEFAULT_START,
        description="The virtual time the world starts at (frozen until sync_env_clock says otherwise), so every "
        "timestamp the apps write, and so the trajectory digest, is the same on every run.",
    )

    @field_validator("envs", mode="before")
    @classmethod
    def _split_envs(cls, value: Any) -> Any:
        if isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            return split_names(value)
        return value

    @field_validator("artifacts", mode="before")
    @classmethod
    def _one_spec(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


class DeployEnv(CoreStep):
    name = "deploy_env"
    description = "Deploy a world: one or more envs with artifacts, roles and settings (forked from a cached template)."
    Settings = DeployEnvSettings
    creates_resources = True

    def check(self, settings: DeployEnvSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        problems: list[tuple[str, str]] = []
        if not settings.envs:
            problems.append(("envs", "name at least one env (see `agentenv env list`)"))
        duplicates = sorted({e for e in settings.envs if settings.envs.count(e) > 1})
        if duplicates:
            problems.append(("envs", f"{', '.join(duplicates)} listed twice; compose each env once"))
        problems.extend(_artifacts.spec_problems("artifacts", settings.artifacts, settings.envs))
        for env in settings.settings:
            if env not in settings.envs:
                problems.append((f"settings.{env}", f"{env!r} is not deployed (envs: {', '.join(settings.envs)})"))
        if SYSTEM_ROLE in settings.roles:
            problems.append((f"roles.{SYSTEM_ROLE}", f"{SYSTEM_ROLE!r} is reserved for world rules; use another name"))
        try:
            parse_time(settings.start, field="start")
        except ValueError as exc:
            problems.append(("start", str(exc).removeprefix("start: ")))
        return problems

    async def execute(self, settings: DeployEnvSettings, ctx: Any) -> dict[str, Any]:
        step_id = self.own_id(ctx)
        _check_sandbox(settings.sandbox, ctx)
        classes = _env_classes(settings.envs, ctx)
        pairs = _artifacts.resolve_all(settings.artifacts, classes, ctx)
        kinds = {name: entry.obj for name, entry in ctx.host.registry("trigger_kinds").items()}
        key = (
            tuple(classes.items()),
            tuple((env, artifact.sha256) for env, artifact in pairs),
            json.dumps({r: spec.model_dump() for r, spec in settings.roles.items()}, sort_keys=True),
            json.dumps(settings.settings, sort_keys=True, default=str),
            tuple(sorted(kinds.items())),
        )
        template = _templates.get(key)
        if template is None:
            template = _build_template(settings, classes, pairs, kinds)
            _templates[key] = template
            while len(_templates) > TEMPLATE_CACHE_SIZE:
                _templates.popitem(last=False)
            ctx.log(f"{step_id}: built world template {template.name} ({len(pairs)} artifact load(s))")
        else:
            _templates.move_to_end(key)
        world = template.fork()
        world.seed = ctx.seed
        world.set_clock(settings.start, mode="frozen")
        model = model_settings(ctx)
        if model is not None:  # persona triggers with `reply.llm = true` answer through the configured model
            world.responder = llm_responder(model, ctx.seed)
        ctx.add_resource(step_id, world, _teardown(ctx, step_id, world))
        return {
            "envs": list(classes),
            "tools": len(world.tools),
            "artifacts": [artifact.ref for _, artifact in pairs],
            "sandbox": settings.sandbox,
        }


def _check_sandbox(name: str, ctx: Any) -> None:
    """Only in-process worlds for now; a served world needs the gateway, which this version does not drive."""
    if name == INLINE:
        return
    providers = ctx.host.registry("sandbox_providers")
    if name in providers:
        raise StepFailed(
            f"field `sandbox`: {name!r} would serve the world from a sandbox; served worlds are not "
            f"supported by this version of deploy_env; use sandbox = {INLINE!r} (in process)"
        )
    known = ", ".join(sorted(providers)) or "none installed"
    raise StepFailed(
        f"field `sandbox`: no sandbox provider {name!r} (installed: {known}); `process` comes with "
        f"agentenv-sandbox-local, `docker` with agentenv-docker; or use sandbox = {INLINE!r}"
    )


def _env_classes(names: list[str], ctx: Any) -> dict[str, type[Env]]:
    classes = {}
    for name in names:
        try:
            classes[name] = ctx.host.get("envs", name)
        except LookupError as exc:
            raise StepFailed(f"field `envs`: {exc}") from None
    return classes


def _build_template(
    settings: DeployEnvSettings,
    classes: dict[str, type[Env]],
    pairs: list[tuple[str, Any]],
    kinds: dict[str, Any],
) -> World:
    envs = []
    for name, cls in classes.items():
        try:
            envs.append(cls(settings.settings.get(name)))
        except ValidationError as exc:
            raise StepFailed(f"field `settings.{name}`: {validation_message(exc)}") from None
    roles = {role: spec.model_dump() for role, spec in settings.roles.items()}
    try:
        world = World(envs, roles=roles, trigger_kinds=kinds or None)
    except WorldError as exc:
        raise StepFailed(f"field `envs`: {exc}") from None
    for role, spec in settings.roles.items():
        for field in ("tools", "deny"):
            unknown = [t for t in getattr(spec, field) if t != "*" and t not in world.tools and t != GET_TIME]
            if unknown:
                raise StepFailed(
                    f"field `roles.{role}.{field}`: no tool {', '.join(map(repr, unknown))} in the world "
                    f"(tools: {', '.join(sorted(world.tools))})"
                )
    for env_name, artifact in pairs:
        try:
            world.env(env_name).load(artifact)
        except (ValueError, WorldError) as exc:
            raise StepFailed(f"field `artifacts`: loading {artifact.ref} into {env_name}: {exc}") from None
    return world


def _teardown(ctx: Any, step_id: str, world: World) -> Any:
    """Nothing runs outside the process; forget the world so its memory goes with the run."""

    def drop() -> None:
        resources = getattr(ctx, "resources", None)
        if isinstance(resources, dict) and resources.get(step_id) is world:
            del resources[step_id]

    return drop


def clear_templates() -> None:
    """Forget every cached template (tests, or a process that changed installed envs)."""
    _templates.clear()

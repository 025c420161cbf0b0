"""`deploy_env`: a world of installed envs with artifacts, roles and settings, in process or served.

In process (`sandbox = "inline"`, the default): rollouts deploy the same world thousands of times, and
loading artifacts is the slow part. So the first deploy of a given world (envs, artifacts by content hash,
roles, settings) builds a template and keeps it for the process; every deploy, first included, is a
`fork()` of that template: a memory copy of each env's database. Deployed worlds never share state.

Served (`sandbox = "process"`, `"docker"`, any installed provider, a chain such as `"docker,process"`, or
`agentenv run --sandbox`): the world runs as `agentenv serve` in a sandbox (`serving.py`: through the provider
contract only), with a fresh bearer token per role, and the step hands
later steps an `agentenv_gateway.client.RemoteWorld`, so agents reach it over MCP and verifiers read its
state as usual. `inline` inside a chain (`"docker,inline"`) means: in process when nothing before it can serve.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

from agentenv.contracts import StepContext, StepFailed, kinds
from agentenv_runtime import SYSTEM_ROLE, Env, World, WorldError, parse_time

from agentenv_steps import _artifacts
from agentenv_steps._common import CoreStep
from agentenv_steps.persona import llm_responder, model_configured
from agentenv_steps.world_plan import (  # noqa: F401 - ServePlan and the settings are public here too
    INLINE,
    WORLD_DIR,
    DeployEnvSettings,
    RoleSpec,
    ServePlan,
    _check_roles,
    _make_envs,
    _roles,
    close_envs,
    start_envs,
)

TEMPLATE_CACHE_SIZE = 16
_templates: OrderedDict[tuple[Any, ...], World] = OrderedDict()


class DeployEnv(CoreStep[DeployEnvSettings]):
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
        problems.extend(_mcp_problems(settings))
        if SYSTEM_ROLE in settings.roles:
            problems.append((f"roles.{SYSTEM_ROLE}", f"{SYSTEM_ROLE!r} is reserved for world rules; use another name"))
        try:
            parse_time(settings.start, field="start")
        except ValueError as exc:
            problems.append(("start", str(exc).removeprefix("start: ")))
        return problems

    async def execute(self, settings: DeployEnvSettings, ctx: StepContext) -> dict[str, Any]:
        step_id = self.own_id(ctx)
        chain = sandbox_chain(settings, ctx)
        classes = _env_classes(settings.envs, ctx)
        pairs = _artifacts.resolve_all(settings.artifacts, classes, ctx)
        trigger_kinds = {name: entry.obj for name, entry in ctx.host.usable(kinds.TRIGGER_KINDS).items()}
        if chain != [INLINE] and settings.rewindable:
            raise StepFailed(
                f"field `rewindable`: only a world run in process keeps rewind points, and this one would be served "
                f"by {','.join(chain)}; use sandbox = {INLINE!r} (and no --sandbox), or drop `rewindable`"
            )
        if chain != [INLINE]:
            from agentenv_steps.serving import deploy_served

            served = await deploy_served(settings, chain, classes, pairs, trigger_kinds, ctx, step_id)
            if served is not None:
                return served
        key = (
            tuple(classes.items()),
            tuple((env, artifact.sha256) for env, artifact in pairs),
            json.dumps({r: spec.model_dump() for r, spec in settings.roles.items()}, sort_keys=True),
            json.dumps(settings.settings, sort_keys=True, default=str),
            tuple(sorted(trigger_kinds.items())),
        )
        template = _templates.get(key)
        if template is None:
            template = _build_template(settings, classes, pairs, trigger_kinds)
            _templates[key] = template
            while len(_templates) > TEMPLATE_CACHE_SIZE:
                _templates.popitem(last=False)
            ctx.log(f"{step_id}: built world template {template.name} ({len(pairs)} artifact load(s))")
        else:
            _templates.move_to_end(key)
        world = template.fork()
        world.seed = ctx.seed
        world.episode = str(ctx.run_id)  # what its tools see as `ToolContext.episode`
        host: Any = ctx.host  # a PluginHost under the engine: observers (the event log) see each call as it happens
        if callable(getattr(host, "observes", None)) and host.observes("tool_called"):
            world.on_tool_call = lambda event: host.notify("tool_called", event=event)
        world.set_clock(settings.start, mode="frozen")
        if settings.rewindable:
            world.keep_rewind_points()
        if model_configured(ctx):  # persona triggers with `reply.llm = true` answer through the configured model
            world.responder = llm_responder(ctx, ctx.seed)
        start_envs(world)  # a website's server, say: the deployed world's own, never the cached template's
        _attach_mcp(settings, world)  # each deploy starts its own servers: their state is theirs
        ctx.add_resource(step_id, world, _teardown(ctx, step_id, world))
        return {
            "envs": list(world.envs),
            "tools": len(world.tools),
            "artifacts": [artifact.ref for _, artifact in pairs],
            "sandbox": settings.sandbox,
        }


def sandbox_chain(settings: DeployEnvSettings, ctx: StepContext) -> list[str]:
    """Provider names to try in order: the step's field when set, else `--sandbox`, else config
    `[sandbox] default`, else in process."""
    field = "sandbox"
    wanted = settings.sandbox
    configured = ctx.config.get("sandbox.default") or INLINE
    if wanted == INLINE and ctx.overrides.get("sandbox"):
        wanted, field = str(ctx.overrides["sandbox"]), "sandbox (from --sandbox)"
    elif wanted == INLINE and configured != INLINE:
        wanted, field = str(configured), "sandbox (from config [sandbox] default)"
    names = [part.strip() for part in wanted.split(",") if part.strip()]
    if not names:
        raise StepFailed(f"field `{field}`: {wanted!r} names no provider; use {INLINE!r}, process, docker or a chain")
    providers = ctx.host.registry(kinds.SANDBOX_PROVIDERS)
    unknown = [name for name in names if name != INLINE and name not in providers]
    if unknown:
        known = ", ".join(sorted(providers)) or "none installed"
        raise StepFailed(
            f"field `{field}`: no sandbox provider {unknown[0]!r} (installed: {known}); `process` comes with "
            f"agentenv-sandbox-local, `docker` with agentenv-docker "
            f"(`agentenv sandbox list` shows them); or use sandbox = {INLINE!r} (in process)"
        )
    return names


def _env_classes(names: list[str], ctx: StepContext) -> dict[str, type[Env]]:
    classes: dict[str, type[Env]] = {}
    for name in names:
        try:
            cls = ctx.host.get(kinds.ENVS, name)
        except LookupError as exc:
            raise StepFailed(f"field `envs`: {exc}") from None
        if not issubclass(cls, Env):
            dist = ctx.host.registry(kinds.ENVS)[name].dist
            raise StepFailed(
                f"field `envs`: env {name!r} of {dist} is not an agentenv_runtime.Env; worlds compose only those"
            )
        classes[name] = cls
    return classes


def _build_template(
    settings: DeployEnvSettings,
    classes: dict[str, type[Env]],
    pairs: list[tuple[str, Any]],
    kinds: dict[str, Any],
) -> World:
    try:
        world = World(_make_envs(settings, classes), roles=_roles(settings), trigger_kinds=kinds or None)
    except WorldError as exc:
        raise StepFailed(f"field `envs`: {exc}") from None
    if not settings.mcp:  # otherwise checked once the servers joined (a role may name their tools)
        _check_roles(world)
    for env_name, artifact in pairs:
        try:
            world.env(env_name).load(artifact)
        except (ValueError, WorldError) as exc:
            raise StepFailed(f"field `artifacts`: loading {artifact.ref} into {env_name}: {exc}") from None
    return world


def _teardown(ctx: StepContext, step_id: str, world: World) -> Any:
    """Close the world's envs that hold something outside its state (MCP servers, started websites, browser
    contexts); forget the world so its memory goes with the run."""

    def drop() -> None:
        close_envs(world.envs.values())
        resources = getattr(ctx, "resources", None)
        if isinstance(resources, dict) and resources.get(step_id) is world:
            del resources[step_id]

    return drop


def _mcp_api() -> Any:
    try:
        from agentenv_mcp import api
    except ImportError:
        raise StepFailed(
            "field `mcp`: MCP servers as envs need agentenv-mcp; install it with `agentenv plugin add agentenv-mcp`"
        ) from None
    return api


def _mcp_problems(settings: DeployEnvSettings) -> list[tuple[str, str]]:
    """(field, message) for each `mcp` entry that cannot work, before anything starts."""
    if not settings.mcp:
        return []
    try:
        api = _mcp_api()
    except StepFailed as exc:
        return [("mcp", str(exc).removeprefix("field `mcp`: "))]
    problems = []
    for name, fields in settings.mcp.items():
        if name in settings.envs:
            problems.append((f"mcp.{name}", f"{name!r} is also in `envs`; give the server another name"))
            continue
        try:
            api.build_spec(name, fields, where=f"mcp.{name}")
        except ValueError as exc:
            problems.append((f"mcp.{name}", str(exc).removeprefix(f"mcp.{name}: ")))
    return problems


def _attach_mcp(settings: DeployEnvSettings, world: World) -> None:
    """Start the step's MCP servers as envs of `world`, then check the roles (the teardown stops them)."""
    if not settings.mcp:
        return
    api = _mcp_api()
    specs = [api.build_spec(name, fields, where=f"mcp.{name}") for name, fields in settings.mcp.items()]
    try:
        servers = api.attach(world, specs)
    except api.McpServerError as exc:
        name = str(exc).removeprefix("env ").split(":", 1)[0]
        raise StepFailed(f"field `mcp.{name}`: {exc}") from None
    except WorldError as exc:
        raise StepFailed(f"field `mcp`: {exc}") from None
    try:
        _check_roles(world)
    except BaseException:
        api.detach(world, servers)
        raise


def clear_templates() -> None:
    """Forget every cached template (tests, or a process that changed installed envs)."""
    _templates.clear()

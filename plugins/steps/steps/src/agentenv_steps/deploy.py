"""`deploy_env`: a world of installed envs with artifacts, roles and settings, in process or served.

In process (`sandbox = "inline"`, the default): rollouts deploy the same world thousands of times, and
loading artifacts is the slow part. So the first deploy of a given world (envs, artifacts by content hash,
roles, settings) builds a template and keeps it for the process; every deploy, first included, is a
`fork()` of that template: a memory copy of each env's database. Deployed worlds never share state.

Served (`sandbox = "process"`, `"docker"`, a chain such as `"docker,process"`, or `agentenv run --sandbox`):
the world runs as `agentenv serve` in a sandbox, with a fresh bearer token per role, and the step hands
later steps an `agentenv_gateway.client.RemoteWorld`, so agents reach it over MCP and verifiers read its
state as usual. `inline` inside a chain (`"docker,inline"`) means: in process when nothing before it can serve.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import secrets
import shlex
import sys
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

from agentenv.contracts import StepContext, StepFailed, kinds
from agentenv_runtime import SYSTEM_ROLE, Env, World, WorldError, parse_time, split_names
from pydantic import Field, ValidationError, field_validator

from agentenv_steps import _artifacts
from agentenv_steps._common import CoreStep, StepSettings, StrList, plugin_host, validation_message
from agentenv_steps.persona import llm_responder, model_configured

INLINE = "inline"
SERVE_PORT = 8000
"""The port the world listens on inside its sandbox (`process` maps it to a free loopback port)."""
WORLD_DIR = "world"
"""Folder in the sandbox for the role file, artifacts and settings the server reads at start."""
TEMPLATE_CACHE_SIZE = 16
_templates: OrderedDict[tuple[Any, ...], World] = OrderedDict()


class RoleSpec(StepSettings):
    tools: list[str] = Field(default_factory=lambda: ["*"], description='Tool names the role may call; ["*"] = all.')
    deny: list[str] = Field(default_factory=list, description="Tool names refused even when `tools` allows them.")


DEFAULT_START = "2026-01-01T09:00:00Z"


class DeployEnvSettings(StepSettings):
    envs: list[str] = Field(description='Env names, as a list or a comma-separated string ("slack,email").')
    artifacts: StrList = Field(
        default_factory=list,
        description="Artifact specs: NAME, ENV=NAME_OR_PATH (paths relative to the bundle), store:KEY, ENV=store:KEY.",
    )
    roles: dict[str, RoleSpec] = Field(
        default_factory=dict, description="Role → {tools, deny}; the `default` role sees every tool unless redefined."
    )
    settings: dict[str, dict[str, Any]] = Field(default_factory=dict, description="Env name → that env's settings.")
    mcp: dict[str, str | dict[str, Any]] = Field(
        default_factory=dict,
        description="Env name → an MCP server that joins the world as that env, started with it and stopped on "
        "teardown: a command line, or {command | url | image, args, env, reset_tool, start_timeout} "
        "(needs agentenv-mcp).",
    )
    sandbox: str = Field(
        INLINE,
        min_length=1,
        description="Where the world runs: `inline` = in process (default; `agentenv run --sandbox` overrides it), "
        "or a sandbox provider serving it over MCP (`process`, `docker`), or a fallback chain (`docker,process`).",
    )
    ready_timeout: float = Field(
        120.0, gt=0, description="Seconds a served world may take to answer its Environment Card before the step fails."
    )
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
        if chain != [INLINE]:
            served = await _deploy_served(settings, chain, classes, pairs, trigger_kinds, ctx, step_id)
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
        if model_configured(ctx):  # persona triggers with `reply.llm = true` answer through the configured model
            world.responder = llm_responder(ctx, ctx.seed)
        stop_servers = _attach_mcp(settings, world)  # each deploy starts its own servers: their state is theirs
        ctx.add_resource(step_id, world, _teardown(ctx, step_id, world, stop_servers))
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
            f"agentenv-sandbox-local, `docker` with agentenv-docker; or use sandbox = {INLINE!r} (in process)"
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


def _make_envs(settings: DeployEnvSettings, classes: dict[str, type[Env]]) -> list[Env]:
    envs = []
    for name, cls in classes.items():
        try:
            envs.append(cls(settings.settings.get(name)))
        except ValidationError as exc:
            raise StepFailed(f"field `settings.{name}`: {validation_message(exc)}") from None
    return envs


def _roles(settings: DeployEnvSettings) -> dict[str, Any]:
    return {role: spec.model_dump() for role, spec in settings.roles.items()}


def _check_roles(world: World) -> None:
    try:
        world.check_roles()
    except WorldError as exc:
        field, _, problem = str(exc).partition(": ")
        raise StepFailed(f"field `{field}`: {problem}") from None


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


def _teardown(ctx: StepContext, step_id: str, world: World, stop_servers: Any = None) -> Any:
    """Stop the world's MCP servers, if any; forget the world so its memory goes with the run."""

    def drop() -> None:
        if stop_servers is not None:
            stop_servers()
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


def _attach_mcp(settings: DeployEnvSettings, world: World) -> Any:
    """Start the step's MCP servers as envs of `world`, then check the roles; returns what stops them."""
    if not settings.mcp:
        return None
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
    return lambda: api.close_servers(world)


def clear_templates() -> None:
    """Forget every cached template (tests, or a process that changed installed envs)."""
    _templates.clear()


# ---- served worlds ------------------------------------------------------------------------------------
HOST_PROVIDERS = frozenset({"process"})
"""Providers whose commands run on this host: the server is this interpreter, bound to loopback."""
IMAGE_PROVIDERS = frozenset({"docker"})
"""Providers that run an image: the server is the image's python, with agentenv installed in it."""
RESERVED_SERVED_ROLE = "control"
WAIT_SCRIPT = f'while [ ! -e {WORLD_DIR}/ready ]; do sleep 0.02; done; exec "$@"'
"""The command waits for the files (role file, artifacts) that can only be put once the sandbox exists."""


def _gateway_client() -> Any:
    try:
        from agentenv_gateway.api import client
    except ImportError:
        raise StepFailed(
            "field `sandbox`: serving a world from a sandbox needs agentenv-gateway; install it with "
            f"`agentenv plugin add agentenv-gateway`, or use sandbox = {INLINE!r} (in process)"
        ) from None
    return client


def _artifact_file(artifact: Any) -> tuple[bytes, str]:
    """The artifact's original bytes when its file is at hand (same sha256 on the server), else re-encoded."""
    source = Path(artifact.source) if artifact.source and not artifact.source.startswith("<") else None
    if source is not None and source.is_file():
        raw = source.read_bytes()
        plain = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
        if hashlib.sha256(plain).hexdigest() == artifact.sha256:
            return raw, ".json.gz" if plain is not raw else ".json"
    return artifact.to_bytes(), ".json"


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string


class ServePlan:
    """The files, command arguments and environment that start `agentenv serve` for one deploy_env step."""

    def __init__(
        self, settings: DeployEnvSettings, classes: dict[str, type[Env]], pairs: list[tuple[str, Any]], seed: int
    ):
        roles = _roles(settings)
        self.tokens = {role: secrets.token_urlsafe(24) for role in dict.fromkeys(["default", "control", *roles])}
        names = {role: f"AGENTENV_WORLD_TOKEN_{index}" for index, role in enumerate(self.tokens)}
        self.env = {names[role]: token for role, token in self.tokens.items()}
        self.files: dict[str, bytes] = {}
        args = [",".join(classes)]
        for index, (env_name, artifact) in enumerate(pairs):
            data, suffix = _artifact_file(artifact)
            path = f"{WORLD_DIR}/artifacts/{index}-{env_name}{suffix}"
            self.files[path] = data
            args += ["--artifact", f"{env_name}={path}"]
        if roles:
            lines = []
            for role, spec in roles.items():
                lines += [
                    f"[roles.{_toml_string(role)}]",
                    f"tools = {json.dumps(spec['tools'])}",
                    f"deny = {json.dumps(spec['deny'])}",
                    f'token = "env:{names[role]}"',
                    "",
                ]
            self.files[f"{WORLD_DIR}/roles.toml"] = "\n".join(lines).encode()
            args += ["--role-file", f"{WORLD_DIR}/roles.toml"]
        for role in ("default", "control"):
            if role not in roles:
                args += ["--token", f"{role}=env:{names[role]}"]
        if settings.settings:
            self.files[f"{WORLD_DIR}/settings.json"] = json.dumps(settings.settings, default=str).encode()
            args += ["--settings-file", f"{WORLD_DIR}/settings.json"]
        self.serve_args = [*args, "--seed", str(seed), "--log-level", "warning"]

    def command(self, python: str, host: str, port: str) -> list[str]:
        serve = [python, "-m", "agentenv", "serve", *self.serve_args, "--host", host, "--port", port]
        return ["sh", "-c", WAIT_SCRIPT, "agentenv-serve", *serve]


def world_dists(classes: dict[str, type[Env]], ctx: StepContext) -> list[str]:
    """The distributions a served world needs inside an image: kernel, gateway, its envs, trigger kinds, stores."""
    import importlib.metadata

    wanted = ["agentenv-kernel", "agentenv-gateway"]
    envs = ctx.host.registry(kinds.ENVS)
    wanted += [envs[name].dist for name in classes if name in envs]
    wanted += [entry.dist for entry in ctx.host.registry(kinds.TRIGGER_KINDS).values()]
    try:
        importlib.metadata.version("agentenv-store-local")
        wanted.append("agentenv-store-local")
    except importlib.metadata.PackageNotFoundError:
        pass
    return list(dict.fromkeys(wanted))


async def _world_image(classes: dict[str, type[Env]], ctx: StepContext, step_id: str) -> tuple[str, float]:
    """(tag, seconds spent building: 0 when it existed) of the docker world image."""
    from agentenv_docker.api import ensure_world_image

    dists = world_dists(classes, ctx)
    started = time.perf_counter()
    tag, built = await asyncio.to_thread(ensure_world_image, dists, settings=_docker_settings(ctx), log=ctx.log)
    seconds = time.perf_counter() - started if built else 0.0
    if built:
        ctx.log(f"{step_id}: built world image {tag} ({', '.join(dists)}) in {seconds:.1f}s")
    return tag, seconds


def _docker_settings(ctx: StepContext) -> dict[str, Any]:
    entry = ctx.host.registry(kinds.SANDBOX_PROVIDERS).get("docker")
    settings: dict[str, Any] = ctx.config.plugin_settings(entry.dist).get("docker") or {} if entry else {}
    return settings


def _last_output(sandbox: Any, lines: int = 30) -> str:
    logs = getattr(sandbox, "logs", None)
    if not callable(logs):
        return "(this provider keeps no output)"
    try:
        text = str(logs(tail=lines)).strip()
    except Exception as exc:  # the sandbox is gone: say so instead of hiding the first error
        return f"(output unavailable: {type(exc).__name__}: {exc})"
    return text or "(no output)"


async def _deploy_served(
    settings: DeployEnvSettings,
    chain: list[str],
    classes: dict[str, type[Env]],
    pairs: list[tuple[str, Any]],
    kinds: dict[str, Any],
    ctx: StepContext,
    step_id: str,
) -> dict[str, Any] | None:
    """Serve the world from the first provider of `chain` that can; None when the chain falls back to in process."""
    from agentenv.contracts import SandboxSpec
    from agentenv_runtime import RUN_LABEL, NoSandbox, create_in_chain, make_provider

    client = _gateway_client()
    if settings.mcp:
        raise StepFailed(
            "field `mcp`: MCP servers join worlds deployed in process for now; use sandbox = "
            f"{INLINE!r}, or serve the world yourself with `agentenv serve ENVS --mcp NAME=COMMAND`"
        )
    if RESERVED_SERVED_ROLE in settings.roles:
        raise StepFailed(
            f"field `roles.{RESERVED_SERVED_ROLE}`: a served world keeps role {RESERVED_SERVED_ROLE!r} for its "
            "data plane; rename the role"
        )
    envs = _make_envs(settings, classes)
    try:
        _check_roles(World(envs, roles=_roles(settings), trigger_kinds=kinds or None))
    except WorldError as exc:
        raise StepFailed(f"field `envs`: {exc}") from None
    plan = ServePlan(settings, classes, pairs, ctx.seed)
    labels = {RUN_LABEL: ctx.run_id, "agentenv.step": step_id}
    host = plugin_host(ctx)
    passed: list[str] = []
    for name in chain:
        if name == INLINE:
            ctx.log(f"{step_id}: serving passed to in process ({'; '.join(passed)})")
            return None
        try:
            provider = make_provider(name, ctx.config, host)
        except LookupError as exc:
            passed.append(f"{name}: {exc}")
            continue
        usable, reason = provider.available()
        if not usable:
            passed.append(f"{name}: not available here: {reason}")
            continue
        image, build_seconds = None, 0.0
        if name in HOST_PROVIDERS:
            command = plan.command(sys.executable, "127.0.0.1", "{port}")
        elif name in IMAGE_PROVIDERS:
            try:
                image, build_seconds = await _world_image(classes, ctx, step_id)
            except Exception as exc:  # no SDK, no engine, a failed build: the next provider may do
                passed.append(f"{name}: no world image: {type(exc).__name__}: {exc}")
                continue
            command = plan.command("python3", "0.0.0.0", str(SERVE_PORT))
        else:
            passed.append(f"{name}: deploy_env serves worlds with process or docker, not {name}")
            continue
        spec = SandboxSpec(image=image, command=command, env=plan.env, ports=[SERVE_PORT], labels=labels)
        try:
            # Not in a thread: once it exists, the sandbox is registered for teardown before anything can cancel.
            sandbox, served, _ = create_in_chain(name, spec, ctx.config, host, ctx.log)
        except NoSandbox as exc:
            passed.append(str(exc).removeprefix(f"no provider in {name!r} could create the sandbox: "))
            continue
        holder: dict[str, Any] = {}
        ctx.add_resource(step_id, sandbox, _served_teardown(sandbox, holder))
        world = await _start_served(sandbox, served, plan, envs, settings, kinds, ctx, client, step_id)
        holder["world"] = world
        ctx.add_resource(step_id, world)
        output: dict[str, Any] = {
            "envs": list(classes),
            "tools": len(world.tools),
            "artifacts": [artifact.ref for _, artifact in pairs],
            "sandbox": served,
            "url": world.url,
            "sandbox_id": sandbox.id,
        }
        main = getattr(sandbox, "main", None)
        if isinstance(main, dict):
            output["pid"] = main.get("pid")
        if image:
            output |= {"image": image, "image_build_seconds": round(build_seconds, 3)}
        if passed:
            output["passed"] = passed
        return output
    raise StepFailed(f"field `sandbox`: no provider in {','.join(chain)!r} could serve the world: " + "; ".join(passed))


async def _start_served(
    sandbox: Any,
    served: str,
    plan: ServePlan,
    envs: list[Env],
    settings: DeployEnvSettings,
    kinds: dict[str, Any],
    ctx: StepContext,
    client: Any,
    step_id: str,
) -> Any:
    """Put the files, let the server start, wait for its card, arm the clock; a failure tears the sandbox down."""
    try:
        for path, data in plan.files.items():
            sandbox.put_file(path, data)
        sandbox.put_file(f"{WORLD_DIR}/ready", b"")
        url = sandbox.url(SERVE_PORT)
        ctx.log(f"{step_id}: serving the world from {served} sandbox {sandbox.id} at {url}")
        try:
            await client.await_card(
                url,
                plan.tokens["control"],
                timeout=settings.ready_timeout,
                alive=lambda: sandbox.status() == "running",
            )
        except (TimeoutError, RuntimeError) as exc:
            raise StepFailed(
                f"field `sandbox`: the world did not start in the {served} sandbox: {exc}\n"
                f"command: {shlex.join(sandbox_command(plan, served))}\nlast output:\n{_last_output(sandbox)}"
            ) from None
        world = client.RemoteWorld(
            envs, url=url, tokens=plan.tokens, roles=_roles(settings), trigger_kinds=kinds or None, seed=ctx.seed
        )
        try:
            world.set_clock(settings.start, mode="frozen")
        except WorldError as exc:
            world.close()
            raise StepFailed(f"field `start`: the served world refused the clock: {exc}") from None
        if model_configured(ctx):
            ctx.log(
                f"{step_id}: persona replies by model run only in process; the served world answers with fixed text"
            )
        return world
    except BaseException:
        sandbox.teardown()
        raise


def sandbox_command(plan: ServePlan, served: str) -> list[str]:
    """The server command as shown in errors (tokens are never in it: they travel as environment variables)."""
    python = sys.executable if served in HOST_PROVIDERS else "python3"
    return [python, "-m", "agentenv", "serve", *plan.serve_args]


def _served_teardown(sandbox: Any, holder: dict[str, Any]) -> Any:
    """Close the world's clients, then remove the sandbox (killing the server)."""

    def stop() -> None:
        world = holder.pop("world", None)
        try:
            if world is not None:
                world.close()
        finally:
            sandbox.teardown()

    return stop

"""A deploy_env world served from a sandbox of any provider, through the `SandboxProvider` contract only.

No provider is known by name, so one that a third party registers through the hook serves worlds like ours:

- the provider must be available here and make `container` sandboxes;
- its sandbox is made with the image left to the provider and a command that waits for the world's files;
- a probe run in it (`Sandbox.exec`) looks for a Python that has agentenv-gateway: this interpreter's own path
  first (a sandbox sharing this host's files, and so its loopback: the server binds 127.0.0.1), else `python3`
  (an image with agentenv in it, on a network of its own: the server binds every interface);
- when neither is there and a world image builder is installed (agentenv-docker's image of the kernel, gateway,
  envs and stores), the sandbox is made again from that image and probed again. A provider whose plain sandbox
  could not serve is remembered for the process, so its later deploys go to the image at once;
- a sandbox that cannot serve is torn down and the chain moves on, saying why.

The port asked for is a free one on this host, so a provider that runs commands on the host without mapping
ports keeps two worlds apart; one that maps ports says where through `AGENTENV_PORT_<port>` (see
`ServePlan.launch_script`).
"""

from __future__ import annotations

import asyncio
import shlex
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

from agentenv.config import Config
from agentenv.contracts import Sandbox, SandboxSpec, StepContext, StepFailed, kinds
from agentenv_runtime import RUN_LABEL, Env, NoSandbox, World, WorldError, create_in_chain, make_provider

from agentenv_steps._common import plugin_host
from agentenv_steps.persona import model_configured
from agentenv_steps.world_plan import (
    INLINE,
    WORLD_DIR,
    DeployEnvSettings,
    ServePlan,
    _check_roles,
    _make_envs,
    _roles,
)

LAUNCH_FILE = f"{WORLD_DIR}/serve.sh"
PROBE = "import agentenv_gateway, sys; print(sys.executable)"
PROBE_TIMEOUT = 60.0
RESERVED_SERVED_ROLE = "control"
WORLD_IMAGE = "the world image"
_image_only: set[str] = set()
"""Providers whose sandboxes, made without an image, had no Python to serve with (in this process)."""


def free_port() -> int:
    """A port nobody listens on here right now (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def serving_python(sandbox: Sandbox) -> tuple[str, str] | None:
    """(Python command, address to bind) that runs `agentenv serve` in `sandbox`, or None when none does."""
    for python, bind in ((sys.executable, "127.0.0.1"), ("python3", "0.0.0.0")):
        try:
            done = sandbox.exec([python, "-c", PROBE], timeout=PROBE_TIMEOUT)
        except Exception:
            continue
        if done.exit_code == 0:
            return python, bind
    return None


def image_builder() -> Callable[..., tuple[str, bool]] | None:
    """What builds a world image (agentenv-docker's `ensure_world_image`), when it is installed."""
    try:
        from agentenv_docker.api import ensure_world_image
    except ImportError:
        return None
    return ensure_world_image


def provider_problem(name: str, config: Config, host: Any) -> str | None:
    """Why provider `name` cannot even make a sandbox for a world here, or None."""
    try:
        provider = make_provider(name, config, host)
    except LookupError as exc:
        return str(exc)
    usable, reason = provider.available()
    if not usable:
        return f"not available here: {reason}"
    if "container" not in provider.modes:
        return f"makes {', '.join(sorted(provider.modes))} sandboxes, and a world is served from a container"
    return None


NO_PYTHON = (
    "its sandbox has no Python with agentenv-gateway (tried {tried}); fix: give the provider an image with "
    "agentenv-gateway and the world's envs installed, or install agentenv-docker to build a world image"
)


def _gateway_client() -> Any:
    try:
        from agentenv_gateway.api import client
    except ImportError:
        raise StepFailed(
            "field `sandbox`: serving a world from a sandbox needs agentenv-gateway; install it with "
            f"`agentenv plugin add agentenv-gateway`, or use sandbox = {INLINE!r} (in process)"
        ) from None
    return client


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


async def _world_image(
    builder: Callable[..., tuple[str, bool]], classes: dict[str, type[Env]], ctx: StepContext, step_id: str
) -> tuple[str, float]:
    """(tag, seconds spent building: 0 when it existed) of the world image."""
    dists = world_dists(classes, ctx)
    started = time.perf_counter()
    # The builder's own settings: agentenv-docker's `[plugins.agentenv-docker.docker]` table.
    settings = ctx.config.plugin_settings("agentenv-docker").get("docker") or {}
    tag, built = await asyncio.to_thread(builder, dists, settings=settings, log=ctx.log)
    seconds = time.perf_counter() - started if built else 0.0
    if built:
        ctx.log(f"{step_id}: built world image {tag} ({', '.join(dists)}) in {seconds:.1f}s")
    return tag, seconds


def _last_output(sandbox: Any, lines: int = 30) -> str:
    logs = getattr(sandbox, "logs", None)
    if not callable(logs):
        return "(this provider keeps no output)"
    try:
        text = str(logs(tail=lines)).strip()
    except Exception as exc:  # the sandbox is gone: say so instead of hiding the first error
        return f"(output unavailable: {type(exc).__name__}: {exc})"
    return text or "(no output)"


class Served:
    """A sandbox that can serve the world: which Python runs the server there, and the image it came from."""

    def __init__(self, sandbox: Sandbox, python: str, bind: str, image: str | None, build_seconds: float) -> None:
        self.sandbox, self.python, self.bind, self.image, self.build_seconds = (
            sandbox,
            python,
            bind,
            image,
            build_seconds,
        )


async def _serving_sandbox(
    name: str,
    plan: ServePlan,
    port: int,
    labels: dict[str, str],
    classes: dict[str, type[Env]],
    ctx: StepContext,
    step_id: str,
    holder: dict[str, Any],
) -> Served | str:
    """A sandbox of provider `name` that can serve the world, or why there is none."""
    host = plugin_host(ctx)
    attempts: list[str | None] = [WORLD_IMAGE] if name in _image_only else [None, WORLD_IMAGE]
    reasons: list[str] = []
    for attempt in attempts:
        image, build_seconds = None, 0.0
        if attempt == WORLD_IMAGE:
            builder = image_builder()
            if builder is None:
                break
            try:
                image, build_seconds = await _world_image(builder, classes, ctx, step_id)
            except Exception as exc:  # no SDK, no engine, a failed build: the next provider may do
                reasons.append(f"no world image: {type(exc).__name__}: {exc}")
                break
        spec = SandboxSpec(image=image, command=plan.waiting_command(), env=plan.env, ports=[port], labels=labels)
        try:
            # Not in a thread: once it exists, the sandbox is registered for teardown before anything can cancel.
            sandbox, _, _ = create_in_chain(name, spec, ctx.config, host, ctx.log)
        except NoSandbox as exc:
            reasons.append(str(exc).removeprefix(f"no provider in {name!r} could create the sandbox: {name}: "))
            continue
        ctx.add_resource(step_id, sandbox, _served_teardown(sandbox, holder))
        found = await asyncio.to_thread(serving_python, sandbox)
        if found is not None:
            return Served(sandbox, *found, image, build_seconds)
        await asyncio.to_thread(sandbox.teardown)
        where = f"from {image}" if image else "without an image"
        reasons.append(f"made {where}, " + NO_PYTHON.format(tried=f"{sys.executable}, python3"))
        if image is None:
            _image_only.add(name)
    return "; ".join(reasons) or NO_PYTHON.format(tried=f"{sys.executable}, python3")


async def deploy_served(
    settings: DeployEnvSettings,
    chain: list[str],
    classes: dict[str, type[Env]],
    pairs: list[tuple[str, Any]],
    trigger_kinds: dict[str, Any],
    ctx: StepContext,
    step_id: str,
) -> dict[str, Any] | None:
    """Serve the world from the first provider of `chain` that can; None when the chain falls back to in process."""
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
        _check_roles(World(envs, roles=_roles(settings), trigger_kinds=trigger_kinds or None))
    except WorldError as exc:
        raise StepFailed(f"field `envs`: {exc}") from None
    plan = ServePlan(settings, classes, pairs, ctx.seed)
    labels = {RUN_LABEL: ctx.run_id, "agentenv.step": step_id}
    port = free_port()
    passed: list[str] = []
    for name in chain:
        if name == INLINE:
            ctx.log(f"{step_id}: serving passed to in process ({'; '.join(passed)})")
            return None
        why = provider_problem(name, ctx.config, plugin_host(ctx))
        if why is not None:
            passed.append(f"{name}: {why}")
            continue
        holder: dict[str, Any] = {}
        made = await _serving_sandbox(name, plan, port, labels, classes, ctx, step_id, holder)
        if isinstance(made, str):
            passed.append(f"{name}: {made}")
            continue
        sandbox = made.sandbox
        world = await _start_served(made, name, plan, port, envs, settings, trigger_kinds, ctx, client, step_id)
        holder["world"] = world
        ctx.add_resource(step_id, world)
        output: dict[str, Any] = {
            "envs": list(classes),
            "tools": len(world.tools),
            "artifacts": [artifact.ref for _, artifact in pairs],
            "sandbox": name,
            "url": world.url,
            "sandbox_id": sandbox.id,
            "python": made.python,
        }
        main = getattr(sandbox, "main", None)
        if isinstance(main, dict):
            output["pid"] = main.get("pid")
        if made.image:
            output |= {"image": made.image, "image_build_seconds": round(made.build_seconds, 3)}
        if passed:
            output["passed"] = passed
        return output
    raise StepFailed(f"field `sandbox`: no provider in {','.join(chain)!r} could serve the world: " + "; ".join(passed))


async def _start_served(
    made: Served,
    served: str,
    plan: ServePlan,
    port: int,
    envs: list[Env],
    settings: DeployEnvSettings,
    trigger_kinds: dict[str, Any],
    ctx: StepContext,
    client: Any,
    step_id: str,
) -> Any:
    """Put the files, let the server start, wait for its card, arm the clock; a failure tears the sandbox down."""
    sandbox = made.sandbox
    try:
        for path, data in plan.files.items():
            sandbox.put_file(path, data)
        sandbox.put_file(LAUNCH_FILE, plan.launch_script(made.python, made.bind, port))
        sandbox.put_file(f"{WORLD_DIR}/ready", b"")
        url = sandbox.url(port)
        ctx.log(f"{step_id}: serving the world from {served} sandbox {sandbox.id} at {url}")
        try:
            await client.await_card(
                url,
                plan.tokens["control"],
                timeout=settings.ready_timeout,
                alive=lambda: sandbox.status() == "running",
            )
        except (TimeoutError, RuntimeError) as exc:
            command = [made.python, "-m", "agentenv", "serve", *plan.serve_args]
            raise StepFailed(
                f"field `sandbox`: the world did not start in the {served} sandbox: {exc}\n"
                f"command: {shlex.join(command)}\nlast output:\n{_last_output(sandbox)}"
            ) from None
        world = client.RemoteWorld(
            envs,
            url=url,
            tokens=plan.tokens,
            roles=_roles(settings),
            trigger_kinds=trigger_kinds or None,
            seed=ctx.seed,
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


def _served_teardown(sandbox: Sandbox, holder: dict[str, Any]) -> Callable[[], None]:
    """Close the world's clients, then remove the sandbox (killing the server)."""

    def stop() -> None:
        world = holder.pop("world", None)
        try:
            if world is not None:
                world.close()
        finally:
            sandbox.teardown()

    return stop

"""Build a world from installed env names and artifact specs (used by the CLI, the gateway and steps)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentenv import ContributionError, PluginHost, get_host
from agentenv.contracts import kinds

from agentenv_runtime.env.artifact import ArtifactError
from agentenv_runtime.env.env import Env
from agentenv_runtime.world.world import World, WorldError


def split_names(names: str | Sequence[str]) -> list[str]:
    """`slack,email` or ["slack", "email"] → ["slack", "email"]."""
    parts = names.split(",") if isinstance(names, str) else [p for n in names for p in n.split(",")]
    return [p.strip() for p in parts if p.strip()]


def build_world(
    names: str | Sequence[str],
    *,
    artifacts: Sequence[str] = (),
    roles: Mapping[str, Any] | None = None,
    seed: int = 0,
    settings: Mapping[str, dict[str, Any]] | None = None,
    host: PluginHost | None = None,
) -> World:
    """Instantiate the named envs, load artifacts, compose them.

    An artifact spec is `NAME` (loaded into every env that ships an artifact of that name) or
    `ENV=NAME_OR_PATH` (one env; a path loads a file).
    """
    host = host or get_host()
    env_names = split_names(names)
    if not env_names:
        raise WorldError("name at least one env (see `agentenv env list`)")
    envs: list[Env] = []
    for env_name in env_names:
        envs.append(env_class(host, env_name)((settings or {}).get(env_name)))
    trigger_kinds = {name: entry.obj for name, entry in host.usable(kinds.TRIGGER_KINDS).items()}
    world = World(envs, roles=roles, seed=seed, trigger_kinds=trigger_kinds or None)
    if host.observes("tool_called"):
        world.on_tool_call = lambda event: host.notify("tool_called", event=event)
    for spec in artifacts:
        load_artifact_spec(world, spec)
    return world


def broken_reason(host: PluginHost, kind: Any, name: str) -> str | None:
    """Why a registered contribution cannot be used ("env 'x' comes from agentenv-x, skipped: …"), or None."""
    entry = host.registry(kind).get(name)
    if entry is None:
        return None
    try:
        entry.obj  # noqa: B018 - reading it imports and validates the class
    except ContributionError as exc:
        reason = str(exc).split("; fix:")[0].split("cannot be loaded: ")[-1]
        return f"{kind.label} {name!r} comes from {entry.dist}, skipped: {reason}; see `agentenv plugin check`"
    return None


def env_problem(host: PluginHost, name: str) -> str | None:
    """Why the installed env `name` cannot make a world (its class does not load, or some of its tools have no
    JSON Schema, which fails the card, `list_tools` and every call), or None: what `env list` shows, and what
    a run, a dry run, `env card` and `serve` refuse alike."""
    broken = broken_reason(host, kinds.ENVS, name)
    entry = host.registry(kinds.ENVS).get(name)
    if broken is not None or entry is None or not (isinstance(entry.obj, type) and issubclass(entry.obj, Env)):
        return broken
    problems = entry.obj.schema_problems()
    if not problems:
        return None
    fix = "give each such parameter a type with a JSON Schema (docs/authoring.md: the type hints tools may use)"
    return f"env {name!r} of {entry.dist} has tools without a JSON Schema: {' | '.join(problems)}; fix: {fix}"


def env_class(host: PluginHost, name: str) -> type[Env]:
    """The installed env `name` as a runtime `Env` class, or a WorldError that says what to do."""
    broken = env_problem(host, name)
    if broken is not None:
        raise WorldError(broken)
    try:
        cls = host.get(kinds.ENVS, name)
    except LookupError as exc:
        raise WorldError(str(exc)) from exc
    if not issubclass(cls, Env):
        entry = host.registry(kinds.ENVS)[name]
        raise WorldError(f"env {name!r} of {entry.dist} is not an agentenv_runtime.Env; worlds compose only those")
    return cls


def load_artifact_spec(world: World, spec: str) -> list[str]:
    """Load one artifact spec into the world; returns the refs loaded."""
    target, _, artifact = spec.partition("=")
    if artifact:
        env = world.env(target)
        loaded = env.find_artifact(artifact)
        env.load(loaded)
        return [loaded.ref]
    refs = []
    for env in world.envs.values():
        if spec in env.artifact_paths():
            loaded = env.find_artifact(spec)
            env.load(loaded)
            refs.append(loaded.ref)
    if not refs:
        shipped = {env.name: sorted(env.artifact_paths()) for env in world.envs.values()}
        raise ArtifactError(
            f"no env in {world.name!r} ships an artifact {spec!r} (shipped: {shipped}); use ENV=PATH for a file"
        )
    return refs

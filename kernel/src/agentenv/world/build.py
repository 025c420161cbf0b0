"""Build a world from installed env names and artifact specs (used by the CLI, the gateway and steps)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentenv.env import Env
from agentenv.env.artifact import ArtifactError
from agentenv.plugins.host import PluginHost, get_host
from agentenv.world.world import World, WorldError


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
        try:
            cls = host.get("envs", env_name)
        except LookupError as exc:
            raise WorldError(str(exc)) from exc
        envs.append(cls((settings or {}).get(env_name)))
    kinds = {name: entry.obj for name, entry in host.usable("trigger_kinds").items()}
    world = World(envs, roles=roles, seed=seed, trigger_kinds=kinds or None)
    for spec in artifacts:
        load_artifact_spec(world, spec)
    return world


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

"""Joining MCP servers to a world and taking them down with it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

from agentenv_runtime import World, WorldError

from agentenv_mcp.env import McpServerEnv, start_env
from agentenv_mcp.spec import McpServerSpec


def attach(world: World, specs: Iterable[McpServerSpec]) -> list[McpServerEnv]:
    """Start each server and add it to `world` as an env, all or none: a server that fails stops the ones
    started before it, and the world keeps only the envs it had."""
    started: list[McpServerEnv] = []
    try:
        for spec in specs:
            if spec.name in world.envs:
                raise WorldError(f"mcp {spec.name}: the world already has an env named {spec.name!r}; pick another")
            env = start_env(spec, world.tools)
            started.append(env)
            world.add_env(env)
    except BaseException:
        detach(world, started)
        raise
    return started


def detach(world: World, envs: Iterable[McpServerEnv]) -> None:
    """Stop the servers and take their envs out of the world."""
    for env in envs:
        with contextlib.suppress(Exception):  # stopping the others matters more than how one ended
            env.close()
        if world.envs.get(env.name) is env:
            world.remove_env(env.name)


def server_envs(world: World) -> list[McpServerEnv]:
    return [env for env in world.envs.values() if isinstance(env, McpServerEnv)]


def close_servers(world: World) -> None:
    """Stop every MCP server of the world (its teardown); the envs stay, so the trajectory and card still read."""
    for env in server_envs(world):
        with contextlib.suppress(Exception):
            env.close()

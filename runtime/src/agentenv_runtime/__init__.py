"""agentenv-runtime: the Env SDK, worlds, the task engine and run records.

Env authors import from here, and only from here:

    from agentenv_runtime import Env, ToolError, tool

Names are imported on first use (PEP 562): loading the runtime's plugin module for `agentenv --help` must
not import pydantic or SQLite.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:  # explicit re-exports for type checkers
    from agentenv.contracts.trigger import Message as Message
    from agentenv.plugins.host import get_host as get_host

    from agentenv_runtime.engine.bundle import find_bundle as find_bundle
    from agentenv_runtime.engine.records import Records as Records
    from agentenv_runtime.engine.records import StoreError as StoreError
    from agentenv_runtime.engine.runner import combine_digests as combine_digests
    from agentenv_runtime.engine.task import TaskError as TaskError
    from agentenv_runtime.engine.task import read_task as read_task
    from agentenv_runtime.engine.task import task_json_schema as task_json_schema
    from agentenv_runtime.env.artifact import Artifact as Artifact
    from agentenv_runtime.env.artifact import ArtifactError as ArtifactError
    from agentenv_runtime.env.env import Env as Env
    from agentenv_runtime.env.tool import ToolError as ToolError
    from agentenv_runtime.env.tool import tool as tool
    from agentenv_runtime.registry import Registry as Registry
    from agentenv_runtime.world.build import broken_reason as broken_reason
    from agentenv_runtime.world.build import build_world as build_world
    from agentenv_runtime.world.card import build_card as build_card
    from agentenv_runtime.world.trajectory import trajectory_digest as trajectory_digest
    from agentenv_runtime.world.world import World as World
    from agentenv_runtime.world.world import WorldError as WorldError

_HOMES = {
    "Message": "agentenv.contracts.trigger",
    "Artifact": "agentenv_runtime.env.artifact",
    "ArtifactError": "agentenv_runtime.env.artifact",
    "Env": "agentenv_runtime.env.env",
    "ToolError": "agentenv_runtime.env.tool",
    "tool": "agentenv_runtime.env.tool",
    "build_world": "agentenv_runtime.world.build",
    "get_host": "agentenv.plugins.host",
    "find_bundle": "agentenv_runtime.engine.bundle",
    "Records": "agentenv_runtime.engine.records",
    "StoreError": "agentenv_runtime.engine.records",
    "combine_digests": "agentenv_runtime.engine.runner",
    "TaskError": "agentenv_runtime.engine.task",
    "read_task": "agentenv_runtime.engine.task",
    "task_json_schema": "agentenv_runtime.engine.task",
    "broken_reason": "agentenv_runtime.world.build",
    "Registry": "agentenv_runtime.registry",
    "build_card": "agentenv_runtime.world.card",
    "trajectory_digest": "agentenv_runtime.world.trajectory",
    "World": "agentenv_runtime.world.world",
    "WorldError": "agentenv_runtime.world.world",
}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    module = _HOMES.get(name)
    if module is None:
        raise AttributeError(f"module 'agentenv_runtime' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value

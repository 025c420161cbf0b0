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

    from agentenv_runtime.env.artifact import Artifact as Artifact
    from agentenv_runtime.env.artifact import ArtifactError as ArtifactError
    from agentenv_runtime.env.env import Env as Env
    from agentenv_runtime.env.tool import ToolError as ToolError
    from agentenv_runtime.env.tool import tool as tool
    from agentenv_runtime.request_json import JsonRefused as JsonRefused
    from agentenv_runtime.request_json import loads_request as loads_request
    from agentenv_runtime.web_guard import SAFE_METHODS as SAFE_METHODS
    from agentenv_runtime.web_guard import cross_site_refusal as cross_site_refusal
    from agentenv_runtime.web_guard import host_is_local as host_is_local
    from agentenv_runtime.web_guard import is_loopback as is_loopback
    from agentenv_runtime.web_guard import origin_refusal as origin_refusal
    from agentenv_runtime.web_guard import read_body as read_body
    from agentenv_runtime.web_guard import replay_body as replay_body
    from agentenv_runtime.world.build import build_world as build_world
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
    "World": "agentenv_runtime.world.world",
    "WorldError": "agentenv_runtime.world.world",
    "JsonRefused": "agentenv_runtime.request_json",
    "loads_request": "agentenv_runtime.request_json",
    "SAFE_METHODS": "agentenv_runtime.web_guard",
    "cross_site_refusal": "agentenv_runtime.web_guard",
    "host_is_local": "agentenv_runtime.web_guard",
    "is_loopback": "agentenv_runtime.web_guard",
    "origin_refusal": "agentenv_runtime.web_guard",
    "read_body": "agentenv_runtime.web_guard",
    "replay_body": "agentenv_runtime.web_guard",
}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    module = _HOMES.get(name)
    if module is None:
        raise AttributeError(f"module 'agentenv_runtime' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value

"""The env SDK: build a simulated app as an `Env` subclass with `@tool` methods."""

from agentenv.env.artifact import Artifact, ArtifactError
from agentenv.env.env import Clock, Env, SystemClock, jsonable
from agentenv.env.tool import ToolError, ToolSpec, tool

__all__ = [
    "Artifact",
    "ArtifactError",
    "Clock",
    "Env",
    "SystemClock",
    "ToolError",
    "ToolSpec",
    "jsonable",
    "tool",
]

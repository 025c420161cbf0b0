"""Public names of `agentenv-harness`, for the harness kinds (`agentenv-claude-code`, `agentenv-codex`)."""

from agentenv_harness.base import (
    AGENT_VIEW,
    WORLD_PREFIX,
    CliFacts,
    HarnessAgent,
    Launch,
    Outcome,
    is_loopback_url,
    json_lines,
    turns_used_up,
)
from agentenv_harness.errors import HarnessError
from agentenv_harness.image import Recipe
from agentenv_harness.options import PromptOptions
from agentenv_harness.places import HostPlace, Place, Tree
from agentenv_harness.process import Finished, Watch, descendants, kill_tree, run_tree
from agentenv_harness.settings import HOST_TOOLS, HarnessSandbox, HarnessSettings, HarnessTool
from agentenv_harness.world_mcp import McpEndpoint, WorldServer

__all__ = [
    "AGENT_VIEW",
    "HOST_TOOLS",
    "WORLD_PREFIX",
    "CliFacts",
    "Finished",
    "HarnessAgent",
    "HarnessError",
    "HarnessSandbox",
    "HarnessSettings",
    "HarnessTool",
    "HostPlace",
    "Launch",
    "McpEndpoint",
    "Outcome",
    "Place",
    "PromptOptions",
    "Recipe",
    "Tree",
    "Watch",
    "WorldServer",
    "descendants",
    "is_loopback_url",
    "json_lines",
    "kill_tree",
    "run_tree",
    "turns_used_up",
]

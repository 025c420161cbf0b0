"""Public names of `agentenv-harness`, for the harness kinds (`agentenv-claude-code`, `agentenv-codex`)."""

from agentenv_harness.base import HarnessAgent, Launch, Outcome, is_loopback_url, json_lines
from agentenv_harness.errors import HarnessError
from agentenv_harness.process import Finished, descendants, kill_tree, run_tree
from agentenv_harness.settings import HOST_TOOLS, HarnessSettings, HarnessTool
from agentenv_harness.world_mcp import McpEndpoint, WorldServer

__all__ = [
    "HOST_TOOLS",
    "Finished",
    "HarnessAgent",
    "HarnessError",
    "HarnessSettings",
    "HarnessTool",
    "Launch",
    "McpEndpoint",
    "Outcome",
    "WorldServer",
    "descendants",
    "is_loopback_url",
    "json_lines",
    "kill_tree",
    "run_tree",
]

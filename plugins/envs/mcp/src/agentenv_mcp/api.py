"""The public API of agentenv-mcp for other plugins (the gateway's `serve --mcp`, deploy_env's `mcp` field)."""

from agentenv_mcp.env import McpServerEnv, McpServerError, check_tools, start_env
from agentenv_mcp.spec import DOCKER_LABEL, McpServerSpec, McpSpecError, build_spec, parse_spec
from agentenv_mcp.world import attach, close_servers, detach, server_envs

__all__ = [
    "DOCKER_LABEL",
    "McpServerEnv",
    "McpServerError",
    "McpServerSpec",
    "McpSpecError",
    "attach",
    "build_spec",
    "check_tools",
    "close_servers",
    "detach",
    "parse_spec",
    "server_envs",
    "start_env",
]

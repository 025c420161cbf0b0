"""The public API of agentenv-gateway for other plugins: import from here, not from the other modules.

Other distributions that use it declare it (agentenv-validators as a dependency, agentenv-steps as its
`served` extra, agentenv-a2a as its `mcp` extra).
"""

from agentenv_gateway import client
from agentenv_gateway.app import build_app
from agentenv_gateway.client import McpToolAccess, export_of
from agentenv_gateway.protocol import resolve
from agentenv_gateway.server import ServeError, serve_in_thread
from agentenv_gateway.upstream import UpstreamConnection, UpstreamEnv, UpstreamError, upstream_env_class

__all__ = [
    "McpToolAccess",
    "ServeError",
    "UpstreamConnection",
    "UpstreamEnv",
    "UpstreamError",
    "build_app",
    "client",
    "export_of",
    "resolve",
    "serve_in_thread",
    "upstream_env_class",
]

"""agentenv-gateway: serve a world over MCP, REST and JSON-RPC (heavy imports live in submodules)."""

__version__ = "0.1.0"

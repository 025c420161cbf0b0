"""agentenv-mcp: any MCP server as an env of a world (a stdio command, a streamable-HTTP URL or a Docker image)."""

__version__ = "0.1.0"

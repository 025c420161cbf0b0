"""agentenv-explorer: `agentenv up`, an HTTP API and a web UI over the configured stores and installed plugins."""

__version__ = "0.1.0"

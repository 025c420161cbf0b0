"""The public API of agentenv-a2a for other plugins: import from here, not from the other modules."""

from agentenv_a2a.server import A2aServeError, build_a2a_app, serve_a2a

__all__ = ["A2aServeError", "build_a2a_app", "serve_a2a"]

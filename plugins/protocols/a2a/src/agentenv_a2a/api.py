"""The public API of agentenv-a2a for other plugins: import from here, not from the other modules."""

from agentenv_a2a.cards import CARD_PATHS, CardError, extension_endpoint, fetch_card, resolve_url, rpc_methods
from agentenv_a2a.server import A2aServeError, build_a2a_app, serve_a2a

__all__ = [
    "CARD_PATHS",
    "A2aServeError",
    "CardError",
    "build_a2a_app",
    "extension_endpoint",
    "fetch_card",
    "resolve_url",
    "rpc_methods",
    "serve_a2a",
]
